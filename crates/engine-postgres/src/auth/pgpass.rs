//! `~/.pgpass` lookup with libpq's rules: lines `host:port:database:user:password`, `#`
//! comments, `\:` and `\\` escapes, `*` matching anything in the first four fields, the
//! first matching line wins, and a file readable by group or others is ignored.

use dbdelta_model::Secret;
use std::path::{Path, PathBuf};

/// What to look up.
#[derive(Debug, Clone, Copy)]
pub struct PgpassQuery<'a> {
    /// Host as connected to (`localhost` for a Unix socket, like libpq).
    pub host: &'a str,
    /// Port.
    pub port: u16,
    /// Database name.
    pub database: &'a str,
    /// User name.
    pub user: &'a str,
}

/// The password file libpq would read: `$PGPASSFILE`, else `$HOME/.pgpass`.
pub fn default_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PGPASSFILE").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| Path::new(&h).join(".pgpass"))
}

/// The password for `q` from the file at `path`; `None` when the file is missing, unsafe
/// (group/world accessible, which libpq also ignores) or has no matching line.
pub fn lookup(path: &Path, q: &PgpassQuery<'_>) -> Option<Secret> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.permissions().mode() & 0o077 != 0 {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    find(&text, q)
}

/// The password of the first line of `text` matching `q`.
pub fn find(text: &str, q: &PgpassQuery<'_>) -> Option<Secret> {
    let port = q.port.to_string();
    let wanted = [q.host, port.as_str(), q.database, q.user];
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_fields(line);
        if fields.len() < 5 {
            continue;
        }
        let matches = fields[..4]
            .iter()
            .zip(wanted)
            .all(|(f, w)| f == "*" || f == w);
        if matches {
            return Some(Secret::new(fields[4].clone()));
        }
    }
    None
}

/// Splits on unescaped `:` into at most 5 fields, undoing `\x` escapes. The password field
/// takes the rest of the line (libpq also unescapes it).
fn split_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::with_capacity(5);
    let mut cur = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            ':' if fields.len() < 4 => fields.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    fields.push(cur);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q<'a>(host: &'a str, port: u16, db: &'a str, user: &'a str) -> PgpassQuery<'a> {
        PgpassQuery {
            host,
            port,
            database: db,
            user,
        }
    }

    #[test]
    fn matching_rules() {
        let text = "# comment\n\
                    db1:5432:bench:bob:first\n\
                    db1:*:*:bob:second\n\
                    *:*:*:*:fallback\n\
                    h\\:x:5432:d:u:colon\\:pw\\\\end\n";
        let got = |q: PgpassQuery<'_>| find(text, &q).map(|s| s.expose().to_string());
        assert_eq!(
            got(q("db1", 5432, "bench", "bob")).as_deref(),
            Some("first")
        );
        assert_eq!(
            got(q("db1", 6000, "other", "bob")).as_deref(),
            Some("second")
        );
        assert_eq!(
            got(q("db2", 5432, "bench", "amy")).as_deref(),
            Some("fallback")
        );
        assert_eq!(got(q("h:x", 5432, "d", "u")).as_deref(), Some("fallback"));
        let text2 = "h\\:x:5432:d:u:colon\\:pw\\\\end\n";
        assert_eq!(
            find(text2, &q("h:x", 5432, "d", "u"))
                .map(|s| s.expose().to_string())
                .as_deref(),
            Some("colon:pw\\end")
        );
        assert!(find("db1:5432:bench\n", &q("db1", 5432, "bench", "bob")).is_none());
        assert!(find("", &q("a", 1, "b", "c")).is_none());
    }

    #[test]
    fn unsafe_file_is_ignored() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pgpass");
        std::fs::write(&p, "*:*:*:*:pw\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(lookup(&p, &q("h", 1, "d", "u")).is_none());
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(lookup(&p, &q("h", 1, "d", "u")).unwrap().expose(), "pw");
        assert!(lookup(&dir.path().join("missing"), &q("h", 1, "d", "u")).is_none());
    }
}
