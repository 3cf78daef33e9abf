//! sha256: the "SHA-256 over N MiB" compute workload of the Contour benchmarks, as a Rust guest plugin.
//!
//! The data is generated in the guest, so the request stays tiny and the figure is the guest's compute, not
//! the transport: byte `i` of the data is `(i * 31 + 7) as u8`. That value depends only on `i mod 256`, so
//! every [`CHUNK_BYTES`]-aligned chunk of the data is the same bytes: the guest generates one chunk and feeds it
//! to the hasher `N * MiB / CHUNK_BYTES` times.
//!
//! - intent `sha256 {mib}`: answers `{"digest": "<64 lowercase hex digits>"}` (at most [`MAX_MIB`] MiB);
//! - export `sha256_mib(n: i32) -> i32`: the same work for `n` MiB, answering the digest's first 4 bytes
//!   (big-endian) as an `i32`, for the bare-wasmi baseline, which calls it without the ABI.
#![no_std]
#![deny(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;

use alloc::string::String;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tdm_plugin::Failure;

/// Bytes in one MiB.
pub const MIB_BYTES: usize = 1 << 20;

/// Bytes in the chunk the guest generates once and hashes repeatedly (a multiple of the pattern's period, 256).
pub const CHUNK_BYTES: usize = 4096;

const _: () = assert!(CHUNK_BYTES % 256 == 0 && MIB_BYTES % CHUNK_BYTES == 0);

/// The most MiB one `sha256` intent hashes (well inside the default fuel budget per intent).
pub const MAX_MIB: u32 = 16;

/// Byte `index` of the generated data.
fn data_byte(index: usize) -> u8 {
    index.wrapping_mul(31).wrapping_add(7) as u8
}

/// The SHA-256 digest of the first `mib` MiB of the generated data.
fn digest_of_mib(mib: u32) -> [u8; 32] {
    let mut chunk = [0u8; CHUNK_BYTES];
    for (index, byte) in chunk.iter_mut().enumerate() {
        *byte = data_byte(index);
    }
    let mut hasher = Sha256::new();
    for _ in 0..mib as usize * (MIB_BYTES / CHUNK_BYTES) {
        hasher.update(chunk);
    }
    hasher.finalize().into()
}

/// The params of `sha256`.
#[derive(Deserialize)]
struct Sha256Params {
    /// How many MiB of the generated data to hash.
    mib: u32,
}

/// The output of `sha256`.
#[derive(Serialize)]
struct Sha256Digest {
    /// The digest as 64 lowercase hex digits.
    digest: String,
}

/// `sha256 {mib}`: the digest of `mib` MiB of the generated data; more than [`MAX_MIB`] is the plugin's own
/// failed outcome.
fn sha256(params: Sha256Params) -> Result<Sha256Digest, Failure> {
    if params.mib > MAX_MIB {
        return Err(Failure::new("too_large", alloc::format!("{} MiB; at most {MAX_MIB} MiB per call.", params.mib))
            .hint("Ask for fewer MiB."));
    }
    const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut digest = String::with_capacity(64);
    for byte in digest_of_mib(params.mib) {
        digest.push(char::from(HEX_DIGITS[usize::from(byte >> 4)]));
        digest.push(char::from(HEX_DIGITS[usize::from(byte & 15)]));
    }
    Ok(Sha256Digest { digest })
}

/// The raw baseline export: the digest of `n` MiB of the generated data (nothing for a negative `n`), answered
/// as its first 4 bytes read big-endian, so `format!("{:08x}", result as u32)` is the hex digest's prefix.
/// No request, no JSON, no allocation.
// SAFETY: `no_mangle` gives the function its plain name as the export; no other symbol of the module is
// named `sha256_mib`.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn sha256_mib(n: i32) -> i32 {
    let digest = digest_of_mib(u32::try_from(n).unwrap_or(0));
    i32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

tdm_plugin::plugin! { "sha256" => sha256 }
