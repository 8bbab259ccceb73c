//! Managed servers: `clickhouse:/usr/sbin` starts `clickhouse-server` (or the single
//! `clickhouse` binary of newer releases) from that directory with a generated
//! configuration: HTTP on a free 127.0.0.1 port and nothing else, data, logs and
//! temporary files in the target's scratch directory, the target's parameters as the
//! `default` profile's settings.

use crate::conn::{Endpoint, HttpConnection};
use crate::http::HttpTarget;
use dbdelta_engine::{ConnectOptions, Connection, EngineError, ErrorKind};
use dbdelta_kit::listen;
use dbdelta_kit::params::config_err;
use dbdelta_kit::server::{
    self, check_reachable, chown_tree, log_tail, service_user, Launch, NotReady, Probe,
    ServerProcess,
};
use dbdelta_model::TargetSpec;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// How long a server may take to answer its first query.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A started server, stopped on drop.
#[derive(Debug)]
pub(crate) struct ManagedServer {
    pub(crate) process: ServerProcess,
    pub(crate) data_dir: PathBuf,
    pub(crate) log_path: PathBuf,
    pub(crate) port: u16,
}

/// The server program in `dir` and the arguments that make it a server.
pub(crate) fn server_binary(
    spec: &TargetSpec,
    dir: &Path,
) -> Result<(PathBuf, Vec<String>), EngineError> {
    let split = dir.join("clickhouse-server");
    if split.is_file() {
        return Ok((split, Vec::new()));
    }
    let single = dir.join("clickhouse");
    if single.is_file() {
        return Ok((single, vec!["server".to_string()]));
    }
    Err(config_err(
        spec,
        format!(
            "{} holds neither clickhouse-server nor clickhouse: point at the directory of the server binary \
             (Debian's clickhouse-server package: clickhouse:/usr/sbin; official packages: clickhouse:/usr/bin)",
            dir.display()
        ),
    ))
}

/// Checks that settings names and values fit in the XML profile.
pub(crate) fn check_settings(
    spec: &TargetSpec,
    settings: &[(String, String)],
) -> Result<(), EngineError> {
    for (k, _) in settings {
        if k.is_empty() || !k.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
            return Err(config_err(
                spec,
                format!("'{k}' is not a ClickHouse setting name (letters, digits and '_')"),
            ));
        }
    }
    Ok(())
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The server's `config.xml`.
pub(crate) fn config_xml(scratch: &Path, data: &Path, port: u16) -> String {
    let d = |p: &Path| xml_escape(&p.display().to_string());
    format!(
        r#"<?xml version="1.0"?>
<!-- Written by dbdelta for a managed target: HTTP on loopback only, everything in the scratch directory. -->
<yandex>
    <logger>
        <level>information</level>
        <log>{log}</log>
        <errorlog>{errlog}</errorlog>
        <console>0</console>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>{port}</http_port>
    <path>{data}/</path>
    <tmp_path>{data}/tmp/</tmp_path>
    <user_files_path>{data}/user_files/</user_files_path>
    <format_schema_path>{data}/format_schemas/</format_schema_path>
    <users_config>{users}</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <mark_cache_size>536870912</mark_cache_size>
    <max_concurrent_queries>1000</max_concurrent_queries>
    <keep_alive_timeout>3</keep_alive_timeout>
</yandex>
"#,
        log = d(&scratch.join("server.log")),
        errlog = d(&scratch.join("server.err.log")),
        data = d(data),
        users = d(&scratch.join("users.xml")),
    )
}

/// The server's `users.xml`: user `default` without password, from loopback only, with
/// the target's settings in its profile.
pub(crate) fn users_xml(settings: &[(String, String)]) -> String {
    let mut profile = String::new();
    for (k, v) in settings {
        profile.push_str(&format!("            <{k}>{}</{k}>\n", xml_escape(v)));
    }
    format!(
        r#"<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
{profile}        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas><default></default></quotas>
</yandex>
"#
    )
}

/// Starts the server for `spec` from `dir` in `scratch` and waits until it answers.
pub(crate) fn start(
    spec: &TargetSpec,
    dir: &Path,
    scratch: &Path,
    settings: &[(String, String)],
) -> Result<ManagedServer, EngineError> {
    let (binary, args) = server_binary(spec, dir)?;
    check_settings(spec, settings)?;
    let owner = service_user()?;
    fs::create_dir_all(scratch)
        .map_err(|e| config_err(spec, format!("cannot create {}: {e}", scratch.display())))?;
    let scratch = scratch
        .canonicalize()
        .map_err(|e| config_err(spec, format!("cannot resolve {}: {e}", scratch.display())))?;
    check_reachable(&scratch, owner).map_err(|e| {
        config_err(
            spec,
            e.advice("put the run directory elsewhere (e.g. under /var/tmp)"),
        )
    })?;
    let data_dir = scratch.join("data");
    fs::create_dir_all(&data_dir)
        .map_err(|e| config_err(spec, format!("cannot create {}: {e}", data_dir.display())))?;
    let config = scratch.join("config.xml");
    let log_path = scratch.join("server.log");
    let write = |p: &Path, text: &str| {
        fs::write(p, text)
            .map_err(|e| config_err(spec, format!("cannot write {}: {e}", p.display())))
    };
    write(&scratch.join("users.xml"), &users_xml(settings))?;
    server::start_on_free_port(None, |port| {
        write(&config, &config_xml(&scratch, &data_dir, port)).map_err(|e| (e, false))?;
        chown_tree(&scratch, owner).map_err(|e| (e, false))?;
        let mut command = Command::new(&binary);
        command
            .args(&args)
            .arg(format!("--config-file={}", config.display()))
            .current_dir(&scratch);
        let process = server::launch(Launch {
            command,
            log: &scratch.join("stdout.log"),
            append: false,
            owner,
            netns: None,
            stop_signal: libc::SIGTERM,
            grace: Duration::from_secs(30),
        })
        .map_err(|e| (config_err(spec, e.to_string()), false))?;
        let mut server = ManagedServer {
            process,
            data_dir: data_dir.clone(),
            log_path: log_path.clone(),
            port,
        };
        let ready = wait_ready(spec, &mut server, &scratch).and_then(|()| {
            // Whatever the settings said, the server must listen where dbdelta put it.
            listen::require_loopback_only(
                &spec.name,
                "the managed server",
                server.process.pid(),
                &[],
            )
            .map_err(|e| (e, false))
        });
        if let Err(failed) = ready {
            let _ = server.process.stop();
            return Err(failed);
        }
        Ok(server)
    })
}

