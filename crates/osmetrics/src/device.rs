//! Which block device does a data directory's I/O.
//!
//! `stat(dir).st_dev` → `major:minor` → `/sys/dev/block/M:m` (a symlink into
//! `/sys/devices/…`). Then:
//! - a partition (its directory has a `partition` file) is replaced by its parent disk — the
//!   counters are those of the whole disk, like `iostat` on the disk name;
//! - a stacked device (device-mapper `dm-*`, md `md*`: a non-empty `slaves/` directory) is
//!   replaced by **all** its underlying disks, recursively; their counters are summed and
//!   `%util` is averaged (see `disk`);
//! - a filesystem without a block device of its own (`st_dev` major 0: overlay, tmpfs, btrfs,
//!   NFS) is looked up in `/proc/self/mountinfo`; if its mount source is a `/dev/…` node
//!   (btrfs), that node's device is resolved as above, otherwise there is no device and the
//!   reason says why. Disk metrics are then absent, not zero.
//!
//! An explicit device name (`--device NAME`) skips all of this.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Why no block device was found for a data directory. Each message already says what
/// happened (it is shown as the reason disk metrics are absent); the I/O error behind it,
/// when there is one, stays reachable through [`std::error::Error::source`].
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// The data directory could not be `stat`ed.
    #[error("cannot stat {}: {source}", path.display())]
    Stat {
        /// The data directory.
        path: PathBuf,
        /// `stat`'s error.
        #[source]
        source: io::Error,
    },
    /// The mount table could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Mountinfo {
        /// The mountinfo file.
        path: PathBuf,
        /// The read error.
        #[source]
        source: io::Error,
    },
    /// An anonymous device number with no line in the mount table.
    #[error("{} is on device {devnum}, which has no block device and no mount entry", dir.display())]
    NoMount {
        /// The data directory.
        dir: PathBuf,
        /// Its `major:minor`.
        devnum: String,
    },
    /// A filesystem without a block device of its own (overlay, tmpfs, NFS).
    #[error("{} is on a {fstype} filesystem ({mount_source}) with no block device of its own", dir.display())]
    NoBlockDevice {
        /// The data directory.
        dir: PathBuf,
        /// The filesystem type from the mount table.
        fstype: String,
        /// The mount source from the mount table.
        mount_source: String,
    },
    /// `<sys>/dev/block/M:m` does not lead to a device.
    #[error("no block device {major}:{minor} under {}", link.display())]
    NoDevnum {
        /// The major number.
        major: u32,
        /// The minor number.
        minor: u32,
        /// The sysfs link that was followed.
        link: PathBuf,
        /// Why it could not be followed.
        #[source]
        source: io::Error,
    },
    /// A sysfs path without a usable last component.
    #[error("odd sysfs path {}", .0.display())]
    OddPath(PathBuf),
    /// Devices stacked deeper than any real setup (likely a loop in a fixture tree).
    #[error("device stack too deep at {}", .0.display())]
    TooDeep(PathBuf),
    /// A partition's sysfs directory with no parent disk directory.
    #[error("partition without parent: {}", .0.display())]
    PartitionWithoutParent(PathBuf),
    /// A `slaves/` entry that leads nowhere.
    #[error("cannot follow {}", path.display())]
    Follow {
        /// The `slaves/` entry.
        path: PathBuf,
        /// The error of the last way tried (`/sys/class/block/<name>`).
        #[source]
        source: io::Error,
    },
}

/// The block device(s) whose `/proc/diskstats` lines measure a data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedDevice {
    /// Display name: the disk (`sda` also for a data dir on `sda1`), or `dm-0(sda+sdb)`
    /// for a device stacked over several disks.
    pub name: String,
    /// Kernel names to sum in `/proc/diskstats`.
    pub members: Vec<String>,
    /// How it was found (for the manifest and notes).
    pub how: String,
}

impl ResolvedDevice {
    /// An explicitly named device, used as given (a leading `/dev/` is dropped).
    pub fn named(name: &str) -> ResolvedDevice {
        let name = name.strip_prefix("/dev/").unwrap_or(name);
        ResolvedDevice {
            name: name.to_string(),
            members: vec![name.to_string()],
            how: format!("device {name} given explicitly"),
        }
    }
}

/// glibc's `gnu_dev_major` / `gnu_dev_minor` of a `dev_t`.
pub fn split_dev(dev: u64) -> (u32, u32) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major as u32, minor as u32)
}

/// Where to look: the real system, or fixture trees in tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysPaths {
    /// `/sys`.
    pub sys: PathBuf,
    /// `/proc/self/mountinfo`.
    pub mountinfo: PathBuf,
}

impl Default for SysPaths {
    fn default() -> Self {
        SysPaths {
            sys: PathBuf::from("/sys"),
            mountinfo: PathBuf::from("/proc/self/mountinfo"),
        }
    }
}

/// Resolves the device holding `dir`. `Err` says why there is none, readably.
pub fn resolve_data_dir(dir: &Path, paths: &SysPaths) -> Result<ResolvedDevice, DeviceError> {
    let md = std::fs::metadata(dir).map_err(|source| DeviceError::Stat {
        path: dir.to_path_buf(),
        source,
    })?;
    let (major, minor) = split_dev(md.dev());
    let mut r = if major == 0 {
        resolve_anonymous(dir, major, minor, paths)?
    } else {
        resolve_devnum(major, minor, &paths.sys)?
    };
    r.how = format!("{} is on {major}:{minor}; {}", dir.display(), r.how);
    Ok(r)
}

