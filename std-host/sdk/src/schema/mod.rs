//! The JSON Schemas an intent declares for its params and its result: checked where a package
//! or a module declares one (bounded in size and depth, every keyword known, every `pattern` a
//! linear-time regex, every `$ref` a pointer into the schema itself), then applied to an
//! agent's arguments with a step budget (`eval`), so neither a schema from an untrusted package
//! nor the arguments it is applied to can make validation slow or deep.
//!
//! The dialect is JSON Schema 2020-12, with the draft-07 forms tools still write
//! (`definitions`, `items` as an array with `additionalItems`). Refused at declaration, with the
//! keyword named: `$dynamicRef`, `$recursiveRef`, `unevaluatedProperties`, `unevaluatedItems`,
//! and a `$ref` to another document (nothing is ever fetched). `format` is an annotation, as
//! 2020-12 has it.

mod eval;

pub use eval::{Mismatch, VALIDATION_STEPS};

use regex::Regex;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;

/// The most bytes a declared schema may have, written as compact JSON.
pub const MAX_SCHEMA_BYTES: usize = 16 * 1024;
/// The deepest a declared schema may nest (objects and arrays).
pub const MAX_SCHEMA_DEPTH: usize = 32;
/// The most bytes a compiled `pattern` may take (the regex crate's own bound).
const MAX_PATTERN_PROGRAM: usize = 256 * 1024;

/// Why a declared schema was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaError {
    /// Larger than [`MAX_SCHEMA_BYTES`] (its size).
    TooLarge(usize),
    /// Nests deeper than [`MAX_SCHEMA_DEPTH`].
    TooDeep,
    /// Not a schema at the pointer (why).
    Invalid(String, String),
    /// A keyword this host does not apply, at the pointer.
    Unsupported(String, String),
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge(size) => write!(f, "the schema has {size} bytes, more than {MAX_SCHEMA_BYTES}"),
            Self::TooDeep => write!(f, "the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"),
            Self::Invalid(at, why) => write!(f, "the schema at `#{at}` {why}"),
            Self::Unsupported(at, keyword) => {
                write!(f, "the schema at `#{at}` uses `{keyword}`, which Contour does not apply (docs/mcp.md, Schemas)")
            }
        }
    }
}

impl std::error::Error for SchemaError {}

/// A declared schema, checked and ready to apply.
#[derive(Debug, Clone)]
pub struct Schema {
    root: Value,
    patterns: HashMap<String, Regex>,
}

/// Keywords whose value is one subschema.
const ONE: &[&str] =
    &["not", "if", "then", "else", "additionalProperties", "additionalItems", "contains", "propertyNames"];
/// Keywords whose value is an object of subschemas.
const MANY_BY_NAME: &[&str] = &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/// Keywords whose value is an array of subschemas.
const MANY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is a non-negative integer.
const COUNTS: &[&str] =
    &["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"];
/// Keywords whose value is a number.
const BOUNDS: &[&str] = &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];
/// Keywords refused.
const UNSUPPORTED: &[&str] = &[
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$vocabulary",
];
/// The type names.
const TYPES: &[&str] = &["null", "boolean", "object", "array", "number", "string", "integer"];

impl Schema {
    /// Checks `value` as a declared schema.
    pub fn new(value: &Value) -> Result<Self, SchemaError> {
        let size = value.to_string().len();
        if size > MAX_SCHEMA_BYTES {
            return Err(SchemaError::TooLarge(size));
        }
        if depth(value) > MAX_SCHEMA_DEPTH {
            return Err(SchemaError::TooDeep);
        }
        let mut schema = Self { root: value.clone(), patterns: HashMap::new() };
        schema.check(value, String::new())?;
        Ok(schema)
    }

    /// Whether `instance` is valid, within [`VALIDATION_STEPS`]; the first mismatch otherwise.
    pub fn validate(&self, instance: &Value) -> Result<(), Mismatch> {
        eval::Eval::new(self).validate(instance)
    }

    /// The compiled regex of `pattern` (checked at declaration).
    fn pattern(&self, pattern: &str) -> Option<&Regex> {
        self.patterns.get(pattern)
    }

    /// The subschema `reference` points to (`#` or `#/...`, a JSON pointer into the root).
    fn resolve(&self, reference: &str) -> Option<&Value> {
        let pointer = reference.strip_prefix('#')?;
        if pointer.is_empty() {
            return Some(&self.root);
        }
        self.root.pointer(&percent_decoded(pointer)?)
    }

