//! Applying a checked schema to an instance, within a budget: every subschema applied, every
//! keyword and every 64 bytes a pattern or a length reads costs a step, and applying nests at
//! most [`MAX_NESTING`] deep, so a schema built to blow up (`anyOf` of `$ref`s to itself) ends
//! with [`Mismatch::TooCostly`] instead of running for ever or off the stack.

use super::{child, Schema};
use serde_json::{Map, Value};
use std::fmt;

/// The steps one validation may take.
pub const VALIDATION_STEPS: u64 = 1_000_000;
/// The deepest subschemas may be applied within one another (a `$ref` counts).
const MAX_NESTING: usize = 256;
/// The longest instance pointer a mismatch quotes, in bytes.
const MAX_QUOTED_POINTER: usize = 200;

/// Why an instance was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// It does not match: where (a JSON pointer into the instance) and why.
    Invalid(String, String),
    /// Deciding would take more than [`VALIDATION_STEPS`] steps or nest too deep.
    TooCostly,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(at, why) if at.is_empty() => write!(f, "{why}"),
            Self::Invalid(at, why) => {
                let mut shown = at.clone();
                if shown.len() > MAX_QUOTED_POINTER {
                    let mut cut = MAX_QUOTED_POINTER;
                    while !shown.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    shown.truncate(cut);
                    shown.push_str("...");
                }
                write!(f, "at `{}`: {why}", shown.escape_debug())
            }
            Self::TooCostly => {
                write!(f, "checking it against the declared schema would take more than {VALIDATION_STEPS} steps")
            }
        }
    }
}

/// One application of a schema.
pub(super) struct Eval<'s> {
    schema: &'s Schema,
    steps: u64,
    nesting: usize,
}

/// What applying a subschema found: `Ok(None)` valid, `Ok(Some)` the first mismatch (pointer,
/// why), `Err` out of budget.
type Found = Result<Option<(String, String)>, ()>;

impl<'s> Eval<'s> {
    /// A fresh budget.
    pub(super) fn new(schema: &'s Schema) -> Self {
        Self { schema, steps: 0, nesting: 0 }
    }

    /// Applies the whole schema.
    pub(super) fn validate(mut self, instance: &Value) -> Result<(), Mismatch> {
        let root = &self.schema.root;
        match self.apply(root, instance, "") {
            Ok(None) => Ok(()),
            Ok(Some((at, why))) => Err(Mismatch::Invalid(at, why)),
            Err(()) => Err(Mismatch::TooCostly),
        }
    }

