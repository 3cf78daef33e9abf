//! The intents a plugin declares, where users look for them (`tdm inspect`, the REPL's
//! `:intents` and Tab completion, `approve`, `hub list`, `workspace status`). A package
//! declares them in `plugin.toml` (`[[intents]]`, what the operator approves); a bare module
//! may carry the SDKs' optional custom section `tdm.intents`, JSON
//! `[{"name": "greet", "description": "..."}]` (docs/ABI.md section 1a). The section is read
//! strictly and bounded: a malformed one is reported, never trusted in part.

use crate::package::{IntentInfo, MAX_DECLARED_INTENTS, MAX_INTENT_DESCRIPTION_BYTES};
use contour_core::{IntentsSection, INTENTS_SECTION, MAX_INTENTS_SECTION_BYTES};
use serde_json::Value;
use std::fmt;

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

/// Reads a `tdm.intents` section: a JSON array of objects with a string `name` and an optional
/// string `description`, each entry as [`IntentInfo::problem`] requires; other members are
/// ignored, for later additions.
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
        let intent = IntentInfo { name: name.to_string(), description };
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
        assert_eq!(ok[0], IntentInfo { name: "greet".into(), description: "says hi".into() });
        assert_eq!(ok[1].description, "");
        for (bad, why) in [
            (&b"{}"[..], "array"),
            (b"[{\"description\":\"x\"}]", "`name` must be a string"),
            (b"[{\"name\":\"\"}]", "1 to 128 bytes"),
            (b"[{\"name\":\"a\\u001b\"}]", "control"),
            (b"[{\"name\":\"a\"},{\"name\":\"a\"}]", "twice"),
            (b"[{\"name\":\"a\",\"description\":7}]", "description"),
            (b"not json", "not JSON"),
        ] {
            let error = parse_section(bad).unwrap_err().to_string();
            assert!(error.contains(why), "{error}");
        }
        assert!(matches!(Declared::from_section(&IntentsSection::Repeated), Declared::Malformed(_)));
        assert_eq!(Declared::from_section(&IntentsSection::Absent), Declared::Undeclared);
    }
}
