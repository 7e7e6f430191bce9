#!/usr/bin/env python3
"""Draws a roofline from the spec `klab roofline --plot` writes (never hand-drawn numbers).

The spec (JSON): {"title", "memory": [{"label", "gbps", "measured"}],
"compute": [{"label", "tflops", "measured"}], "points": [{"label", "ai", "tflops", "kind", "pct"?}]}.
Log-log axes: arithmetic intensity (flop/byte) against TFLOP/s. Each memory roof is the line
AI x bandwidth, each compute roof a horizontal line from its ridge on; datasheet roofs are dashed,
measured ones solid; the ridge of each compute roof with the first memory roof is marked.
Points: "model" (a kernel at its attainable bound), "measured" and "baseline" (results).
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MEM_COLORS = ["#1f77b4", "#17becf", "#9467bd"]
COMP_COLORS = ["#d62728", "#ff7f0e", "#2ca02c", "#8c564b", "#e377c2"]
KIND_STYLE = {
    "model": dict(marker="o", facecolors="none", edgecolors="black", s=40),
    "measured": dict(marker="o", color="#3b75af", s=30),
    "baseline": dict(marker="s", color="#888888", s=30),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.spec) as f:
        spec = json.load(f)
    mem, comp, pts = spec["memory"], spec["compute"], spec["points"]
    if not mem or not comp:
        raise SystemExit("plot_roofline: the spec has no roofs")

    # A compute roof meets the memory roof of its own kind: measured with the first measured one
    # (copy), datasheet with the datasheet's.
    def mem_for(c):
        same = [m for m in mem if bool(m.get("measured")) == bool(c.get("measured"))]
        return (same or mem)[0]

    ridges = [c["tflops"] * 1e3 / mem_for(c)["gbps"] for c in comp]
    ais = [p["ai"] for p in pts if p["ai"] > 0] + ridges
    x_lo = max(min(ais) / 8, 1e-3)
    x_hi = max(ais) * 8
    top = max(c["tflops"] for c in comp)
    ys = [p["tflops"] for p in pts if p["tflops"] > 0]
    y_lo = max(min(ys + [m["gbps"] * x_lo / 1e3 for m in mem]) / 3, 1e-4)

    fig, ax = plt.subplots(figsize=(8, 5.5))
    for i, m in enumerate(mem):
        # y = AI x bandwidth, up to the highest compute roof.
        x_top = top * 1e3 / m["gbps"]
        ax.plot([x_lo, x_top], [m["gbps"] * x_lo / 1e3, top], color=MEM_COLORS[i % len(MEM_COLORS)],
                ls="-" if m.get("measured") else "--", lw=1.6, label=m["label"])
    for i, (c, r) in enumerate(zip(comp, ridges)):
        color = COMP_COLORS[i % len(COMP_COLORS)]
        ax.plot([r, x_hi], [c["tflops"], c["tflops"]], color=color, ls="-" if c.get("measured") else "--", lw=1.6,
                label=c["label"])
        ax.axvline(r, color=color, ls=":", lw=0.8)
        ax.annotate(f"ridge {r:.3g}", (r, c["tflops"]), textcoords="offset points", xytext=(3, -12 - 9 * (i % 2)), fontsize=7,
                    color=color)

    seen = set()
    placed = []  # (ai, tflops) of labelled points: nearby labels are stacked, not overprinted
    for p in sorted(pts, key=lambda q: (q["ai"], -q["tflops"])):
        if p["ai"] <= 0 or p["tflops"] <= 0:
            continue
        near = sum(1 for (x, y) in placed if 0.7 < p["ai"] / x < 1.4 and 0.6 < p["tflops"] / y < 1.7)
        placed.append((p["ai"], p["tflops"]))
        kind = p.get("kind", "measured")
        style = dict(KIND_STYLE.get(kind, KIND_STYLE["measured"]))
        label = None if kind in seen else {"model": "model kernel (at its bound)", "measured": "measured",
                                           "baseline": "measured, vendor baseline"}.get(kind, kind)
        seen.add(kind)
        ax.scatter([p["ai"]], [p["tflops"]], zorder=3, label=label, **style)
        text = p["label"] + (f" ({p['pct']:.0f}%)" if "pct" in p else "")
        # Crowded points alternate sides: right, left, then further down on either.
        left = near % 2 == 1
        ax.annotate(text, (p["ai"], p["tflops"]), textcoords="offset points",
                    xytext=(-4 if left else 4, 3 - 9 * (near // 2)), ha="right" if left else "left", fontsize=6.5)

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, top * 2)
    ax.set_xlabel("arithmetic intensity (flop / byte of DRAM traffic)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(spec.get("title", "Roofline"), fontsize=10)
    ax.grid(which="both", alpha=0.25)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(a.out, dpi=140)


if __name__ == "__main__":
    main()
