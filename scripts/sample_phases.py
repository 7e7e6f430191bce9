#!/usr/bin/env python3
"""The samples of interleaved benches (`klab bench --interleave --samples FILE`: one a line, round,
place in the round, variant, input set, ms, SM MHz; each problem after a '#' line naming its
variants): for each problem, the medians (us) by the sample's phase (its index in the process mod
4) and by (variant, place in the round), and the clock's median by phase. A phase slower than the
others at the same clock is the timing path's (docs/worklogs/gemm.md, "the two modes at M = 512").
Usage: sample_phases.py FILE..."""
import collections
import statistics as st
import sys


def blocks(path):
    """(name, rows) for each problem in the file; rows before any '#' line under the file's name."""
    name, rows = path.split("/")[-1], []
    for line in open(path):
        if line.startswith("#"):
            if rows:
                yield name, rows
            name, rows = path.split("/")[-1] + ": " + line[1:].strip(), []
        elif line.strip():
            rows.append(tuple(float(x) for x in line.split()))
    if rows:
        yield name, rows


for path in sorted(sys.argv[1:]):
    index = 0  # the sample's index in the process, across its problems
    for name, rows in blocks(path):
        by_phase, clocks, by_place = (collections.defaultdict(list) for _ in range(3))
        for rnd, place, var, s, ms, mhz in rows:
            by_phase[index % 4].append(ms * 1e3)
            clocks[index % 4].append(mhz)
            by_place[(int(var), int(place))].append(ms * 1e3)
            index += 1
        phase = " ".join(f"{st.median(by_phase[p]):.2f}" for p in range(4) if by_phase[p])
        clock = " ".join(f"{st.median(clocks[p]):.0f}" for p in range(4) if clocks[p])
        place = " ".join(f"v{v}@{o}:{st.median(x):.2f}" for (v, o), x in sorted(by_place.items()))
        print(f"{name:36} phase mod 4: {phase} | MHz {clock} | {place}")
