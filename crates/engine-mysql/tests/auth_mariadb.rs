//! Authentication plugins against a real MariaDB that the test starts itself from /usr
//! (Debian's mariadb-server): mysql_native_password and MariaDB's ed25519. Skips, with a
//! message, only when /usr/sbin/mariadbd is missing and CI is not set.

use dbdelta_engine::{Engine, ErrorKind, OpenOptions};
use dbdelta_engine_mysql::open;
use dbdelta_model::TargetSpec;
mod common;

use common::{have_mariadb, start};

/// A password longer than ed25519's 32-byte seed: MariaDB hashes any length.
const ED_PW: &str = "Ed25519-pw-longer-than-32-bytes-xyz";

#[test]
fn ed25519_and_native_users_against_mariadb() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The key-exchange parameters are dbdelta's options: a managed server starts with them
    // (they never reach my.cnf, where mariadbd would refuse an unknown option).
    let engine = start(
        "maria=mysql:/usr?get-server-public-key=true",
        dir.path(),
        &OpenOptions::default(),
    );
    let port = engine.port().unwrap();
    let mut c = engine.connect().unwrap();
    // auth_ed25519 ships with Debian's mariadb-server (/usr/lib/mysql/plugin).
    if c.query_scalar(
        "SELECT plugin_status FROM information_schema.plugins WHERE plugin_name='ed25519'",
    )
    .unwrap()
    .is_none()
    {
        c.query("INSTALL SONAME 'auth_ed25519'").unwrap();
    }
    c.query(&format!(
        "CREATE USER 'ed'@'127.0.0.1' IDENTIFIED VIA ed25519 USING PASSWORD('{ED_PW}')"
    ))
    .unwrap();
    c.query("CREATE USER 'nat'@'127.0.0.1' IDENTIFIED BY 'Nat-pw-1'")
        .unwrap();
    c.query("GRANT ALL ON dbdelta.* TO 'ed'@'127.0.0.1', 'nat'@'127.0.0.1'")
        .unwrap();
    assert_eq!(
        c.query_scalar("SELECT plugin FROM mysql.user WHERE user='ed'")
            .unwrap()
            .as_deref(),
        Some("ed25519")
    );

    // The right password: the server switches the client to client_ed25519, which signs
    // its scramble; queries then run as that user.
    for (user, pw) in [("ed", ED_PW), ("nat", "Nat-pw-1")] {
        let ext = start(
            &format!("ext=mysql://{user}:{pw}@127.0.0.1:{port}/dbdelta?get-server-public-key=true"),
            dir.path(),
            &OpenOptions::default(),
        );
        let mut x = ext.connect().unwrap();
        assert_eq!(
            x.query_scalar("SELECT CURRENT_USER()").unwrap().as_deref(),
            Some(format!("{user}@127.0.0.1").as_str())
        );
        assert_eq!(
            x.query_scalar("SELECT DATABASE()").unwrap().as_deref(),
            Some("dbdelta")
        );
    }

    // A wrong password: the server's access-denied error, as a Config error that never
    // shows the password. A password that differs only in case is wrong too.
    for wrong in ["Wrong-pw-123", &ED_PW.to_lowercase()] {
        let spec =
            TargetSpec::parse(&format!("ext=mysql://ed:{wrong}@127.0.0.1:{port}/dbdelta")).unwrap();
        let e = open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config, "{e}");
        assert!(e.message.contains("access denied"), "{e}");
        assert!(e.message.contains("1045"), "{e}");
        assert!(
            !e.message.contains(wrong) && !format!("{e:?}").contains(wrong),
            "{e}"
        );
    }
}
