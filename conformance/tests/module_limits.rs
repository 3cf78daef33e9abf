//! Load is bounded: the parse-time limits of core (core/src/module_limits.rs) refuse, before wasmi
//! parses anything, a module that declares more than loading it can afford (element items,
//! function bodies, imports, exports, ...), and what a refusal quotes of the module is cut.

use contour_conformance::{load_failure, plugin_with_imports};
use contour_core::MAX_DETAIL_BYTES;
use contour_core::{Plugin, Policy, Profile};
use contour_core::{MAX_ELEMENT_ITEMS, MAX_FUNCTION_BODY_BYTES, MAX_IMPORTS};

fn uleb(mut n: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn section(id: u8, payload: &[u8], out: &mut Vec<u8>) {
    out.push(id);
    uleb(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

/// A module with one `() -> ()` function and `segments` passive element segments of `items`
/// references to it.
fn elements(segments: u64, items: u64) -> Vec<u8> {
    let mut module = b"\0asm\x01\0\0\0".to_vec();
    section(1, &[1, 0x60, 0, 0], &mut module);
    section(3, &[1, 0], &mut module);
    let mut payload = Vec::new();
    uleb(segments, &mut payload);
    for _ in 0..segments {
        payload.extend_from_slice(&[1, 0]);
        uleb(items, &mut payload);
        payload.extend(std::iter::repeat_n(0u8, items as usize));
    }
    section(9, &payload, &mut module);
    section(10, &[1, 2, 0, 0x0b], &mut module);
    module
}

#[test]
fn element_items_past_the_limit_are_refused_before_parsing() {
    let at_limit = elements(2, MAX_ELEMENT_ITEMS / 2);
    let inspected = Plugin::inspect(&at_limit, &Policy::default(), Profile::Command);
    assert!(inspected.is_ok(), "{:?}", inspected.err());
    let failure = load_failure(&elements(3, MAX_ELEMENT_ITEMS / 2), Policy::default());
    assert_eq!(failure.reason.as_str(), "module_too_large", "{failure}");
    assert!(failure.detail.contains("element items"), "{failure}");
}

#[test]
fn a_function_body_past_the_limit_is_refused() {
    // One function whose body is `block`s nested as deep as its size allows.
    let depth = MAX_FUNCTION_BODY_BYTES / 2;
    let mut body = vec![0u8];
    for _ in 0..depth {
        body.extend_from_slice(&[0x02, 0x40]);
    }
    body.extend(std::iter::repeat_n(0x0bu8, depth + 1));
    let mut module = b"\0asm\x01\0\0\0".to_vec();
    section(1, &[1, 0x60, 0, 0], &mut module);
    section(3, &[1, 0], &mut module);
    let mut code = vec![1];
    uleb(body.len() as u64, &mut code);
    code.extend_from_slice(&body);
    section(10, &code, &mut module);
    let failure = load_failure(&module, Policy::default());
    assert_eq!(failure.reason.as_str(), "module_too_large", "{failure}");
    assert!(failure.detail.contains("function body"), "{failure}");
}

/// A module of `() -> ()` functions whose bodies are `sizes` bytes long (no locals, `nop`s,
/// `end`), its code section cut to `keep` of its bytes when given.
fn module_with_bodies(sizes: &[usize], keep: Option<usize>) -> Vec<u8> {
    let mut module = b"\0asm\x01\0\0\0".to_vec();
    section(1, &[1, 0x60, 0, 0], &mut module);
    let mut functions = Vec::new();
    uleb(sizes.len() as u64, &mut functions);
    functions.extend(std::iter::repeat_n(0u8, sizes.len()));
    section(3, &functions, &mut module);
    let mut code = Vec::new();
    uleb(sizes.len() as u64, &mut code);
    for &size in sizes {
        uleb(size as u64, &mut code);
        code.push(0);
        code.extend(std::iter::repeat_n(1u8, size - 2));
        code.push(0x0b);
    }
    let whole = code.len();
    code.truncate(keep.unwrap_or(whole));
    module.push(10);
    uleb(whole as u64, &mut module);
    module.extend_from_slice(&code);
    module
}

#[test]
fn every_body_is_held_to_the_limit_whether_its_section_is_read_body_by_body_or_skipped() {
    // A code section larger than a body may be is read body by body: the one over is refused.
    let failure = load_failure(&module_with_bodies(&[4, MAX_FUNCTION_BODY_BYTES + 1], None), Policy::default());
    assert_eq!(failure.reason.as_str(), "module_too_large", "{failure}");
    assert!(failure.detail.contains(&format!("{} bytes", MAX_FUNCTION_BODY_BYTES + 1)), "{failure}");
    // A body at the limit (its section is larger), a section just under the limit and one of
    // 3,000 small bodies (both skipped whole: no body in them can be over) pass the limits and
    // wasmi's parse: refused only for the exports a plugin needs.
    for sizes in [vec![MAX_FUNCTION_BODY_BYTES, 4], vec![MAX_FUNCTION_BODY_BYTES - 8], vec![4; 3_000]] {
        let failure = load_failure(&module_with_bodies(&sizes, None), Policy::default());
        assert_eq!(failure.reason.as_str(), "abi_mismatch", "{} bodies: {failure}", sizes.len());
    }
    // A cut code section, skipped or not, is wasmi's to refuse, in its words.
    for sizes in [vec![4; 10], vec![MAX_FUNCTION_BODY_BYTES + 1, 4]] {
        let failure = load_failure(&module_with_bodies(&sizes, Some(7)), Policy::default());
        assert_eq!(failure.reason.as_str(), "invalid_module", "{failure}");
    }
}

#[test]
fn imports_past_the_limit_are_refused() {
    let imports: String = (0..=MAX_IMPORTS)
        .map(|i| format!(r#"(import "wasi_snapshot_preview1" "sched_yield" (func $y{i} (result i32)))"#))
        .collect();
    let failure = load_failure(&plugin_with_imports(&imports), Policy::default());
    assert_eq!(failure.reason.as_str(), "module_too_large", "{failure}");
    assert!(failure.detail.contains("imports"), "{failure}");
}

#[test]
fn control_character_import_names_make_a_bounded_message() {
    let name = "\\1b[31m".repeat(2_000);
    let imports: String = (0..200).map(|i| format!(r#"(import "{name}{i}" "{name}" (func))"#)).collect();
    let failure = load_failure(&plugin_with_imports(&imports), Policy::default());
    assert_eq!(failure.reason.as_str(), "import_not_allowed", "{failure}");
    assert!(failure.detail.len() <= MAX_DETAIL_BYTES, "{} bytes", failure.detail.len());
    assert!(failure.detail.starts_with("200 rejected"), "{}", &failure.detail[..80]);
    assert!(!failure.detail.contains('\u{1b}'), "names are quoted with their controls escaped");
}
