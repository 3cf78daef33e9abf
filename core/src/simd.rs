//! Whether a module uses the SIMD proposal (`v128` instructions), found by walking its function
//! bodies: for `tdm inspect`, and to name the reason when a runtime without SIMD (the policy's
//! `simd` off, or a build without the `simd` feature, such as the firmware) refuses a module.

use wasmparser::{Parser, Payload, ValType};

/// The prefix byte of every SIMD instruction.
const SIMD_PREFIX: u8 = 0xfd;

/// Why this build cannot run SIMD, when it cannot: a build without the `simd` feature, or a
/// big-endian host, where wasmi 2.0 reads a vector's lanes in native byte order from its
/// little-endian bytes (found by the s390x replay of the `simd` conformance trace: `i8x16.add`
/// then `i64x2.extract_lane 0` gave the lane byte-reversed). Such a module is refused there,
/// never run with wrong lanes.
pub const SIMD_UNAVAILABLE: Option<&str> = if !cfg!(feature = "simd") {
    Some("this build of the runtime does not include (the firmware leaves it out for size)")
} else if cfg!(target_endian = "big") {
    Some("this host does not run: wasmi 2.0 reads SIMD lanes in the wrong byte order on big-endian CPUs")
} else {
    None
};

/// Whether this build's engine runs SIMD (see [`SIMD_UNAVAILABLE`]).
pub const BUILT_WITH_SIMD: bool = SIMD_UNAVAILABLE.is_none();

/// Whether `bytes` holds a function body with a SIMD instruction or a `v128` local. Reading stops
/// at the first malformed body (validation reports it); an instruction this build cannot decode
/// still counts when it starts with the SIMD prefix.
pub fn uses_simd(bytes: &[u8]) -> bool {
    for payload in Parser::new(0).parse_all(bytes) {
        let Ok(Payload::CodeSectionEntry(body)) = payload else {
            continue;
        };
        if let Ok(locals) = body.get_locals_reader() {
            if locals.into_iter().any(|local| matches!(local, Ok((_, ValType::V128)))) {
                return true;
            }
        }
        let Ok(mut operators) = body.get_operators_reader() else {
            continue;
        };
        while !operators.eof() {
            if bytes.get(operators.original_position()) == Some(&SIMD_PREFIX) {
                return true;
            }
            if operators.read().is_err() {
                break;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::uses_simd;

    fn module(wat: &str) -> alloc::vec::Vec<u8> {
        wat::parse_str(wat).expect("the fixture compiles")
    }

    #[test]
    fn simd_instructions_and_v128_locals_are_found_and_scalar_code_is_not() {
        assert!(uses_simd(&module(
            "(module (memory 1) (func (result i32) (i32x4.extract_lane 0 (v128.load (i32.const 0)))))"
        )));
        assert!(uses_simd(&module("(module (func (local v128)))")));
        // 0xfd as an immediate (an i32.const of 253 and a memory offset) is not an instruction.
        assert!(!uses_simd(&module("(module (memory 1) (func (result i32) (i32.load offset=253 (i32.const 253))))")));
        assert!(!uses_simd(b"\0asm\x01\0\0\0"));
        assert!(!uses_simd(b"not a module"));
    }
}
