//! The intents a plugin declares, where users look for them (`tdm inspect`, the REPL's
//! `:intents` and Tab completion, `approve`, `hub list`, `workspace status`, the MCP server's
//! tools). A package declares them in `plugin.toml` (`[[intents]]`, what the operator
//! approves); a bare module may carry the SDKs' optional custom section `tdm.intents`, JSON
//! `[{"name": "greet", "description": "...", "params": {...}, "result": {...}}]` (docs/ABI.md
//! section 1a). Both are read strictly and bounded: a malformed one is reported, never trusted
//! in part.

use crate::schema::Schema;
use contour_core::{BlockedReason, Failure, IntentsSection, INTENTS_SECTION, MAX_INTENTS_SECTION_BYTES};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt;

/// One intent a plugin offers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntentInfo {
    /// The intent's method name.
    pub name: String,
    /// One line on what it does.
    pub description: String,
    /// A short display name (what an agent's user sees), when declared.
    #[serde(default)]
    pub title: Option<String>,
    /// The JSON Schema of its params, when declared: in `plugin.toml` a TOML table, or a
    /// string holding the schema's JSON.
    #[serde(default, deserialize_with = "schema_field")]
    pub params: Option<Value>,
    /// The JSON Schema of a completed outcome's `output`, when declared (as `params`).
    #[serde(default, deserialize_with = "schema_field")]
    pub result: Option<Value>,
}

/// The most intents a declaration may list (`plugin.toml` or a `tdm.intents` section).
pub const MAX_DECLARED_INTENTS: usize = 1_000;
/// The longest intent name, in bytes.
pub const MAX_INTENT_NAME_BYTES: usize = 128;
/// The longest intent description, in bytes.
pub const MAX_INTENT_DESCRIPTION_BYTES: usize = 1_024;
/// The longest intent title, in bytes.
pub const MAX_INTENT_TITLE_BYTES: usize = 128;

/// A schema in `plugin.toml`: a table, or a string of JSON.
fn schema_field<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::String(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| serde::de::Error::custom(format!("a schema given as a string must be JSON: {e}"))),
        other => Ok(Some(other)),
    }
}

impl IntentInfo {
    /// An intent with a name and a description only.
    pub fn named(name: &str, description: &str) -> Self {
        Self { name: name.into(), description: description.into(), title: None, params: None, result: None }
    }

    /// What is wrong with this intent, declared after `earlier`, if anything: the rule for
    /// `plugin.toml`'s `[[intents]]` and the `tdm.intents` section alike. A name is 1 to
    /// [`MAX_INTENT_NAME_BYTES`] bytes without control characters and listed once; a
    /// description at most [`MAX_INTENT_DESCRIPTION_BYTES`]; a title at most
    /// [`MAX_INTENT_TITLE_BYTES`] without control characters; each schema one [`Schema::new`]
    /// accepts.
    pub fn problem(&self, earlier: &[IntentInfo]) -> Option<String> {
        let name = &self.name;
        if name.is_empty() || name.len() > MAX_INTENT_NAME_BYTES || name.chars().any(char::is_control) {
            return Some(format!("`name` must be 1 to {MAX_INTENT_NAME_BYTES} bytes without control characters"));
        }
        if earlier.iter().any(|intent| intent.name == *name) {
            return Some("the name is listed twice".into());
        }
        if self.description.len() > MAX_INTENT_DESCRIPTION_BYTES {
            return Some(format!("`description` must be a string of at most {MAX_INTENT_DESCRIPTION_BYTES} bytes"));
        }
        if let Some(title) = &self.title {
            if title.len() > MAX_INTENT_TITLE_BYTES || title.chars().any(char::is_control) {
                return Some(format!(
                    "`title` must be at most {MAX_INTENT_TITLE_BYTES} bytes without control characters"
                ));
            }
        }
        for (field, schema) in [("params", &self.params), ("result", &self.result)] {
            if let Some(Err(e)) = schema.as_ref().map(Schema::new) {
                return Some(format!("`{field}`: {e}"));
            }
        }
        None
    }

    /// The declared params schema, checked (`None` when none is declared, or when it is not
    /// one [`IntentInfo::problem`] accepts, which a read declaration never has).
    pub fn params_schema(&self) -> Option<Schema> {
        self.params.as_ref().and_then(|v| Schema::new(v).ok())
    }

