//! The load-time checks of a module before anything of it runs: the TDM IPC exports (docs/ABI.md
//! section 1), every import against the allowlist with its exact signature (promise 3), and the
//! declared memory against the policy. `Inspection` is the full report `tdm inspect` prints.

use crate::allowlist::{self, Signature, HOST_MODULE};
use crate::policy::Policy;
use crate::reason::{quote, BlockedReason, Failure, MAX_QUOTE_CHARS};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use wasmi::{ExternType, FuncType, Module, ValType};

/// Which import surface a module is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// A hub plugin: the TDM IPC exports are required and only the sandbox-safe part of WASI
    /// Preview1 may be imported (no filesystem, no sockets).
    Marketplace,
    /// A WASI command run by `tdm exec`: `_start` is required and all of Preview1 may be
    /// imported (what the sandbox does not offer answers with a WASI errno).
    Command,
}

/// One export the ABI requires, with its expected type.
struct RequiredExport {
    name: &'static str,
    params: &'static [ValType],
    results: &'static [ValType],
}

const I32: ValType = ValType::I32;

/// The TDM IPC exports of docs/ABI.md section 1 (besides `memory`).
const PLUGIN_EXPORTS: [RequiredExport; 3] = [
    RequiredExport { name: "tdm_alloc", params: &[I32], results: &[I32] },
    RequiredExport { name: "tdm_free", params: &[I32, I32], results: &[] },
    RequiredExport { name: "tdm_plugin_execute_intent", params: &[I32, I32], results: &[I32] },
];

/// The optional reactor start of a plugin.
const INITIALIZE: RequiredExport = RequiredExport { name: "_initialize", params: &[], results: &[] };
/// The entry point of a command module.
const START: RequiredExport = RequiredExport { name: "_start", params: &[], results: &[] };

/// How many offending imports a failure message names before it says how many more there are.
const MAX_LISTED_OFFENDERS: usize = 16;

/// The verdict on one import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportVerdict {
    /// On the allowlist with the right signature.
    Allowed,
    /// Rejected, with why.
    Rejected(String),
}

/// One import of the module and its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportReport {
    /// The import's module name.
    pub module: String,
    /// The import's field name.
    pub name: String,
    /// Its type, rendered (`func (i32, i32) -> i32`, `memory`, ...).
    pub ty: String,
    /// Allowed or rejected.
    pub verdict: ImportVerdict,
}

/// One export of the module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportReport {
    /// The export's name.
    pub name: String,
    /// Its type, rendered.
    pub ty: String,
}

/// The declared limits of the module's memory, in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryReport {
    /// Initial pages.
    pub minimum_pages: u64,
    /// Maximum pages, if declared.
    pub maximum_pages: Option<u64>,
}

/// The custom section in which a module may declare the intents it offers (docs/ABI.md section
/// 1a): JSON `[{"name": ..., "description": ...}]`, written by the SDKs. Core only finds it;
/// hosts read it, and nothing about loading depends on it.
pub const INTENTS_SECTION: &str = "tdm.intents";

/// The most bytes of a [`INTENTS_SECTION`] an inspection copies.
pub const MAX_INTENTS_SECTION_BYTES: usize = 64 * 1024;

/// What the module's [`INTENTS_SECTION`] holds, as found (unparsed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntentsSection {
    /// The module has no such section.
    Absent,
    /// The section's bytes.
    Found(Vec<u8>),
    /// The section has this many bytes, more than [`MAX_INTENTS_SECTION_BYTES`]; none copied.
    TooLarge(usize),
    /// The module has the section more than once; none is kept, since they could disagree.
    Repeated,
}

/// Everything the load-time checks found, and the verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// Every export.
    pub exports: Vec<ExportReport>,
    /// Every import, with its verdict.
    pub imports: Vec<ImportReport>,
    /// The exported memory's limits, if the module exports one.
    pub memory: Option<MemoryReport>,
    /// Every failure found, in the order load reports them (imports, exports, memory).
    pub failures: Vec<Failure>,
    /// The module's declaration of its intents, if it has one.
    pub intents_section: IntentsSection,
}

