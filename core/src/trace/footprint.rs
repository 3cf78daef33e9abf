//! A trace's footprint: what its decoded form may hold in memory, counted the same way while
//! recording and before decoding, so untrusted bytes cannot decode into much more than they
//! are. Each element costs its payload bytes plus a fixed cost for the record that holds it
//! (fixed numbers, the same on every architecture, so a trace is accepted or refused alike
//! everywhere): a 3-byte clock input decodes into a whole `Input`, and without the count a
//! 60 MB trace of them took 5.6 GB to decode.

use super::{Input, PolicyRecord, MAX_TRACE_BYTES};
use crate::meter::Cut;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

/// What each input costs over its payload (covers `size_of::<Input>()` on 64-bit hosts).
pub const INPUT_COST: usize = 64;
/// What each intent costs over its request and response bytes.
pub const INTENT_COST: usize = 256;
/// What each grant costs over its text.
pub const GRANT_COST: usize = 32;
/// The largest footprint a trace may have, recorded or decoded (the encoded bytes are never
/// more than the footprint).
pub const MAX_TRACE_FOOTPRINT: usize = MAX_TRACE_BYTES;

/// The footprint of one input: its payload and [`INPUT_COST`].
pub(crate) fn input(input: &Input) -> usize {
    input.size().saturating_add(INPUT_COST)
}

/// The footprint of one intent's own record (its inputs are counted one by one).
pub(crate) fn intent(request: usize, response: usize, reason: usize) -> usize {
    request.saturating_add(response).saturating_add(reason).saturating_add(INTENT_COST)
}

/// The footprint of trace `bytes`, found by decoding them one element at a time and keeping
/// none: memory stays at one element, whatever the trace holds. The census types mirror
/// [`super::Trace`], [`super::Header`] and [`super::IntentTrace`] field for field (every
/// trace the tests decode goes through both).
pub(crate) fn of(bytes: &[u8]) -> Result<usize, postcard::Error> {
    let (census, _) = postcard::take_from_bytes::<TraceCensus>(bytes)?;
    Ok(census.header.footprint().saturating_add(census.intents.0))
}

#[derive(Deserialize)]
struct TraceCensus {
    header: HeaderCensus,
    intents: Sum<IntentCensus>,
}

#[derive(Deserialize)]
#[allow(dead_code)] // read only to move past it
struct HeaderCensus {
    magic: [u8; 8],
    format: u16,
    contour: String,
    wasmi: String,
    module_sha256: super::Digest,
    module: String,
    policy: PolicyRecord,
    grants: Sum<String>,
}

impl HeaderCensus {
    fn footprint(&self) -> usize {
        self.contour
            .len()
            .saturating_add(self.wasmi.len())
            .saturating_add(self.module.len())
            .saturating_add(self.grants.0)
    }
}

#[derive(Deserialize)]
#[allow(dead_code)] // read only to move past it
struct IntentCensus {
    request: Vec<u8>,
    inputs: Sum<Input>,
    response: Vec<u8>,
    reason: Option<String>,
    fuel: u64,
    launch_fuel: u64,
    peak_memory: u64,
    output_digest: super::Digest,
    cut: Option<Cut>,
}

/// One element's footprint, for [`Sum`].
trait Footprint {
    fn footprint(&self) -> usize;
}

impl Footprint for Input {
    fn footprint(&self) -> usize {
        input(self)
    }
}

impl Footprint for String {
    fn footprint(&self) -> usize {
        self.len().saturating_add(GRANT_COST)
    }
}

impl Footprint for IntentCensus {
    fn footprint(&self) -> usize {
        let reason = self.reason.as_ref().map_or(0, String::len);
        intent(self.request.len(), self.response.len(), reason).saturating_add(self.inputs.0)
    }
}

/// A sequence of `T` read one element at a time and dropped: the sum of their footprints.
struct Sum<T>(usize, PhantomData<T>);

impl<'de, T: Deserialize<'de> + Footprint> Deserialize<'de> for Sum<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(SumVisitor(PhantomData))
    }
}

struct SumVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de> + Footprint> Visitor<'de> for SumVisitor<T> {
    type Value = Sum<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut total = 0usize;
        while let Some(element) = seq.next_element::<T>()? {
            total = total.saturating_add(element.footprint());
        }
        Ok(Sum(total, PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::IntentTrace;

    #[test]
    fn the_fixed_costs_cover_the_records_they_stand_for() {
        assert!(core::mem::size_of::<Input>() <= INPUT_COST, "{}", core::mem::size_of::<Input>());
        assert!(core::mem::size_of::<IntentTrace>() <= INTENT_COST, "{}", core::mem::size_of::<IntentTrace>());
        assert!(core::mem::size_of::<String>() <= GRANT_COST);
    }
}
