//! A managed FerretDB's lifecycle without a client: it starts on a loopback port in front of
//! SQLite files in its scratch directory, or in front of a managed PostgreSQL whose processes
//! count as its server processes; dropping it stops FerretDB and the backend.

use dbdelta_engine::OpenOptions;
use dbdelta_ferretdb::managed::{self, RunningBackend};
use dbdelta_ferretdb::FerretSpec;
use dbdelta_model::testing::require;
use dbdelta_model::TargetSpec;
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

fn binary() -> Option<String> {
    let bin = std::env::var("DBDELTA_FERRETDB_BIN")
        .unwrap_or_else(|_| "/var/cache/dbdelta-ferretdb-v1.24.2/bin/ferretdb".into());
    require(
        &[&bin],
        "scripts/test.sh builds FerretDB v1.24.2 from the Go module proxy",
    )
    .then_some(bin)
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while pids
        .iter()
        .any(|p| Path::new(&format!("/proc/{p}")).exists() && !comm(*p).is_empty())
    {
        assert!(Instant::now() < deadline, "still running: {pids:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn start(spec: &str, dir: &Path, bin: &str) -> managed::Running {
    let spec = TargetSpec::parse(&format!("{spec}&binary={bin}")).unwrap();
    let ferret = FerretSpec::parse(&spec).unwrap();
    let opts = OpenOptions {
        database: "dbdelta".into(),
        ..OpenOptions::default()
    };
    managed::start("f", &ferret, Path::new(bin), dir, &opts).unwrap()
}

#[test]
fn on_sqlite_it_listens_on_loopback_and_stops_on_drop() {
    let Some(bin) = binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = start("f=ferretdb:?backend=sqlite", dir.path(), &bin);
    TcpStream::connect(("127.0.0.1", server.port)).expect("FerretDB accepts connections");
    let pids = server.server_pids();
    assert_eq!(comm(pids[0]), "ferretdb", "{pids:?}");
    let RunningBackend::Sqlite { dir: data } = &server.backend else {
        panic!("{:?}", server.backend);
    };
    assert!(data.starts_with(dir.path().canonicalize().unwrap()));
    assert!(server.log.is_file(), "its log is kept");
    drop(server);
    gone(&pids);
}

#[test]
fn on_a_managed_postgresql_both_count_and_both_stop() {
    let Some(bin) = binary() else {
        return;
    };
    if !require(
        &["/usr/lib/postgresql/15/bin/initdb"],
        "apt-get install postgresql-15",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut server = start("f=ferretdb:?backend=postgresql", dir.path(), &bin);
    TcpStream::connect(("127.0.0.1", server.port)).expect("FerretDB accepts connections");
    let pids = server.server_pids();
    let names: Vec<String> = pids.iter().map(|p| comm(*p)).collect();
    assert_eq!(names[0], "ferretdb", "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("postgres")),
        "the backend's processes are server processes: {names:?}"
    );
    server.stop().unwrap();
    gone(&pids);
}
