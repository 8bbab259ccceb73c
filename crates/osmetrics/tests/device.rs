//! Data dir → block device resolution: on this machine, and on a fake /sys tree.

use dbdelta_osmetrics::device::{resolve_devnum, split_dev};
use dbdelta_osmetrics::{resolve_data_dir, SysPaths};
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::Path;

#[test]
fn this_machine_resolves_to_a_real_device_or_says_why() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    match resolve_data_dir(dir, &SysPaths::default()) {
        Ok(d) => {
            assert!(!d.members.is_empty());
            for m in &d.members {
                assert!(
                    Path::new("/sys/block").join(m).exists(),
                    "{m} is not in /sys/block ({d:?})"
                );
            }
            eprintln!("{} → {} ({})", dir.display(), d.name, d.how);
        }
        Err(why) => {
            assert!(!why.to_string().is_empty());
            eprintln!("{}: no device: {why}", dir.display());
        }
    }
    // procfs has no block device: a clear reason, not a device.
    let why = resolve_data_dir(Path::new("/proc"), &SysPaths::default()).unwrap_err();
    assert!(why.to_string().contains("proc"), "{why}");
    let why = resolve_data_dir(Path::new("/no/such/dir"), &SysPaths::default()).unwrap_err();
    assert!(why.to_string().contains("cannot stat"), "{why}");
}

/// /sys with: sda (partitions sda1, sda2), sdb, dm-0 over sda2 + sdb, md0 over dm-0 + sdc.
fn fake_sys(root: &Path) {
    let mk = |p: &str| std::fs::create_dir_all(root.join(p)).unwrap();
    let touch = |p: &str| std::fs::write(root.join(p), "1\n").unwrap();
    let ln = |target: &str, link: &str| symlink(target, root.join(link)).unwrap();
    mk("devices/pci0/block/sda/sda1");
    mk("devices/pci0/block/sda/sda2");
    touch("devices/pci0/block/sda/sda1/partition");
    touch("devices/pci0/block/sda/sda2/partition");
    mk("devices/pci0/block/sdb/slaves");
    mk("devices/pci0/block/sdc");
    mk("devices/virtual/block/dm-0/slaves");
    mk("devices/virtual/block/md0/slaves");
    ln(
        "../../../../pci0/block/sda/sda2",
        "devices/virtual/block/dm-0/slaves/sda2",
    );
    ln(
        "../../../../pci0/block/sdb",
        "devices/virtual/block/dm-0/slaves/sdb",
    );
    ln("../../dm-0", "devices/virtual/block/md0/slaves/dm-0");
    // A slave entry that is a plain directory: resolved through /sys/class/block.
    mk("devices/virtual/block/md0/slaves/sdc");
    mk("dev/block");
    mk("class/block");
    ln("../../devices/pci0/block/sdc", "class/block/sdc");
    for (num, path) in [
        ("8:0", "pci0/block/sda"),
        ("8:1", "pci0/block/sda/sda1"),
        ("8:2", "pci0/block/sda/sda2"),
        ("8:16", "pci0/block/sdb"),
        ("253:0", "virtual/block/dm-0"),
        ("9:0", "virtual/block/md0"),
    ] {
        ln(
            &format!("../../devices/{path}"),
            &format!("dev/block/{num}"),
        );
    }
}

#[test]
fn fake_sys_partition_dm_and_md() {
    let tmp = tempfile::tempdir().unwrap();
    let sys = tmp.path();
    fake_sys(sys);
    let d = resolve_devnum(8, 1, sys).unwrap();
    assert_eq!(
        (d.name.as_str(), d.members.clone()),
        ("sda", vec!["sda".to_string()])
    );
    let d = resolve_devnum(8, 16, sys).unwrap(); // empty slaves/ dir: a plain disk
    assert_eq!(d.members, vec!["sdb"]);
    let d = resolve_devnum(253, 0, sys).unwrap();
    assert_eq!(d.members, vec!["sda", "sdb"]);
    assert_eq!(d.name, "dm-0(sda+sdb)");
    let d = resolve_devnum(9, 0, sys).unwrap();
    assert_eq!(d.members, vec!["sda", "sdb", "sdc"]);
    assert_eq!(d.name, "md0(sda+sdb+sdc)");
    let why = resolve_devnum(8, 99, sys).unwrap_err();
    assert!(why.to_string().contains("no block device 8:99"), "{why}");
}

#[test]
fn anonymous_device_reports_the_filesystem() {
    // /proc has an anonymous st_dev (major 0); pretend its mount is an overlay.
    let (ma, mi) = split_dev(std::fs::metadata("/proc").unwrap().dev());
    assert_eq!(ma, 0);
    let tmp = tempfile::tempdir().unwrap();
    let mi_path = tmp.path().join("mountinfo");
    std::fs::write(
        &mi_path,
        format!("1 0 8:1 / / rw - ext4 /dev/sda1 rw\n99 1 0:{mi} / /proc rw,relatime - overlay overlay rw,lowerdir=/x\n"),
    )
    .unwrap();
    let paths = SysPaths {
        sys: tmp.path().to_path_buf(),
        mountinfo: mi_path,
    };
    let why = resolve_data_dir(Path::new("/proc"), &paths).unwrap_err();
    assert!(why.to_string().contains("overlay filesystem"), "{why}");
}
