//! A serde `Serializer` that appends compact JSON to a byte buffer, byte for byte what
//! `serde_json::to_vec` writes: strings are checked 16 bytes a round and copied in runs,
//! integers are written here, floats and 128-bit integers by serde_json itself.

use super::scan;
use super::Error;
use alloc::vec::Vec;
use serde::ser::{self, Serialize};

type Result<T> = core::result::Result<T, Error>;

/// Appends `value` as JSON to `out`. On an error (a type JSON cannot hold, such as a map with
/// non-string keys) `out` holds part of the value.
pub(crate) fn write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<()> {
    value.serialize(&mut Writer { out })
}

/// Appends `text` as a JSON string literal (quotes, backslash and control characters escaped as
/// serde_json escapes them). Runs without escapes are found 16 bytes at a time and copied whole.
#[inline]
pub(crate) fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let plain = scan::plain_run_end(bytes, 0);
    out.extend_from_slice(bytes.get(..plain).unwrap_or_default());
    if plain < bytes.len() {
        write_escaped(out, bytes, plain);
    }
    out.push(b'"');
}

/// The rest of [`write_str`] from the first byte that needs an escape, at `from`.
#[inline(never)]
fn write_escaped(out: &mut Vec<u8>, bytes: &[u8], mut from: usize) {
    while let Some(&byte) = bytes.get(from) {
        let short = match byte {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            0x0c => b'f',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            _ => 0,
        };
        if short != 0 {
            out.extend_from_slice(&[b'\\', short]);
        } else {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 15)]]);
        }
        let run = from + 1;
        from = scan::plain_run_end(bytes, run);
        out.extend_from_slice(bytes.get(run..from).unwrap_or_default());
    }
}

/// Appends `value` in decimal.
pub(crate) fn write_u64(out: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(digits.get(at..).unwrap_or_default());
}

fn write_i64(out: &mut Vec<u8>, value: i64) {
    if value < 0 {
        out.push(b'-');
    }
    write_u64(out, value.unsigned_abs());
}

/// Appends what serde_json writes for `value` (floats, 128-bit integers).
fn write_with_serde_json<T: Serialize>(out: &mut Vec<u8>, value: T) -> Result<()> {
    let json = serde_json::to_vec(&value).map_err(Error::message)?;
    out.extend_from_slice(&json);
    Ok(())
}

/// The serializer: the buffer JSON is appended to.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

/// A container being written: whether a member was written yet, and how it ends.
struct Compound<'w, 'a> {
    writer: &'w mut Writer<'a>,
    first: bool,
    /// What closes it: `]`, `}`, or `]}` / `}}` for a variant's content.
    close: &'static [u8],
}

impl Compound<'_, '_> {
    fn comma(&mut self) {
        if !core::mem::replace(&mut self.first, false) {
            self.writer.out.push(b',');
        }
    }

    fn end(self) -> Result<()> {
        self.writer.out.extend_from_slice(self.close);
        Ok(())
    }
}

impl<'w, 'a> Writer<'a> {
    fn open(&'w mut self, open: &[u8], close: &'static [u8]) -> Compound<'w, 'a> {
        self.out.extend_from_slice(open);
        Compound { writer: self, first: true, close }
    }

    /// `{"variant":` before a variant's content.
    fn variant_key(&mut self, variant: &str) {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
    }
}

