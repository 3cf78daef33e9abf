//! `tdm new NAME --lang rust|c|assemblyscript`: each project builds with its one command
//! (`make`) outside the repository, its module runs the declared intent through `tdm run`, and
//! `tdm inspect --json` shows the intent's title, description and schemas. A folder that is
//! there and not empty, a NAME that is not a plugin id and an unknown language are refused with
//! nothing written.
//!
//! The builds need what `make test` installs: clang and lld (C), Node.js with the repository's
//! AssemblyScript compiler in guest-sdk/assemblyscript/node_modules (`make as-examples`), and the
//! wasm32-unknown-unknown Rust target. A missing tool fails the test and says so.
#![cfg(unix)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `tdm ARGS` run in `dir`, with a workspace of its own.
fn tdm(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(args)
        .current_dir(dir)
        .env("TDM_WORKSPACE", dir.join(".tdm-workspace"))
        .output()
        .expect("tdm runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// stdout as the one JSON document it must be.
fn json_out(output: &Output) -> Value {
    let stdout = text(&output.stdout);
    assert_eq!(stdout.lines().count(), 1, "stdout must be one JSON line: {stdout:?}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout}"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fails the test, saying what to install, when `tool` does not run.
fn require(tool: &str, install: &str) {
    let runs = Command::new(tool).arg("--version").output().is_ok_and(|out| out.status.success());
    assert!(runs, "`{tool}` is needed to build this project and did not run: {install}");
}

/// The project's one build command, `make`, as a user runs it (not under the outer make).
fn make(project: &Path) {
    let out = Command::new("make")
        .current_dir(project)
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove("MAKELEVEL")
        .output()
        .expect("make runs");
    assert!(
        out.status.success(),
        "`make` failed in {}:\nstdout:\n{}\nstderr:\n{}",
        project.display(),
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// The params schema every template declares for `greet`.
fn greet_params_schema() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]})
}

/// `tdm new NAME --lang LANG` in a fresh folder: the project folder, after checking what the
/// command printed and the README's build and packaging lines.
fn create(temp: &Path, name: &str, lang: &str) -> PathBuf {
    let out = tdm(temp, &["new", name, "--lang", lang]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stdout: {stdout}\nstderr: {}", text(&out.stderr));
    for step in [
        format!("cd {name}"),
        "  make ".to_string(),
        format!("tdm run dist/{name}.wasm greet --params '{{\"name\":\"Ada\"}}'"),
        format!("tdm pack --module dist/{name}.wasm --id {name} --version 0.1.0 --key KEY.key pkg/"),
    ] {
        assert!(stdout.contains(&step), "the next steps lack {step:?}:\n{stdout}");
    }
    let project = temp.join(name);
    let readme = std::fs::read_to_string(project.join("README.md")).expect("a README.md");
    assert!(readme.contains("```sh\nmake\n```"), "{readme}");
    assert!(
        readme
            .contains(&format!("`tdm pack --module dist/{name}.wasm --id {name} --version 0.1.0 --key KEY.key pkg/`")),
        "{readme}"
    );
    assert!(!readme.contains("{{"), "a placeholder is left: {readme}");
    project
}

/// Runs the built module's `greet` through `tdm run` and checks the declaration `tdm inspect
/// --json` shows.
fn check_module(project: &Path, name: &str) {
    let module = format!("dist/{name}.wasm");
    let out = tdm(project, &["run", &module, "greet", "--params", r#"{"name":"Ada"}"#]);
    let outcome = json_out(&out);
    assert_eq!(out.status.code(), Some(0), "{outcome}");
    assert_eq!(outcome["status"], "completed", "{outcome}");
    let greeting = outcome["output"]["greeting"].as_str().expect("a greeting");
    assert!(greeting.contains("Ada"), "{outcome}");

    let out = tdm(project, &["run", &module, "greet", "--params", r#"{"name":" "}"#]);
    let outcome = json_out(&out);
    assert_eq!((out.status.code(), &outcome["blockedReason"]), (Some(1), &json!("empty_name")), "{outcome}");

    let out = tdm(project, &["inspect", &module, "--json"]);
    let inspection = json_out(&out);
    assert_eq!(out.status.code(), Some(0), "{inspection}");
    assert_eq!(inspection["verdict"], "accepted", "{inspection}");
    assert_eq!(inspection["intents"]["source"], "tdm.intents section", "{inspection}");
    let declared = inspection["intents"]["declared"].as_array().expect("declared intents");
    assert_eq!(declared.len(), 1, "{inspection}");
    let greet = &declared[0];
    assert_eq!(greet["name"], "greet");
    assert_eq!(greet["title"], "Greet someone");
    assert!(greet["description"].as_str().is_some_and(|d| d.contains("greeting")), "{greet}");
    assert_eq!(greet["params"], greet_params_schema());
    assert_eq!(greet["result"]["required"], json!(["greeting"]), "{greet}");
}

#[test]
fn a_rust_project_builds_with_make_and_runs_its_intent() {
    require("cargo", "install Rust (https://rustup.rs)");
    let temp = tempfile::tempdir().expect("a temp dir");
    // `.` and `-` are fine in an id; the crate is `my_plugin_rs`.
    let name = "my.plugin-rs";
    let project = create(temp.path(), name, "rust");
    assert!(project.join("tdm-plugin/src/lib.rs").is_file(), "the SDK is copied in");
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).expect("Cargo.toml");
    assert!(manifest.contains("name = \"my_plugin_rs\"") && manifest.contains("path = \"tdm-plugin\""), "{manifest}");
    let lock = std::fs::read_to_string(project.join("Cargo.lock")).expect("Cargo.lock");
    make(&project);
    // The lock written by `tdm new` was complete: cargo resolved nothing (so it builds offline
    // from cargo's cache) and kept the SDK's tested versions.
    assert_eq!(std::fs::read_to_string(project.join("Cargo.lock")).expect("Cargo.lock"), lock);
    check_module(&project, name);
}

#[test]
fn a_c_project_builds_with_make_and_runs_its_intent() {
    require("clang", "`make test` installs it (mk/c-as-examples.mk, c-toolchain), or apt-get install clang lld");
    let temp = tempfile::tempdir().expect("a temp dir");
    let name = "hello_c.2";
    let project = create(temp.path(), name, "c");
    for file in ["plugin.c", "Makefile", "tdm-plugin/tdm_plugin.h", "tdm-plugin/tdm_alloc.c"] {
        assert!(project.join(file).is_file(), "{file} is missing");
    }
    make(&project);
    check_module(&project, name);
}

#[test]
fn an_assemblyscript_project_builds_with_make_and_runs_its_intent() {
    require("node", "`make test` installs it (mk/c-as-examples.mk, as-toolchain), or apt-get install nodejs npm");
    // The repository's pinned compiler instead of `npm install` (offline, fast): the same version
    // the project's package.json names.
    let modules = repo().join("guest-sdk/assemblyscript/node_modules");
    assert!(
        modules.join(".bin/asc").exists(),
        "{} has no AssemblyScript compiler: run `make as-examples` (npm ci in guest-sdk/assemblyscript)",
        modules.display()
    );
    let temp = tempfile::tempdir().expect("a temp dir");
    let name = "Word-Count";
    let project = create(temp.path(), name, "assemblyscript");
    let package: Value =
        serde_json::from_str(&std::fs::read_to_string(project.join("package.json")).expect("package.json"))
            .expect("package.json is JSON");
    let sdk: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("guest-sdk/assemblyscript/package.json")).expect("the SDK's package.json"),
    )
    .expect("the SDK's package.json is JSON");
    assert_eq!(package["name"], "word-count");
    assert_eq!(package["devDependencies"]["assemblyscript"], sdk["devDependencies"]["assemblyscript"]);
    std::os::unix::fs::symlink(&modules, project.join("node_modules")).expect("link node_modules");
    make(&project);
    check_module(&project, name);
}

/// The files under `dir`, relative, sorted.
fn listing(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("read the folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push(path.strip_prefix(root).expect("under root").display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn an_empty_folder_is_filled_and_json_lists_the_files() {
    let temp = tempfile::tempdir().expect("a temp dir");
    std::fs::create_dir(temp.path().join("empty")).expect("mkdir");
    let out = tdm(temp.path(), &["new", "empty", "--lang", "c", "--json"]);
    let created = json_out(&out);
    assert_eq!(out.status.code(), Some(0), "{created}");
    assert_eq!(created["status"], "created");
    assert_eq!(created["lang"], "c");
    assert_eq!(created["module"], "dist/empty.wasm");
    assert_eq!(created["build"], "make");
    let files: Vec<String> =
        created["files"].as_array().expect("files").iter().map(|f| f.as_str().expect("a path").to_string()).collect();
    assert_eq!(files, listing(&temp.path().join("empty")));
    assert!(files.contains(&"tdm-plugin/tdm_plugin.h".to_string()), "{files:?}");
}

#[test]
fn a_folder_that_is_not_empty_is_refused_and_left_alone() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path().join("taken");
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::write(dir.join("notes.txt"), "mine").expect("write");
    let out = tdm(temp.path(), &["new", "taken"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("exists and is not empty") && stderr.contains("hint:"), "{stderr}");
    assert_eq!(listing(&dir), ["notes.txt"]);
    assert_eq!(std::fs::read_to_string(dir.join("notes.txt")).expect("read"), "mine");

    let out = tdm(temp.path(), &["new", "taken", "--lang", "c", "--json"]);
    let error = json_out(&out);
    assert_eq!((out.status.code(), &error["status"], &error["error"]), (Some(1), &json!("error"), &json!("refused")));

    // A file of that name is no folder to fill.
    std::fs::write(temp.path().join("plain"), "x").expect("write");
    let out = tdm(temp.path(), &["new", "plain"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("is not a folder"), "{}", text(&out.stderr));
}

#[test]
fn a_name_that_is_not_a_plugin_id_is_refused() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let long = "x".repeat(65);
    for name in ["bad/name", "../up", ".hidden", "a b", "ünï", "", long.as_str()] {
        let out = tdm(temp.path(), &["new", name]);
        assert_eq!(out.status.code(), Some(2), "{name:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("is not a plugin id"), "{name:?}: {}", text(&out.stderr));
    }
    let out = tdm(temp.path(), &["new", "--", "-flag"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("starts with `-`"), "{}", text(&out.stderr));
    let out = tdm(temp.path(), &["new", "bad/name", "--json"]);
    let error = json_out(&out);
    assert_eq!((&error["status"], &error["error"]), (&json!("error"), &json!("usage")), "{error}");
    assert_eq!(listing(temp.path()), Vec::<String>::new(), "nothing is written");
}

#[test]
fn an_unknown_language_is_refused_by_the_flag_parser() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let out = tdm(temp.path(), &["new", "ok", "--lang", "go"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("invalid value 'go'") && stderr.contains("assemblyscript"), "{stderr}");
    assert!(!temp.path().join("ok").exists(), "nothing is written");
}
