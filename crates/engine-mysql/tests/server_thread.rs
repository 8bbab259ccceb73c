//! A managed MariaDB names the thread serving a connection (`THREAD_OS_ID`) when
//! performance_schema is on, and none with it off (MariaDB 10.11's default).

mod common;

use common::{have_mariadb, start};
use dbdelta_engine::{Engine, OpenOptions};

#[test]
fn the_connection_thread_is_named_only_with_performance_schema_on() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let on = start(
        "maria=mysql:/usr?innodb_buffer_pool_size=64M&performance_schema=ON",
        dir.path(),
        &OpenOptions::default(),
    );
    let server = on.server_pids()[0];
    let (mut a, mut b) = (on.connect().unwrap(), on.connect().unwrap());
    let (ta, tb) = (a.server_thread().unwrap(), b.server_thread().unwrap());
    // Threads of the server process, one per connection.
    assert_eq!((ta.pid, tb.pid), (server, server));
    assert_ne!(ta.tid, tb.tid);
    assert!(std::path::Path::new(&format!("/proc/{server}/task/{}", ta.tid)).exists());
    drop(on);
    let dir = tempfile::tempdir().unwrap();
    let off = start(
        "maria=mysql:/usr?innodb_buffer_pool_size=64M",
        dir.path(),
        &OpenOptions::default(),
    );
    assert_eq!(off.connect().unwrap().server_thread(), None);
}
