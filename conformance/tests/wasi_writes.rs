//! The write half of the WASI shim, enforced by core whatever the embedder does: below a preopen
//! the embedder calls read-only, every mutation answers an errno and the embedder's write
//! methods are never called, even when (as here) they would obey; below a writable one, every
//! path reaches the embedder normalized (no `..`, never absolute); and every byte written is
//! paid for in fuel before the embedder sees it.
//!
//! The filesystem here is an in-memory tree that implements every write method and checks
//! nothing itself, so only core stands between a guest and a write.

use contour_core::errors::FsError;
use contour_core::{
    run_command, CommandExit, DirEntry, HostFs, NodeId, NodeKind, NodeStat, OutputSink, Plugin, Policy, Profile,
    VirtualEnvironment, WasiConfig, WriteOptions, Written,
};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The bulk-memory rate: bytes one unit of fuel pays for (core's `meter::BYTES_PER_FUEL`).
const BYTES_PER_FUEL: u64 = 64;

/// What the guest did to the tree, as the embedder saw it.
#[derive(Debug, Default)]
struct Seen {
    /// Each call into a write method, with the paths it was given.
    writes: Vec<String>,
    /// Bytes handed to `write_at`.
    bytes: u64,
}

/// A permissive in-memory tree: files by path, one preopen (node 1), every write obeyed.
struct MemoryFs {
    writable: bool,
    files: BTreeMap<String, Vec<u8>>,
    open: BTreeMap<NodeId, String>,
    next: NodeId,
    seen: Arc<Mutex<Seen>>,
}

impl MemoryFs {
    fn new(writable: bool, seen: Arc<Mutex<Seen>>) -> Self {
        let files = [("old.txt", "old"), ("gone.txt", "gone"), ("trunc.txt", "0123"), ("size.txt", "0123")];
        let files = files.into_iter().map(|(k, v)| (k.to_string(), v.as_bytes().to_vec())).collect();
        Self { writable, files, open: BTreeMap::new(), next: 2, seen }
    }

    fn record(&self, call: &str, paths: &[&str]) {
        self.seen.lock().unwrap().writes.push(format!("{call} {}", paths.join(" ")));
    }

    fn node(&mut self, path: &str) -> NodeId {
        self.next += 1;
        self.open.insert(self.next, path.to_string());
        self.next
    }
}

impl HostFs for MemoryFs {
    fn preopens(&self) -> Vec<(NodeId, String)> {
        vec![(1, "/".to_string())]
    }
    fn writable(&self, _preopen: NodeId) -> bool {
        self.writable
    }
    fn open(&mut self, _dir: NodeId, path: &str, _follow: bool) -> Result<NodeId, FsError> {
        if path.is_empty() || self.files.contains_key(path) {
            Ok(self.node(path))
        } else {
            Err(FsError::NotFound)
        }
    }
    fn stat(&mut self, node: NodeId) -> Result<NodeStat, FsError> {
        let path = self.open.get(&node).cloned().unwrap_or_default();
        let (kind, size) = match self.files.get(&path) {
            Some(data) => (NodeKind::File, data.len() as u64),
            None => (NodeKind::Directory, 0),
        };
        Ok(NodeStat { kind, size, dev: 0, ino: node, nlink: 1, atime_ns: 0, mtime_ns: 0, ctime_ns: 0 })
    }
    fn read_at(&mut self, _node: NodeId, _offset: u64, _buf: &mut [u8]) -> Result<usize, FsError> {
        Ok(0)
    }
    fn read_dir(&mut self, _node: NodeId) -> Result<Vec<DirEntry>, FsError> {
        Ok(Vec::new())
    }
    fn close(&mut self, node: NodeId) {
        self.open.remove(&node);
    }
    fn open_file(&mut self, _dir: NodeId, path: &str, options: WriteOptions) -> Result<NodeId, FsError> {
        self.record("open_file", &[path]);
        let file = self.files.entry(path.to_string()).or_default();
        if options.truncate {
            file.clear();
        }
        Ok(self.node(path))
    }
    fn write_at(&mut self, node: NodeId, offset: u64, data: &[u8]) -> Result<usize, FsError> {
        let path = self.open.get(&node).cloned().unwrap_or_default();
        self.record("write_at", &[&path]);
        self.seen.lock().unwrap().bytes += data.len() as u64;
        let file = self.files.entry(path).or_default();
        let end = offset as usize + data.len();
        if file.len() < end {
            file.resize(end, 0);
        }
        file[offset as usize..end].copy_from_slice(data);
        Ok(data.len())
    }
    fn set_size(&mut self, node: NodeId, size: u64) -> Result<(), FsError> {
        let path = self.open.get(&node).cloned().unwrap_or_default();
        self.record("set_size", &[&path]);
        self.files.entry(path).or_default().resize(size as usize, 0);
        Ok(())
    }
    fn create_dir(&mut self, _dir: NodeId, path: &str) -> Result<(), FsError> {
        self.record("create_dir", &[path]);
        Ok(())
    }
    fn remove_dir(&mut self, _dir: NodeId, path: &str) -> Result<(), FsError> {
        self.record("remove_dir", &[path]);
        Ok(())
    }
    fn unlink_file(&mut self, _dir: NodeId, path: &str) -> Result<(), FsError> {
        self.record("unlink_file", &[path]);
        self.files.remove(path);
        Ok(())
    }
    fn rename(&mut self, _from_dir: NodeId, from: &str, _to_dir: NodeId, to: &str) -> Result<(), FsError> {
        self.record("rename", &[from, to]);
        Ok(())
    }
}

/// Stdout kept for the test to read.
struct Stdout(Arc<Mutex<Vec<u8>>>);

impl OutputSink for Stdout {
    fn write(&mut self, stderr: bool, bytes: &[u8], _max_wait_ns: Option<u64>) -> Written {
        if !stderr {
            self.0.lock().unwrap().extend_from_slice(bytes);
        }
        Written::Taken
    }
}

/// A fixture of `tdm exec`'s tests (std-host/fixtures/exec), loaded as a command.
fn command(name: &str, fuel: u64) -> Plugin {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../std-host/fixtures/exec").join(name);
    let wasm = wat::parse_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let policy = Policy { fuel_per_intent: fuel, ..Policy::default() };
    Plugin::load_as(&wasm, policy, Profile::Command).expect("loads as a command")
}

/// Runs `plugin` over a fresh tree; how it ended, the `NAME NN` steps it printed, what the
/// embedder saw.
fn run(plugin: &Plugin, writable: bool) -> (CommandExit, Vec<(String, u32)>, Seen) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let stdout = Arc::new(Mutex::new(Vec::new()));
    let wasi = WasiConfig {
        fs: Some(Box::new(MemoryFs::new(writable, seen.clone()))),
        output: Some(Box::new(Stdout(stdout.clone()))),
        ..WasiConfig::plugin()
    };
    let exit = run_command(plugin, Box::new(VirtualEnvironment::new(0)), wasi).exit;
    let text = String::from_utf8(stdout.lock().unwrap().clone()).unwrap();
    let steps = text
        .lines()
        .map(|line| {
            let (name, errno) = line.rsplit_once(' ').unwrap();
            (name.to_string(), errno.parse().unwrap())
        })
        .collect();
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    (exit, steps, seen)
}

