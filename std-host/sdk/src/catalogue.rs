//! The intents an agent may call, as named tools: one per declared intent of each installed
//! plugin whose approval holds now (hash, permissions, intents, limits), under a name model
//! APIs accept (`^[A-Za-z0-9_-]{1,64}$`) that never collides and is stable across restarts.
//!
//! The naming rule (docs/mcp.md): `ID__INTENT` when the id has only letters, digits and `-`,
//! the intent only letters, digits, `-` and `_`, and the whole fits in 64 bytes; the first `__`
//! then splits it back, so two such names never collide. Any other pair is
//! `x-HASH-PREFIX`: HASH is 16 hex digits of sha256(`ID` NUL `INTENT`), PREFIX the id's
//! allowed characters, cut to fit. Such a name has no `_` at all, so it never equals a name of
//! the first form; two pairs whose hashes agree would share one, and both are left out (from
//! the list and from calls) rather than one shadowing the other.

use crate::intents::tool::sha256_hex;
use crate::operator::{launch_refusal, read_installed};
use crate::package::Manifest;
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
    /// The intent's declared title, when it has one.
    pub title: Option<String>,
    /// The intent's declared params schema, when it has one.
    pub params: Option<serde_json::Value>,
    /// The intent's declared result schema, when it has one.
    pub result: Option<serde_json::Value>,
    /// Whether the plugin may reach the network (it asks for a `network:` permission).
    pub open_world: bool,
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

/// The tools of `workspace`, by plugin id then declaration order: every declared intent of
/// each installed plugin whose approval holds for what is on disk now; `only` (when not empty)
/// narrows the plugins by id. A name two intents share is left out for both.
pub fn approved_tools(workspace: &Workspace, only: &[String]) -> Result<Vec<Tool>, WorkspaceError> {
    let state = workspace.read_state()?;
    let mut tools = Vec::new();
    for (id, plugin) in &state.plugins {
        if !only.is_empty() && !only.contains(id) {
            continue;
        }
        let files = read_installed(workspace, plugin);
        if launch_refusal(id, plugin, files.as_ref().ok()).is_some() {
            continue;
        }
        let Ok(files) = files else { continue };
        tools.extend(tools_of(id, &plugin.version, &files.manifest));
    }
    Ok(without_shared_names(tools))
}

/// `tools` less every tool whose name another one has too.
fn without_shared_names(mut tools: Vec<Tool>) -> Vec<Tool> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for tool in &tools {
        *seen.entry(tool.name.clone()).or_default() += 1;
    }
    tools.retain(|tool| seen[&tool.name] == 1);
    tools
}

/// The tools `manifest` declares for plugin `id` at `version`.
fn tools_of<'a>(id: &'a str, version: &'a str, manifest: &'a Manifest) -> impl Iterator<Item = Tool> + 'a {
    let open_world = manifest.permissions.iter().any(|p| p.starts_with("network:"));
    manifest.intents.iter().map(move |intent| Tool {
        name: tool_name(id, &intent.name),
        plugin: id.to_string(),
        version: version.to_string(),
        intent: intent.name.clone(),
        description: intent.description.clone(),
        title: intent.title.clone(),
        params: intent.params.clone(),
        result: intent.result.clone(),
        open_world,
    })
}

/// The tool named `name` among the intents the installed plugins' manifests declare (those in
/// `only`, when not empty), whether or not its plugin is approved: only each `plugin.toml` is
/// read, no module, so a call finds its tool cheaply; the approved-launch check is the
/// session's, when the call opens the plugin. `None` when no installed plugin declares it, or
/// when two intents share it.
pub fn tool_named(workspace: &Workspace, only: &[String], name: &str) -> Result<Option<Tool>, WorkspaceError> {
    let state = workspace.read_state()?;
    // A name of the first form names its plugin: only that manifest is read.
    let named = name.split_once("__").map(|(id, _)| id);
    let mut found = Vec::new();
    for (id, plugin) in &state.plugins {
        if !only.is_empty() && !only.contains(id) || named.is_some_and(|named| named != id) {
            continue;
        }
        let Ok(manifest) = Manifest::read(&workspace.dir.join(&plugin.path)) else { continue };
        found.extend(tools_of(id, &plugin.version, &manifest).filter(|tool| tool.name == name));
    }
    // As in the list, a name two intents share names neither.
    Ok(without_shared_names(found).pop())
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