impl Inspection {
    /// Runs every check on a parsed module.
    pub fn of(module: &Module, policy: &Policy, profile: Profile) -> Self {
        let exports =
            module.exports().map(|e| ExportReport { name: e.name().to_string(), ty: render_extern(e.ty()) }).collect();
        let imports: Vec<ImportReport> = module
            .imports()
            .map(|i| ImportReport {
                module: i.module().to_string(),
                name: i.name().to_string(),
                ty: render_extern(i.ty()),
                verdict: check_import(i.module(), i.name(), i.ty(), profile),
            })
            .collect();
        let mut failures = Vec::new();
        let rejected: Vec<&ImportReport> =
            imports.iter().filter(|i| matches!(i.verdict, ImportVerdict::Rejected(_))).collect();
        if !rejected.is_empty() {
            // Every offender is named, each name quoted and cut, and the list itself is cut once
            // it is long (the inspection keeps every import): a module's names cannot make the
            // message unbounded.
            let mut listed: Vec<String> = rejected
                .iter()
                .take(MAX_LISTED_OFFENDERS)
                .map(|i| {
                    let why = match &i.verdict {
                        ImportVerdict::Rejected(why) => why.as_str(),
                        ImportVerdict::Allowed => "",
                    };
                    format!("{}.{} ({why})", quote(&i.module, MAX_QUOTE_CHARS), quote(&i.name, MAX_QUOTE_CHARS))
                })
                .collect();
            if rejected.len() > MAX_LISTED_OFFENDERS {
                listed.push(format!("and {} more", rejected.len() - MAX_LISTED_OFFENDERS));
            }
            failures.push(Failure::new(
                BlockedReason::ImportNotAllowed,
                format!("{} rejected: {}.", rejected.len(), listed.join("; ")),
            ));
        }
        let mismatches = check_exports(module, profile);
        if !mismatches.is_empty() {
            failures.push(Failure::new(BlockedReason::AbiMismatch, mismatches.join("; ") + "."));
        }
        let memory = match module.get_export("memory") {
            Some(ExternType::Memory(ty)) => {
                Some(MemoryReport { minimum_pages: ty.minimum(), maximum_pages: ty.maximum() })
            }
            _ => None,
        };
        if let Some(memory) = memory {
            if let Err(failure) = policy.check_initial_memory(memory.minimum_pages) {
                failures.push(failure);
            }
        }
        Self { exports, imports, memory, failures, intents_section: intents_section(module) }
    }

    /// The first failure, which is what loading the module reports.
    pub fn verdict(&self) -> Result<(), &Failure> {
        self.failures.first().map_or(Ok(()), Err)
    }
}

/// Finds the module's [`INTENTS_SECTION`], copying at most [`MAX_INTENTS_SECTION_BYTES`].
fn intents_section(module: &Module) -> IntentsSection {
    let mut found = module.custom_sections().filter(|section| section.name() == INTENTS_SECTION);
    match (found.next(), found.next()) {
        (None, _) => IntentsSection::Absent,
        (Some(_), Some(_)) => IntentsSection::Repeated,
        (Some(section), None) if section.data().len() > MAX_INTENTS_SECTION_BYTES => {
            IntentsSection::TooLarge(section.data().len())
        }
        (Some(section), None) => IntentsSection::Found(section.data().to_vec()),
    }
}

/// Checks one import against the profile's allowlist.
fn check_import(module: &str, name: &str, ty: &ExternType, profile: Profile) -> ImportVerdict {
    let ExternType::Func(func) = ty else {
        return ImportVerdict::Rejected(String::from("only function imports are allowed"));
    };
    // Commands get no host intents: `tdm` imports are for plugins only.
    let expected: Option<&Signature> = match allowlist::find(module, name) {
        Some(_) if module == HOST_MODULE && profile != Profile::Marketplace => None,
        found => found,
    };
    let Some(expected) = expected else {
        return ImportVerdict::Rejected(String::from("not on the allowlist"));
    };
    if profile == Profile::Marketplace && !expected.plugin_safe {
        return ImportVerdict::Rejected(String::from(
            "not available to plugins: filesystem and socket access are denied in the marketplace profile",
        ));
    }
    if func.params() != expected.params || func.results() != expected.results {
        return ImportVerdict::Rejected(format!(
            "wrong signature: expected {}, found {}",
            render_sig(expected.params, expected.results),
            render_func(func)
        ));
    }
    ImportVerdict::Allowed
}

