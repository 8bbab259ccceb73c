#!/usr/bin/env python3
"""Runs one YCSB 0.17.0 command and prints what bench/vs-ycsb.sh compares, as JSON:
throughput, operations per type (plain READ separated from the reads inside
READ-MODIFY-WRITE, as dbdelta counts them) and the JVM's CPU per operation over the
steady part of the run (from the status line at >= 3 s to the last one, sampling
/proc/<pid>/stat at each status line, so JVM start-up and JIT warm-up are left out)."""
import json, os, re, subprocess, sys, time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_secs(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


def main(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = []  # (seconds, operations, cpu)
    status = re.compile(r" (\d+) sec: (\d+) operations;")
    for line in p.stderr:
        m = status.search(line)
        if m:
            cpu = cpu_secs(p.pid)
            if cpu is not None:
                samples.append((int(m.group(1)), int(m.group(2)), cpu))
    out = p.stdout.read()
    rc = p.wait()
    if rc != 0:
        sys.stderr.write(out)
        sys.exit(f"YCSB exited with {rc}")
    counts, throughput = {}, 0.0
    for line in out.splitlines():
        parts = [x.strip() for x in line.split(",")]
        if len(parts) != 3:
            continue
        metric, name, value = parts
        if metric == "[OVERALL]" and name == "Throughput(ops/sec)":
            throughput = float(value)
        elif name == "Operations" and not metric.startswith("[CLEANUP"):
            # Attempts by type: [READ] and [READ-FAILED] (or another status) alike.
            op = metric.strip("[]")
            for status in ("-FAILED", "-NOT_FOUND", "-ERROR", "-UNEXPECTED_STATE"):
                op = op[: -len(status)] if op.endswith(status) else op
            counts[op] = counts.get(op, 0) + int(value)
    # A read-modify-write is also measured as a READ and an UPDATE (DBWrapper): dbdelta
    # counts it once, as YCSB's [READ-MODIFY-WRITE] does.
    rmw = counts.get("READ-MODIFY-WRITE", 0)
    for op in ("READ", "UPDATE"):
        if rmw and op in counts:
            counts[op] -= rmw
            if counts[op] <= 0:
                del counts[op]
    steady = [s for s in samples if s[0] >= 3]
    cpu_per_op = None
    if len(steady) >= 2 and steady[-1][1] > steady[0][1]:
        cpu_per_op = (steady[-1][2] - steady[0][2]) * 1e6 / (steady[-1][1] - steady[0][1])
    print(json.dumps({"throughput": throughput, "counts": counts, "cpu_us_per_op": cpu_per_op}))
    # The raw export, for a look when the numbers surprise.
    sys.stderr.write(out)


if __name__ == "__main__":
    main(sys.argv[1:])
