//! Helpers shared by the tests against a managed MariaDB.

use dbdelta_engine::OpenOptions;
use dbdelta_engine_mysql::{open, MysqlEngine};
use dbdelta_model::TargetSpec;
use std::path::Path;

/// True when MariaDB is installed; false (with a message) lets a test skip, except under
/// CI, where a missing server fails the test.
pub fn have_mariadb() -> bool {
    if Path::new("/usr/sbin/mariadbd").exists() {
        return true;
    }
    // Under CI a missing server is a failure, never a silent pass.
    assert!(
        std::env::var_os("CI").is_none(),
        "/usr/sbin/mariadbd not found and CI is set (apt-get install mariadb-server)"
    );
    eprintln!("SKIP: /usr/sbin/mariadbd not found (apt-get install mariadb-server)");
    false
}

/// Starts the target `spec` in `dir`, panicking with the reason when it cannot.
pub fn start(spec: &str, dir: &Path, opts: &OpenOptions) -> MysqlEngine {
    let spec = TargetSpec::parse(spec).unwrap();
    match open(&spec, dir, opts) {
        Ok(e) => e,
        Err(e) => panic!("open failed: {e}"),
    }
}
