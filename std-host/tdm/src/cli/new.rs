//! `tdm new NAME --lang rust|c|assemblyscript`: creates the plugin project folder NAME, which
//! builds with one `make` into `dist/NAME.wasm` and declares its intent (title, description,
//! params and result schemas) as the repository's hello examples do. The templates are the
//! files under `std-host/tdm/templates/LANG/`, with `{{name}}` and the like filled in; the guest
//! SDK is copied into the project's `tdm-plugin/` from `guest-sdk/`, embedded in tdm when it is
//! built, so a project needs no Contour checkout and never gets an SDK older than its tdm.

use super::args::{GlobalArgs, JsonArg};
use super::report::CliError;
use crate::exit::EXIT_COMPLETED;
use crate::terminal::{self, outln};
use clap::{Args, ValueEnum};
use serde_json::json;
use std::fs;
use std::io::ErrorKind as IoKind;
use std::path::{Path, PathBuf};
use tdm_sdk::package::valid_id;

const EXAMPLES: &str = "\
Examples:
  tdm new my-plugin                      (Rust, the default)
  tdm new counter --lang c
  tdm new word.count --lang assemblyscript
  cd my-plugin && make && tdm run dist/my-plugin.wasm greet --params '{\"name\":\"Ada\"}'";

/// The language of a new plugin project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// Rust with the `tdm-plugin` crate (cargo, wasm32-unknown-unknown)
    Rust,
    /// C with the C guest SDK (clang --target=wasm32 and lld)
    C,
    /// AssemblyScript with its guest SDK (Node.js, npm, asc)
    #[value(alias = "as")]
    Assemblyscript,
}

impl Lang {
    fn as_str(self) -> &'static str {
        match self {
            Self::Rust => "rust",
            Self::C => "c",
            Self::Assemblyscript => "assemblyscript",
        }
    }

    /// Its name in a sentence.
    fn display(self) -> &'static str {
        match self {
            Self::Rust => "Rust",
            Self::C => "C",
            Self::Assemblyscript => "AssemblyScript",
        }
    }

    /// What `make` runs, for the next steps.
    fn build_line(self) -> &'static str {
        match self {
            Self::Rust => "cargo build --release --target wasm32-unknown-unknown, then a copy to dist/",
            Self::C => "clang --target=wasm32 over plugin.c and the SDK",
            Self::Assemblyscript => "npm install (once), then npm run build",
        }
    }

    /// The project's files.
    fn files(self) -> &'static [ProjectFile] {
        match self {
            Self::Rust => RUST_FILES,
            Self::C => C_FILES,
            Self::Assemblyscript => AS_FILES,
        }
    }
}

/// `tdm new`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct NewArgs {
    /// The plugin's id and the folder created for it (letters, digits, `-`, `_`, `.`)
    pub(crate) name: String,
    /// The plugin's language
    #[arg(long, value_enum, default_value_t = Lang::Rust)]
    pub(crate) lang: Lang,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// One file of a new project: where it comes from (under `templates/LANG/` or `guest-sdk/`),
/// where it goes in the project, its text, and whether its placeholders are filled (a template)
/// or it is copied as it is (the SDK's own files).
struct ProjectFile {
    #[cfg(test)]
    source: &'static str,
    path: &'static str,
    text: &'static str,
    template: bool,
}

/// A template of `templates/LANG/`, written to `path` in the project.
macro_rules! template {
    ($lang:literal, $source:literal => $path:literal) => {
        ProjectFile {
            #[cfg(test)]
            source: concat!($lang, "/", $source),
            path: $path,
            text: include_str!(concat!("../../templates/", $lang, "/", $source)),
            template: true,
        }
    };
}

/// A file of the guest SDK (`guest-sdk/`), copied as it is to `path` in the project.
macro_rules! sdk {
    ($source:literal => $path:literal) => {
        ProjectFile {
            #[cfg(test)]
            source: $source,
            path: $path,
            text: include_str!(concat!("../../../../guest-sdk/", $source)),
            template: false,
        }
    };
}