    /// The declared result schema, checked (as [`IntentInfo::params_schema`]).
    pub fn result_schema(&self) -> Option<Schema> {
        self.result.as_ref().and_then(|v| Schema::new(v).ok())
    }

    /// sha256 (hex) of everything declared about the intent (name, title, description,
    /// schemas), written with sorted keys: what an approval binds, so a changed description
    /// (what an agent reads) or schema voids it.
    pub fn digest(&self) -> String {
        let declared = serde_json::json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "params": self.params,
            "result": self.result,
        });
        let mut hex = String::with_capacity(64);
        for byte in Sha256::digest(declared.to_string().as_bytes()) {
            hex.push_str(&format!("{byte:02x}"));
        }
        hex
    }
}

/// Where a plugin's intents were declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declared {
    /// `plugin.toml`'s `[[intents]]` (possibly empty: the package declares none).
    Manifest(Vec<IntentInfo>),
    /// The module's `tdm.intents` section.
    Section(Vec<IntentInfo>),
    /// Nothing declares them.
    Undeclared,
    /// The module's section is there but unusable; why.
    Malformed(String),
}

impl Declared {
    /// The declared intents (none when undeclared or malformed).
    pub fn intents(&self) -> &[IntentInfo] {
        match self {
            Self::Manifest(intents) | Self::Section(intents) => intents,
            Self::Undeclared | Self::Malformed(_) => &[],
        }
    }

    /// The declared names.
    pub fn names(&self) -> Vec<String> {
        self.intents().iter().map(|i| i.name.clone()).collect()
    }

    /// Whether `name` is declared.
    pub fn declares(&self, name: &str) -> bool {
        self.intents().iter().any(|i| i.name == name)
    }

    /// Why `method` may not be sent to an installed plugin declaring these intents: it is not
    /// one of them (the surface its operator approved).
    pub fn undeclared_refusal(&self, method: &str) -> Option<Failure> {
        if self.declares(method) {
            return None;
        }
        let names = self.names();
        let offered = if names.is_empty() {
            "its plugin.toml declares no intents, so none can be called".to_string()
        } else {
            format!("it declares: {}", names.join(", "))
        };
        Some(Failure::new(
            BlockedReason::NotApproved,
            format!(
                "Intent `{}` is not declared in the plugin's plugin.toml: an installed plugin runs only the intents its operator approved, and {offered}.",
                crate::files::truncated(method, 64)
            ),
        ))
    }

    /// Why `params` (JSON text) may not be sent to `method`: an approved declaration
    /// (`plugin.toml`) gives it a params schema they do not match (or that would cost too much
    /// to decide). A module's section is advisory and refuses nothing; params that are not
    /// JSON, or nest too deep to read, are left to core, which refuses them in its own words.
    pub fn params_refusal(&self, method: &str, params: &str) -> Option<Failure> {
        let Self::Manifest(intents) = self else { return None };
        let schema = intents.iter().find(|intent| intent.name == method)?.params_schema()?;
        let value: Value = serde_json::from_str(params).ok()?;
        let mismatch = schema.validate(&value).err()?;
        Some(Failure::new(
            BlockedReason::InvalidParams,
            format!(
                "The params of `{}` do not match the schema it declares: {mismatch}.",
                crate::files::truncated(method, 64)
            ),
        ))
    }

    /// Where the declaration was found, for display (`plugin.toml`, `tdm.intents section`).
    pub fn source(&self) -> &'static str {
        match self {
            Self::Manifest(_) => "plugin.toml",
            Self::Section(_) | Self::Malformed(_) => "tdm.intents section",
            Self::Undeclared => "none",
        }
    }

    /// The module's declaration, from what core's inspection found.
    pub fn from_section(section: &IntentsSection) -> Self {
        match section {
            IntentsSection::Absent => Self::Undeclared,
            IntentsSection::Found(bytes) => match parse_section(bytes) {
                Ok(intents) => Self::Section(intents),
                Err(why) => Self::Malformed(why.to_string()),
            },
            IntentsSection::TooLarge(size) => Self::Malformed(format!(
                "the {INTENTS_SECTION} section has {size} bytes, more than {MAX_INTENTS_SECTION_BYTES}"
            )),
            IntentsSection::Repeated => {
                Self::Malformed(format!("the module has more than one {INTENTS_SECTION} section"))
            }
        }
    }
}

