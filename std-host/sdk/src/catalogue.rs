//! The intents an agent may call, as named tools: one per declared intent of each installed
//! plugin whose approval holds now (hash, permissions, intents, limits), under a name model
//! APIs accept (`^[A-Za-z0-9_-]{1,64}$`) that never collides and is stable across restarts.
//!
//! The naming rule (docs/mcp.md): `ID__INTENT` when the id has only letters, digits and `-`,
//! the intent only letters, digits, `-` and `_`, and the whole fits in 64 bytes; the first `__`
//! then splits it back, so two such names never collide. Any other pair is
//! `x-HASH-PREFIX`: HASH is 16 hex digits of sha256(`ID` NUL `INTENT`), PREFIX the id's
//! allowed characters, cut to fit. Such a name has no `_` at all, so it never equals a name of
//! the first form; two pairs whose hashes agree would share one, and both are left out (and
//! reported) rather than one shadowing the other.

use crate::intents::tool::sha256_hex;
use crate::operator::{launch_refusal, read_installed};
use crate::workspace::{Workspace, WorkspaceError};
use std::collections::HashMap;

/// The longest tool name model APIs accept.
pub const MAX_TOOL_NAME: usize = 64;

/// One tool: an intent of an approved plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    /// Its name (see the module's naming rule).
    pub name: String,
    /// The plugin's id.
    pub plugin: String,
    /// The plugin's version.
    pub version: String,
    /// The intent.
    pub intent: String,
    /// The intent's declared description (text a package chose).
    pub description: String,
    /// Whether the plugin may reach the network (it asks for a `network:` permission).
    pub open_world: bool,
}

/// The tools of a workspace, and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalogue {
    /// The tools, by plugin id then declaration order.
    pub tools: Vec<Tool>,
    /// Installed plugins left out, with why (not approved, approval no longer holds, name clash).
    pub left_out: Vec<(String, String)>,
    /// The intents of plugins left out, as the tools they would be, with why they are not: a
    /// call of one is refused as `not_approved` naming the reason, not as an unknown tool.
    pub refused: Vec<(Tool, String)>,
}

impl Catalogue {
    /// The tool named `name`.
    pub fn find(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// Why the tool named `name` is not offered, when its plugin is installed but left out.
    pub fn refusal(&self, name: &str) -> Option<&str> {
        self.refused.iter().find(|(tool, _)| tool.name == name).map(|(_, why)| why.as_str())
    }
}

/// The tool name of `intent` of plugin `id` (see the module's naming rule).
pub fn tool_name(id: &str, intent: &str) -> String {
    let plain_id = !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let plain_intent = !intent.is_empty() && intent.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
    if plain_id && plain_intent && id.len() + 2 + intent.len() <= MAX_TOOL_NAME {
        return format!("{id}__{intent}");
    }
    let mut keyed = Vec::with_capacity(id.len() + 1 + intent.len());
    keyed.extend_from_slice(id.as_bytes());
    keyed.push(0);
    keyed.extend_from_slice(intent.as_bytes());
    let hash = &sha256_hex(&keyed)[..16];
    let prefix: String = id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
    let mut name = format!("x-{hash}-{prefix}");
    name.truncate(MAX_TOOL_NAME);
    name.trim_end_matches('-').to_string()
}

/// The tools of `workspace`: every declared intent of each installed plugin whose approval
/// holds for what is on disk now; `only` (when not empty) narrows the plugins by id.
pub fn approved_tools(workspace: &Workspace, only: &[String]) -> Result<Catalogue, WorkspaceError> {
    let state = workspace.read_state()?;
    let mut catalogue = Catalogue::default();
    for (id, plugin) in &state.plugins {
        if !only.is_empty() && !only.contains(id) {
            continue;
        }
        let files = read_installed(workspace, plugin);
        let refusal = launch_refusal(id, plugin, files.as_ref().ok());
        if let Some(why) = &refusal {
            catalogue.left_out.push((id.clone(), why.clone()));
        }
        // The intents an approval binds: the package's now, else the approved list.
        let (intents, open_world) = match &files {
            Ok(files) => (
                files.manifest.intents.iter().map(|i| (i.name.clone(), i.description.clone())).collect(),
                files.manifest.permissions.iter().any(|p| p.starts_with("network:")),
            ),
            Err(_) => (Vec::new(), false),
        };
        for (intent, description) in intents {
            let tool = Tool {
                name: tool_name(id, &intent),
                plugin: id.clone(),
                version: plugin.version.clone(),
                intent,
                description,
                open_world,
            };
            match &refusal {
                None => catalogue.tools.push(tool),
                Some(why) => catalogue.refused.push((tool, why.clone())),
            }
        }
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for tool in &catalogue.tools {
        *seen.entry(tool.name.clone()).or_default() += 1;
    }
    let (kept, clashing): (Vec<Tool>, Vec<Tool>) = catalogue.tools.into_iter().partition(|tool| seen[&tool.name] == 1);
    catalogue.tools = kept;
    for tool in clashing {
        catalogue
            .left_out
            .push((tool.plugin, format!("its intent's tool name `{}` is shared by another intent", tool.name)));
    }
    Ok(catalogue)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(name: &str) -> bool {
        (1..=MAX_TOOL_NAME).contains(&name.len())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
    }

    #[test]
    fn names_are_what_model_apis_accept_and_never_collide() {
        assert_eq!(tool_name("echo", "greet"), "echo__greet");
        assert_eq!(tool_name("json-tools", "select_all"), "json-tools__select_all");
        let pairs = [
            ("echo", "greet"),
            ("a_b", "c"),
            ("a", "b__c"),
            ("a__b", "c"),
            ("a.b", "c"),
            ("a-b", "c"),
            ("echo", "greet.v2"),
            ("echo", &"long".repeat(40)),
            (&"p".repeat(64), "x"),
            ("echo", "héllo"),
            ("echo", ""),
        ];
        let mut names = std::collections::HashSet::new();
        for (id, intent) in pairs {
            let name = tool_name(id, intent);
            assert!(allowed(&name), "{id}/{intent}: {name}");
            assert!(names.insert(name.clone()), "{id}/{intent} collides: {name}");
            assert_eq!(name, tool_name(id, intent), "stable");
        }
        // A hashed name has no `_`; a plain one always has `__`.
        assert!(!tool_name("a.b", "c").contains('_'));
    }
}