    /// Checks the subschema `value` at pointer `at`.
    fn check(&mut self, value: &Value, at: String) -> Result<(), SchemaError> {
        let map = match value {
            Value::Bool(_) => return Ok(()),
            Value::Object(map) => map,
            _ => return Err(SchemaError::Invalid(at, "is neither an object nor a boolean".into())),
        };
        for (keyword, v) in map {
            let here = child(&at, keyword);
            let invalid = |why: &str| Err(SchemaError::Invalid(here.clone(), why.to_string()));
            let k = keyword.as_str();
            if UNSUPPORTED.contains(&k) {
                return Err(SchemaError::Unsupported(at, keyword.clone()));
            }
            if ONE.contains(&k) {
                self.check(v, here)?;
            } else if MANY_BY_NAME.contains(&k) {
                let Value::Object(entries) = v else { return invalid("must be an object of schemas") };
                for (name, sub) in entries {
                    if k == "patternProperties" {
                        self.compile(name, &here)?;
                    }
                    self.check(sub, child(&here, name))?;
                }
            } else if MANY.contains(&k) {
                let Value::Array(items) = v else { return invalid("must be an array of schemas") };
                if items.is_empty() && k != "prefixItems" {
                    return invalid("must not be empty");
                }
                for (n, sub) in items.iter().enumerate() {
                    self.check(sub, format!("{here}/{n}"))?;
                }
            } else if k == "items" {
                match v {
                    Value::Array(items) => {
                        for (n, sub) in items.iter().enumerate() {
                            self.check(sub, format!("{here}/{n}"))?;
                        }
                    }
                    _ => self.check(v, here)?,
                }
            } else if COUNTS.contains(&k) {
                if v.as_u64().is_none() {
                    return invalid("must be a non-negative integer");
                }
            } else if BOUNDS.contains(&k) {
                if !v.is_number() {
                    return invalid("must be a number");
                }
            } else {
                match k {
                    "multipleOf" if !v.as_f64().is_some_and(|m| m > 0.0) => return invalid("must be a number above 0"),
                    "type" => {
                        let names: Vec<&Value> = match v {
                            Value::Array(names) if !names.is_empty() => names.iter().collect(),
                            Value::String(_) => vec![v],
                            _ => return invalid("must be a type name or a non-empty array of them"),
                        };
                        if !names.iter().all(|n| n.as_str().is_some_and(|n| TYPES.contains(&n))) {
                            return invalid(&format!("must name types among {}", TYPES.join(", ")));
                        }
                    }
                    "enum" if !v.is_array() => return invalid("must be an array"),
                    "required" if !strings(v) => return invalid("must be an array of strings"),
                    "dependentRequired" if !v.as_object().is_some_and(|m| m.values().all(strings)) => {
                        return invalid("must be an object of arrays of strings")
                    }
                    "uniqueItems" if !v.is_boolean() => return invalid("must be a boolean"),
                    "pattern" => {
                        let Some(pattern) = v.as_str() else { return invalid("must be a string") };
                        self.compile(pattern, &here)?;
                    }
                    "$ref" => {
                        let Some(reference) = v.as_str() else { return invalid("must be a string") };
                        if !reference.starts_with('#') {
                            return invalid("points to another document; only `#` and `#/...` pointers are applied");
                        }
                        if self.resolve(reference).is_none() {
                            return invalid(&format!("points to `{reference}`, which the schema does not have"));
                        }
                    }
                    "$id" if !at.is_empty() => return Err(SchemaError::Unsupported(at, keyword.clone())),
                    "$schema" => {
                        let known = v.as_str().is_some_and(|uri| {
                            ["draft/2020-12/schema", "draft/2019-09/schema", "draft-07/schema"]
                                .iter()
                                .any(|dialect| uri.trim_end_matches('#').ends_with(dialect))
                        });
                        if !known {
                            return invalid("names a dialect other than 2020-12, 2019-09 or draft-07");
                        }
                    }
                    // Values and annotations: `const`, `format`, `title`, `description`,
                    // `default`, `examples` and any keyword no vocabulary defines.
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Compiles `pattern` (linear-time matching, a bounded program) once.
    fn compile(&mut self, pattern: &str, at: &str) -> Result<(), SchemaError> {
        if self.patterns.contains_key(pattern) {
            return Ok(());
        }
        let regex = regex::RegexBuilder::new(pattern)
            .size_limit(MAX_PATTERN_PROGRAM)
            .dfa_size_limit(MAX_PATTERN_PROGRAM)
            .build()
            .map_err(|e| {
                let why = e.to_string();
                let first = why.lines().last().unwrap_or_default().trim().to_string();
                SchemaError::Invalid(at.to_string(), format!("has a pattern this host cannot apply: {first}"))
            })?;
        self.patterns.insert(pattern.to_string(), regex);
        Ok(())
    }
}

/// A URI fragment with its `%XX` escapes decoded; `None` when one is malformed or the result
/// is not UTF-8.
fn percent_decoded(fragment: &str) -> Option<String> {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The JSON pointer of member `name` below pointer `at` (`~` and `/` escaped, RFC 6901).
fn child(at: &str, name: &str) -> String {
    format!("{at}/{}", name.replace('~', "~0").replace('/', "~1"))
}

/// Whether `v` is an array of strings.
fn strings(v: &Value) -> bool {
    v.as_array().is_some_and(|items| items.iter().all(Value::is_string))
}

/// How deep `value` nests (a scalar is 0), without recursion.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests;
