//! C `printf` number formats (`%.Nf`, `%.Ng`) and the `sb.met` comparison block of
//! Mark Callaghan's `sum_met.sh`.

use dbdelta_model::os::OpCosts;

fn non_finite(x: f64) -> Option<String> {
    if x.is_nan() {
        Some(if x.is_sign_negative() { "-nan" } else { "nan" }.to_string())
    } else if x.is_infinite() {
        Some(if x < 0.0 { "-inf" } else { "inf" }.to_string())
    } else {
        None
    }
}

/// C `printf("%.{prec}f", x)` (correctly rounded, ties to even on the exact binary value,
/// like glibc; `inf`/`nan` spelled as C does).
pub fn fmt_c_f(x: f64, prec: usize) -> String {
    non_finite(x).unwrap_or_else(|| format!("{x:.prec$}"))
}

fn strip_zeros(s: &mut String) {
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
}

/// C `printf("%.{prec}g", x)`: `prec` significant digits (0 means 1); scientific notation
/// when the decimal exponent X (after rounding) is < −4 or ≥ `prec`, else fixed with
/// `prec − 1 − X` decimals; trailing zeros and a trailing point removed; exponent signed and
/// at least two digits (`1e+06`, `1.5e-05`).
pub fn fmt_c_g(x: f64, prec: usize) -> String {
    if let Some(s) = non_finite(x) {
        return s;
    }
    let p = prec.max(1);
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let sci = format!("{:.*e}", p - 1, x);
    let (mant, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    if e < -4 || e >= p as i32 {
        let mut m = mant.to_string();
        strip_zeros(&mut m);
        let sign = if e < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", e.unsigned_abs())
    } else {
        let decimals = (p as i32 - 1 - e).max(0) as usize;
        let mut s = format!("{x:.decimals$}");
        strip_zeros(&mut s);
        s
    }
}

/// `%.6g`, the format `sum_met.sh` prints r/o, rKB/o and wKB/o in.
pub fn g6(x: f64) -> String {
    fmt_c_g(x, 6)
}

fn opt_g6(x: Option<f64>) -> String {
    x.map(g6).unwrap_or_else(|| "-".to_string())
}

/// `other / base` as `sum_met.sh` prints it: `%.2f`, with 0/0 → `1` and x/0 → `inf`.
pub fn relative(base: f64, other: f64) -> String {
    if base == 0.0 {
        if other == 0.0 {
            "1".to_string()
        } else {
            "inf".to_string()
        }
    } else {
        fmt_c_f(other / base, 2)
    }
}

fn opt_rel(base: Option<f64>, other: Option<f64>) -> String {
    match (base, other) {
        (Some(b), Some(o)) => relative(b, o),
        _ => "-".to_string(),
    }
}

/// The `sb.met` comparison block for one step (`title`, e.g. `read-only.range100.pk1.dop1`)
/// over `rows` of (target name, costs), the first being the base:
///
/// ```text
/// <title>
/// --- absolute
/// cpu/o<TAB><TAB>cs/o<TAB>r/o<TAB>rKB/o<TAB>wKB/o<TAB>o/s<TAB>dbms
/// %.6f(cpu/o) %.3f(cs/o) %.6g(r/o) %.6g(rKB/o) %.6g(wKB/o) %.0f(o/s) name   (tab-separated)
/// --- relative to first result
/// r(cpu/o)<TAB><TAB>r(cs/o) r(r/o) r(rKB/o) r(wKB/o) r(o/s) name           (other rows only)
/// <blank line>
/// ```
///
/// cpu/o and cs/o appear as the published met files hold them (`%.6f`, `%.3f`). Ratios are
/// computed from full-precision values (not re-read from the rounded text). A disk figure
/// that was not measured prints `-`, and so does its ratio.
pub fn sb_met_block(title: &str, rows: &[(&str, &OpCosts)]) -> String {
    let mut out = format!("{title}\n--- absolute\ncpu/o\t\tcs/o\tr/o\trKB/o\twKB/o\to/s\tdbms\n");
    for (name, c) in rows {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{name}\n",
            fmt_c_f(c.cpu_o, 6),
            fmt_c_f(c.cs_o, 3),
            opt_g6(c.r_o),
            opt_g6(c.rkb_o),
            opt_g6(c.wkb_o),
            fmt_c_f(c.o_s, 0),
        ));
    }
    out.push_str("--- relative to first result\n");
    if let Some((_, base)) = rows.first() {
        for (name, c) in &rows[1..] {
            out.push_str(&format!(
                "{}\t\t{}\t{}\t{}\t{}\t{}\t{name}\n",
                relative(base.cpu_o, c.cpu_o),
                relative(base.cs_o, c.cs_o),
                opt_rel(base.r_o, c.r_o),
                opt_rel(base.rkb_o, c.rkb_o),
                opt_rel(base.wkb_o, c.wkb_o),
                relative(base.o_s, c.o_s),
            ));
        }
    }
    out.push('\n');
    out
}