impl<'w, 'a> ser::Serializer for &'w mut Writer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'w, 'a>;
    type SerializeTuple = Compound<'w, 'a>;
    type SerializeTupleStruct = Compound<'w, 'a>;
    type SerializeTupleVariant = Compound<'w, 'a>;
    type SerializeMap = Compound<'w, 'a>;
    type SerializeStruct = Compound<'w, 'a>;
    type SerializeStructVariant = Compound<'w, 'a>;

    fn serialize_bool(self, value: bool) -> Result<()> {
        self.out.extend_from_slice(if value { b"true" } else { b"false" });
        Ok(())
    }

    fn serialize_i8(self, value: i8) -> Result<()> {
        write_i64(self.out, value.into());
        Ok(())
    }

    fn serialize_i16(self, value: i16) -> Result<()> {
        write_i64(self.out, value.into());
        Ok(())
    }

    fn serialize_i32(self, value: i32) -> Result<()> {
        write_i64(self.out, value.into());
        Ok(())
    }

    fn serialize_i64(self, value: i64) -> Result<()> {
        write_i64(self.out, value);
        Ok(())
    }

    fn serialize_i128(self, value: i128) -> Result<()> {
        write_with_serde_json(self.out, value)
    }

    fn serialize_u8(self, value: u8) -> Result<()> {
        write_u64(self.out, value.into());
        Ok(())
    }

    fn serialize_u16(self, value: u16) -> Result<()> {
        write_u64(self.out, value.into());
        Ok(())
    }

    fn serialize_u32(self, value: u32) -> Result<()> {
        write_u64(self.out, value.into());
        Ok(())
    }

    fn serialize_u64(self, value: u64) -> Result<()> {
        write_u64(self.out, value);
        Ok(())
    }

    fn serialize_u128(self, value: u128) -> Result<()> {
        write_with_serde_json(self.out, value)
    }

    fn serialize_f32(self, value: f32) -> Result<()> {
        write_with_serde_json(self.out, value)
    }

    fn serialize_f64(self, value: f64) -> Result<()> {
        write_with_serde_json(self.out, value)
    }

    fn serialize_char(self, value: char) -> Result<()> {
        write_str(self.out, value.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, value: &str) -> Result<()> {
        write_str(self.out, value);
        Ok(())
    }

    fn serialize_bytes(self, value: &[u8]) -> Result<()> {
        self.out.push(b'[');
        for (i, &byte) in value.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            write_u64(self.out, byte.into());
        }
        self.out.push(b']');
        Ok(())
    }

    fn serialize_none(self) -> Result<()> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<()> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<()> {
        write_str(self.out, variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.variant_key(variant);
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'w, 'a>> {
        Ok(self.open(b"[", b"]"))
    }

    fn serialize_tuple(self, _len: usize) -> Result<Compound<'w, 'a>> {
        Ok(self.open(b"[", b"]"))
    }

    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Compound<'w, 'a>> {
        Ok(self.open(b"[", b"]"))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'w, 'a>> {
        self.variant_key(variant);
        Ok(self.open(b"[", b"]}"))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'w, 'a>> {
        Ok(self.open(b"{", b"}"))
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Compound<'w, 'a>> {
        Ok(self.open(b"{", b"}"))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'w, 'a>> {
        self.variant_key(variant);
        Ok(self.open(b"{", b"}}"))
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.comma();
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.comma();
        key.serialize(MapKey { out: &mut *self.writer.out })?;
        self.writer.out.push(b':');
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<()> {
        self.comma();
        write_str(self.writer.out, key);
        self.writer.out.push(b':');
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<()> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }

    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

/// A map key: JSON keys are strings, so strings, chars and unit variants are written as they are,
/// and bools, integers and finite floats as the string of their JSON text (as serde_json does);
/// anything else is an error.
struct MapKey<'a> {
    out: &'a mut Vec<u8>,
}

impl MapKey<'_> {
    /// The key `"TEXT"` where TEXT is what `write` appends.
    fn quoted(self, write: impl FnOnce(&mut Vec<u8>) -> Result<()>) -> Result<()> {
        self.out.push(b'"');
        write(self.out)?;
        self.out.push(b'"');
        Ok(())
    }
}

fn key_must_be_a_string() -> Error {
    Error::message("key must be a string")
}

macro_rules! integer_keys {
    ($($method:ident($ty:ty) => $write:ident),* $(,)?) => {
        $(fn $method(self, value: $ty) -> Result<()> {
            self.quoted(|out| {
                $write(out, value.into());
                Ok(())
            })
        })*
    };
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, value: &str) -> Result<()> {
        write_str(self.out, value);
        Ok(())
    }

    fn serialize_char(self, value: char) -> Result<()> {
        write_str(self.out, value.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_bool(self, value: bool) -> Result<()> {
        self.out.extend_from_slice(if value { b"\"true\"" } else { b"\"false\"" });
        Ok(())
    }

    integer_keys! {
        serialize_i8(i8) => write_i64, serialize_i16(i16) => write_i64, serialize_i32(i32) => write_i64,
        serialize_i64(i64) => write_i64, serialize_u8(u8) => write_u64, serialize_u16(u16) => write_u64,
        serialize_u32(u32) => write_u64, serialize_u64(u64) => write_u64,
    }

    fn serialize_i128(self, value: i128) -> Result<()> {
        self.quoted(|out| write_with_serde_json(out, value))
    }

    fn serialize_u128(self, value: u128) -> Result<()> {
        self.quoted(|out| write_with_serde_json(out, value))
    }

    fn serialize_f32(self, value: f32) -> Result<()> {
        if !value.is_finite() {
            return Err(Error::message("float key must be finite (got NaN or +/-inf)"));
        }
        self.quoted(|out| write_with_serde_json(out, value))
    }

    fn serialize_f64(self, value: f64) -> Result<()> {
        if !value.is_finite() {
            return Err(Error::message("float key must be finite (got NaN or +/-inf)"));
        }
        self.quoted(|out| write_with_serde_json(out, value))
    }

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<()> {
        write_str(self.out, variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_bytes(self, _value: &[u8]) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_none(self) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeTupleStruct> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(key_must_be_a_string())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(key_must_be_a_string())
    }
}
