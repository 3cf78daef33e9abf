//! Reading a module from disk: binary `.wasm` as is, `.wat` text compiled (with `wast`, the
//! parser behind the `wat` crate, so a syntax error keeps its position), both through
//! [`crate::files`] (never blocking, size-checked before a byte is read).

use crate::files::{self, FileError};
use contour_core::DEFAULT_MAX_MODULE_BYTES;
use std::fmt;
use std::path::{Path, PathBuf};

/// A `.wat` file may be this many times the module limit, up to [`MAX_WAT_TEXT_BYTES`]: text is
/// larger than the binary it compiles to, and the binary must still fit the module limit.
pub const WAT_TEXT_FACTOR: u64 = 2;

/// The most bytes of a `.wat` file, whatever the module limit (2 MiB). The text parser holds
/// every token and node of a module at once, up to ~45 bytes of memory per byte of text (2 MiB
/// of `(block)` takes ~95 MiB), so this keeps compiling any text under the ~110 MiB ceiling
/// that binary modules keep at 32 MiB (docs/ABI.md). Text is for plugins written by hand;
/// larger modules are compiled to `.wasm` first.
pub const MAX_WAT_TEXT_BYTES: u64 = 2 * 1024 * 1024;

/// The most characters of a source line a [`WatError`] keeps.
pub const MAX_SOURCE_LINE_CHARS: usize = 160;

/// A `.wat` file that does not compile: where, what, and the line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong (cut at [`files::MAX_QUOTED_BYTES`]).
    pub message: String,
    /// The source line, or the part of it around the column (at most [`MAX_SOURCE_LINE_CHARS`]
    /// bytes of it, each cut side marked); empty when the text is not UTF-8.
    pub source_line: String,
    /// The 1-based column of the error within `source_line`, in characters.
    pub caret: usize,
}

impl WatError {
    /// `FILE:LINE:COL: message`, on one line.
    pub fn headline(&self) -> String {
        format!("{}:{}:{}: {}", self.path.display(), self.line, self.column, self.message)
    }

    /// The source line with a caret under the column, as two lines (`  4 | ...`, `    |  ^`).
    pub fn snippet(&self) -> Option<(String, String)> {
        if self.source_line.is_empty() {
            return None;
        }
        let number = self.line.to_string();
        let caret_at = self.caret.saturating_sub(1).min(self.source_line.chars().count());
        let pad: String = self.source_line.chars().take(caret_at).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        Some((format!("{number} | {}", self.source_line), format!("{} | {pad}^", " ".repeat(number.len()))))
    }
}

impl fmt::Display for WatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.headline())
    }
}

/// Why a module file could not be read or compiled from text.
#[derive(Debug)]
pub enum ModuleFileError {
    /// The file could not be read: missing, not a regular file, too large, or an I/O error.
    File(FileError),
    /// The `.wat` text does not compile.
    Wat(WatError),
}

impl fmt::Display for ModuleFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(e) => e.fmt(f),
            Self::Wat(e) => write!(f, "{} is not valid WebAssembly text: {}", e.path.display(), e.headline()),
        }
    }
}

impl std::error::Error for ModuleFileError {}

/// Whether `path` names a text module by its extension.
pub fn is_wat_path(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "wat")
}

/// The byte bound of a module file: `max_module_bytes` for binary, [`WAT_TEXT_FACTOR`] times
/// that for a `.wat` file but never over [`MAX_WAT_TEXT_BYTES`].
pub fn file_limit(path: &Path, max_module_bytes: usize) -> u64 {
    let binary = u64::try_from(max_module_bytes).unwrap_or(u64::MAX);
    if is_wat_path(path) {
        binary.saturating_mul(WAT_TEXT_FACTOR).min(MAX_WAT_TEXT_BYTES)
    } else {
        binary
    }
}

/// Compiles WebAssembly text read from `path`; the error says where (line, column, the line).
pub fn compile_wat(bytes: &[u8], path: &Path) -> Result<Vec<u8>, WatError> {
    if bytes.len() as u64 > MAX_WAT_TEXT_BYTES {
        // A file read as binary (any name) that turned out to be text gets here past the
        // text bound of `file_limit`: it is refused before the parser holds any of it.
        return Err(WatError {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: format!(
                "the text has {} bytes; WebAssembly text may have at most {MAX_WAT_TEXT_BYTES} bytes (compile it to .wasm first, e.g. with `wasm-tools parse`)",
                bytes.len()
            ),
            source_line: String::new(),
            caret: 1,
        });
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        let valid = std::str::from_utf8(bytes).map_err(|e| e.valid_up_to()).err().unwrap_or(0);
        let before = String::from_utf8_lossy(&bytes[..valid]).into_owned();
        let (line, column, _) = position(&before, before.len());
        return Err(WatError {
            path: path.to_path_buf(),
            line,
            column,
            message: "the text is not UTF-8".into(),
            source_line: String::new(),
            caret: 1,
        });
    };
    let compiled = wast::parser::ParseBuffer::new(text)
        .and_then(|buffer| wast::parser::parse::<wast::Wat>(&buffer).and_then(|mut wat| wat.encode()));
    compiled.map_err(|e| {
        let (line, column, source_line) = position(text, e.span().offset());
        let (source_line, caret) = shown_line(source_line, column);
        WatError { path: path.to_path_buf(), line, column, message: files::quoted(&e.message()), source_line, caret }
    })
}

