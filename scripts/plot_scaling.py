#!/usr/bin/env python3
"""Plots `klab scaling` result JSONs (called by `klab scaling --plot`; never hand-drawn numbers).

Left: throughput (GB/s for memory-bound families, GFLOP/s otherwise) against threads, with the
ideal line (one thread's throughput times the thread count). Right: parallel efficiency
(speed-up over one thread / threads). One line per (variant, problem, dtype).
"""
import argparse
import json
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MEMORY_BOUND = {"copy", "read", "write"}


def load(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        recs.extend(d if isinstance(d, list) else [d])
    return [r for r in recs if r.get("status") == "ok" and "median_ms" in r and "cpu_threads" in r]


def throughput(r):
    # The scaling records carry no ceiling (CPU); decide from the work's arithmetic intensity.
    if r.get("flops", 0) * 4 < r.get("bytes", 1) * 10:
        return r["gbps"], "GB/s"
    return r["tflops"] * 1e3, "GFLOP/s"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    recs = load(a.inputs)
    if not recs:
        raise SystemExit("plot_scaling: no timed records with cpu_threads to plot")

    series = OrderedDict()
    for r in recs:
        series.setdefault((r["variant"], r["problem"], r["dtype"]), []).append(r)

    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(11, 4.2))
    unit = "GB/s"
    for (variant, problem, dtype), rs in series.items():
        rs.sort(key=lambda r: r["cpu_threads"])
        threads = [r["cpu_threads"] for r in rs]
        vals = [throughput(r) for r in rs]
        unit = vals[0][1]
        label = f"{variant} ({problem} {dtype})"
        line = ax_t.plot(threads, [v for v, _ in vals], marker="o", label=label)[0]
        one = next((r for r in rs if r["cpu_threads"] == 1), None)
        if one is not None:
            base = throughput(one)[0]
            ax_t.plot(threads, [base * t for t in threads], ls=":", color=line.get_color(), lw=1)
            eff = [one["median_ms"] / r["median_ms"] / r["cpu_threads"] for r in rs]
            ax_e.plot(threads, [100 * e for e in eff], marker="o", color=line.get_color(), label=label)

    hw = recs[0].get("host_cpu", {}).get("hardware_threads", 0)
    ticks = sorted({r["cpu_threads"] for r in recs})
    for ax in (ax_t, ax_e):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("threads")
        ax.grid(alpha=0.3)
        if hw:
            ax.axvline(hw, color="gray", ls="--", lw=1, label=f"{hw} hardware threads")
    ax_t.set_ylabel(unit)
    ax_t.set_ylim(bottom=0)
    ax_t.set_title("throughput (dotted: ideal linear scaling)", fontsize=9)
    ax_e.set_ylabel("parallel efficiency (%)")
    ax_e.set_ylim(0, 110)
    ax_e.axhline(100, color="gray", lw=0.8)
    ax_e.set_title("speed-up over one thread / threads", fontsize=9)
    ax_t.legend(fontsize=7)
    model = recs[0].get("host_cpu", {}).get("model", "")
    fig.suptitle(f"CPU scaling on {model}", fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=130)


if __name__ == "__main__":
    main()
