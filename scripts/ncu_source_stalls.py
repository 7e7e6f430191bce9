#!/usr/bin/env python3
"""Where a kernel's warps stall, range by range of its SASS: a markdown table from Nsight Compute's
source page (`ncu -i REP --page source --csv --print-source sass`, plain or .xz), the PC samples
of every profiled launch summed per instruction, then per range of --span consecutive
instructions: the samples (issuing ones included), the share stalled for want of an instruction
(no_inst: the code not yet fetched), the three largest stall reasons (issuing, "selected", is not
one) and the range's most frequent opcodes; then the hottest loop's body: the instructions
executed most often (each the same number of times) by opcode. One kernel a report.

Usage: ncu_source_stalls.py SOURCE.csv[.xz] [--span 128] [--min-share 0.01]
                            [--readme FILE --section NAME]
"""
import argparse
import collections
import csv
import io
import lzma
import sys


def read_rows(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt", newline="") as f:
        return list(csv.reader(f))


def per_instruction(rows):
    """(kernel name, [(address, sass, Counter of stall reason -> samples, times executed)]) summed
    over launches."""
    header, kernel, by_addr = None, None, collections.OrderedDict()
    for r in rows:
        if not r:
            continue
        if r[0] == "Kernel Name":
            if kernel is not None and r[1] != kernel:
                sys.exit("ncu_source_stalls: the report holds more than one kernel "
                         f"({kernel[:60]}, {r[1][:60]}): profile one (ncu -k)")
            kernel = r[1]
            continue
        if r[0] == "Address":
            header = {h: i for i, h in enumerate(r)}
            continue
        if header is None or len(r) < len(header):
            continue
        entry = by_addr.setdefault(r[0], [r[1], collections.Counter(), 0.0])
        for h, i in header.items():
            if h.startswith("stall_") and "Not Issued" not in h and r[i]:
                entry[1][h[len("stall_"):]] += float(r[i].replace(",", ""))
        executed = header.get("Instructions Executed")
        if executed is not None and r[executed]:
            entry[2] += float(r[executed].replace(",", ""))
    return kernel, [(a, s, c, e) for a, (s, c, e) in by_addr.items()]


def opcode(sass):
    words = sass.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def table(path, span, min_share):
    kernel, instrs = per_instruction(read_rows(path))
    total = sum(sum(c.values()) for _, _, c, _ in instrs)
    name = (kernel or "?").split(">(")[0] + (">" if ">(" in (kernel or "") else "")
    out = [f"`{name}`: {len(instrs)} instructions, "
           f"{int(total)} samples (ranges under {min_share:.1%} of them left out)\n",
           "| instructions | samples | share | no_inst | largest stalls | opcodes |",
           "|---|---:|---:|---:|---|---|"]
    for b in range(0, len(instrs), span):
        seg = instrs[b:b + span]
        c = collections.Counter()
        for _, _, s, _ in seg:
            c.update(s)
        n = sum(c.values())
        if total == 0 or n == 0 or n / total < min_share:
            continue
        stalls = collections.Counter({k: v for k, v in c.items() if k != "selected"})
        top = ", ".join(f"{k} {v / n:.0%}" for k, v in stalls.most_common(3))
        ops = collections.Counter(opcode(s) for _, s, _, _ in seg)
        common = " ".join(o for o, _ in ops.most_common(4))
        out.append(f"| {b}-{b + len(seg) - 1} | {int(n)} | {n / total:.1%} | "
                   f"{c['no_inst'] / n:.0%} | {top} | {common} |")
    hottest = max((e for _, _, _, e in instrs), default=0.0)
    if hottest > 0:
        body = [opcode(s).split(".")[0] for _, s, _, e in instrs if e == hottest]
        mix = ", ".join(f"{o} {k}" for o, k in collections.Counter(body).most_common(12))
        out.append(f"\nThe hottest loop's body: {len(body)} instructions executed {int(hottest)} "
                   f"times each ({mix}).")
    return "\n".join(out) + "\n"


def replace_section(readme, section, body):
    text = open(readme).read()
    begin, end = f"<!-- klab:{section}:begin -->", f"<!-- klab:{section}:end -->"
    if begin not in text or end not in text:
        sys.exit(f"ncu_source_stalls: {readme} has no {begin} ... {end} section")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    open(readme, "w").write(f"{head}{begin}\n{body}\n{end}{tail}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("source")
    p.add_argument("--span", type=int, default=128)
    p.add_argument("--min-share", type=float, default=0.01)
    p.add_argument("--readme")
    p.add_argument("--section")
    a = p.parse_args()
    if a.span < 1:
        sys.exit("ncu_source_stalls: --span must be at least 1")
    if bool(a.readme) != bool(a.section):
        sys.exit("ncu_source_stalls: --readme and --section go together")
    body = table(a.source, a.span, a.min_share) + (
        f"\nGenerated by `scripts/ncu_source_stalls.py` from {a.source}: PC samples of every "
        "profiled launch, summed.\n")
    if a.readme:
        replace_section(a.readme, a.section, body)
    else:
        sys.stdout.write(body)


if __name__ == "__main__":
    main()
