#!/usr/bin/env python3
"""A markdown table of metrics read from Nsight Compute's text output (`ncu` without --csv, or
`ncu -i REP --page details`, saved as a .details.txt file): one row a file, one column a metric
or several (joined " / " in one cell). Metrics are named as the file names them: a section's row
("DRAM Throughput", "Duration") or a --metrics one ("sm__cycles_active.max"). Values are printed
as in the file without their thousands separators, with their unit where it is a percentage or a
time; cycle counts above 10000 are printed in thousands (108.4k).

Usage: ncu_details_table.py LABEL=FILE... --column HEADER=METRIC[+METRIC...]...
                            [--label-headers kernel|shape] [--kernel REGEX]
                            [--readme FILE --section NAME]

LABEL may hold "|" to fill several text columns ("v15 (e4m3)|(16, 8k)"); --label-headers names
them. A file holding several kernels' results is read at the first kernel whose name matches
--kernel (default: the first kernel).
"""
import argparse
import re
import sys

from klab_docs import replace_section

PROG = "ncu_details_table"
SUFFIX_UNITS = {"%": "%", "ns": " ns", "us": " us", "usecond": " us", "ms": " ms",
                "msecond": " ms", "s": " s", "second": " s"}


def kernels(path):
    """[(kernel line, {metric name: (unit, value)})] in the file's order. A kernel's line is the
    one indented by two spaces after the `[pid] process` line; its metric rows are those of the
    tables under it, whose columns the dashed rule above their header gives."""
    out, cols = [], None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if re.match(r"^  \S", line) and not line.startswith("  ---"):
            out.append((line.strip(), {}))
            cols = None
            continue
        stripped = line.strip()
        if stripped and set(stripped) <= {"-", " "} and " " in stripped:
            cols = [(m.start(), m.end()) for m in re.finditer(r"-+", line)]
            continue
        if not stripped:
            cols = None
            continue
        if cols is None or len(cols) != 3 or not out:
            continue
        name = line[cols[0][0]:cols[0][1]].strip()
        unit = line[cols[1][0]:cols[1][1]].strip()
        value = line[cols[2][0]:].strip()
        if name and name != "Metric Name" and value:
            out[-1][1].setdefault(name, (unit, value))
    return out


def metrics_of(path, kernel_re):
    found = kernels(path)
    if not found:
        sys.exit(f"{PROG}: {path} holds no kernel's results")
    for name, metrics in found:
        if kernel_re is None or re.search(kernel_re, name):
            if kernel_re is None and len(found) > 1:
                print(f"{PROG}: {path} holds {len(found)} kernels' results; reading the first "
                      "(--kernel picks another)", file=sys.stderr)
            return metrics
    sys.exit(f"{PROG}: no kernel in {path} matches {kernel_re!r}")


def cell(unit, value):
    number = value.replace(",", "")
    try:
        x = float(number)
    except ValueError:
        return value  # "(!) n/a", "no data", a policy's name
    if unit == "cycle" and x > 10000:
        return f"{x / 1000:.1f}k"
    return number + SUFFIX_UNITS.get(unit, "")


def table(rows, columns, label_headers, kernel_re):
    n_labels = max(len(label.split("|")) for label, _ in rows)
    heads = label_headers.split("|") if label_headers else ["kernel"]
    heads += [""] * (n_labels - len(heads))
    if len(heads) > n_labels:
        n_labels = len(heads)
    out = ["| " + " | ".join(heads + [h for h, _ in columns]) + " |",
           "|" + "---|" * n_labels + "---:|" * len(columns)]
    for label, path in rows:
        metrics = metrics_of(path, kernel_re)
        texts = label.split("|")
        texts += [""] * (n_labels - len(texts))
        cells = []
        for header, names in columns:
            parts = []
            for m in names:
                if m not in metrics:
                    sys.exit(f"{PROG}: {path} has no metric {m!r} (column {header!r})")
                parts.append(cell(*metrics[m]))
            cells.append(" / ".join(parts))
        out.append("| " + " | ".join(t.strip() for t in texts) + " | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def split_spec(spec, what):
    left, sep, right = spec.rpartition("=")
    if not sep or not left.strip() or not right.strip():
        sys.exit(f"{PROG}: {what} {spec!r} is not of the form A=B")
    return left.strip(), right.strip()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("rows", nargs="+", metavar="LABEL=FILE")
    p.add_argument("--column", action="append", required=True, metavar="HEADER=METRIC[+METRIC]")
    p.add_argument("--label-headers", default="kernel")
    p.add_argument("--kernel", help="regex: read the first kernel whose name matches")
    p.add_argument("--readme")
    p.add_argument("--section")
    a = p.parse_args()
    if bool(a.readme) != bool(a.section):
        sys.exit(f"{PROG}: --readme and --section go together")
    rows = [split_spec(r, "row") for r in a.rows]
    columns = []
    for c in a.column:
        header, names = split_spec(c, "column")
        columns.append((header, [m.strip() for m in names.split("+") if m.strip()]))
    files = ", ".join(path for _, path in rows)
    body = (table(rows, columns, a.label_headers, a.kernel)
            + f"\nGenerated by `scripts/ncu_details_table.py` from {files}.\n")
    if a.readme:
        replace_section(a.readme, a.section, body, prog=PROG)
    else:
        sys.stdout.write(body)


if __name__ == "__main__":
    main()
