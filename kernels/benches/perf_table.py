#!/usr/bin/env python3
"""Turns criterion's estimates from `cargo bench -p sparselin-kernels --bench kernels` into the
Markdown tables of PERF.md ("## Kernels"). Usage: perf_table.py [target/criterion]."""
import json
import pathlib
import sys
from collections import defaultdict

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
runs = {}
for bench in root.glob("**/new/benchmark.json"):
    meta = json.loads(bench.read_text())
    est = json.loads((bench.parent / "estimates.json").read_text())
    group, func = meta["group_id"], meta["function_id"] or ""
    name = func + ("/" + meta["value_str"] if meta.get("value_str") else "")
    thr = meta.get("throughput") or {}
    runs[(group, name)] = (est["median"]["point_estimate"], thr)

def per_unit(ns, thr):
    if "Elements" in thr:
        return ns / thr["Elements"]
    return ns / thr["Bytes"]

# Sparse: ns per non-zero, speed-up over scalar, ratio to the random-load limit.
sparse = defaultdict(dict)
for (group, name), (ns, thr) in runs.items():
    if group.startswith("sparse/"):
        _, pattern, size = group.split("/")
        sparse[(pattern, size)][name] = per_unit(ns, thr)

def size_key(k):
    return (k[0], int(k[1].split("^")[1]))

print("| pattern | size | random load (ns) | kernel | path | ns/nnz | vs scalar | vs limit |")
print("|---|---|---|---|---|---|---|---|")
for key in sorted(sparse, key=size_key):
    row = sparse[key]
    limit = row.get("limit/random_load")
    for name in sorted(row):
        if name.startswith("limit"):
            continue
        kernel, _, path = name.partition("/")
        scalar = row.get(f"{kernel}/scalar")
        speed = f"{scalar / row[name]:.2f}x" if scalar else ""
        ratio = f"{row[name] / limit:.2f}" if limit else ""
        print(f"| {key[0]} | {key[1]} | {limit:.3f} | {kernel} | {path} | {row[name]:.3f} | {speed} | {ratio} |")

print()
print("| size | kernel | path | GB/s | vs scalar | stream read GB/s |")
print("|---|---|---|---|---|---|")
dense = defaultdict(dict)
for (group, name), (ns, thr) in runs.items():
    if group.startswith("dense/"):
        dense[group.split("/")[1]][name] = thr["Bytes"] / ns
for size in sorted(dense, key=lambda s: int(s.split("^")[1])):
    row = dense[size]
    stream = row.get("limit/stream_read", 0.0)
    for name in sorted(row):
        if name.startswith("limit"):
            continue
        kernel, _, path = name.partition("/")
        scalar = row.get(f"{kernel}/scalar")
        speed = f"{row[name] / scalar:.2f}x" if scalar else ""
        print(f"| {size} | {kernel} | {path} | {row[name]:.1f} | {speed} | {stream:.1f} |")