#[test]
fn below_a_read_only_preopen_core_refuses_every_write_and_never_calls_the_embedder() {
    let (exit, steps, seen) = run(&command("edit_files.wat", 10_000_000), false);
    assert_eq!(exit, CommandExit::Exited(0));
    assert_eq!(steps.len(), 9, "{steps:?}");
    for (name, errno) in &steps {
        assert_ne!(*errno, 0, "{name} must be refused below a read-only preopen");
    }
    assert!(seen.writes.is_empty(), "no write method was called: {:?}", seen.writes);
}

#[test]
fn below_a_writable_preopen_every_edit_reaches_the_embedder() {
    let (exit, steps, seen) = run(&command("edit_files.wat", 10_000_000), true);
    assert_eq!(exit, CommandExit::Exited(0));
    assert!(steps.iter().all(|(_, errno)| *errno == 0), "{steps:?}");
    for call in ["create_dir made", "rename old.txt made/moved.txt", "unlink_file gone.txt", "remove_dir empty"] {
        assert!(seen.writes.iter().any(|w| w == call), "{call} in {:?}", seen.writes);
    }
}

#[test]
fn the_embedder_never_sees_a_path_that_climbs_or_is_absolute() {
    let (exit, _, seen) = run(&command("escape_attempts.wat", 10_000_000), true);
    assert_eq!(exit, CommandExit::Exited(0));
    for call in &seen.writes {
        for path in call.split(' ').skip(1) {
            assert!(!path.starts_with('/') && !path.split('/').any(|c| c == ".."), "{call}");
        }
    }
}

#[test]
fn every_byte_written_is_paid_for_before_the_embedder_sees_it() {
    let fuel = 100_000;
    let (exit, _, seen) = run(&command("write_loop.wat", fuel), true);
    match exit {
        CommandExit::Failed(failure) => assert_eq!(failure.reason.as_str(), "fuel_exhausted"),
        other => panic!("expected fuel_exhausted, got {other:?}"),
    }
    assert!(seen.bytes > 0, "it wrote before its fuel ran out");
    assert!(seen.bytes <= fuel * BYTES_PER_FUEL, "{} bytes written on {fuel} fuel", seen.bytes);
}