/// Why a `tdm.intents` section is not a declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SectionError {
    /// Not JSON (the reader's reason).
    NotJson(String),
    /// JSON, but not an array.
    NotArray,
    /// More than [`MAX_DECLARED_INTENTS`] entries.
    TooMany,
    /// Entry N (from 1) is not an intent (why).
    Entry(usize, String),
}

impl fmt::Display for SectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotJson(why) => write!(f, "the {INTENTS_SECTION} section is not JSON: {why}"),
            Self::NotArray => write!(f, "the {INTENTS_SECTION} section must hold a JSON array"),
            Self::TooMany => {
                write!(f, "the {INTENTS_SECTION} section lists more than {MAX_DECLARED_INTENTS} intents")
            }
            Self::Entry(n, why) => write!(f, "{INTENTS_SECTION} entry {n}: {why}"),
        }
    }
}

impl std::error::Error for SectionError {}

/// Reads a `tdm.intents` section: a JSON array of objects with a string `name`, and optionally a
/// string `description` and `title` and schemas `params` and `result`, each entry as
/// [`IntentInfo::problem`] requires; other members are ignored, for later additions.
pub fn parse_section(bytes: &[u8]) -> Result<Vec<IntentInfo>, SectionError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| SectionError::NotJson(e.to_string()))?;
    let Value::Array(items) = value else {
        return Err(SectionError::NotArray);
    };
    if items.len() > MAX_DECLARED_INTENTS {
        return Err(SectionError::TooMany);
    }
    let mut intents: Vec<IntentInfo> = Vec::with_capacity(items.len());
    for (n, item) in items.iter().enumerate() {
        let at = |why: &str| SectionError::Entry(n + 1, why.to_string());
        let name = item.get("name").and_then(Value::as_str).ok_or_else(|| at("`name` must be a string"))?;
        let description = match item.get("description") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(_) => {
                return Err(at(&format!(
                    "`description` must be a string of at most {MAX_INTENT_DESCRIPTION_BYTES} bytes"
                )))
            }
        };
        let title = match item.get("title") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(_) => return Err(at("`title` must be a string")),
        };
        let schema = |key: &str| item.get(key).filter(|v| !v.is_null()).cloned();
        let intent = IntentInfo {
            name: name.to_string(),
            description,
            title,
            params: schema("params"),
            result: schema("result"),
        };
        if let Some(why) = intent.problem(&intents) {
            return Err(at(&why));
        }
        intents.push(intent);
    }
    Ok(intents)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_declaration_strictly() {
        let ok = parse_section(br#"[{"name":"greet","description":"says hi"},{"name":"sum","extra":1}]"#).unwrap();
        assert_eq!(ok[0], IntentInfo::named("greet", "says hi"));
        assert_eq!(ok[1].description, "");
        for (bad, why) in [
            (&b"{}"[..], "array"),
            (b"[{\"description\":\"x\"}]", "`name` must be a string"),
            (b"[{\"name\":\"\"}]", "1 to 128 bytes"),
            (b"[{\"name\":\"a\\u001b\"}]", "control"),
            (b"[{\"name\":\"a\"},{\"name\":\"a\"}]", "twice"),
            (b"[{\"name\":\"a\",\"description\":7}]", "description"),
            (b"[{\"name\":\"a\",\"params\":{\"type\":\"text\"}}]", "entry 1: `params`: the schema at `#/type`"),
            (b"[{\"name\":\"a\",\"result\":3}]", "`result`: the schema at `#` is neither"),
            (b"[{\"name\":\"a\",\"title\":\"a\\nb\"}]", "`title`"),
            (b"not json", "not JSON"),
        ] {
            let error = parse_section(bad).unwrap_err().to_string();
            assert!(error.contains(why), "{error}");
        }
        assert!(matches!(Declared::from_section(&IntentsSection::Repeated), Declared::Malformed(_)));
        assert_eq!(Declared::from_section(&IntentsSection::Absent), Declared::Undeclared);
    }
}
