#!/usr/bin/env python3
"""host-phases.py -- how fast does this host's speed change? (why dbdelta takes turns)

Runs one SQLite point-select loop (in memory, one thread) for --secs seconds and records
its throughput per 5 ms chunk. Prints:
  - the spread of the per-chunk rate and its autocorrelation by lag: how long a fast or
    slow phase of the host lasts;
  - for a 0.2 s window (dbdelta's quick preset), the SD of the log ratio of an A/A pair
    measured (a) as two windows one after the other and (b) in turns of 5, 10, 20, 50 ms
    (A B B A ...), simulated on the same record: the noise each way of pairing leaves.
The two "targets" are the same loop, so every difference is the host's.
"""
import argparse
import math
import sqlite3
import statistics as st
import time

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--secs", type=float, default=20.0, help="seconds to record (default 20)")
args = ap.parse_args()
if not (args.secs > 1.0 and math.isfinite(args.secs)):
    ap.error("--secs: give more than 1 second")

c = sqlite3.connect(":memory:")
c.execute("create table t(id integer primary key, k int, c text)")
c.executemany("insert into t values(?,?,?)", ((i, i * 7 % 1000, "x" * 100) for i in range(10000)))
q = "select c from t where id=?"
CHUNK = 0.005
rates = []
i = 0
end = time.perf_counter() + args.secs
while time.perf_counter() < end:
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < CHUNK:
        for _ in range(20):
            c.execute(q, (i % 10000,)).fetchone()
            i += 1
        n += 20
    rates.append(n / (time.perf_counter() - t0))

logs = [math.log(r) for r in rates]
m, sd = st.mean(logs), st.pstdev(logs)
print(f"{len(rates)} chunks of 5 ms; median {st.median(rates):.0f} queries/s; "
      f"SD of log rate per chunk {sd:.3f}; slowest/fastest decile "
      f"{sorted(rates)[len(rates) // 10] / sorted(rates)[9 * len(rates) // 10]:.2f}")


def autocorr(k):
    return sum((logs[j] - m) * (logs[j + k] - m) for j in range(len(logs) - k)) / ((len(logs) - k) * sd * sd)


print("autocorrelation of the per-chunk rate:")
for k in [1, 2, 4, 10, 20, 40, 100]:
    print(f"  lag {k * 5:4d} ms  {autocorr(k):+.3f}")


def pair_sd(window_chunks, slice_chunks):
    """SD over windows of log(rate B / rate A), A and B alternating A B B A in slices."""
    out = []
    for w in range(0, len(rates) - window_chunks + 1, window_chunks):
        seg = rates[w:w + window_chunks]
        a, b = [], []
        for s in range(0, window_chunks, slice_chunks):
            k = s // slice_chunks
            (a if k % 4 in (0, 3) else b).extend(seg[s:s + slice_chunks])
        out.append(math.log(st.mean(b) / st.mean(a)))
    return st.pstdev(out), len(out)


print("A/A pairs of 0.2 s (40 chunks) per target: SD of log(B/A)")
sd_seq, n = pair_sd(80, 40)
print(f"  one window after the other  {sd_seq:.3f}  ({n} pairs)")
for ms in [5, 10, 20, 50]:
    s, n = pair_sd(80, ms // 5)
    print(f"  in turns of {ms:2d} ms          {s:.3f}  ({sd_seq / s:.1f}x less)")
