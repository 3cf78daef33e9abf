//! The SDK's JSON against serde_json: the same bytes out, the same values in, and the same error
//! messages for the mistakes a caller makes most (wrong types, missing fields, bad syntax).

use super::{de, ser};
use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use alloc::{format, vec};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

fn written<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    ser::write(&mut out, value).unwrap();
    out
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
enum Shape {
    Unit,
    Newtype(u8),
    Tuple(i32, String),
    Struct { x: f64, tags: Vec<String> },
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Unit;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Pair(u16, bool);

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Everything {
    text: String,
    letter: char,
    small: i8,
    big: u64,
    negative: i64,
    wide: i128,
    unsigned_wide: u128,
    ratio: f32,
    precise: f64,
    maybe: Option<bool>,
    nothing: Option<u32>,
    unit: (),
    unit_struct: Unit,
    pair: Pair,
    shapes: Vec<Shape>,
    by_number: BTreeMap<i32, String>,
    by_flag: BTreeMap<bool, u8>,
    #[serde(with = "bytes_as_seq")]
    raw: Vec<u8>,
    any: Value,
}

/// `Vec<u8>` through serialize_bytes / deserialize_bytes.
mod bytes_as_seq {
    use alloc::vec::Vec;
    pub fn serialize<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(bytes)
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct Bytes;
        impl<'de> serde::de::Visitor<'de> for Bytes {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = seq.next_element()? {
                    out.push(b);
                }
                Ok(out)
            }
        }
        d.deserialize_bytes(Bytes)
    }
}

fn everything() -> Everything {
    Everything {
        text: "quote \" backslash \\ slash / controls \u{0}\u{8}\u{9}\u{a}\u{c}\u{d}\u{1f}\u{7f} é 😀 end".into(),
        letter: '\n',
        small: -128,
        big: u64::MAX,
        negative: i64::MIN,
        wide: i128::MIN,
        unsigned_wide: u128::MAX,
        ratio: 0.1,
        precise: -1.5e-300,
        maybe: Some(false),
        nothing: None,
        unit: (),
        unit_struct: Unit,
        pair: Pair(65535, true),
        shapes: vec![
            Shape::Unit,
            Shape::Newtype(7),
            Shape::Tuple(-1, "t".into()),
            Shape::Struct { x: 2.0, tags: vec!["a".into(), String::new()] },
        ],
        by_number: [(-3, "minus".to_string()), (10, "ten".to_string())].into_iter().collect(),
        by_flag: [(true, 1), (false, 0)].into_iter().collect(),
        raw: vec![0, 1, 255],
        any: json!({"nested": [1, -2, 3.25, null, true, {"deep": ["x"]}], "": {}, "e": []}),
    }
}

#[test]
fn output_is_byte_for_byte_what_serde_json_writes() {
    let value = everything();
    assert_eq!(written(&value), serde_json::to_vec(&value).unwrap());
    let values = [
        json!(null),
        json!(0),
        json!(-0.0),
        json!(1e300),
        json!(123456789.125),
        json!(""),
        json!([]),
        json!({}),
        json!([[[]], {"a": {"b": {}}}]),
    ];
    for value in &values {
        assert_eq!(written(value), serde_json::to_vec(value).unwrap(), "{value}");
    }
    // Every single byte and every length around a word boundary escapes as serde_json escapes.
    for byte in 0u8..0x80 {
        for len in [1, 7, 8, 9, 17] {
            let text: String = core::iter::repeat_n('a', len).chain([char::from(byte)]).chain("zz".chars()).collect();
            assert_eq!(written(&text), serde_json::to_vec(&text).unwrap(), "{byte:#x} after {len}");
        }
    }
    assert_eq!(written(&f64::NAN), b"null");
    assert_eq!(written(&[f32::INFINITY]), b"[null]");
    let mut bad_key = BTreeMap::new();
    bad_key.insert(vec![1], 2);
    let mut out = Vec::new();
    assert_eq!(ser::write(&mut out, &bad_key).unwrap_err().to_string(), "key must be a string");
}

