#!/usr/bin/env python3
"""Plots klab result JSONs (called by `klab report --plot`; never hand-drawn numbers).

A sweep (records with block_threads) becomes throughput against block size, one line per
variant; anything else becomes one horizontal bar chart per (family, problem): the metric the
family is bound by (GB/s or TFLOP/s), with the measured ceiling drawn as a line.
"""
import argparse
import json
import math
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        recs.extend(d if isinstance(d, list) else [d])
    return [r for r in recs if r.get("status") == "ok" and "median_ms" in r]


def metric(r):
    unit = r.get("ceiling", {}).get("unit", "GB/s" if r.get("flops", 0) * 4 < r.get("bytes", 1) * 10 else "TFLOP/s")
    return (r["gbps"], "GB/s") if unit == "GB/s" else (r["tflops"], "TFLOP/s")


def plot_sweep(recs, out):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    series = OrderedDict()
    for r in recs:
        series.setdefault((r["variant"], r["problem"], r["dtype"]), []).append(r)
    unit = "GB/s"
    for (variant, problem, dtype), rs in series.items():
        rs.sort(key=lambda r: r["block_threads"])
        vals = [metric(r) for r in rs]
        unit = vals[0][1]
        ax.plot([r["block_threads"] for r in rs], [v for v, _ in vals], marker="o", label=f"{variant} ({problem} {dtype})")
    c = recs[0].get("ceiling")
    if c and c.get("value"):
        ax.axhline(c["value"], color="gray", ls="--", lw=1, label=f"measured {c['name']} ceiling")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("threads per block")
    ax.set_ylabel(unit)
    ax.set_ylim(bottom=0)
    dev = recs[0].get("device", {}).get("name", "")
    ax.set_title(f"Block-size sweep on {dev}")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=130)


def plot_bars(recs, out):
    groups = OrderedDict()
    for r in recs:
        groups.setdefault((r["family"], r["problem"], r["dtype"]), []).append(r)
    n = len(groups)
    cols = min(2, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(7.5 * cols, 0.35 * max(len(g) for g in groups.values()) * rows + 1.6 * rows),
                             squeeze=False)
    for ax, ((fam, prob, dt), rs) in zip(axes.flat, groups.items()):
        vals = [metric(r) for r in rs]
        labels = [r["variant"].split(".", 1)[1] for r in rs]
        colors = ["#888888" if r.get("baseline_variant") else "#3b75af" for r in rs]
        ax.barh(range(len(rs)), [v for v, _ in vals], color=colors)
        ax.set_yticks(range(len(rs)), labels, fontsize=7)
        ax.invert_yaxis()
        c = rs[0].get("ceiling")
        if c and c.get("value"):
            ax.axvline(c["value"], color="red", ls="--", lw=1, label=f"measured {c['name']}: {c['value']:.0f} {c['unit']}")
            ax.legend(fontsize=7, loc="lower right")
        ax.set_xlabel(vals[0][1])
        ax.set_title(f"{fam} {prob} {dt}", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    dev = recs[0].get("device", {}).get("name", "")
    fig.suptitle(f"klab results on {dev} (grey: vendor baseline)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=130)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    recs = load(a.inputs)
    if not recs:
        raise SystemExit("plot_results: no timed records to plot")
    if all(r.get("block_threads") for r in recs):
        plot_sweep(recs, a.out)
    else:
        plot_bars(recs, a.out)


if __name__ == "__main__":
    main()
