#!/usr/bin/env python3
"""Each dump's medians (us) by the sample's phase: its index in the process mod 4, and by the
(variant, place in the round) pair; the clock's median per phase. Usage: phases.py procs/*.rounds"""
import collections
import statistics as st
import sys

for f in sorted(sys.argv[1:]):
    rows = [tuple(float(x) for x in line.split()) for line in open(f)]
    by_phase, clocks, by_place = (collections.defaultdict(list) for _ in range(3))
    for i, (rnd, place, var, s, ms, mhz) in enumerate(rows):
        by_phase[i % 4].append(ms * 1e3)
        clocks[i % 4].append(mhz)
        by_place[(int(var), int(place))].append(ms * 1e3)
    phase = " ".join(f"{st.median(by_phase[p]):.2f}" for p in range(4))
    clock = " ".join(f"{st.median(clocks[p]):.0f}" for p in range(4))
    place = " ".join(f"v{v}@{o}:{st.median(by_place[(v, o)]):.2f}" for v in (0, 1) for o in (0, 1))
    print(f"{f.split('/')[-1]:36} phase mod 4: {phase} | MHz {clock} | {place}")
