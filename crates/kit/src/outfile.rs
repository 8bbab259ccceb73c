//! The one rule for writing a file at a path a user named (`report -o`, the run directory's
//! files): a regular file, or a path where nothing exists yet, is replaced atomically (a
//! temporary file in the same directory, then `rename`), so a reader never sees half a file.
//! A symbolic link to a regular file is written through: the file it points to is replaced
//! atomically and the link stays a link. Anything else — a character or block device
//! (`/dev/null`, `/dev/full`), a FIFO, a socket, a directory, a link to one of those or a
//! link to nothing — is refused, because a rename would replace the node itself (as root,
//! `-o /dev/null` would break the host).

use std::fs;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutFileError {
    /// The path names something that is not a regular file.
    #[error("{} is {what}, not a regular file; give the path of a regular file (or of one to create)", .path.display())]
    NotAFile {
        /// The path as given.
        path: PathBuf,
        /// What it is, e.g. "a character device".
        what: String,
    },
    /// Creating, writing or renaming failed.
    #[error("cannot write {}: {source}", .path.display())]
    Io {
        /// The file being written.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// Names what `t` is, for a path that is not a regular file; `None` for a regular file.
fn non_regular(t: fs::FileType) -> Option<&'static str> {
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("something other than a regular file")
    }
}

/// Where the bytes for `path` go: `path` itself when it is a regular file or missing, the
/// file a symbolic link resolves to when that is a regular file; an error otherwise.
pub fn resolve(path: &Path) -> Result<PathBuf, OutFileError> {
    let io = |source| OutFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(e) => return Err(io(e)),
    };
    if !meta.file_type().is_symlink() {
        return match non_regular(meta.file_type()) {
            None => Ok(path.to_path_buf()),
            Some(what) => Err(OutFileError::NotAFile {
                path: path.to_path_buf(),
                what: what.to_string(),
            }),
        };
    }
    match fs::metadata(path) {
        Ok(m) => match non_regular(m.file_type()) {
            None => fs::canonicalize(path).map_err(io),
            Some(what) => Err(OutFileError::NotAFile {
                path: path.to_path_buf(),
                what: format!("a symbolic link to {what}"),
            }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(OutFileError::NotAFile {
            path: path.to_path_buf(),
            what: "a symbolic link to nothing".into(),
        }),
        Err(e) => Err(io(e)),
    }
}

/// Writes `bytes` to `path` by the rule of this module: atomically for a regular file or a
/// new one (keeping the old file's permissions), through a symbolic link to a regular file,
/// refused for anything else.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), OutFileError> {
    let real = resolve(path)?;
    let io = |source| OutFileError::Io {
        path: real.clone(),
        source,
    };
    let dir = match real.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| OutFileError::NotAFile {
            path: path.to_path_buf(),
            what: "a directory".into(),
        })?;
    let old_mode = fs::metadata(&real).ok().map(|m| m.permissions().mode());
    let (tmp, mut file) = create_temp(&dir, &name).map_err(io)?;
    let written = (|| {
        file.write_all(bytes)?;
        if let Some(mode) = old_mode {
            file.set_permissions(fs::Permissions::from_mode(mode & 0o7777))?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, &real)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}

/// A new temporary file next to the target, created exclusively (`O_EXCL`, never following
/// a link), named `.<name>.<pid>-<n>.tmp` so that parallel writers never share one and
/// readers that take only finished files (`*.json`) skip it.
fn create_temp(dir: &Path, name: &str) -> std::io::Result<(PathBuf, fs::File)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    fn mkfifo(p: &Path) {
        let c = CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    fn only(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn new_and_regular_files_are_replaced_atomically_keeping_the_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.txt");
        write_file(&p, b"one").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"one");
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        write_file(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(only(d.path()), ["a.txt"]);
    }

    #[test]
    fn a_fifo_a_directory_and_a_dangling_link_are_refused_and_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        mkfifo(&fifo);
        let e = write_file(&fifo, b"x").unwrap_err().to_string();
        assert!(e.contains("FIFO") && e.contains("pipe"), "{e}");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        let link = d.path().join("to-pipe");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let e = write_file(&link, b"x").unwrap_err().to_string();
        assert!(e.contains("symbolic link to a FIFO"), "{e}");
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let e = write_file(d.path(), b"x").unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        let e = write_file(&dangling, b"x").unwrap_err().to_string();
        assert!(e.contains("link to nothing"), "{e}");
        assert_eq!(only(d.path()), ["dangling", "pipe", "to-pipe"]);
    }

    #[test]
    fn a_character_device_is_refused() {
        // /dev/null is a character device on every Linux; it is only looked at.
        let e = write_file(Path::new("/dev/null"), b"x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("character device"), "{e}");
    }

    #[test]
    fn a_link_to_a_regular_file_is_written_through_and_stays_a_link() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.txt");
        fs::write(&real, "old").unwrap();
        let link = d.path().join("link.txt");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_file(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&real).unwrap(), b"new");
        assert_eq!(only(d.path()), ["link.txt", "real.txt"]);
    }
}
