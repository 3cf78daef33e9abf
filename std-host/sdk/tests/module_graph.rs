//! The shape of the two std-host crates, read from their sources: no two modules of either
//! crate import each other (directly or around a longer circle), and the library stays a
//! library: no flag parser, line editor or terminal code in `tdm-sdk`, nothing in it printing.
//!
//! A module is a source file (`session/ran.rs` is `session::ran`, `session/mod.rs` is
//! `session`). Module A depends on module B when A names a path `crate::B::...` or
//! `super::...` that resolves to B (the longest module prefix of the path; a path into a
//! module's items counts as that module). A module's own children (`mod ran;` and paths
//! without `crate::`) are its parts, not imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn std_host() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file below `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The module path of a source file under `src` (`lib.rs`/`main.rs` is the root, `""`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The paths a source names with `crate::` or `super::` (comments left out), each as its
/// segments after the keyword, with how many `super`s led it.
fn named_paths(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut paths = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find(['c', 's']) {
            let tail = &rest[at..];
            let boundary = rest[..at].chars().last().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let (supers, after) = if let Some(after) = tail.strip_prefix("crate::") {
                (0, after)
            } else if tail.starts_with("super::") {
                let mut supers = 0;
                let mut after = tail;
                while let Some(next) = after.strip_prefix("super::") {
                    supers += 1;
                    after = next;
                }
                (supers, after)
            } else {
                rest = &rest[at + 1..];
                continue;
            };
            if boundary {
                let segments = after
                    .split("::")
                    .map(|s| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>())
                    .take_while(|s| !s.is_empty())
                    .collect();
                paths.push((supers, segments));
            }
            rest = &tail[tail.len() - after.len()..];
        }
    }
    paths
}

/// Module -> the modules it imports, for the crate whose sources are in `src`.
fn import_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = sources(src);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|file| module_of(src, file)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let me = module_of(src, file);
        let text = std::fs::read_to_string(file).expect("the source reads");
        let mut imports = BTreeSet::new();
        for (supers, segments) in named_paths(&text) {
            let mut path = if supers == 0 { Vec::new() } else { me[..me.len().saturating_sub(supers)].to_vec() };
            path.extend(segments);
            // The longest prefix that is a module.
            let target = (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|prefix| modules.contains(prefix));
            if let Some(target) = target.filter(|target| *target != me && !target.is_empty()) {
                // A module's own children are its parts, and its ancestors hold it.
                if !target.starts_with(&me) && !me.starts_with(&target) {
                    imports.insert(target.join("::"));
                }
            }
        }
        graph.insert(me.join("::"), imports);
    }
    graph
}

/// The circles of `graph` (strongly connected components of more than one module).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Reachability by repeated search: the graphs are a few dozen modules.
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut pending = vec![from.to_string()];
        while let Some(module) = pending.pop() {
            for next in graph.get(&module).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    pending.push(next.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|m| (m, reach(m))).collect();
    let mut found: Vec<Vec<String>> = Vec::new();
    for module in graph.keys() {
        let circle: Vec<String> = graph
            .keys()
            .filter(|other| reachable[module].contains(*other) && reachable[other].contains(module))
            .cloned()
            .collect();
        if circle.len() > 1 && !found.contains(&circle) {
            found.push(circle);
        }
    }
    found
}

#[test]
fn no_two_modules_of_either_crate_import_each_other() {
    for crate_dir in ["sdk", "tdm"] {
        let src = std_host().join(crate_dir).join("src");
        let graph = import_graph(&src);
        assert!(graph.len() > 10, "{crate_dir}: only {} modules read", graph.len());
        let edges: usize = graph.values().map(BTreeSet::len).sum();
        assert!(edges > 10, "{crate_dir}: only {edges} imports read");
        assert_eq!(circles(&graph), Vec::<Vec<String>>::new(), "{crate_dir}: modules importing each other");
    }
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let graph = BTreeMap::from([
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["c".to_string()])),
        ("c".to_string(), BTreeSet::from(["a".to_string()])),
        ("d".to_string(), BTreeSet::from(["a".to_string()])),
    ]);
    assert_eq!(circles(&graph), vec![vec!["a".to_string(), "b".to_string(), "c".to_string()]]);
    let parsed =
        named_paths("use crate::session::{Request, RunReport};\nlet x = super::super::line::parse(); // crate::no");
    assert_eq!(parsed, vec![(0, vec!["session".to_string()]), (2, vec!["line".to_string(), "parse".to_string()])]);
}

/// The dependencies a manifest's `[dependencies]` tables name.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line.ends_with("dependencies]") && !line.contains("dev-dependencies");
            continue;
        }
        if in_dependencies && !line.starts_with('#') {
            if let Some((name, _)) = line.split_once('=') {
                names.push(name.trim().to_string());
            }
        }
    }
    names
}

#[test]
fn the_library_has_no_flags_line_editor_or_terminal() {
    let sdk = std_host().join("sdk");
    let manifest = std::fs::read_to_string(sdk.join("Cargo.toml")).expect("the manifest reads");
    let names = dependencies(&manifest);
    assert!(names.iter().any(|name| name == "contour-core"), "the manifest was not read: {names:?}");
    for front_end in ["clap", "clap_complete", "rustyline", "unicode-width"] {
        assert!(!names.iter().any(|name| name == front_end), "tdm-sdk depends on {front_end}");
    }
    let src = sdk.join("src");
    let modules: Vec<String> = import_graph(&src).into_keys().collect();
    for front_end in ["cli", "repl", "hints", "terminal", "table", "exit"] {
        assert!(!modules.iter().any(|m| m.split("::").next() == Some(front_end)), "tdm-sdk has a `{front_end}` module");
    }
    for file in sources(&src) {
        let text = std::fs::read_to_string(&file).expect("the source reads");
        for printer in ["println!", "eprintln!", "print!(", "eprint!(", "rustyline::", "clap::", "Front::"] {
            assert!(!text.contains(printer), "{} uses {printer}: the library prints nothing", file.display());
        }
    }
}