    /// Spends `n` steps.
    fn spend(&mut self, n: u64) -> Result<(), ()> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > VALIDATION_STEPS {
            Err(())
        } else {
            Ok(())
        }
    }

    /// Whether `instance` matches `schema` (a mismatch's detail is dropped).
    fn matches(&mut self, schema: &Value, instance: &Value, at: &str) -> Result<bool, ()> {
        Ok(self.apply(schema, instance, at)?.is_none())
    }

    /// Applies `schema` to `instance` (at pointer `at`).
    fn apply(&mut self, schema: &Value, instance: &Value, at: &str) -> Found {
        self.spend(1)?;
        let map = match schema {
            Value::Bool(true) => return Ok(None),
            Value::Bool(false) => return fail(at, "the schema allows nothing here"),
            Value::Object(map) => map,
            _ => return Ok(None),
        };
        if self.nesting >= MAX_NESTING {
            return Err(());
        }
        self.nesting += 1;
        let found = self.keywords(map, instance, at);
        self.nesting -= 1;
        found
    }

    /// Applies each keyword of `map`.
    fn keywords(&mut self, map: &Map<String, Value>, instance: &Value, at: &str) -> Found {
        for (keyword, value) in map {
            self.spend(1)?;
            let found = match keyword.as_str() {
                "$ref" => match value.as_str().and_then(|r| self.schema.resolve(r)) {
                    Some(target) => self.apply(target, instance, at)?,
                    None => Some((at.to_string(), "the schema's `$ref` points nowhere".into())),
                },
                "type" => self.types(value, instance, at),
                "enum" => {
                    let options = value.as_array().map(Vec::as_slice).unwrap_or_default();
                    self.spend(options.len() as u64)?;
                    if options.iter().any(|o| same(o, instance)) {
                        None
                    } else {
                        Some((at.to_string(), "is none of the values the schema lists".into()))
                    }
                }
                "const" => {
                    (!same(value, instance)).then(|| (at.to_string(), "is not the value the schema requires".into()))
                }
                "allOf" => self.all_of(value, instance, at)?,
                "anyOf" | "oneOf" => self.some_of(keyword == "oneOf", value, instance, at)?,
                "not" => self
                    .matches(value, instance, at)?
                    .then(|| (at.to_string(), "matches a schema it must not match".into())),
                "if" => self.conditional(map, value, instance, at)?,
                _ => match instance {
                    Value::Object(object) => self.object_keyword(keyword, value, map, (instance, object), at)?,
                    Value::Array(items) => self.array_keyword(keyword, value, map, items, at)?,
                    Value::String(text) => self.string_keyword(keyword, value, text, at)?,
                    Value::Number(_) => number_keyword(keyword, value, instance, at),
                    _ => None,
                },
            };
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// `type`.
    fn types(&self, value: &Value, instance: &Value, at: &str) -> Option<(String, String)> {
        let names: Vec<&str> = match value {
            Value::String(name) => vec![name.as_str()],
            Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
            _ => return None,
        };
        let ok = names.iter().any(|name| match *name {
            "null" => instance.is_null(),
            "boolean" => instance.is_boolean(),
            "object" => instance.is_object(),
            "array" => instance.is_array(),
            "string" => instance.is_string(),
            "number" => instance.is_number(),
            "integer" => instance.as_f64().is_some_and(|n| n.fract() == 0.0),
            _ => false,
        });
        (!ok).then(|| (at.to_string(), format!("expected {}, found {}", names.join(" or "), kind(instance))))
    }

    /// `allOf`.
    fn all_of(&mut self, value: &Value, instance: &Value, at: &str) -> Found {
        for sub in value.as_array().map(Vec::as_slice).unwrap_or_default() {
            if let Some(found) = self.apply(sub, instance, at)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// `anyOf` (at least one) and `oneOf` (exactly one).
    fn some_of(&mut self, exactly_one: bool, value: &Value, instance: &Value, at: &str) -> Found {
        let mut matched = 0;
        for sub in value.as_array().map(Vec::as_slice).unwrap_or_default() {
            if self.matches(sub, instance, at)? {
                matched += 1;
                if !exactly_one || matched > 1 {
                    break;
                }
            }
        }
        Ok(match (exactly_one, matched) {
            (_, 0) => Some((at.to_string(), "matches none of the alternatives the schema allows".into())),
            (true, 2..) => Some((at.to_string(), "matches more than one of the alternatives (`oneOf`)".into())),
            _ => None,
        })
    }

    /// `if` with its `then` and `else`.
    fn conditional(&mut self, map: &Map<String, Value>, condition: &Value, instance: &Value, at: &str) -> Found {
        let branch = if self.matches(condition, instance, at)? { map.get("then") } else { map.get("else") };
        match branch {
            Some(branch) => self.apply(branch, instance, at),
            None => Ok(None),
        }
    }

    /// A keyword that applies to objects.
    fn object_keyword(
        &mut self,
        keyword: &str,
        value: &Value,
        map: &Map<String, Value>,
        (instance, object): (&Value, &Map<String, Value>),
        at: &str,
    ) -> Found {
        let count = object.len() as u64;
        match keyword {
            "required" => {
                for name in value.as_array().map(Vec::as_slice).unwrap_or_default().iter().filter_map(Value::as_str) {
                    self.spend(1)?;
                    if !object.contains_key(name) {
                        return fail(at, &format!("lacks the required member `{}`", name.escape_debug()));
                    }
                }
            }
            "minProperties" if value.as_u64().is_some_and(|min| count < min) => {
                return fail(at, "has fewer members than the schema allows")
            }
            "maxProperties" if value.as_u64().is_some_and(|max| count > max) => {
                return fail(at, "has more members than the schema allows")
            }
            "properties" => {
                let Some(properties) = value.as_object() else { return Ok(None) };
                for (name, member) in object {
                    if let Some(sub) = properties.get(name) {
                        if let Some(found) = self.apply(sub, member, &child(at, name))? {
                            return Ok(Some(found));
                        }
                    }
                }
            }
            "patternProperties" => {
                let Some(patterns) = value.as_object() else { return Ok(None) };
                for (name, member) in object {
                    for (pattern, sub) in patterns {
                        if self.is_match(pattern, name)? {
                            if let Some(found) = self.apply(sub, member, &child(at, name))? {
                                return Ok(Some(found));
                            }
                        }
                    }
                }
            }
            "additionalProperties" => {
                let named = map.get("properties").and_then(Value::as_object);
                let patterns = map.get("patternProperties").and_then(Value::as_object);
                for (name, member) in object {
                    if named.is_some_and(|n| n.contains_key(name)) {
                        continue;
                    }
                    let mut by_pattern = false;
                    for pattern in patterns.into_iter().flat_map(|p| p.keys()) {
                        if self.is_match(pattern, name)? {
                            by_pattern = true;
                            break;
                        }
                    }
                    if by_pattern {
                        continue;
                    }
                    if value == &Value::Bool(false) {
                        return fail(
                            at,
                            &format!("has the member `{}`, which the schema does not allow", name.escape_debug()),
                        );
                    }
                    if let Some(found) = self.apply(value, member, &child(at, name))? {
                        return Ok(Some(found));
                    }
                }
            }
            "propertyNames" => {
                for name in object.keys() {
                    let key = Value::String(name.clone());
                    if let Some(found) = self.apply(value, &key, &child(at, name))? {
                        return Ok(Some(found));
                    }
                }
            }
            "dependentRequired" => {
                let Some(rules) = value.as_object() else { return Ok(None) };
                for (name, needs) in rules {
                    if !object.contains_key(name) {
                        continue;
                    }
                    for need in needs.as_array().map(Vec::as_slice).unwrap_or_default().iter().filter_map(Value::as_str)
                    {
                        self.spend(1)?;
                        if !object.contains_key(need) {
                            return fail(
                                at,
                                &format!("has `{}` but lacks `{}`", name.escape_debug(), need.escape_debug()),
                            );
                        }
                    }
                }
            }
            "dependentSchemas" => {
                let Some(rules) = value.as_object() else { return Ok(None) };
                for (name, sub) in rules {
                    if object.contains_key(name) {
                        if let Some(found) = self.apply(sub, instance, at)? {
                            return Ok(Some(found));
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(None)
    }

    /// A keyword that applies to arrays.
    fn array_keyword(
        &mut self,
        keyword: &str,
        value: &Value,
        map: &Map<String, Value>,
        items: &[Value],
        at: &str,
    ) -> Found {
        let count = items.len() as u64;
        // The leading items a tuple form covers: `prefixItems`, or draft-07's `items` array.
        let tuple = map
            .get("prefixItems")
            .or_else(|| map.get("items").filter(|i| i.is_array()))
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        match keyword {
            "minItems" if value.as_u64().is_some_and(|min| count < min) => {
                return fail(at, "has fewer items than the schema allows")
            }
            "maxItems" if value.as_u64().is_some_and(|max| count > max) => {
                return fail(at, "has more items than the schema allows")
            }
            "prefixItems" => {
                for (n, (sub, item)) in value.as_array().into_iter().flatten().zip(items).enumerate() {
                    if let Some(found) = self.apply(sub, item, &format!("{at}/{n}"))? {
                        return Ok(Some(found));
                    }
                }
            }
            "items" if value.is_array() => {
                return self.array_keyword("prefixItems", value, map, items, at);
            }
            "items" | "additionalItems" => {
                if keyword == "additionalItems" && !map.get("items").is_some_and(Value::is_array) {
                    return Ok(None);
                }
                for (n, item) in items.iter().enumerate().skip(tuple) {
                    if let Some(found) = self.apply(value, item, &format!("{at}/{n}"))? {
                        return Ok(Some(found));
                    }
                }
            }
            "contains" => {
                let mut matched = 0u64;
                for (n, item) in items.iter().enumerate() {
                    if self.matches(value, item, &format!("{at}/{n}"))? {
                        matched += 1;
                    }
                }
                let min = map.get("minContains").and_then(Value::as_u64).unwrap_or(1);
                let max = map.get("maxContains").and_then(Value::as_u64).unwrap_or(u64::MAX);
                if matched < min || matched > max {
                    return fail(at, "does not contain as many matching items as the schema asks");
                }
            }
            "uniqueItems" if value == &Value::Bool(true) => {
                let mut seen = Vec::with_capacity(items.len());
                for item in items {
                    let mut text = String::new();
                    canonical(item, &mut text);
                    self.spend(1 + text.len() as u64 / 64)?;
                    seen.push(text);
                }
                seen.sort_unstable();
                self.spend(count)?;
                if seen.windows(2).any(|pair| pair[0] == pair[1]) {
                    return fail(at, "has two equal items where the schema asks for unique ones");
                }
            }
            _ => {}
        }
        Ok(None)
    }

    /// A keyword that applies to strings.
    fn string_keyword(&mut self, keyword: &str, value: &Value, text: &str, at: &str) -> Found {
        match keyword {
            "minLength" | "maxLength" => {
                self.spend(1 + text.len() as u64 / 64)?;
                let length = text.chars().count() as u64;
                let limit = value.as_u64().unwrap_or(0);
                if keyword == "minLength" && length < limit {
                    return fail(at, &format!("is shorter than {limit} characters"));
                }
                if keyword == "maxLength" && length > limit {
                    return fail(at, &format!("is longer than {limit} characters"));
                }
            }
            "pattern" => {
                let pattern = value.as_str().unwrap_or_default();
                if !self.is_match(pattern, text)? {
                    return fail(at, &format!("does not match the pattern `{}`", pattern.escape_debug()));
                }
            }
            _ => {}
        }
        Ok(None)
    }

    /// Whether `text` matches the declared `pattern` (unanchored, as ECMA-262 `test`).
    fn is_match(&mut self, pattern: &str, text: &str) -> Result<bool, ()> {
        self.spend(1 + text.len() as u64 / 64)?;
        Ok(self.schema.pattern(pattern).is_some_and(|regex| regex.is_match(text)))
    }
}

/// A keyword that applies to numbers.
fn number_keyword(keyword: &str, value: &Value, instance: &Value, at: &str) -> Option<(String, String)> {
    let (Some(n), Some(limit)) = (instance.as_f64(), value.as_f64()) else { return None };
    let wrong = match keyword {
        "minimum" => n < limit,
        "maximum" => n > limit,
        "exclusiveMinimum" => n <= limit,
        "exclusiveMaximum" => n >= limit,
        "multipleOf" => {
            let quotient = n / limit;
            !quotient.is_finite() || quotient.fract() != 0.0
        }
        _ => return None,
    };
    wrong.then(|| (at.to_string(), format!("is outside what `{keyword}` {limit} allows")))
}

/// A mismatch at `at`.
fn fail(at: &str, why: &str) -> Found {
    Ok(Some((at.to_string(), why.to_string())))
}

/// What kind of JSON value `v` is, for a message.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// JSON equality as JSON Schema has it: numbers by value (`1` equals `1.0`), objects whatever
/// their key order.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// `v` written so that two values JSON Schema calls equal are written alike: keys sorted,
/// numbers by value.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => out.push_str(&format!("{}", f as i64)),
            Some(f) => out.push_str(&format!("{f:?}")),
            None => out.push_str(&n.to_string()),
        },
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for key in keys {
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}
