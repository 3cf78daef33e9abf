//! Parse-time limits: what a module may declare, checked by one pass over its section headers
//! before wasmi parses it, so the memory and time of loading any module stays under a known
//! ceiling (docs/ABI.md section 6 gives the measured figures). Each limit is a named constant;
//! crossing any of them is `module_too_large`, naming the count and the limit.

use crate::reason::{BlockedReason, Failure};
use alloc::format;
use wasmparser::{Chunk, ElementItems, Encoding, Parser, Payload};

/// Most type definitions a module may declare.
pub const MAX_TYPES: u32 = 100_000;
/// Most imports (each becomes a host function handle when instantiated).
pub const MAX_IMPORTS: u32 = 1_000;
/// Most functions defined in the module.
pub const MAX_FUNCTIONS: u32 = 100_000;
/// Most tables.
pub const MAX_TABLES: u32 = 8;
/// Most memories (a plugin has one).
pub const MAX_MEMORIES: u32 = 1;
/// Most globals.
pub const MAX_GLOBALS: u32 = 10_000;
/// Most exports.
pub const MAX_EXPORTS: u32 = 10_000;
/// Most element segments.
pub const MAX_ELEMENT_SEGMENTS: u32 = 10_000;
/// Most element items over all segments: twice the largest table a policy allows by default,
/// since no table can hold more (each item costs the engine tens of bytes when loaded).
pub const MAX_ELEMENT_ITEMS: u64 = 200_000;
/// Most data segments.
pub const MAX_DATA_SEGMENTS: u32 = 10_000;
/// Largest function body in bytes (validation keeps a frame per nested block, so a body's size
/// bounds the memory its validation takes).
pub const MAX_FUNCTION_BODY_BYTES: usize = 2 * 1024 * 1024;

fn over(what: &str, count: u64, limit: u64) -> Failure {
    Failure::new(BlockedReason::ModuleTooLarge, format!("It declares {count} {what}; the limit is {limit}."))
}

fn check_count(what: &str, count: u32, limit: u32) -> Result<(), Failure> {
    if count > limit {
        return Err(over(what, u64::from(count), u64::from(limit)));
    }
    Ok(())
}

/// Checks every parse-time limit. Malformed sections are left for wasmi's parser to report
/// (as `invalid_module`); this pass only refuses what is well-formed but too large.
/// A code section no larger than the largest body allowed is skipped whole: none of its bodies
/// can pass the limit, and reading them one by one was most of this pass (a parser step per
/// function: about 160 instructions each, half a million for a module of 3,000 functions).
pub fn check(bytes: &[u8]) -> Result<(), Failure> {
    let mut element_items: u64 = 0;
    let mut parser = Parser::new(0);
    let mut rest = bytes;
    loop {
        let Ok(Chunk::Parsed { consumed, payload }) = parser.parse(rest, true) else {
            // A parse error: wasmi reports it with its own words.
            return Ok(());
        };
        rest = rest.get(consumed..).unwrap_or_default();
        match payload {
            // wasmi loads modules only: it refuses a component in its own words.
            Payload::Version { encoding: Encoding::Component, .. } | Payload::End(_) => return Ok(()),
            Payload::TypeSection(reader) => check_count("types", reader.count(), MAX_TYPES)?,
            Payload::ImportSection(reader) => check_count("imports", reader.count(), MAX_IMPORTS)?,
            Payload::FunctionSection(reader) => check_count("functions", reader.count(), MAX_FUNCTIONS)?,
            Payload::TableSection(reader) => check_count("tables", reader.count(), MAX_TABLES)?,
            Payload::MemorySection(reader) => check_count("memories", reader.count(), MAX_MEMORIES)?,
            Payload::GlobalSection(reader) => check_count("globals", reader.count(), MAX_GLOBALS)?,
            Payload::ExportSection(reader) => check_count("exports", reader.count(), MAX_EXPORTS)?,
            Payload::ElementSection(reader) => {
                check_count("element segments", reader.count(), MAX_ELEMENT_SEGMENTS)?;
                for element in reader {
                    let Ok(element) = element else {
                        return Ok(());
                    };
                    let items = match element.items {
                        ElementItems::Functions(items) => items.count(),
                        ElementItems::Expressions(_, items) => items.count(),
                    };
                    element_items += u64::from(items);
                    if element_items > MAX_ELEMENT_ITEMS {
                        return Err(over("element items (at least)", element_items, MAX_ELEMENT_ITEMS));
                    }
                }
            }
            Payload::DataSection(reader) => check_count("data segments", reader.count(), MAX_DATA_SEGMENTS)?,
            Payload::DataCountSection { count, .. } => check_count("data segments", count, MAX_DATA_SEGMENTS)?,
            Payload::CodeSectionStart { count, size, .. } => {
                check_count("function bodies", count, MAX_FUNCTIONS)?;
                let size = usize::try_from(size).unwrap_or(usize::MAX);
                if size <= MAX_FUNCTION_BODY_BYTES {
                    parser.skip_section();
                    let Some(after) = rest.get(size..) else {
                        return Ok(());
                    };
                    rest = after;
                }
            }
            Payload::CodeSectionEntry(body) => {
                let size = body.range().len();
                if size > MAX_FUNCTION_BODY_BYTES {
                    return Err(Failure::new(
                        BlockedReason::ModuleTooLarge,
                        format!("A function body has {size} bytes; the limit is {MAX_FUNCTION_BODY_BYTES}."),
                    ));
                }
            }
            _ => {}
        }
    }
}
