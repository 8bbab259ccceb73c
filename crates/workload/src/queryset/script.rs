//! SQL script files: split into statements (each with the line it starts on, for error
//! messages) and `{{param}}` substitution.

use std::collections::BTreeMap;

/// One statement of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// 1-based line of the file where the statement's text starts.
    pub line: usize,
    /// The statement, without its terminating `;`.
    pub sql: String,
}

/// Splits `text` at `;` outside quotes ('…', "…", `…`, PostgreSQL $tag$…$tag$) and
/// comments (`-- …`, `/* … */`). A statement's text starts at its first character that
/// is not a comment; statements that are only whitespace or comments are dropped.
pub fn split_statements(text: &str) -> Vec<Statement> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut line = 1;
    let mut start_line = 1;
    let mut meaningful = false;
    let push = |out: &mut Vec<Statement>, s: &str, l: usize, meaningful: bool| {
        if meaningful {
            out.push(Statement {
                line: l,
                sql: s.trim().to_string(),
            });
        }
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    line += usize::from(b[i] == b'\n');
                    i += 1;
                }
                i = (i + 2).min(b.len());
            }
            b'\'' | b'"' | b'`' => {
                if !meaningful {
                    meaningful = true;
                    start_line = line;
                    start = i;
                }
                i += 1;
                while i < b.len() {
                    if b[i] == c {
                        // A doubled quote is an escaped quote.
                        if b.get(i + 1) == Some(&c) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    if b[i] == b'\\' && c == b'\'' {
                        i += 1;
                    }
                    if i < b.len() {
                        line += usize::from(b[i] == b'\n');
                    }
                    i += 1;
                }
                i += 1;
            }
            b'$' if dollar_tag(&b[i..]).is_some() => {
                let tag = dollar_tag(&b[i..]).unwrap_or_default();
                if !meaningful {
                    meaningful = true;
                    start_line = line;
                    start = i;
                }
                i += tag.len();
                while i < b.len() && !b[i..].starts_with(tag) {
                    line += usize::from(b[i] == b'\n');
                    i += 1;
                }
                i = (i + tag.len()).min(b.len());
            }
            b';' => {
                push(&mut out, &text[start..i], start_line, meaningful);
                i += 1;
                start = i;
                meaningful = false;
            }
            c => {
                if !meaningful && !c.is_ascii_whitespace() {
                    meaningful = true;
                    start_line = line;
                    start = i;
                }
                i += 1;
            }
        }
    }
    push(
        &mut out,
        &text[start.min(b.len())..],
        start_line,
        meaningful,
    );
    out
}

/// `$tag$` at the start of `b` (the tag may be empty: `$$`).
fn dollar_tag(b: &[u8]) -> Option<&[u8]> {
    let end = b
        .iter()
        .skip(1)
        .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))?
        + 1;
    (b.get(end) == Some(&b'$') && !b.get(1).is_some_and(u8::is_ascii_digit)).then(|| &b[..=end])
}

/// A `{{name}}` in a file that has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownParam {
    /// 1-based line.
    pub line: usize,
    /// The name inside the braces.
    pub name: String,
}

/// Replaces every `{{name}}` with its value: from `params`, else from `function` (for
/// `{{word:17}}`-style generated values). Fails on the first name without a value.
pub fn substitute(
    text: &str,
    params: &BTreeMap<String, String>,
    function: &dyn Fn(&str) -> Option<String>,
) -> Result<String, UnknownParam> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut line = 1;
    while let Some(open) = rest.find("{{") {
        let (before, after) = rest.split_at(open);
        line += before.matches('\n').count();
        out.push_str(before);
        let Some(close) = after.find("}}") else {
            out.push_str(after);
            return Ok(out);
        };
        let name = after[2..close].trim();
        let value = params
            .get(name)
            .cloned()
            .or_else(|| function(name))
            .ok_or_else(|| UnknownParam {
                line,
                name: name.to_string(),
            })?;
        out.push_str(&value);
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_semicolons_outside_quotes_and_comments() {
        let s = "-- schema\nCREATE TABLE t (a text); -- x;\n\nINSERT INTO t VALUES ('a;b', \"c;\");\n/* ; */ SELECT $$;$$;\n  \n";
        let st = split_statements(s);
        assert_eq!(
            st,
            vec![
                Statement {
                    line: 2,
                    sql: "CREATE TABLE t (a text)".into()
                },
                Statement {
                    line: 4,
                    sql: "INSERT INTO t VALUES ('a;b', \"c;\")".into()
                },
                Statement {
                    line: 5,
                    sql: "SELECT $$;$$".into()
                },
            ]
        );
        assert!(split_statements("-- only a comment\n").is_empty());
        assert_eq!(split_statements("SELECT 'it''s;'").len(), 1);
        assert_eq!(
            split_statements("SELECT $f$ a;\n b $f$;\nSELECT 2")[1].line,
            3
        );
        // A positional parameter is not a dollar quote.
        assert_eq!(split_statements("SELECT $1; SELECT 2").len(), 2);
    }

    #[test]
    fn substitutes_params_and_functions_and_names_unknown_ones() {
        let mut p = BTreeMap::new();
        p.insert("rows".to_string(), "1000".to_string());
        let f = |n: &str| (n == "word:1").then(|| "kaba".to_string());
        assert_eq!(
            substitute("SELECT {{rows}}, '{{ word:1 }}'", &p, &f).as_deref(),
            Ok("SELECT 1000, 'kaba'")
        );
        assert_eq!(
            substitute("SELECT 1\nFROM t\nWHERE {{nope}}", &p, &f),
            Err(UnknownParam {
                line: 3,
                name: "nope".into()
            })
        );
    }
}