/// Checks the exports the profile requires, returning one line per problem.
fn check_exports(module: &Module, profile: Profile) -> Vec<String> {
    let mut problems = Vec::new();
    let required: &[RequiredExport] = match profile {
        Profile::Marketplace => &PLUGIN_EXPORTS,
        Profile::Command => core::slice::from_ref(&START),
    };
    match module.get_export("memory") {
        Some(ExternType::Memory(ty)) if !ty.is_64() => {}
        Some(ExternType::Memory(_)) => problems.push(String::from("export `memory` must be a 32-bit memory")),
        Some(other) => problems.push(format!("export `memory` must be a memory, found {}", render_extern(&other))),
        None if profile == Profile::Command => {}
        None => problems.push(String::from("missing export `memory` (the plugin's linear memory)")),
    }
    for export in required {
        check_func_export(module, export, true, &mut problems);
    }
    if profile == Profile::Marketplace {
        check_func_export(module, &INITIALIZE, false, &mut problems);
    }
    problems
}

fn check_func_export(module: &Module, export: &RequiredExport, required: bool, problems: &mut Vec<String>) {
    let expected = || render_sig(export.params, export.results);
    match module.get_export(export.name) {
        Some(ExternType::Func(func)) if func.params() == export.params && func.results() == export.results => {}
        Some(other) => problems.push(format!(
            "export `{}` must be func {}, found {}",
            export.name,
            expected(),
            render_extern(&other)
        )),
        None if required => problems.push(format!("missing export `{}` (func {})", export.name, expected())),
        None => {}
    }
}

/// The text-format name of a value type.
fn type_name(ty: &ValType) -> &'static str {
    match ty {
        ValType::I32 => "i32",
        ValType::I64 => "i64",
        ValType::F32 => "f32",
        ValType::F64 => "f64",
        ValType::V128 => "v128",
        ValType::FuncRef => "funcref",
        ValType::ExternRef => "externref",
    }
}

fn render_types(types: &[ValType], out: &mut String) {
    out.push('(');
    for (i, ty) in types.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(type_name(ty));
    }
    out.push(')');
}

fn render_sig(params: &[ValType], results: &[ValType]) -> String {
    let mut out = String::with_capacity(32);
    render_types(params, &mut out);
    out.push_str(" -> ");
    render_types(results, &mut out);
    out
}

fn render_func(func: &FuncType) -> String {
    render_sig(func.params(), func.results())
}

/// Renders an extern type for reports.
pub fn render_extern(ty: &ExternType) -> String {
    match ty {
        ExternType::Func(func) => {
            let mut out = String::from("func ");
            out.push_str(&render_func(func));
            out
        }
        ExternType::Memory(mem) => match mem.maximum() {
            Some(max) => format!("memory {}..{max} pages", mem.minimum()),
            None => format!("memory {}.. pages", mem.minimum()),
        },
        ExternType::Table(_) => String::from("table"),
        ExternType::Global(_) => String::from("global"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section_of(wat: &str) -> IntentsSection {
        let bytes = wat::parse_str(wat).expect("valid WAT");
        let module = Module::new(&wasmi::Engine::default(), &bytes).expect("parses");
        Inspection::of(&module, &Policy::default(), Profile::Marketplace).intents_section
    }

    #[test]
    fn finds_the_intents_section_once_and_bounded() {
        assert_eq!(section_of("(module)"), IntentsSection::Absent);
        assert_eq!(
            section_of(r#"(module (@custom "tdm.intents" "[]") (@custom "other" "x"))"#),
            IntentsSection::Found(b"[]".to_vec())
        );
        assert_eq!(
            section_of(r#"(module (@custom "tdm.intents" "[]") (@custom "tdm.intents" "[]"))"#),
            IntentsSection::Repeated
        );
        let big = "x".repeat(MAX_INTENTS_SECTION_BYTES + 1);
        assert_eq!(
            section_of(&format!(r#"(module (@custom "tdm.intents" "{big}"))"#)),
            IntentsSection::TooLarge(MAX_INTENTS_SECTION_BYTES + 1)
        );
    }
}