#[test]
fn input_reads_as_serde_json_reads_it() {
    // Floats are parsed by serde_json itself, so they read exactly as with serde_json.
    let text = serde_json::to_vec(&everything()).unwrap();
    assert_eq!(de::from_slice::<Everything>(&text).unwrap(), serde_json::from_slice::<Everything>(&text).unwrap());
    let texts = [
        "null",
        " \t\r\n[1 , 2,3 ] ",
        r#"{"a":{"b":[{},[],"",0,-0,1.5e10,-2E-3,18446744073709551615,18446744073709551616,-9223372036854775808]}}"#,
        r#""\u00e9\ud83d\ude00\/\b\f\n\r\t\"\\""#,
        r#"{"dup":1,"dup":2}"#,
        "123456789012345678901234567890",
        "0.30000000000000004",
    ];
    for text in texts {
        let ours: Value = de::from_slice(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(ours, serde_json::from_str::<Value>(text).unwrap(), "{text}");
    }
    // Borrowed where possible, copied when the text has escapes.
    #[derive(Deserialize)]
    struct Names<'a> {
        plain: &'a str,
        #[serde(borrow)]
        escaped: Cow<'a, str>,
    }
    let names: Names = de::from_slice(br#"{"plain":"abc","escaped":"a\nb"}"#).unwrap();
    assert_eq!((names.plain, names.escaped.as_ref()), ("abc", "a\nb"));
    assert!(matches!(names.escaped, Cow::Owned(_)));
    // Map keys spell numbers and bools; unknown fields are skipped.
    #[derive(Deserialize, Debug, PartialEq)]
    struct Keys {
        numbers: BTreeMap<u8, i8>,
        flags: BTreeMap<bool, ()>,
    }
    let keys: Keys =
        de::from_slice(br#"{"skip":[{"x":"]"}],"numbers":{"1":-1,"200":2},"flags":{"true":null}}"#).unwrap();
    assert_eq!(keys.numbers, [(1, -1), (200, 2)].into_iter().collect());
    assert_eq!(keys.flags.len(), 1);
    let (value, end) = de::from_prefix::<Value>(br#"{"a":1}, "rest""#).unwrap();
    assert_eq!((value, end), (json!({"a": 1}), 7));
}

#[test]
fn errors_read_as_serde_json_words_them() {
    #[derive(Deserialize, Debug)]
    struct Params {
        #[allow(dead_code)]
        name: String,
    }
    #[derive(Deserialize, Debug)]
    struct Small {
        #[allow(dead_code)]
        n: u8,
    }
    let cases = [
        r#"{"name":7}"#,
        r#"{"name":-7}"#,
        r#"{"name":true}"#,
        r#"{"name":null}"#,
        r#"{"name":[1]}"#,
        r#"{"name":{}}"#,
        r#"{}"#,
        r#"{"name":"x"} x"#,
        r#"{"name":"x",}"#,
        "{\n \"name\" : 7 }",
        r#"[7]"#,
        r#"{"name":"\ud800"}"#,
        r#"{"name":"\udc00"}"#,
        r#"{"name":"a\qb"}"#,
        "{\"name\":\"a\u{1}b\"}",
        r#"{"name":"x""#,
        r#"{"name" "x"}"#,
        r#"{"name":"x" "y"}"#,
        r#"{"name":tru}"#,
        r#"{name:"x"}"#,
    ];
    for text in cases {
        let ours = de::from_slice::<Params>(text.as_bytes()).unwrap_err().to_string();
        let theirs = serde_json::from_str::<Params>(text).unwrap_err().to_string();
        assert_eq!(ours, theirs, "{text}");
    }
    for text in [
        r#"{"n":300}"#,
        r#"{"n":"1"}"#,
        r#"{"n":-1}"#,
        r#"{"n":01}"#,
        r#"{"n":1.}"#,
        r#"{"n":-}"#,
        r#"{"n":1e+}"#,
        r#"{"n":"a\"b\\c\n\u0001é"}"#,
        r#"{"n":false}"#,
        r#"{"n":{"a":1}}"#,
    ] {
        let ours = de::from_slice::<Small>(text.as_bytes()).unwrap_err().to_string();
        let theirs = serde_json::from_str::<Small>(text).unwrap_err().to_string();
        assert_eq!(ours, theirs, "{text}");
    }
    // A float where an integer type is wanted: the same error, the float not spelled out.
    let error = de::from_slice::<Small>(br#"{"n":1.0}"#).unwrap_err().to_string();
    assert_eq!(error, "invalid type: floating point number, expected u8 at line 1 column 8");
    // Nesting past the limit is an error, not a stack overflow.
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert!(de::from_slice::<Value>(deep.as_bytes()).unwrap_err().to_string().starts_with("recursion limit exceeded"));
    let fine = format!("{}{}", "[".repeat(100), "]".repeat(100));
    assert!(de::from_slice::<Value>(fine.as_bytes()).is_ok());
}
