//! What the user most likely meant when a target does not fit the subcommand: a module file
//! given where an installed plugin's id goes (and the reverse), a hub id given to `install`
//! without `--hub`. Each answer names the command to run instead.

use std::path::Path;
use tdm_sdk::package::valid_id;
use tdm_sdk::workspace::{workspace_dir, Workspace};

/// What a `PLUGIN|ID` argument names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A module file that exists.
    File,
    /// The id of a plugin installed in the workspace.
    Installed,
    /// Something that reads as a path (has a `/` or a `.wasm`/`.wat` extension) but is not there.
    MissingFile,
    /// Neither a file nor an installed plugin.
    Unknown,
}

/// Whether `text` reads as a file path rather than a plugin id.
pub fn looks_like_path(text: &str) -> bool {
    let path = Path::new(text);
    text.contains(std::path::MAIN_SEPARATOR)
        || text.contains('/')
        || path.extension().is_some_and(|ext| ext == "wasm" || ext == "wat")
        || !valid_id(text)
}

/// Whether `id` is installed in the workspace at `dir` (the state is only read).
pub fn is_installed(dir: Option<&Path>, id: &str) -> bool {
    if !valid_id(id) {
        return false;
    }
    let workspace = Workspace { dir: workspace_dir(dir) };
    workspace.read_state().is_ok_and(|state| state.plugins.contains_key(id))
}

/// Tells what `target` names: an existing file wins, then an installed id.
pub fn target(workspace: Option<&Path>, target: &str) -> Target {
    if Path::new(target).is_file() {
        Target::File
    } else if is_installed(workspace, target) {
        Target::Installed
    } else if looks_like_path(target) {
        Target::MissingFile
    } else {
        Target::Unknown
    }
}

/// `tdm run ID METHOD` where ID is installed, not a file.
pub fn run_of_installed(workspace: Option<&Path>, plugin: &str, method: &str) -> Option<String> {
    is_installed(workspace, plugin).then(|| {
        format!("`{plugin}` is an installed plugin, not a module file: run it with `tdm call {plugin} {method}`")
    })
}

/// `tdm call FILE METHOD` where FILE is a module file, not an id.
pub fn call_of_file(id: &str, method: &str) -> Option<String> {
    (Path::new(id).is_file() || looks_like_path(id)).then(|| {
        format!("`tdm call` runs an installed plugin by its id; to run the module file: `tdm run {id} {method}`")
    })
}

/// An unknown id given to `tdm call`: where to look, and how to run a module file instead.
pub fn unknown_id_for_call(id: &str, method: &str) -> String {
    format!(
        "`tdm workspace status` lists the installed plugins and `tdm install {id} --hub NAME` installs one; \
         to run a module file instead: `tdm run FILE {method}`"
    )
}

/// An unknown id given to `tdm repl`: where to look, and how to give a module file instead.
pub fn unknown_id_for_repl(id: &str) -> String {
    format!(
        "`tdm workspace status` lists the installed plugins; to open a module file, give its path (e.g. ./{id}.wasm)"
    )
}

/// `tdm install ID` without `--hub`, where ID is not a package folder.
pub fn install_without_hub(target: &str) -> Option<String> {
    let path = Path::new(target);
    if path.is_dir() {
        return None;
    }
    let id = target.split_once('@').map_or(target, |(id, _)| id);
    if valid_id(id) && !target.contains('/') {
        Some(format!(
            "`{target}` is not a package folder; to install plugin `{id}` from a hub: `tdm install {target} --hub NAME`"
        ))
    } else {
        Some(format!("`{target}` is not a package folder (a folder holding plugin.toml and dist/)"))
    }
}

/// For a missing `NAME.wasm` (or `NAME.wat`), the other one when it is there: the file the user
/// most likely meant.
pub fn sibling_module(path: &std::path::Path) -> Option<std::path::PathBuf> {
    let other = match path.extension()?.to_str()? {
        "wasm" => "wat",
        "wat" => "wasm",
        _ => return None,
    };
    let sibling = path.with_extension(other);
    sibling.is_file().then_some(sibling)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_ids_are_told_apart() {
        assert!(looks_like_path("missing.wasm") && looks_like_path("./x") && looks_like_path("a/b"));
        assert!(looks_like_path("echo.wat") && looks_like_path("has space"));
        assert!(!looks_like_path("echo") && !looks_like_path("json-tools") && !looks_like_path("v1.2"));
        assert!(install_without_hub("echo@1.0.0").unwrap().contains("--hub NAME"));
        assert!(call_of_file("echo.wat", "greet").unwrap().contains("tdm run echo.wat greet"));
        assert_eq!(call_of_file("echo", "greet"), None);
    }
}
