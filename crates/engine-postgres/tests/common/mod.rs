//! Helpers shared by the integration tests: they start real PostgreSQL 15 servers.
#![allow(dead_code)]

use dbdelta_engine::{OpenOptions, OwnedValue, RowSource};
use dbdelta_engine_postgres::PostgresEngine;
use dbdelta_model::TargetSpec;
use std::path::Path;

/// The Debian package's bin directory (CI installs postgresql-15).
pub const BIN: &str = "/usr/lib/postgresql/15/bin";

/// False (with a printed reason) when PostgreSQL 15 is not installed; under CI a missing
/// server fails the test instead.
pub fn have_pg() -> bool {
    if Path::new(BIN).join("initdb").is_file() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{BIN}/initdb is missing and CI is set (apt-get install postgresql-15)"
    );
    eprintln!("SKIPPED: {BIN}/initdb is missing (apt-get install postgresql-15 to run this test)");
    false
}

/// A managed target spec with the given query string (`""` or `"?a=b&c=d"`).
pub fn managed(query: &str) -> TargetSpec {
    TargetSpec::parse(&format!("pg=postgres:{BIN}{query}")).unwrap()
}

/// Starts a managed server in `dir` with small settings.
pub fn start(dir: &Path, query: &str) -> PostgresEngine {
    dbdelta_engine_postgres::open(&managed(query), dir, &OpenOptions::default())
        .unwrap_or_else(|e| panic!("managed server failed to start: {e}"))
}

/// True when no process with this pid exists any more (or it is a reaped-later zombie).
pub fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z')),
    }
}

/// sysbench-like rows: id, k, c, pad; row 1 has characters COPY must escape.
pub struct Rows {
    pub n: i64,
    pub i: i64,
}

/// The `c` value of row 1.
pub const TRICKY: &str = "tab\there back\\slash\nnewline\rcr 'quote' \"dq\" ünï";

impl RowSource for Rows {
    fn columns(&self) -> &[&'static str] {
        &["id", "k", "c", "pad"]
    }
    fn next_row(&mut self, out: &mut Vec<OwnedValue>) -> bool {
        if self.i >= self.n {
            return false;
        }
        self.i += 1;
        let i = self.i;
        out.push(OwnedValue::Int(i));
        out.push(OwnedValue::Int(i % 100));
        out.push(OwnedValue::Text(if i == 1 {
            TRICKY.to_string()
        } else {
            format!("{i:011}-{i:011}-{i:011}")
        }));
        out.push(OwnedValue::Text("pad-59".into()));
        true
    }
}

/// The sbtest-like schema.
pub const DDL: &str = "CREATE TABLE sbtest1(id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, \
     c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))";