/// The endpoint of a managed server (user `default`, no password).
pub(crate) fn endpoint(spec: &TargetSpec, port: u16, database: &str) -> Endpoint {
    Endpoint {
        http: HttpTarget {
            target: spec.name.clone(),
            host: "127.0.0.1".into(),
            port,
            user: None,
            password: None,
        },
        database: database.to_string(),
        settings: Vec::new(),
        connect_timeout: Duration::from_secs(5),
    }
}

/// Polls until the server answers a query; the error says whether the port was taken.
fn wait_ready(
    spec: &TargetSpec,
    server: &mut ManagedServer,
    scratch: &Path,
) -> Result<(), (EngineError, bool)> {
    let tail = || {
        let mut t = log_tail(&scratch.join("server.err.log"), 20);
        if t.is_empty() {
            t = log_tail(&scratch.join("stdout.log"), 20);
        }
        t
    };
    let ep = endpoint(spec, server.port, "");
    let ready = server::wait_ready(
        &mut server.process,
        START_TIMEOUT,
        Duration::from_millis(100),
        || {
            HttpConnection::open(&ep, &ConnectOptions::default())
                .and_then(|mut c| c.query_scalar("SELECT 1"))
                .map_err(|e| match e.kind {
                    // Not listening yet.
                    ErrorKind::Connection => Probe::NotYet(Some(e)),
                    _ => Probe::Failed(e),
                })
        },
    );
    match ready {
        Ok(_) => Ok(()),
        Err(NotReady::Exited(status)) => {
            let t = tail();
            let clash = t.contains("Address already in use");
            Err((
                config_err(
                    spec,
                    format!(
                        "the ClickHouse server exited during startup ({status}); check the target's settings. \
                         Last lines of its log in {}:\n{t}",
                        scratch.display()
                    ),
                ),
                clash,
            ))
        }
        Err(NotReady::Failed(e) | NotReady::TimedOut(Some(e))) => Err((
            config_err(
                spec,
                format!(
                    "the ClickHouse server did not answer within {START_TIMEOUT:?}: {e}. \
                     Last lines of its log in {}:\n{}",
                    scratch.display(),
                    tail()
                ),
            ),
            false,
        )),
        Err(NotReady::TimedOut(None)) => Err((
            config_err(
                spec,
                format!(
                    "the ClickHouse server did not answer within {START_TIMEOUT:?}. \
                     Last lines of its log in {}:\n{}",
                    scratch.display(),
                    tail()
                ),
            ),
            false,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_is_loopback_only_with_settings_in_the_profile() {
        let c = config_xml(Path::new("/s"), Path::new("/s/data"), 18123);
        assert!(c.contains("<listen_host>127.0.0.1</listen_host>"));
        assert!(c.contains("<http_port>18123</http_port>"));
        assert!(!c.contains("tcp_port"), "only HTTP is opened");
        assert!(c.contains("<path>/s/data/</path>"));
        let u = users_xml(&[
            ("max_threads".into(), "2".into()),
            ("x".into(), "<&>".into()),
        ]);
        assert!(u.contains("<max_threads>2</max_threads>"));
        assert!(u.contains("<x>&lt;&amp;&gt;</x>"));
        assert!(u.contains("<ip>127.0.0.1</ip>"));
    }

    #[test]
    fn binaries_and_setting_names() {
        let spec = TargetSpec::parse("c=clickhouse:/nonexistent").unwrap();
        let e = server_binary(&spec, Path::new("/nonexistent")).unwrap_err();
        assert!(e.message.contains("clickhouse:/usr/sbin"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("clickhouse"), "").unwrap();
        let (b, args) = server_binary(&spec, dir.path()).unwrap();
        assert!(b.ends_with("clickhouse"));
        assert_eq!(args, vec!["server"]);
        assert!(check_settings(&spec, &[("max_threads".into(), "1".into())]).is_ok());
        let e = check_settings(&spec, &[("a<b".into(), "1".into())]).unwrap_err();
        assert!(e.message.contains("'a<b'"), "{e}");
    }
}
