//! Digest lines: what the firmware prints to show which bytes it ran. Today one per bundled
//! module (FNV-1a 64 of its bytes, which the host recomputes before comparing outcomes); the
//! replay part of issue 12 will print its trace digests in the same fixed-size line.

use core::fmt::Write;
use heapless::String;

/// Room for one digest line.
pub const DIGEST_LINE_CAP: usize = 160;

/// One digest line.
pub type DigestLine = String<DIGEST_LINE_CAP>;

/// FNV-1a, 64-bit: small and enough to tell two modules apart (not a security hash).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3))
}

/// `module=PATH module_bytes=N module_fnv1a64=HEX`, or `None` when it does not fit.
pub fn module_line(module: &str, bytes: &[u8]) -> Option<DigestLine> {
    let mut line = DigestLine::new();
    write!(line, "module={module} module_bytes={} module_fnv1a64={:016x}", bytes.len(), fnv1a64(bytes)).ok()?;
    Some(line)
}
