//! `tdm inspect PLUGIN`: what a module declares and whether it would load, without running
//! any of it: its intents, exports, imports (each allowed or rejected, and why), memory and
//! the verdict. Exit 0 when accepted, 1 when rejected (a `.wat` that does not compile
//! included), 2 when the file cannot be read. `--json` prints one object in every case.

use super::args::{GlobalArgs, JsonArg};
use super::report::CliError;
use crate::exit::{EXIT_COMPLETED, EXIT_FAILED};
use crate::table::Table;
use crate::terminal::{self, errln, outln};
use clap::Args;
use contour_core::{BlockedReason, Failure, Policy};
use contour_core::{ImportVerdict, Inspection};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tdm_sdk::command::{inspect_module, ModuleKind};
use tdm_sdk::declared::{Declared, IntentInfo};
use tdm_sdk::module_file::{read_module, ModuleFileError, WatError};

const EXAMPLES: &str = "\
Examples:
  tdm inspect plugin.wasm
  tdm inspect plugin.wat --json | jq .intents";

/// `tdm inspect`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct InspectArgs {
    /// The module (.wasm or .wat)
    pub(crate) plugin: PathBuf,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// Runs `tdm inspect`; the exit code.
pub fn main(args: &InspectArgs, _global: &GlobalArgs) -> u8 {
    inspect(args).unwrap_or_else(|e| e.print(args.json.json))
}

fn inspect(args: &InspectArgs) -> Result<u8, CliError> {
    let bytes = match read_module(&args.plugin) {
        Ok(bytes) => bytes,
        Err(ModuleFileError::Wat(e)) => return Ok(broken_text(args, &e)),
        Err(ModuleFileError::File(e)) => return Err(e.into()),
    };
    let policy = Policy::default();
    // A command is judged as `tdm exec` loads it, a plugin as `tdm run` does.
    let (inspection, kind) = match inspect_module(&bytes, &policy) {
        Ok(judged) => judged,
        Err(failure) => {
            if args.json.json {
                terminal::out_json(&rejected_json(&args.plugin, &failure, Value::Null).to_string());
            } else {
                outln!("module: {}", args.plugin.display());
                outln!("verdict: rejected");
                outln!("  {}: {}", failure.reason, failure.message());
            }
            return Ok(EXIT_FAILED);
        }
    };
    let command = kind == ModuleKind::Command;
    let declared = Declared::from_section(&inspection.intents_section);
    let simd = contour_core::uses_simd(&bytes);
    if args.json.json {
        let mut json = inspection_json(&args.plugin, &inspection, &declared, command);
        json["simd"] = Value::Bool(simd);
        terminal::out_json(&json.to_string());
    } else {
        print_inspection(&args.plugin, &inspection, &policy, &declared, command, simd);
    }
    Ok(if inspection.failures.is_empty() { EXIT_COMPLETED } else { EXIT_FAILED })
}

/// A `.wat` that does not compile: rejected, with where (text, or the same JSON shape).
fn broken_text(args: &InspectArgs, e: &WatError) -> u8 {
    let failure = Failure::new(BlockedReason::InvalidModule, e.headline());
    if args.json.json {
        let position = json!({
            "file": e.path.display().to_string(), "line": e.line, "column": e.column, "sourceLine": e.source_line,
        });
        terminal::out_json(&rejected_json(&args.plugin, &failure, position).to_string());
    } else {
        let error = CliError::wat(e);
        errln!("tdm: error: {}", error.message);
        for line in &error.detail {
            errln!("  {line}");
        }
        outln!("module: {}", args.plugin.display());
        outln!("verdict: rejected");
        outln!("  {}: {}", failure.reason, failure.message());
    }
    EXIT_FAILED
}

fn failure_json(failure: &Failure) -> Value {
    json!({"blockedReason": failure.reason.as_str(), "message": failure.message()})
}

/// The `--json` object of a module that could not be parsed at all (every member present).
fn rejected_json(path: &Path, failure: &Failure, position: Value) -> Value {
    let mut failure = failure_json(failure);
    if let (Value::Object(failure), Value::Object(position)) = (&mut failure, position) {
        failure.extend(position);
    }
    json!({
        "module": path.display().to_string(),
        "kind": Value::Null,
        "verdict": "rejected",
        "intents": {"source": "none", "declared": [], "problem": Value::Null},
        "hostImports": [],
        "exports": [],
        "imports": [],
        "memory": Value::Null,
        "failures": [failure],
    })
}

/// The longest schema shown on a terminal line, in bytes of compact JSON.
const MAX_SHOWN_SCHEMA: usize = 240;

/// An intent as `--json` shows it: name and description, and its title and schemas when
/// declared.
pub(crate) fn intent_json(intent: &IntentInfo) -> Value {
    let mut shown = json!({"name": intent.name, "description": intent.description});
    for (key, value) in [
        ("title", intent.title.clone().map(Value::String)),
        ("params", intent.params.clone()),
        ("result", intent.result.clone()),
    ] {
        if let Some(value) = value {
            shown[key] = value;
        }
    }
    shown
}

/// A line for each declared title and schema (`NAME params: {...}`), schemas as compact JSON
/// cut at [`MAX_SHOWN_SCHEMA`] bytes (`--json` shows them whole).
pub(crate) fn declaration_lines(intents: &[IntentInfo]) -> Vec<String> {
    let mut lines = Vec::new();
    for intent in intents {
        if let Some(title) = &intent.title {
            lines.push(format!("{} title: {title}", intent.name));
        }
        for (what, schema) in [("params", &intent.params), ("result", &intent.result)] {
            if let Some(schema) = schema {
                lines.push(format!(
                    "{} {what}: {}",
                    intent.name,
                    tdm_sdk::files::truncated(&schema.to_string(), MAX_SHOWN_SCHEMA)
                ));
            }
        }
    }
    lines
}

