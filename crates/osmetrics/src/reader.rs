//! Reads small `/proc` and `/sys` files with (usually) a single `read(2)` into a reused
//! buffer, and keeps the path buffer reused too, so a sample allocates little.

use std::borrow::Cow;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

/// A reusable reader rooted at a `/proc`-like directory (a fixture directory in tests).
#[derive(Debug)]
pub struct Reader {
    root: PathBuf,
    path: String,
    buf: Vec<u8>,
}

impl Reader {
    /// A reader for files under `root` (normally `/proc`).
    pub fn new(root: &Path) -> Reader {
        Reader {
            root: root.to_path_buf(),
            path: String::with_capacity(64),
            buf: vec![0; 16 * 1024],
        }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Reads `<root>/<rel>` and returns its text, or `None` when it cannot be read (gone,
    /// permission denied). A short read ends the file: procfs `seq_file`s fill the buffer
    /// until the end, so one `read` suffices unless the file is larger than the buffer.
    pub fn read(&mut self, rel: std::fmt::Arguments<'_>) -> Option<Cow<'_, str>> {
        use std::fmt::Write;
        self.path.clear();
        let root = self.root.to_str()?;
        let _ = write!(self.path, "{root}/{rel}");
        let mut f = File::open(&self.path).ok()?;
        let mut len = 0;
        loop {
            if len == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
            match f.read(&mut self.buf[len..]) {
                Ok(0) => break,
                Ok(n) => {
                    len += n;
                    if len < self.buf.len() {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return None,
            }
        }
        Some(String::from_utf8_lossy(&self.buf[..len]))
    }

    /// The numeric entries of `<root>/<rel>` (PIDs of `/proc`, TIDs of `/proc/PID/task`),
    /// appended to `out` after clearing it. Unreadable directory → empty.
    pub fn numeric_entries(&self, rel: &str, out: &mut Vec<u32>) {
        out.clear();
        let dir = if rel.is_empty() {
            self.root.clone()
        } else {
            self.root.join(rel)
        };
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            if let Some(n) = e.file_name().to_str().and_then(|s| s.parse().ok()) {
                out.push(n);
            }
        }
        out.sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_large_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let big = "x".repeat(40_000);
        std::fs::write(dir.path().join("big"), &big).unwrap();
        std::fs::create_dir(dir.path().join("12")).unwrap();
        std::fs::create_dir(dir.path().join("self")).unwrap();
        let mut r = Reader::new(dir.path());
        assert_eq!(r.read(format_args!("big")).unwrap().len(), 40_000);
        assert!(r.read(format_args!("nope")).is_none());
        let mut v = Vec::new();
        r.numeric_entries("", &mut v);
        assert_eq!(v, vec![12]);
    }
}
