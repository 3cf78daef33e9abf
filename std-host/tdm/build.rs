//! The build facts `tdm --version` names: the commit (`git rev-parse --short HEAD`, "unknown"
//! outside a git checkout or without git), wasmi's version (from Cargo.lock) and the wasmi
//! features contour-core enables for this target (from core/Cargo.toml). Nothing here can fail
//! the build: a fact that cannot be read is "unknown".

use std::path::Path;
use std::process::Command;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let root = Path::new(&manifest).join("../..");
    let lock = root.join("Cargo.lock");
    let core = root.join("core/Cargo.toml");
    println!("cargo:rerun-if-changed={}", lock.display());
    println!("cargo:rerun-if-changed={}", core.display());
    for file in ["HEAD", "index"] {
        if let Some(path) = git(&["rev-parse", "--git-path", file]) {
            println!("cargo:rerun-if-changed={}", root.join(path).display());
        }
    }
    if let Some(head) = git(&["rev-parse", "--symbolic-full-name", "HEAD"]) {
        if let Some(path) = git(&["rev-parse", "--git-path", &head]) {
            println!("cargo:rerun-if-changed={}", root.join(path).display());
        }
    }
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    let wasmi = std::fs::read_to_string(&lock).ok().and_then(|text| locked_version(&text, "wasmi"));
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let features = std::fs::read_to_string(&core).map(|text| wasmi_features(&text, &arch)).unwrap_or_default();
    let features = if features.is_empty() { "unknown".to_string() } else { features.join(", ") };
    println!(
        "cargo:rustc-env=TDM_BUILD_VERSION={} (commit {commit}, wasmi {}, wasmi features: {features})",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default(),
        wasmi.as_deref().unwrap_or("unknown"),
    );
}

/// `git ARGS` run in this crate's folder: its trimmed stdout, `None` on any failure.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// The version Cargo.lock pins for package `name`.
fn locked_version(lock: &str, name: &str) -> Option<String> {
    let mut lines = lock.lines();
    let wanted = format!("name = \"{name}\"");
    lines.find(|line| line.trim() == wanted)?;
    let version = lines.next()?.trim().strip_prefix("version = \"")?.strip_suffix('"')?;
    Some(version.to_string())
}

/// The wasmi features core/Cargo.toml enables: those of `[dependencies]` and of a
/// `[target.'cfg(target_arch = "ARCH")'.dependencies]` section for this target's arch.
fn wasmi_features(manifest: &str, arch: &str) -> Vec<String> {
    let mut applies = false;
    let mut features = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            applies = line == "[dependencies]" || line.contains(&format!("target_arch = \"{arch}\""));
            continue;
        }
        let Some(rest) = line.strip_prefix("wasmi = ") else { continue };
        if !applies {
            continue;
        }
        let Some((_, list)) = rest.split_once("features = [") else { continue };
        let list = list.split(']').next().unwrap_or_default();
        features.extend(list.split(',').map(|f| f.trim().trim_matches('"').to_string()).filter(|f| !f.is_empty()));
    }
    features
}