fn intents_json(declared: &Declared) -> Value {
    let list: Vec<Value> = declared.intents().iter().map(intent_json).collect();
    let problem = match declared {
        Declared::Malformed(why) => Value::from(why.as_str()),
        _ => Value::Null,
    };
    json!({"source": declared.source(), "declared": list, "problem": problem})
}

fn host_imports(inspection: &Inspection) -> Vec<&str> {
    inspection.imports.iter().filter(|i| i.module == contour_core::HOST_MODULE).map(|i| i.name.as_str()).collect()
}

/// Whether the module needs SIMD, in the text's words.
fn simd_line(simd: bool) -> &'static str {
    if simd {
        "simd: needed (v128 instructions; a policy with simd off, and the firmware, refuse it)"
    } else {
        "simd: not used"
    }
}

fn inspection_json(path: &Path, inspection: &Inspection, declared: &Declared, command: bool) -> Value {
    let imports: Vec<Value> = inspection
        .imports
        .iter()
        .map(|i| {
            let (allowed, why) = match &i.verdict {
                ImportVerdict::Allowed => (true, Value::Null),
                ImportVerdict::Rejected(why) => (false, Value::from(why.as_str())),
            };
            json!({"module": i.module, "name": i.name, "type": i.ty, "allowed": allowed, "reason": why})
        })
        .collect();
    let exports: Vec<Value> = inspection.exports.iter().map(|e| json!({"name": e.name, "type": e.ty})).collect();
    let memory = inspection.memory.map(|m| json!({"minimumPages": m.minimum_pages, "maximumPages": m.maximum_pages}));
    let failures: Vec<Value> = inspection.failures.iter().map(failure_json).collect();
    let accepted = inspection.failures.is_empty();
    json!({
        "module": path.display().to_string(),
        // As the text says: judged as a command, or else as a plugin (accepted or not).
        "kind": if command { "command" } else { "plugin" },
        "verdict": if accepted { "accepted" } else { "rejected" },
        "intents": intents_json(declared),
        "hostImports": host_imports(inspection),
        "exports": exports,
        "imports": imports,
        "memory": memory,
        "failures": failures,
    })
}

fn print_inspection(
    path: &Path,
    inspection: &Inspection,
    policy: &Policy,
    declared: &Declared,
    command: bool,
    simd: bool,
) {
    outln!("module: {}", path.display());
    if command {
        outln!("kind: command (a WASI command: run it with `tdm exec {}`)", path.display());
    } else {
        outln!("kind: plugin");
    }
    match declared {
        Declared::Malformed(why) => outln!("intents: the module's declaration is unusable: {why}"),
        // A command has no intents: it runs `_start` once.
        _ if command && declared.intents().is_empty() => {}
        _ if declared.intents().is_empty() => outln!(
            "intents: none declared (no tdm.intents section; SDK-built plugins declare theirs, see docs/ABI.md 1a)"
        ),
        _ => {
            outln!("intents (declared in the {}):", declared.source());
            let mut table = Table::new(&["  INTENT", "DESCRIPTION"]);
            for intent in declared.intents() {
                table.row(vec![format!("  {}", intent.name), intent.description.clone()]);
            }
            table.print();
            for line in declaration_lines(declared.intents()) {
                outln!("  {line}");
            }
        }
    }
    outln!("exports:");
    let mut exports = Table::new(&["  NAME", "TYPE"]);
    for export in &inspection.exports {
        exports.row(vec![format!("  {}", export.name), export.ty.clone()]);
    }
    exports.print();
    outln!("imports:");
    if inspection.imports.is_empty() {
        outln!("  (none)");
    } else {
        let mut imports = Table::new(&["  IMPORT", "TYPE", "VERDICT"]);
        for import in &inspection.imports {
            let verdict = match &import.verdict {
                ImportVerdict::Allowed => "allowed".to_string(),
                ImportVerdict::Rejected(why) => format!("REJECTED: {why}"),
            };
            imports.row(vec![format!("  {}.{}", import.module, import.name), import.ty.clone(), verdict]);
        }
        imports.print();
    }
    let hosts = host_imports(inspection);
    if command {
        // A command's imports are WASI's (the list above): `tdm exec` serves them, its files
        // through `--dir` preopens (read-only) and `--dir-rw` ones (writable).
    } else if hosts.is_empty() {
        outln!("host intents: none (compute, WASI stdio and clocks only)");
    } else {
        outln!("host intents: uses {}", hosts.join(", "));
    }
    match inspection.memory {
        Some(m) => outln!(
            "memory: {} initial pages, maximum {}; policy limit {} bytes ({} pages)",
            m.minimum_pages,
            m.maximum_pages.map_or_else(|| "none".to_string(), |p| p.to_string()),
            policy.max_memory_bytes,
            policy.max_memory_pages()
        ),
        None => outln!("memory: none exported"),
    }
    outln!("{}", simd_line(simd));
    if inspection.failures.is_empty() {
        outln!("verdict: accepted");
        return;
    }
    outln!("verdict: rejected");
    for failure in &inspection.failures {
        outln!("  {}: {}", failure.reason, failure.message());
    }
}
