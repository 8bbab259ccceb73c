//! C number formats and the sb.met block text.

use dbdelta_model::os::OpCosts;
use dbdelta_osmetrics::fmt::{fmt_c_f, fmt_c_g, relative};
use dbdelta_osmetrics::sb_met_block;

/// (value, %.6g, %.2f, %.0f) as printed by GNU awk (C printf on doubles).
const C_PRINTF: &[(f64, &str, &str, &str)] = &[
    (0.0, "0", "0.00", "0"),
    (1.0, "1", "1.00", "1"),
    (0.5, "0.5", "0.50", "0"),
    (123456.0, "123456", "123456.00", "123456"),
    (1234567.0, "1.23457e+06", "1234567.00", "1234567"),
    (999999.5, "1e+06", "999999.50", "1000000"),
    (0.0001, "0.0001", "0.00", "0"),
    (0.00001234567, "1.23457e-05", "0.00", "0"),
    (1e-5, "1e-05", "0.00", "0"),
    (100000.0, "100000", "100000.00", "100000"),
    (5.43219876, "5.4322", "5.43", "5"),
    (0.000979, "0.000979", "0.00", "0"),
    (12962.56, "12962.6", "12962.56", "12963"),
    (2.5, "2.5", "2.50", "2"),
    (-1.5, "-1.5", "-1.50", "-2"),
    (0.1, "0.1", "0.10", "0"),
    (123.4565, "123.457", "123.46", "123"),
    (1e15, "1e+15", "1000000000000000.00", "1000000000000000"),
    (0.30000000000000004, "0.3", "0.30", "0"),
    (9.9999995, "10", "10.00", "10"),
    (0.00009999995, "0.0001", "0.00", "0"),
];

#[test]
fn matches_c_printf() {
    for &(x, g, f2, f0) in C_PRINTF {
        assert_eq!(fmt_c_g(x, 6), g, "%.6g of {x}");
        assert_eq!(fmt_c_f(x, 2), f2, "%.2f of {x}");
        assert_eq!(fmt_c_f(x, 0), f0, "%.0f of {x}");
    }
    assert_eq!(fmt_c_g(1e100, 6), "1e+100");
    assert_eq!(fmt_c_g(-0.0, 6), "-0");
    assert_eq!(fmt_c_g(f64::INFINITY, 6), "inf");
    assert_eq!(fmt_c_g(f64::NEG_INFINITY, 6), "-inf");
    assert_eq!(fmt_c_g(f64::NAN, 6), "nan");
    assert_eq!(fmt_c_g(1234.5678, 0), "1e+03"); // precision 0 means 1
    assert_eq!(fmt_c_g(0.000123456789, 3), "0.000123");
}

#[test]
fn relative_rules() {
    assert_eq!(relative(0.0, 0.0), "1");
    assert_eq!(relative(0.0, 2.0), "inf");
    assert_eq!(relative(2.0, 0.0), "0.00");
    assert_eq!(relative(3.0, 4.0), "1.33");
}

fn costs(cpu_o: f64, cs_o: f64, disk: Option<(f64, f64, f64)>, o_s: f64) -> OpCosts {
    OpCosts {
        cpu_o,
        cs_o,
        r_o: disk.map(|d| d.0),
        rkb_o: disk.map(|d| d.1),
        wkb_o: disk.map(|d| d.2),
        o_s,
        host_cpu_us_op: 0.0,
        server_cpu_us_op: None,
        client_cpu_us_op: 0.0,
        proxy_cpu_us_op: None,
        server_cs_op: None,
        server_rkb_op: None,
        server_wkb_op: None,
    }
}

#[test]
fn sb_met_block_golden() {
    let base = costs(0.00097912, 3.8571, Some((0.0, 0.0, 1.23456789)), 12962.56);
    let other = costs(
        0.00146868,
        4.2428,
        Some((0.00012, 0.0, 2.46913578)),
        11666.3,
    );
    let no_disk = costs(0.0005, 0.0, None, 20000.0);
    let text = sb_met_block(
        "read-only.range100.pk1.dop1",
        &[("pg16", &base), ("pg17", &other), ("sqlite", &no_disk)],
    );
    let golden = "read-only.range100.pk1.dop1\n\
--- absolute\n\
cpu/o\t\tcs/o\tr/o\trKB/o\twKB/o\to/s\tdbms\n\
0.000979\t3.857\t0\t0\t1.23457\t12963\tpg16\n\
0.001469\t4.243\t0.00012\t0\t2.46914\t11666\tpg17\n\
0.000500\t0.000\t-\t-\t-\t20000\tsqlite\n\
--- relative to first result\n\
1.50\t\t1.10\tinf\t1\t2.00\t0.90\tpg17\n\
0.51\t\t0.00\t-\t-\t-\t1.54\tsqlite\n\
\n";
    assert_eq!(text, golden);
    // A single target: header and an empty relative section.
    let one = sb_met_block("x", &[("pg16", &base)]);
    assert!(one.ends_with("--- relative to first result\n\n"));
}