/// The Rust project; its `Cargo.lock` is written apart ([`project_lock`]).
const RUST_FILES: &[ProjectFile] = &[
    template!("rust", "Cargo.toml.in" => "Cargo.toml"),
    template!("rust", "src/lib.rs" => "src/lib.rs"),
    template!("rust", "Makefile" => "Makefile"),
    template!("rust", "README.md" => "README.md"),
    template!("rust", "gitignore" => ".gitignore"),
    sdk!("rust/Cargo.toml" => "tdm-plugin/Cargo.toml"),
    sdk!("rust/Cargo.lock" => "tdm-plugin/Cargo.lock"),
    sdk!("rust/rustfmt.toml" => "tdm-plugin/rustfmt.toml"),
    sdk!("rust/.gitignore" => "tdm-plugin/.gitignore"),
    sdk!("rust/src/lib.rs" => "tdm-plugin/src/lib.rs"),
    sdk!("rust/src/abi.rs" => "tdm-plugin/src/abi.rs"),
    sdk!("rust/src/arena.rs" => "tdm-plugin/src/arena.rs"),
    sdk!("rust/src/failure.rs" => "tdm-plugin/src/failure.rs"),
    sdk!("rust/src/host.rs" => "tdm-plugin/src/host.rs"),
    sdk!("rust/src/intent.rs" => "tdm-plugin/src/intent.rs"),
    sdk!("rust/src/json/mod.rs" => "tdm-plugin/src/json/mod.rs"),
    sdk!("rust/src/json/access.rs" => "tdm-plugin/src/json/access.rs"),
    sdk!("rust/src/json/de.rs" => "tdm-plugin/src/json/de.rs"),
    sdk!("rust/src/json/lanes.rs" => "tdm-plugin/src/json/lanes.rs"),
    sdk!("rust/src/json/scan.rs" => "tdm-plugin/src/json/scan.rs"),
    sdk!("rust/src/json/ser.rs" => "tdm-plugin/src/json/ser.rs"),
    sdk!("rust/src/json/words.rs" => "tdm-plugin/src/json/words.rs"),
    sdk!("rust/src/json/tests.rs" => "tdm-plugin/src/json/tests.rs"),
];

/// The C project.
const C_FILES: &[ProjectFile] = &[
    template!("c", "plugin.c" => "plugin.c"),
    template!("c", "Makefile" => "Makefile"),
    template!("c", "README.md" => "README.md"),
    template!("c", "gitignore" => ".gitignore"),
    sdk!("c/tdm_plugin.h" => "tdm-plugin/tdm_plugin.h"),
    sdk!("c/tdm_internal.h" => "tdm-plugin/tdm_internal.h"),
    sdk!("c/tdm_plugin.c" => "tdm-plugin/tdm_plugin.c"),
    sdk!("c/tdm_json.c" => "tdm-plugin/tdm_json.c"),
    sdk!("c/tdm_alloc.c" => "tdm-plugin/tdm_alloc.c"),
];

/// The AssemblyScript project.
const AS_FILES: &[ProjectFile] = &[
    template!("assemblyscript", "assembly/index.ts" => "assembly/index.ts"),
    template!("assemblyscript", "tdm-intents.json" => "tdm-intents.json"),
    template!("assemblyscript", "asconfig.json" => "asconfig.json"),
    template!("assemblyscript", "package.json" => "package.json"),
    template!("assemblyscript", "Makefile" => "Makefile"),
    template!("assemblyscript", "README.md" => "README.md"),
    template!("assemblyscript", "gitignore" => ".gitignore"),
    sdk!("assemblyscript/assembly/index.ts" => "tdm-plugin/assembly/index.ts"),
    sdk!("assemblyscript/assembly/abi.ts" => "tdm-plugin/assembly/abi.ts"),
    sdk!("assemblyscript/assembly/host.ts" => "tdm-plugin/assembly/host.ts"),
    sdk!("assemblyscript/assembly/lanes.ts" => "tdm-plugin/assembly/lanes.ts"),
    sdk!("assemblyscript/assembly/marks.ts" => "tdm-plugin/assembly/marks.ts"),
    sdk!("assemblyscript/assembly/request.ts" => "tdm-plugin/assembly/request.ts"),
    sdk!("assemblyscript/assembly/text.ts" => "tdm-plugin/assembly/text.ts"),
    sdk!("assemblyscript/assembly/writer.ts" => "tdm-plugin/assembly/writer.ts"),
    sdk!("assemblyscript/transform/intents.mjs" => "tdm-plugin/transform/intents.mjs"),
];

/// The Rust SDK's lock file: the versions of serde and serde_json it was tested with.
const RUST_SDK_LOCK: &str = include_str!("../../../../guest-sdk/rust/Cargo.lock");

/// The AssemblyScript SDK's package.json: the compiler version it was tested with.
const AS_SDK_PACKAGE: &str = include_str!("../../../../guest-sdk/assemblyscript/package.json");

