//! A folder's tree as data, to say a command changed exactly this, or nothing at all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every path below `root` (symlinks not followed) with its kind and content: `dir`,
/// `symlink -> TARGET`, or `file` and its bytes ([`file`]).
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut tree = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let what = if meta.is_dir() {
                pending.push(path.clone());
                "dir".to_string()
            } else if meta.file_type().is_symlink() {
                format!("symlink -> {}", std::fs::read_link(&path).unwrap().display())
            } else {
                file(&std::fs::read(&path).unwrap())
            };
            tree.insert(path.strip_prefix(root).unwrap().to_path_buf(), what);
        }
    }
    tree
}

/// How [`snapshot`] shows a file holding `bytes`.
#[allow(dead_code)]
pub fn file(bytes: &[u8]) -> String {
    format!("file {bytes:?}")
}
