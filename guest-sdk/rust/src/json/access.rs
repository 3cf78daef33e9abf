//! What the deserializer hands serde's visitors: the elements of an array, the members of an
//! object (and their keys, read as serde_json reads map keys), and the variants of an enum. The hot
//! paths (the next element, key or value) are kept small and their errors out of line: an
//! interpreter charges a function's whole body on every call, taken branches or not. The next key
//! and value are calls of their own in a build for size; a build with `simd128` (built for speed)
//! inlines them into the visitor, since a call is the interpreter's dearest instruction (about 150
//! host instructions in wasmi 2.0): a warm 128 B greet takes 663 fewer host instructions for 522
//! more fuel, and stays under the scalar build's fuel.

use super::de::{from_slice, Deserializer, Text};
use super::Error;
use serde::de::{self, DeserializeSeed, Unexpected, Visitor};
use serde::Deserialize;

type Result<T> = core::result::Result<T, Error>;

/// The elements of an array.
pub(super) struct Seq<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    first: bool,
}

impl<'a, 'de> Seq<'a, 'de> {
    pub(super) fn new(de: &'a mut Deserializer<'de>) -> Self {
        Self { de, first: true }
    }
}

impl<'de> de::SeqAccess<'de> for Seq<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match self.de.peek() {
            Some(b']') => return Ok(None),
            Some(b',') if !self.first => {
                self.de.pos += 1;
                if self.de.peek() == Some(b']') {
                    return Err(Error::at("trailing comma", self.de.pos + 1));
                }
            }
            Some(_) if self.first => {}
            _ => return Err(self.error()),
        }
        self.first = false;
        seed.deserialize(&mut *self.de).map(Some)
    }
}

impl Seq<'_, '_> {
    #[cold]
    #[inline(never)]
    fn error(&mut self) -> Error {
        match self.de.peek() {
            Some(_) => Error::at("expected `,` or `]`", self.de.pos + 1),
            None => Error::at("EOF while parsing a list", self.de.pos),
        }
    }
}

/// The members of an object.
pub(super) struct Map<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    first: bool,
}

impl<'a, 'de> Map<'a, 'de> {
    pub(super) fn new(de: &'a mut Deserializer<'de>) -> Self {
        Self { de, first: true }
    }

    /// Why no key follows (the byte at the current position, after whitespace).
    #[cold]
    #[inline(never)]
    fn key_error(&mut self) -> Error {
        match self.de.peek() {
            Some(b',') if !self.first => {
                self.de.pos += 1;
                match self.de.peek() {
                    Some(b'}') => Error::at("trailing comma", self.de.pos + 1),
                    _ => Error::at("key must be a string", self.de.pos + 1),
                }
            }
            Some(_) if self.first => Error::at("key must be a string", self.de.pos + 1),
            Some(_) => Error::at("expected `,` or `}`", self.de.pos + 1),
            None => Error::at("EOF while parsing an object", self.de.pos),
        }
    }

    #[cold]
    #[inline(never)]
    fn colon_error(&mut self) -> Error {
        match self.de.peek() {
            Some(_) => Error::at("expected `:`", self.de.pos + 1),
            None => Error::at("EOF while parsing an object", self.de.pos),
        }
    }
}

impl<'de> de::MapAccess<'de> for Map<'_, 'de> {
    type Error = Error;

    #[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), inline)]
    #[cfg_attr(not(all(target_arch = "wasm32", target_feature = "simd128")), inline(never))]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let at = self.de.peek();
        if at == Some(b'}') {
            return Ok(None);
        }
        let quote_at = if self.first { self.de.pos } else { self.de.pos + 1 };
        let quote_follows =
            if self.first { at == Some(b'"') } else { at == Some(b',') && self.de.bytes.get(quote_at) == Some(&b'"') };
        if !quote_follows {
            return self.next_key_slow(seed);
        }
        self.de.pos = quote_at;
        self.first = false;
        seed.deserialize(MapKey { de: &mut *self.de }).map(Some)
    }

    #[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), inline)]
    #[cfg_attr(not(all(target_arch = "wasm32", target_feature = "simd128")), inline(never))]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        if self.de.peek() != Some(b':') {
            return Err(self.colon_error());
        }
        self.de.pos += 1;
        seed.deserialize(&mut *self.de)
    }
}

impl<'de> Map<'_, 'de> {
    /// The next key after whitespace between `,` and the key, or the error.
    #[inline(never)]
    fn next_key_slow<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if !self.first && self.de.peek() == Some(b',') {
            let comma = self.de.pos;
            self.de.pos += 1;
            if self.de.peek() == Some(b'"') {
                self.first = false;
                return seed.deserialize(MapKey { de: &mut *self.de }).map(Some);
            }
            self.de.pos = comma;
        }
        Err(self.key_error())
    }
}

/// An object's key (always a JSON string): text, or for number and bool types the value the text
/// spells, as serde_json reads map keys.
pub(super) struct MapKey<'a, 'de> {
    de: &'a mut Deserializer<'de>,
}