/// A filesystem with an anonymous device number: find its mount and, if backed by a
/// `/dev` node, resolve that node.
fn resolve_anonymous(
    dir: &Path,
    major: u32,
    minor: u32,
    paths: &SysPaths,
) -> Result<ResolvedDevice, DeviceError> {
    let text =
        std::fs::read_to_string(&paths.mountinfo).map_err(|source| DeviceError::Mountinfo {
            path: paths.mountinfo.clone(),
            source,
        })?;
    let want = format!("{major}:{minor}");
    let Some((fstype, source)) = text.lines().find_map(|l| {
        let mut f = l.split(' ');
        if f.nth(2)? != want {
            return None;
        }
        let mut rest = l.split(" - ").nth(1)?.split(' ');
        Some((rest.next()?.to_string(), rest.next()?.to_string()))
    }) else {
        return Err(DeviceError::NoMount {
            dir: dir.to_path_buf(),
            devnum: want,
        });
    };
    if source.starts_with("/dev/") {
        if let Ok(m) = std::fs::metadata(&source) {
            let (ma, mi) = split_dev(m.rdev());
            if ma != 0 {
                let mut r = resolve_devnum(ma, mi, &paths.sys)?;
                r.how = format!("{fstype} on {source}; {}", r.how);
                return Ok(r);
            }
        }
    }
    Err(DeviceError::NoBlockDevice {
        dir: dir.to_path_buf(),
        fstype,
        mount_source: source,
    })
}

/// Resolves a `major:minor` block device number through `<sys>/dev/block`.
pub fn resolve_devnum(major: u32, minor: u32, sys: &Path) -> Result<ResolvedDevice, DeviceError> {
    let link = sys.join(format!("dev/block/{major}:{minor}"));
    let dir = match std::fs::canonicalize(&link) {
        Ok(dir) => dir,
        Err(source) => {
            return Err(DeviceError::NoDevnum {
                major,
                minor,
                link,
                source,
            })
        }
    };
    let top = file_name(&dir)?;
    let mut members = Vec::new();
    leaves(&dir, sys, 0, &mut members)?;
    members.sort();
    members.dedup();
    let name = match members.as_slice() {
        [one] => one.clone(),
        many => format!("{top}({})", many.join("+")),
    };
    let how = if members.len() == 1 && members[0] == top {
        format!("block device {top}")
    } else {
        format!("block device {top} → {}", members.join(" + "))
    };
    Ok(ResolvedDevice { name, members, how })
}

fn file_name(p: &Path) -> Result<String, DeviceError> {
    p.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .ok_or_else(|| DeviceError::OddPath(p.to_path_buf()))
}

/// Appends the whole disks beneath the sysfs device directory `dir`.
fn leaves(dir: &Path, sys: &Path, depth: u32, out: &mut Vec<String>) -> Result<(), DeviceError> {
    if depth > 8 {
        return Err(DeviceError::TooDeep(dir.to_path_buf()));
    }
    if dir.join("partition").exists() {
        let parent = dir
            .parent()
            .ok_or_else(|| DeviceError::PartitionWithoutParent(dir.to_path_buf()))?;
        return leaves(parent, sys, depth + 1, out);
    }
    let mut slaves: Vec<PathBuf> = match std::fs::read_dir(dir.join("slaves")) {
        Ok(rd) => rd.flatten().map(|e| e.path()).collect(),
        Err(_) => Vec::new(),
    };
    if slaves.is_empty() {
        out.push(file_name(dir)?);
        return Ok(());
    }
    slaves.sort();
    for s in slaves {
        // Entries are symlinks into /sys/devices; fall back to /sys/class/block/<name>.
        let name = file_name(&s)?;
        let target = std::fs::canonicalize(&s)
            .or_else(|_| std::fs::canonicalize(sys.join("class/block").join(&name)))
            .map_err(|source| DeviceError::Follow {
                path: s.clone(),
                source,
            })?;
        leaves(&target, sys, depth + 1, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_dev_t() {
        assert_eq!(split_dev(0xfe00), (254, 0));
        assert_eq!(split_dev(0x0803), (8, 3));
        // major 259 (nvme partitions, blkext), minor 1
        assert_eq!(split_dev((259 << 8) | 1), (259, 1));
        // large minor: 8:300 → minor high bits stored above bit 20
        let dev = (8u64 << 8) | (300 & 0xff) | ((300 & !0xff) << 12);
        assert_eq!(split_dev(dev), (8, 300));
    }

    #[test]
    fn a_missing_dir_keeps_the_io_error_as_its_source() {
        let dir = Path::new("/no/such/dbdelta/dir");
        let e = resolve_data_dir(dir, &SysPaths::default()).unwrap_err();
        let io = std::error::Error::source(&e)
            .and_then(|s| s.downcast_ref::<io::Error>())
            .map(io::Error::kind);
        assert_eq!(io, Some(io::ErrorKind::NotFound), "{e:?}");
        // The message is the one shown as the reason disk metrics are absent.
        let plain = std::fs::metadata(dir).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("cannot stat {}: {plain}", dir.display())
        );
    }
}