/// Rust keywords and the names cargo refuses or reserves for a package (artifact folders,
/// the standard crates, Windows device names), separated by spaces.
const RESERVED_CRATE_NAMES: &str = "abstract alloc as async await become box break build con const continue core \
    crate deps do dyn else enum examples extern false final fn for gen if impl in incremental let loop macro match \
    mod move mut nul override priv proc_macro pub ref return self static std struct super test trait true try type \
    typeof unsafe unsized use virtual where while yield aux prn";

/// npm names a project cannot take: its own dependencies and the names npm refuses.
const RESERVED_NPM_NAMES: &[&str] = &["assemblyscript", "binaryen", "long", "node_modules", "favicon.ico"];

/// The names a new project's files are filled with.
struct Names {
    /// The plugin's id, the folder's name and the module's (`dist/NAME.wasm`).
    id: String,
    /// The Rust package (and library) name.
    crate_name: String,
    /// The npm package name.
    npm_name: String,
}

/// Runs `tdm new`; the exit code.
pub fn main(args: &NewArgs, _global: &GlobalArgs) -> u8 {
    create(args).unwrap_or_else(|e| e.print(args.json.json))
}

fn create(args: &NewArgs) -> Result<u8, CliError> {
    let id = args.name.as_str();
    check_name(id)?;
    let names = Names { id: id.to_string(), crate_name: crate_name(id), npm_name: npm_name(id) };
    let dir = PathBuf::from(id);
    let existed = check_folder(&dir, id)?;
    let files = project_files(args.lang, &names)?;
    if !existed {
        fs::create_dir(&dir).map_err(|e| match e.kind() {
            IoKind::AlreadyExists => refusal_exists(id),
            _ => CliError::io(format!("cannot create the folder {id}: {e}")),
        })?;
    }
    for (path, text) in &files {
        write_new(&dir, path, text).map_err(|e| {
            CliError::io(format!("cannot write {id}/{path}: {e}"))
                .hint(format!("the folder {id} is incomplete: remove it and run `tdm new` again"))
        })?;
    }
    print_created(args, &names, &dir, &files);
    Ok(EXIT_COMPLETED)
}

/// Refuses a NAME that is not a plugin id, or one that every command would read as a flag.
fn check_name(id: &str) -> Result<(), CliError> {
    if !valid_id(id) {
        return Err(CliError::usage(format!(
            "`{id}` is not a plugin id: letters, digits, `-`, `_` and `.` (at most 64, not starting with `.`)"
        ))
        .hint(
            "NAME is the plugin's id and the folder created for it, in the current folder: e.g. `tdm new my-plugin`",
        ));
    }
    if id.starts_with('-') {
        return Err(CliError::usage(format!("`{id}` starts with `-`, so commands would read it as a flag"))
            .hint("start NAME with a letter or a digit"));
    }
    Ok(())
}

/// Whether the folder `dir` is there (empty); an error when it is there and not an empty folder.
fn check_folder(dir: &Path, id: &str) -> Result<bool, CliError> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == IoKind::NotFound => Ok(false),
        Err(e) => Err(CliError::io(format!("cannot look at {id}: {e}"))),
        Ok(meta) if meta.is_dir() => {
            let mut entries = fs::read_dir(dir).map_err(|e| CliError::io(format!("cannot list {id}: {e}")))?;
            match entries.next() {
                None => Ok(true),
                Some(_) => Err(refusal_exists(id)),
            }
        }
        Ok(_) => Err(CliError::refused(format!("{id} exists and is not a folder"))
            .hint("choose another NAME, or move that file away")),
    }
}

fn refusal_exists(id: &str) -> CliError {
    CliError::refused(format!("the folder {id} exists and is not empty: nothing was written"))
        .hint("choose another NAME, or run `tdm new` where there is no such folder")
}

/// The project's files for `lang`: each path in the project and its text, templates filled.
fn project_files(lang: Lang, names: &Names) -> Result<Vec<(String, String)>, CliError> {
    let assemblyscript = match lang {
        Lang::Assemblyscript => assemblyscript_version()?,
        Lang::Rust | Lang::C => String::new(),
    };
    let vars = [
        ("{{name}}", names.id.as_str()),
        ("{{crate}}", names.crate_name.as_str()),
        ("{{package}}", names.npm_name.as_str()),
        ("{{assemblyscript}}", assemblyscript.as_str()),
        ("{{tdm_version}}", env!("CARGO_PKG_VERSION")),
    ];
    let mut files: Vec<(String, String)> = lang
        .files()
        .iter()
        .map(|file| {
            let text = if file.template { fill(file.text, &vars) } else { file.text.to_string() };
            (file.path.to_string(), text)
        })
        .collect();
    if lang == Lang::Rust {
        files.push(("Cargo.lock".to_string(), project_lock(RUST_SDK_LOCK, &names.crate_name)));
    }
    Ok(files)
}

