//! Tables with a header whose columns line up whatever the cells hold: widths are measured in
//! terminal columns (`unicode-width`: CJK and emoji count two) after escaping, so a cell with
//! control characters is measured as it will be shown. The last column is not padded. A table
//! fits the terminal's width (`COLUMNS`, else the terminal's size; no limit when stdout is not a
//! terminal): the widest columns are narrowed and their cells elided with `…`. Every line is
//! printed through [`crate::terminal`].

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

    /// The table as lines, fitted to the terminal's width ([`terminal_width`]).
    pub fn lines(&self) -> Vec<String> {
        self.lines_within(terminal_width())
    }

    /// The table as lines: the header, then each row, columns two spaces apart, at most `limit`
    /// columns wide when there is a limit (the widest columns are narrowed and their cells
    /// elided with `…`).
    pub fn lines_within(&self, limit: Option<usize>) -> Vec<String> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.width()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.width());
            }
        }
        fit(&mut widths, limit);
        std::iter::once(line(&self.header, &widths)).chain(self.rows.iter().map(|row| line(row, &widths))).collect()
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

/// The narrowest a column is made to fit the terminal (an ellipsis and a few columns of text).
const MIN_WIDTH: usize = 6;

/// The width tables fit: `COLUMNS` when it is a positive number, else stdout's terminal width;
/// `None` (no limit) when stdout is not a terminal, so a pipe or a file gets whole cells.
pub fn terminal_width() -> Option<usize> {
    if let Some(columns) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()) {
        if columns > 0 {
            return Some(columns);
        }
    }
    let stdout = io::stdout();
    if !std::io::IsTerminal::is_terminal(&stdout) {
        return None;
    }
    rustix::termios::tcgetwinsize(&stdout).ok().map(|size| usize::from(size.ws_col)).filter(|&c| c > 0)
}

/// Narrows `widths` (columns two spaces apart) until they fit `limit`: the widest column
/// first, none below [`MIN_WIDTH`] (or its own width, when narrower). A table that cannot fit
/// even so stays as narrow as that.
pub fn fit(widths: &mut [usize], limit: Option<usize>) {
    let Some(limit) = limit else { return };
    let total = |widths: &[usize]| widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
    while total(widths) > limit {
        let Some((widest, &width)) = widths.iter().enumerate().max_by_key(|(i, w)| (**w, usize::MAX - i)) else {
            return;
        };
        if width <= MIN_WIDTH {
            return;
        }
        let second = widths.iter().enumerate().filter(|(i, _)| *i != widest).map(|(_, w)| *w).max().unwrap_or(0);
        let excess = total(widths) - limit;
        // Down to the next widest column at most per step, so the widest columns share the cut.
        widths[widest] = width.saturating_sub(excess).max(second.min(width - 1)).max(MIN_WIDTH);
    }
}

/// `cells` (escaped already) as one line: each cell elided to its column's width and padded to
/// it, two spaces apart; the last is not padded.
pub fn line(cells: &[String], widths: &[usize]) -> String {
    let mut out = String::new();
    for (i, (cell, &width)) in cells.iter().zip(widths).enumerate() {
        let cell = elide(cell, width);
        out.push_str(&cell);
        if i + 1 < cells.len() {
            out.push_str(&" ".repeat(width.saturating_sub(cell.width()) + 2));
        }
    }
    out.trim_end().to_string()
}

/// `text` cut to at most `width` terminal columns, ending in `…` when it was cut.
pub fn elide(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_in_display_width() {
        let mut table = Table::new(&["ID", "NAME", "STATE"]);
        table.row(vec!["echo".into(), "日本語".into(), "approved".into()]);
        table.row(vec!["a-much-longer-id".into(), "e\u{1b}x".into(), "installed".into()]);
        let lines = table.lines_within(None);
        assert_eq!(lines[0], "ID                NAME      STATE");
        assert_eq!(lines[1], "echo              日本語    approved");
        assert_eq!(lines[2], "a-much-longer-id  e\\u{1b}x  installed");
        let column = |line: &str| line[..line.find("approved").or(line.find("installed")).unwrap()].width();
        assert_eq!(column(&lines[1]), column(&lines[2]));
    }

    #[test]
    fn a_table_fits_the_width_by_eliding_the_widest_column() {
        let mut table = Table::new(&["ID", "DESCRIPTION", "STATE"]);
        table.row(vec!["echo".into(), "a".repeat(100), "approved".into()]);
        table.row(vec!["日本".into(), "short".into(), "installed".into()]);
        let lines = table.lines_within(Some(40));
        for line in &lines {
            assert!(line.width() <= 40, "{line:?}");
        }
        assert!(lines[1].contains('…') && lines[1].ends_with("approved"), "{lines:?}");
        let state = |line: &str| line[..line.find("approved").or(line.find("installed")).unwrap()].width();
        assert_eq!(state(&lines[1]), state(&lines[2]));
        assert_eq!(elide("日本語", 4), "日…");
        // The cut is larger than the widest column: narrowed to the least, never below zero.
        let mut widths = [24, 23, 13, 10];
        fit(&mut widths, Some(20));
        assert_eq!(widths, [MIN_WIDTH, MIN_WIDTH, MIN_WIDTH, MIN_WIDTH]);
    }
}
