//! Hardware cost per operation from a window's [`OsSummary`] and the step's operations per
//! second (Mark Callaghan's an.sh: cpu/o, cs/o, r/o, rKB/o, wKB/o).

use dbdelta_model::os::{OpCosts, OsSummary};

/// Per-operation costs for a step that ran at `ops_per_s` operations per second (QPS; for
/// scan, thousands of rows per second) during the sampled window.
///
/// Published units: `cpu_o` = mean host (us+sy) % ÷ ops/s, `cs_o` = host cs/s ÷ ops/s,
/// `r_o`/`rkb_o`/`wkb_o` = device r/s, rkB/s, wkB/s ÷ ops/s, `o_s` = ops/s. Clearer units:
/// `host_cpu_us_op` = cpu_o × ncpu / 100 × 1e6; server and client CPU µs, server context
/// switches and server storage KiB per op from their totals over the window.
///
/// `None` when `ops_per_s` is not a positive finite number or the window is empty (there is
/// no per-operation cost of nothing).
pub fn op_costs(s: &OsSummary, ops_per_s: f64) -> Option<OpCosts> {
    let q = ops_per_s;
    if !(q.is_finite() && q > 0.0 && s.seconds > 0.0) {
        return None;
    }
    let per_op = |total: f64| total / s.seconds / q;
    let cpu_o = s.host.busy() / q;
    let server = s.server.as_ref();
    Some(OpCosts {
        cpu_o,
        cs_o: s.host.cs_per_s / q,
        r_o: s.disk.as_ref().map(|d| d.r_s / q),
        rkb_o: s.disk.as_ref().map(|d| d.rkb_s / q),
        wkb_o: s.disk.as_ref().map(|d| d.wkb_s / q),
        o_s: q,
        host_cpu_us_op: cpu_o * f64::from(s.ncpu) / 100.0 * 1e6,
        server_cpu_us_op: server.map(|p| per_op(p.cpu_s()) * 1e6),
        client_cpu_us_op: per_op(s.client.cpu_s()) * 1e6,
        proxy_cpu_us_op: s.proxy.as_ref().map(|p| per_op(p.cpu_s()) * 1e6),
        server_cs_op: server.map(|p| per_op((p.vcs + p.ivcs) as f64)),
        server_rkb_op: server
            .and_then(|p| p.read_bytes)
            .map(|b| per_op(b as f64 / 1024.0)),
        server_wkb_op: server
            .and_then(|p| p.write_bytes)
            .map(|b| per_op(b as f64 / 1024.0)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbdelta_model::os::{DiskRates, HostCpu, ProcCost};

    fn summary() -> OsSummary {
        OsSummary {
            samples: 11,
            seconds: 10.0,
            ncpu: 8,
            host: HostCpu {
                us: 10.0,
                sy: 2.7,
                id: 87.3,
                cs_per_s: 50_000.0,
                ..HostCpu::default()
            },
            disk: Some(DiskRates {
                device: "nvme0n1".into(),
                members: vec!["nvme0n1".into()],
                r_s: 100.0,
                rkb_s: 400.0,
                w_s: 50.0,
                wkb_s: 800.0,
                util: 5.0,
                seconds: 10.0,
            }),
            server: Some(ProcCost {
                cpu_user_s: 6.0,
                cpu_sys_s: 2.0,
                vcs: 150_000,
                ivcs: 50_000,
                read_bytes: Some(1024 * 1000),
                write_bytes: None,
                ..ProcCost::default()
            }),
            proxy: Some(ProcCost {
                cpu_user_s: 0.8,
                cpu_sys_s: 0.2,
                ..ProcCost::default()
            }),
            client: ProcCost {
                cpu_user_s: 1.5,
                cpu_sys_s: 0.5,
                ..ProcCost::default()
            },
            notes: vec![],
        }
    }

    #[test]
    fn published_and_clear_units() {
        // The spec's example: cpu/s 12.7 % at 12962.56 o/s on 8 CPUs → cpu/o 0.000979.
        let c = op_costs(&summary(), 12962.56).unwrap();
        assert_eq!(format!("{:.6}", c.cpu_o), "0.000980");
        assert!((c.cpu_o - 12.7 / 12962.56).abs() < 1e-15);
        assert!((c.host_cpu_us_op - 12.7 / 12962.56 * 8.0 / 100.0 * 1e6).abs() < 1e-9);
        assert!((c.cs_o - 50_000.0 / 12962.56).abs() < 1e-12);
        assert!((c.r_o.unwrap() - 100.0 / 12962.56).abs() < 1e-15);
        assert!((c.wkb_o.unwrap() - 800.0 / 12962.56).abs() < 1e-15);
        // Server: 8 CPU-s over 10 s at q ops/s.
        let ops = 129_625.6;
        assert!((c.server_cpu_us_op.unwrap() - 8.0 / ops * 1e6).abs() < 1e-9);
        assert!((c.client_cpu_us_op - 2.0 / ops * 1e6).abs() < 1e-9);
        // The proxy is a third group: 1 s of its CPU over the window.
        let proxy = c.proxy_cpu_us_op.unwrap();
        assert!((proxy - 1.0 / ops * 1e6).abs() < 1e-9, "{proxy}");
        assert!((c.server_cs_op.unwrap() - 200_000.0 / ops).abs() < 1e-12);
        assert!((c.server_rkb_op.unwrap() - 1000.0 / ops).abs() < 1e-12);
        assert_eq!(c.server_wkb_op, None);
        assert_eq!(c.o_s, 12962.56);
        assert!(op_costs(&summary(), 0.0).is_none());
        assert!(op_costs(&summary(), f64::NAN).is_none());
        let mut no_disk = summary();
        no_disk.disk = None;
        assert_eq!(op_costs(&no_disk, 1.0).unwrap().r_o, None);
    }
}