/// `text` with each placeholder replaced by its value.
fn fill(text: &str, vars: &[(&str, &str)]) -> String {
    vars.iter().fold(text.to_string(), |text, (key, value)| text.replace(key, value))
}

/// Writes a new file `path` (relative, `/`-separated) under `dir`, creating its folders; a file
/// that is already there is an error, never overwritten.
fn write_new(dir: &Path, path: &str, text: &str) -> std::io::Result<()> {
    let target = path.split('/').fold(dir.to_path_buf(), |target, part| target.join(part));
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent)?;
    }
    // The one place files are created (never through a link, never overwriting).
    tdm_sdk::files::output::write_new(&target, &mut text.as_bytes()).map(drop).map_err(|e| e.into_io())
}

/// The Rust package name for plugin `id`: lower case, every `-` and `.` turned into `_` (cargo
/// names the module after it), and `plugin_` ahead when that is not a name cargo takes or it is
/// one of the SDK's dependencies.
fn crate_name(id: &str) -> String {
    let name: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    let taken = |name: &str| {
        RESERVED_CRATE_NAMES.split_whitespace().any(|reserved| reserved == name)
            || locked_names(RUST_SDK_LOCK).any(|locked| locked.replace('-', "_") == name)
            || name
                .strip_prefix("com")
                .or_else(|| name.strip_prefix("lpt"))
                .is_some_and(|n| matches!(n.as_bytes(), [digit] if digit.is_ascii_digit()))
    };
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) || taken(&name) {
        format!("plugin_{name}")
    } else {
        name
    }
}

/// The npm package name for plugin `id`: lower case, and `plugin-` ahead when it does not start
/// with a letter or digit or is a name npm refuses for this project.
fn npm_name(id: &str) -> String {
    let name = id.to_ascii_lowercase();
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) || RESERVED_NPM_NAMES.contains(&name.as_str()) {
        format!("plugin-{name}")
    } else {
        name
    }
}

/// The package names of a Cargo.lock.
fn locked_names(lock: &str) -> impl Iterator<Item = &str> {
    lock.lines().filter_map(|line| line.strip_prefix("name = \"")?.strip_suffix('"'))
}

/// The project's Cargo.lock: the SDK's (the versions it was tested with) and the project's own
/// package in its sorted place, so cargo resolves nothing and builds offline from its cache.
fn project_lock(sdk_lock: &str, crate_name: &str) -> String {
    const PACKAGE: &str = "[[package]]\n";
    let own = format!(
        "{PACKAGE}name = \"{crate_name}\"\nversion = \"0.1.0\"\ndependencies = [\n \"serde\",\n \"tdm-plugin\",\n]\n\n"
    );
    let mut at = sdk_lock.len();
    let mut search = 0;
    while let Some(found) = sdk_lock[search..].find(PACKAGE) {
        let start = search + found;
        let name = locked_names(&sdk_lock[start..]).next().unwrap_or_default();
        if name > crate_name {
            at = start;
            break;
        }
        search = start + PACKAGE.len();
    }
    if at == sdk_lock.len() {
        let mut lock = sdk_lock.trim_end().to_string();
        lock.push_str("\n\n");
        lock.push_str(own.trim_end());
        lock.push('\n');
        return lock;
    }
    format!("{}{own}{}", &sdk_lock[..at], &sdk_lock[at..])
}

/// The AssemblyScript compiler version the SDK pins (its package.json's devDependencies).
fn assemblyscript_version() -> Result<String, CliError> {
    let package: serde_json::Value = serde_json::from_str(AS_SDK_PACKAGE)
        .map_err(|e| CliError::refused(format!("the AssemblyScript SDK's package.json built into tdm: {e}")))?;
    package["devDependencies"]["assemblyscript"].as_str().map(str::to_string).ok_or_else(|| {
        CliError::refused("the AssemblyScript SDK's package.json built into tdm names no assemblyscript version")
    })
}

/// What to run next, one shell command a line.
fn next_steps(id: &str) -> Vec<String> {
    vec![
        format!("cd {id}"),
        "make".to_string(),
        format!("tdm run dist/{id}.wasm greet --params '{{\"name\":\"Ada\"}}'"),
        format!("tdm pack --module dist/{id}.wasm --id {id} --version 0.1.0 --key KEY.key pkg/"),
    ]
}