macro_rules! spelled_keys {
    ($($method:ident),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            let start = self.de.pos;
            let spelled = match self.de.text()? {
                Text::Borrowed(text) | Text::Copied(text) => match from_slice::<Spelled>(text.as_bytes()) {
                    Ok(Spelled(Some(value))) => Ok(value),
                    _ => Err(de::Error::invalid_type(Unexpected::Str(text), &visitor)),
                },
            };
            spelled.map_err(|error: Error| error.or_at(start))?.visit(visitor)
        })*
    };
}

impl<'de> de::Deserializer<'de> for MapKey<'_, 'de> {
    type Error = Error;

    /// The key's text (reading is at its opening quote).
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.de.text()? {
            Text::Borrowed(text) => visitor.visit_borrowed_str(text),
            Text::Copied(text) => visitor.visit_str(text),
        }
    }

    spelled_keys! {
        deserialize_bool, deserialize_i8, deserialize_i16, deserialize_i32, deserialize_i64, deserialize_u8,
        deserialize_u16, deserialize_u32, deserialize_u64, deserialize_f32, deserialize_f64,
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_enum(self.de, name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        i128 u128 char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// A key's text read as a JSON number or bool (`"7"` as 7, `"true"` as true).
enum SpelledValue {
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl SpelledValue {
    fn visit<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self {
            SpelledValue::Bool(value) => visitor.visit_bool(value),
            SpelledValue::U64(value) => visitor.visit_u64(value),
            SpelledValue::I64(value) => visitor.visit_i64(value),
            SpelledValue::F64(value) => visitor.visit_f64(value),
        }
    }
}

/// Reads a [`SpelledValue`] (`None` for anything else).
struct Spelled(Option<SpelledValue>);

impl<'de> Deserialize<'de> for Spelled {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> core::result::Result<Self, D::Error> {
        struct Number;
        impl<'de> Visitor<'de> for Number {
            type Value = Option<SpelledValue>;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("a number or a bool")
            }
            fn visit_bool<E>(self, value: bool) -> core::result::Result<Self::Value, E> {
                Ok(Some(SpelledValue::Bool(value)))
            }
            fn visit_u64<E>(self, value: u64) -> core::result::Result<Self::Value, E> {
                Ok(Some(SpelledValue::U64(value)))
            }
            fn visit_i64<E>(self, value: i64) -> core::result::Result<Self::Value, E> {
                Ok(Some(SpelledValue::I64(value)))
            }
            fn visit_f64<E>(self, value: f64) -> core::result::Result<Self::Value, E> {
                Ok(Some(SpelledValue::F64(value)))
            }
        }
        deserializer.deserialize_any(Number).map(Spelled)
    }
}

/// An enum written as its variant's name: a unit variant.
pub(super) struct UnitVariant<'a, 'de> {
    de: &'a mut Deserializer<'de>,
}

impl<'a, 'de> UnitVariant<'a, 'de> {
    pub(super) fn new(de: &'a mut Deserializer<'de>) -> Self {
        Self { de }
    }
}

impl<'de> de::EnumAccess<'de> for UnitVariant<'_, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self)> {
        let variant = seed.deserialize(&mut *self.de)?;
        Ok((variant, self))
    }
}

impl<'de> de::VariantAccess<'de> for UnitVariant<'_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _seed: T) -> Result<T::Value> {
        Err(de::Error::invalid_type(Unexpected::UnitVariant, &"newtype variant"))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value> {
        Err(de::Error::invalid_type(Unexpected::UnitVariant, &"tuple variant"))
    }

    fn struct_variant<V: Visitor<'de>>(self, _fields: &'static [&'static str], _visitor: V) -> Result<V::Value> {
        Err(de::Error::invalid_type(Unexpected::UnitVariant, &"struct variant"))
    }
}

/// An enum written as `{"variant": content}` (the `{` already read).
pub(super) struct TaggedVariant<'a, 'de> {
    de: &'a mut Deserializer<'de>,
}

impl<'a, 'de> TaggedVariant<'a, 'de> {
    pub(super) fn new(de: &'a mut Deserializer<'de>) -> Self {
        Self { de }
    }
}

impl<'de> de::EnumAccess<'de> for TaggedVariant<'_, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self)> {
        if self.de.peek() != Some(b'"') {
            return Err(Error::at("key must be a string", self.de.pos));
        }
        let variant = seed.deserialize(MapKey { de: &mut *self.de })?;
        match self.de.peek() {
            Some(b':') => self.de.pos += 1,
            _ => return Err(Error::at("expected `:`", self.de.pos)),
        }
        Ok((variant, self))
    }
}

impl<'de> de::VariantAccess<'de> for TaggedVariant<'_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        <() as Deserialize>::deserialize(self.de)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self.de)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_seq(self.de, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_struct(self.de, "", fields, visitor)
    }
}
