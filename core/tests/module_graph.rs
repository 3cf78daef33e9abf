//! core's modules import each other without circles: every `crate::...` path in `core/src` is
//! read (in `use` lists and in code alike, comments left out), each names the top-level module
//! it reaches (a name `lib.rs` re-exports counts as the module it comes from), and the graph
//! of those imports must have no cycle. A circle means two modules can only be understood, and
//! changed, together; the test names every module of each circle it finds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("core/src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The text of a source file without its comments (`//` to the end of the line and `/* */`),
/// string literals kept (they hold no `crate::` paths in core).
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |end| &after[end..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |end| &after[end + 2..]);
        } else if let Some(after) = rest.strip_prefix('"') {
            // Skip a string literal whole, so `//` inside one is not read as a comment.
            let mut chars = after.char_indices();
            let mut end = after.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    _ => {}
                }
            }
            out.push_str("\"\"");
            rest = &after[end..];
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn ident_at(text: &str) -> &str {
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(text.len());
    &text[..end]
}

/// The first name of every path after `crate::`: `crate::a::b` gives `a`, and
/// `crate::{a::b, c}` gives `a` and `c`.
fn crate_paths(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `my_crate::` and the like
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => {
                        names.push(ident_at(group[start..i].trim_start()).to_string());
                        start = i + 1;
                    }
                    _ => {}
                }
                if depth == 0 {
                    names.push(ident_at(group[start..i].trim_start()).to_string());
                    break;
                }
            }
        } else {
            names.push(ident_at(rest).to_string());
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// What each name `lib.rs` re-exports comes from: `pub use policy::{Policy, ..}` maps `Policy`
/// to `policy`.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else { continue };
        let module = ident_at(path).to_string();
        let tail = &path[module.len()..];
        let names: Vec<&str> = match tail.find('{') {
            Some(open) => tail[open + 1..].trim_end_matches('}').split(',').collect(),
            None => vec![tail.rsplit("::").next().unwrap_or_default()],
        };
        for name in names {
            let name = name.trim();
            let name = name.rsplit("::").next().unwrap_or(name);
            let name = name.split(" as ").last().unwrap_or(name).trim();
            if !name.is_empty() {
                map.insert(name.to_string(), module.clone());
            }
        }
    }
    map
}

/// The imports between core's top-level modules: module -> the modules it names.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let lib = without_comments(&std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
    let reexported = reexports(&lib);
    let mut modules = BTreeSet::new();
    for file in &files {
        let relative = file.strip_prefix(src).expect("under src");
        let first = relative.components().next().expect("a component").as_os_str().to_string_lossy();
        modules.insert(first.trim_end_matches(".rs").to_string());
    }
    modules.remove("lib");
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for file in &files {
        let relative = file.strip_prefix(src).expect("under src");
        let first = relative.components().next().expect("a component").as_os_str().to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue;
        }
        let text = without_comments(&std::fs::read_to_string(file).expect("readable"));
        for name in crate_paths(&text) {
            let target = if modules.contains(&name) { Some(name) } else { reexported.get(&name).cloned() };
            if let Some(target) = target.filter(|t| *t != module) {
                graph.get_mut(&module).expect("a module").insert(target);
            }
        }
    }
    graph
}

/// The circles of `graph`: its strongly connected components of more than one module
/// (Tarjan's algorithm).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, node: &'a str) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in &self.graph[node] {
                let next = next.as_str();
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    component.push(top.to_string());
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            walk.visit(node);
        }
    }
    walk.found
}

#[test]
fn core_modules_import_each_other_without_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    assert!(graph.len() > 10, "the walk found core's modules: {graph:?}");
    let found = circles(&graph);
    assert!(found.is_empty(), "import circles between core's modules: {found:?}\nthe imports: {graph:#?}");
}

#[test]
fn the_reader_finds_grouped_and_nested_paths_and_a_circle() {
    let text = without_comments(
        "use crate::a::X; // crate::commented\nuse crate::{b::Y, c, d::{E, F}};\nfn f() { crate::e::g(\"crate::s\") }",
    );
    assert_eq!(crate_paths(&text), ["a", "b", "c", "d", "e"]);
    let graph: BTreeMap<String, BTreeSet<String>> =
        [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"]), ("d", vec!["a"])]
            .into_iter()
            .map(|(m, to)| (m.to_string(), to.into_iter().map(String::from).collect()))
            .collect();
    assert_eq!(circles(&graph), [vec!["a".to_string(), "b".to_string(), "c".to_string()]]);
}