/// Says what was created and what to run next (text, or one JSON object).
fn print_created(args: &NewArgs, names: &Names, dir: &Path, files: &[(String, String)]) {
    let id = names.id.as_str();
    let next = next_steps(id);
    if args.json.json {
        let path = std::env::current_dir().map(|cwd| cwd.join(dir)).unwrap_or_else(|_| dir.to_path_buf());
        let mut paths: Vec<&str> = files.iter().map(|(path, _)| path.as_str()).collect();
        paths.sort_unstable();
        terminal::out_json(
            &json!({
                "status": "created", "id": id, "lang": args.lang.as_str(), "path": path.display().to_string(),
                "module": format!("dist/{id}.wasm"), "intents": ["greet"], "build": "make", "files": paths,
                "next": next,
            })
            .to_string(),
        );
        return;
    }
    outln!("created {id}/: a {} plugin with one intent, greet {{name}} (README.md says more)", args.lang.display());
    outln!("next:");
    outln!("  {}", next[0]);
    outln!("  {}    ({})", next[1], args.lang.build_line());
    for step in &next[2..] {
        outln!("  {step}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of the guest SDKs' sources is copied into a new project, so one added to
    /// `guest-sdk/` cannot be left out of the projects `tdm new` writes.
    #[test]
    fn every_sdk_source_is_in_its_project() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guest-sdk");
        let listed: Vec<&str> = [RUST_FILES, C_FILES, AS_FILES]
            .iter()
            .flat_map(|files| files.iter())
            .filter(|file| !file.template)
            .map(|file| file.source)
            .collect();
        for folder in ["rust/src", "rust/src/json", "c", "assemblyscript/assembly", "assemblyscript/transform"] {
            for entry in fs::read_dir(root.join(folder)).expect("the SDK folder is there") {
                let entry = entry.expect("an entry");
                if entry.file_type().expect("a type").is_file() {
                    let source = format!("{folder}/{}", entry.file_name().to_string_lossy());
                    assert!(listed.contains(&source.as_str()), "guest-sdk/{source} is not copied by `tdm new`");
                }
            }
        }
    }

    /// Every placeholder of every template is filled.
    #[test]
    fn templates_are_filled() {
        let names = Names { id: "my.plugin-1".into(), crate_name: crate_name("my.plugin-1"), npm_name: "x".into() };
        for lang in [Lang::Rust, Lang::C, Lang::Assemblyscript] {
            let files = project_files(lang, &names).expect("the files");
            for (file, (path, text)) in lang.files().iter().zip(&files) {
                assert_eq!(file.path, path);
                assert!(!file.template || !text.contains("{{"), "{path} keeps a placeholder:\n{text}");
            }
        }
    }

    /// The Rust template builds with the release profile of the repository's Rust examples.
    #[test]
    fn rust_template_uses_the_examples_release_profile() {
        fn profile(manifest: &str) -> &str {
            let start = manifest.find("[profile.release]").expect("a release profile");
            let rest = &manifest[start..];
            &rest[..rest.find("\n\n").unwrap_or(rest.len())]
        }
        let examples = include_str!("../../../../examples/rust/Cargo.toml");
        assert_eq!(profile(RUST_FILES[0].text), profile(examples));
    }

    #[test]
    fn crate_and_npm_names_are_ones_their_tools_take() {
        assert_eq!(crate_name("hello"), "hello");
        assert_eq!(crate_name("My.Plugin-2"), "my_plugin_2");
        assert_eq!(crate_name("2fa"), "plugin_2fa");
        assert_eq!(crate_name("_x"), "plugin__x");
        assert_eq!(crate_name("fn"), "plugin_fn");
        assert_eq!(crate_name("serde"), "plugin_serde");
        assert_eq!(crate_name("tdm-plugin"), "plugin_tdm_plugin");
        assert_eq!(crate_name("com1"), "plugin_com1");
        assert_eq!(crate_name("coma"), "coma");
        assert_eq!(npm_name("Word.Count"), "word.count");
        assert_eq!(npm_name("_x"), "plugin-_x");
        assert_eq!(npm_name("assemblyscript"), "plugin-assemblyscript");
    }

    #[test]
    fn the_project_lock_holds_the_project_in_its_sorted_place() {
        for name in ["aaa", "my_plugin", "zzz"] {
            let lock = project_lock(RUST_SDK_LOCK, name);
            let names: Vec<&str> = locked_names(&lock).collect();
            let mut sorted = names.clone();
            sorted.sort_unstable();
            assert_eq!(names, sorted, "{lock}");
            assert!(names.contains(&name));
            assert!(lock.ends_with('\n') && !lock.ends_with("\n\n") && !lock.contains("\n\n\n"), "{lock}");
        }
        assert_eq!(assemblyscript_version().ok().as_deref().map(|v| v.is_empty()), Some(false));
    }
}
