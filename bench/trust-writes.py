#!/usr/bin/env python3
"""Half-widths of the write steps of an A/A (or A/B) run directory, two metrics.

For each write step: the half-width of the 95 % interval of target/base QPS as the report
gives it (report.json's verdicts: paired rounds), and the same interval computed from the
server's CPU per operation (costs.server_cpu_us_per_op of each round, paired t on the
per-round log ratios, as dbdelta_inference's compare_paired does for QPS), the second
verdict metric issue 29 proposes. Prints one line per step and the medians.

usage: bench/trust-writes.py RUN_DIR [BASE TARGET]
"""
import json, math, os, statistics, sys

# Two-sided 95 % Student t quantiles by degrees of freedom (df > 30: normal).
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
       16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042}


def t95(df):
    if df in T95:
        return T95[df]
    if df > 30:
        return 1.96 + 2.4 / df
    lower = max(k for k in T95 if k < df)
    return T95[lower]


def half_width_pct(pairs):
    """Half-width in percent of the ratio of the paired-t interval of exp(mean log ratio)."""
    logs = [math.log(t / b) for b, t in pairs if b > 0 and t > 0]
    n = len(logs)
    if n < 2:
        return None
    m, sd = statistics.mean(logs), statistics.stdev(logs)
    h = t95(n - 1) * sd / math.sqrt(n)
    lo, hi, r = math.exp(m - h), math.exp(m + h), math.exp(m)
    return (hi - lo) / r / 2 * 100, r


def results(run, target):
    d = os.path.join(run, "results", target)
    out = []
    for f in sorted(os.listdir(d)):
        if f.endswith(".json"):
            with open(os.path.join(d, f)) as fh:
                out.append(json.load(fh))
    return [r for r in out if r.get("kind") == "measured" and r.get("group") == "write"]


def evidence(rs):
    turns = [r for r in rs if r.get("turns")]
    return turns if len(turns) >= 2 else rs


def main():
    run = sys.argv[1]
    report = json.load(open(os.path.join(run, "report.json")))
    base = sys.argv[2] if len(sys.argv) > 2 else report["base"]
    names = [t["name"] for t in report["targets"]]
    target = sys.argv[3] if len(sys.argv) > 3 else [n for n in names if n != base][0]
    qps = {(v["label"], v["dop"]): v for v in report["verdicts"] if v["target"] == target}
    b, t = results(run, base), results(run, target)
    rows, qw, cw = [], [], []
    for (label, dop), v in sorted(qps.items()):
        bl = {r["repeat"]: r for r in evidence([r for r in b if r["label"] == label and r["threads"] == dop])}
        tl = {r["repeat"]: r for r in evidence([r for r in t if r["label"] == label and r["threads"] == dop])}
        pairs = []
        for k in sorted(set(bl) & set(tl)):
            cb = (bl[k].get("costs") or {}).get("server_cpu_us_op")
            ct = (tl[k].get("costs") or {}).get("server_cpu_us_op")
            if cb and ct:
                pairs.append((cb, ct))
        cpu = half_width_pct(pairs)
        hq = (v["high"] - v["low"]) / v["ratio"] / 2 * 100
        if label.split("_")[0] not in {"update-index", "update-nonindex", "insert", "delete", "write-only", "read-write"}:
            continue
        qw.append(hq)
        if cpu:
            cw.append(cpu[0])
        rows.append(f"| {label} | {len(bl)} | {v['ratio']:.3f} | ±{hq:.1f} % | "
                    + (f"{cpu[1]:.3f} | ±{cpu[0]:.1f} %" if cpu else "- | -") + " |")
    print(f"run {run}: {target}/{base}")
    print("| step | rounds | QPS ratio | QPS half-width | server CPU/op ratio | CPU/op half-width |")
    print("|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    if qw:
        print(f"| **median** | | | ±{statistics.median(qw):.1f} % | | "
              + (f"±{statistics.median(cw):.1f} %" if cw else "-") + " |")


if __name__ == "__main__":
    main()
