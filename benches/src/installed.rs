//! An installed plugin's launch, as `tdm call` does it in a fresh process: a workspace on disk
//! with the module installed from a package folder and approved, then the approved-launch check
//! (state, package read, hash), the load (lazy: the module was validated at install), a sandbox
//! and its launch.

use contour_core::{hex, sha256};
use std::path::{Path, PathBuf};
use tdm_sdk::operator::{self, Source};
use tdm_sdk::session::{Session, SessionOptions};
use tdm_sdk::workspace::Workspace;

/// The id the fixture installs its module under.
pub const INSTALLED_ID: &str = "bench-large";

/// A workspace on disk holding one installed, approved plugin; removed on drop.
pub struct InstalledFixture {
    root: PathBuf,
    /// The workspace `tdm call` would use.
    pub workspace: Workspace,
    /// The installed module file (what a bare host would read).
    pub module: PathBuf,
}

impl InstalledFixture {
    /// Installs `wasm` (a plugin) from a package folder under a fresh temporary folder and
    /// approves it.
    pub fn new(wasm: &[u8]) -> Self {
        Self::declaring(wasm, &[])
    }

    /// [`InstalledFixture::new`], the package declaring `intents` (an installed plugin runs
    /// only its declared intents).
    pub fn declaring(wasm: &[u8], intents: &[&str]) -> Self {
        let root = std::env::temp_dir().join(format!("contour-bench-installed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let package = root.join("package");
        std::fs::create_dir_all(package.join("dist")).expect("the package folder is created");
        std::fs::write(package.join("dist/plugin.wasm"), wasm).expect("the module is written");
        let manifest = format!(
            "id = \"{INSTALLED_ID}\"\nversion = \"1.0.0\"\nname = \"bench\"\ndescription = \"the large bench module\"\n\
             module = \"dist/plugin.wasm\"\nsha256 = \"{}\"\npermissions = []\n{}",
            hex(&sha256(wasm)),
            intents.iter().map(|i| format!("[[intents]]\nname = \"{i}\"\ndescription = \"bench\"\n")).collect::<String>()
        );
        std::fs::write(package.join("plugin.toml"), manifest).expect("the manifest is written");
        let workspace = Workspace::open(root.join("workspace")).expect("the workspace is created");
        let report = operator::install(&workspace, &Source::Folder(package), unsigned()).expect("the module installs");
        let (installed, package) = operator::installed_package(&workspace, INSTALLED_ID).expect("it is installed");
        assert_eq!(package.sha256, report.sha256);
        operator::approve(&workspace, INSTALLED_ID, &package).expect("the plugin is approved");
        let module = workspace.dir.join(&installed.path).join("dist/plugin.wasm");
        assert!(Path::new(&module).is_file(), "{} is the installed module", module.display());
        Self { root, workspace, module }
    }
}

impl Drop for InstalledFixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// What `tdm call` does before its first intent: the approved-launch check, the lazy load on a
/// runtime of its own, a sandbox, its launch (all through the session, as `tdm call`).
pub fn installed_launch(fixture: &InstalledFixture) -> Session {
    let mut session = Session::open_installed(&fixture.workspace, INSTALLED_ID, SessionOptions::default())
        .unwrap_or_else(|e| panic!("the installed plugin opens: {e}"));
    session.launch().unwrap_or_else(|e| panic!("the plugin launches: {e}"));
    session
}

/// Install options for these packages, which are unsigned.
fn unsigned() -> tdm_sdk::operator::InstallOptions {
    tdm_sdk::operator::InstallOptions { allow_unsigned: true, ..Default::default() }
}