/// The part of `line` shown under an error at 1-based `column` (in characters), and the error's
/// column within it: the line cut [`MAX_SOURCE_LINE_CHARS`] bytes from its start, or, when the
/// column lies past that, from a little before the column (marked `...`), so the caret always
/// points at shown text.
fn shown_line(line: &str, column: usize) -> (String, usize) {
    let at = line.char_indices().nth(column.saturating_sub(1)).map_or(line.len(), |(offset, _)| offset);
    if at < MAX_SOURCE_LINE_CHARS {
        return (files::truncated(line, MAX_SOURCE_LINE_CHARS), column);
    }
    let mut start = at - MAX_SOURCE_LINE_CHARS / 2;
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    let shown = format!("...{}", files::truncated(&line[start..], MAX_SOURCE_LINE_CHARS));
    (shown, "...".len() + line[start..at].chars().count() + 1)
}

/// The 1-based line and column (in characters) of byte `offset` in `text`, and that line.
fn position(text: &str, offset: usize) -> (usize, usize, &str) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let start = text[..offset].rfind('\n').map_or(0, |at| at + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |at| offset + at);
    let line = text[..offset].matches('\n').count() + 1;
    let column = text[start..offset].chars().count() + 1;
    (line, column, text[start..end].trim_end_matches('\r'))
}

/// Compiles WebAssembly text read from `path` (the error's [`WatError::headline`] is the one
/// line a message quoting it shows, e.g. a package's module).
pub fn compile_text(bytes: &[u8], path: &Path) -> Result<Vec<u8>, WatError> {
    compile_wat(bytes, path)
}

/// Reads a module within the default module limit (see [`read_module_within`]).
pub fn read_module(path: &Path) -> Result<Vec<u8>, ModuleFileError> {
    read_module_within(path, DEFAULT_MAX_MODULE_BYTES)
}

/// Reads a module: `.wat` files (or any file starting with `(`) are compiled from text;
/// anything else (empty and random files included) is passed on as binary for the sandbox to
/// validate and reject. The file must be a regular file within [`file_limit`]; it is never
/// read past that bound.
pub fn read_module_within(path: &Path, max_module_bytes: usize) -> Result<Vec<u8>, ModuleFileError> {
    let bytes = files::read_limited(path, file_limit(path, max_module_bytes)).map_err(ModuleFileError::File)?;
    let is_text = is_wat_path(path) || bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'(');
    if !is_text || bytes.starts_with(b"\0asm") {
        return Ok(bytes);
    }
    compile_wat(&bytes, path).map_err(ModuleFileError::Wat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_syntax_error_says_where() {
        let text = "(module\n  (memory 1)\n  (func oops)\n)";
        let error = compile_wat(text.as_bytes(), Path::new("dir/bad.wat")).unwrap_err();
        assert_eq!((error.line, error.column), (3, 9), "{error:?}");
        assert_eq!(error.source_line, "  (func oops)");
        assert!(error.headline().starts_with("dir/bad.wat:3:9: "), "{}", error.headline());
        let (source, caret) = error.snippet().unwrap();
        assert_eq!(source, "3 |   (func oops)");
        assert_eq!(caret, "  |         ^");
        assert!(compile_wat(b"(module)", Path::new("ok.wat")).is_ok());
        let not_utf8 = compile_wat(b"(module\n\xff)", Path::new("x.wat")).unwrap_err();
        assert_eq!((not_utf8.line, not_utf8.message.as_str()), (2, "the text is not UTF-8"));
    }

    #[test]
    fn the_caret_points_at_shown_text_on_a_long_line() {
        // One line, the error 300 characters in: past the 160 bytes a line is cut to.
        let text = format!("(module {} oops)", "(func)".repeat(49));
        let error = compile_wat(text.as_bytes(), Path::new("long.wat")).unwrap_err();
        assert!(error.column > 300, "{error:?}");
        let (source, caret) = error.snippet().unwrap();
        let shown = source.trim_start_matches("1 | ");
        assert!(shown.starts_with("...") && shown.contains("oops"), "{shown}");
        let under = caret.trim_start_matches("  | ").len() - 1;
        assert_eq!(&shown[under..under + 4], "oops", "the caret is under the error: {source}\n{caret}");
    }

    #[test]
    fn text_over_its_bound_is_refused_before_it_is_parsed() {
        let limit = MAX_WAT_TEXT_BYTES as usize;
        let text = |len: usize| format!("(module){}", " ".repeat(len - "(module)".len()));
        assert!(compile_wat(text(limit).as_bytes(), Path::new("edge.wat")).is_ok());
        let error = compile_wat(text(limit + 1).as_bytes(), Path::new("big.wasm")).unwrap_err();
        assert!(error.message.contains("at most 2097152 bytes"), "{error:?}");
        assert_eq!(file_limit(Path::new("a.wat"), 32 << 20), MAX_WAT_TEXT_BYTES);
        assert_eq!(file_limit(Path::new("a.wat"), 256 << 10), 512 << 10, "twice a smaller module limit");
        assert_eq!(file_limit(Path::new("a.wasm"), 32 << 20), 32 << 20);
    }
}
