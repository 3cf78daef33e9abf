//! Tables with a header whose columns line up whatever the cells hold: widths are measured in
//! terminal columns (`unicode-width`: CJK and emoji count two) after escaping, so a cell with
//! control characters is measured as it will be shown. The last column is not padded. Every
//! line is printed through [`crate::terminal`].

use crate::terminal;
use std::io::{self, Write};
use unicode_width::UnicodeWidthStr;

/// A table: a header and rows of cells.
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles.
    pub fn new(header: &[&str]) -> Self {
        Self { header: header.iter().map(|h| h.to_string()).collect(), rows: Vec::new() }
    }

    /// Adds a row (missing cells are empty, extra cells are dropped).
    pub fn row(&mut self, cells: Vec<String>) {
        let mut cells: Vec<String> = cells.into_iter().map(|c| terminal::escape(&c).into_owned()).collect();
        cells.resize(self.header.len(), String::new());
        self.rows.push(cells);
    }

    /// The table as lines: the header, then each row, columns two spaces apart.
    pub fn lines(&self) -> Vec<String> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.width()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.width());
            }
        }
        let line = |cells: &[String]| {
            let mut out = String::new();
            for (i, (cell, width)) in cells.iter().zip(&widths).enumerate() {
                if i + 1 == cells.len() {
                    out.push_str(cell);
                } else {
                    out.push_str(cell);
                    out.push_str(&" ".repeat(width - cell.width() + 2));
                }
            }
            out.trim_end().to_string()
        };
        std::iter::once(line(&self.header)).chain(self.rows.iter().map(|row| line(row))).collect()
    }

    /// Writes the lines to `out`.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        for line in self.lines() {
            terminal::write_line(out, &line)?;
        }
        Ok(())
    }

    /// Prints the lines on stdout (a write error is noted, as every printer's is:
    /// [`crate::stdout_delivery`]).
    pub fn print(&self) {
        crate::stdout_delivery::note(self.write(&mut io::stdout().lock()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_in_display_width() {
        let mut table = Table::new(&["ID", "NAME", "STATE"]);
        table.row(vec!["echo".into(), "日本語".into(), "approved".into()]);
        table.row(vec!["a-much-longer-id".into(), "e\u{1b}x".into(), "installed".into()]);
        let lines = table.lines();
        assert_eq!(lines[0], "ID                NAME      STATE");
        assert_eq!(lines[1], "echo              日本語    approved");
        assert_eq!(lines[2], "a-much-longer-id  e\\u{1b}x  installed");
        let column = |line: &str| line[..line.find("approved").or(line.find("installed")).unwrap()].width();
        assert_eq!(column(&lines[1]), column(&lines[2]));
    }
}
