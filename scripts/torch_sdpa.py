#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention (flash and cuDNN back ends) at the problems of a klab
attention record file, timed the way `klab bench` times a cold launch: the L2 flushed by writing
a 256 MiB buffer before every sample, CUDA events around the call alone, warm-up first, the median
of many samples. Writes klab records (same problem text, FLOP and byte counts as klab's record of
that problem), so `klab report` puts them in the table beside klab's rungs of the same run.

Usage: scripts/torch_sdpa.py KLAB_RECORDS.json OUT.json [--max-time SECONDS]
Layout: klab's (B, N, H, D) tensors, handed to PyTorch as (B, H, N, D) views. PyTorch's causal
mask is aligned to the top left, klab's to the bottom right: a problem with Nq != Nkv and the mask
is recorded as skipped. Not a klab rung: no correctness check (the record says so)."""
import argparse
import datetime
import json
import statistics
import sys


def parse_problem(text):
    return {k: int(v) for k, v in (kv.split("=") for kv in text.split(","))}


def clock_mhz(torch):
    try:
        return int(torch.cuda.clock_rate())
    except Exception:  # pynvml missing: the record says 0 (unknown)
        return 0


def time_one(torch, fn, max_time, flush):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    samples, clocks, spent = [], [], 0.0
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    while (spent < max_time and len(samples) < 200) or len(samples) < 10:
        flush.zero_()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        ms = start.elapsed_time(stop)
        samples.append(ms)
        clocks.append(clock_mhz(torch))
        spent += ms / 1e3 + 1e-4
    return samples, clocks


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records")
    ap.add_argument("out")
    ap.add_argument("--max-time", type=float, default=0.3)
    args = ap.parse_args()
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F

    with open(args.records) as f:
        klab_records = json.load(f)
    if isinstance(klab_records, dict):
        klab_records = klab_records.get("results", [])
    problems, cudnn_ms = {}, {}
    for r in klab_records:
        if r.get("family") == "attention" and r.get("flops"):
            problems.setdefault((r["problem"], r["dtype"]), r)
            if r["variant"] == "attention.baseline_cudnn" and r.get("median_ms"):
                cudnn_ms[(r["problem"], r["dtype"])] = r["median_ms"]
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16}
    backends = {"torch_sdpa_flash": SDPBackend.FLASH_ATTENTION,
                "torch_sdpa_cudnn": SDPBackend.CUDNN_ATTENTION}
    out = []
    for (text, dtype), ref in problems.items():
        p = parse_problem(text)
        b, nq, nkv, hq, hkv, d = (p[k] for k in ("b", "nq", "nkv", "hq", "hkv", "d"))
        causal = bool(p.get("causal", 0))
        for name, backend in backends.items():
            rec = {"variant": "attention." + name, "family": "attention", "problem": text,
                   "dtype": dtype, "misalign": 0, "device_kind": "gpu", "baseline_variant": False,
                   "timestamp": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   "flops": ref["flops"], "bytes": ref["bytes"],
                   "device": ref.get("device", {}),
                   "build": {"git_sha": ref.get("build", {}).get("git_sha", ""),
                             "type": "torch " + torch.__version__ + " (no klab check)"}}
            if causal and nq != nkv:
                rec.update(status="skipped", reason="PyTorch's causal mask is top-left aligned")
                out.append(rec)
                continue
            g = torch.Generator(device="cuda").manual_seed(1)
            q = torch.randn(b, nq, hq, d, device="cuda", dtype=dtypes[dtype], generator=g)
            k = torch.randn(b, nkv, hkv, d, device="cuda", dtype=dtypes[dtype], generator=g)
            v = torch.randn(b, nkv, hkv, d, device="cuda", dtype=dtypes[dtype], generator=g)
            qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))

            def call():
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal,
                                                          enable_gqa=hq != hkv)
            try:
                samples, clocks = time_one(torch, call, args.max_time, flush)
            except Exception as e:  # a back end that refuses the problem
                rec.update(status="skipped", reason=f"{name}: " + str(e).splitlines()[0][:160])
                out.append(rec)
                print(f"{name:18} {text} {dtype}: skipped ({rec['reason']})", flush=True)
                continue
            finally:
                del q, k, v
            med = statistics.median(samples)
            max_clock = ref.get("device", {}).get("max_sm_clock_mhz", 0)  # 0: unknown, none flagged
            qs = statistics.quantiles(samples, n=10)
            mad = statistics.median(abs(s - med) for s in samples)
            known = [c for c in clocks if c > 0]
            rec.update(status="ok", mode="cold",
                       method="CUDA events around one call, L2 flushed by a 256 MiB write (scripts/torch_sdpa.py)",
                       launches_per_sample=1, discarded_samples=0, samples_ms=samples,
                       median_ms=med, p10_ms=qs[0], p90_ms=qs[-1], mean_ms=statistics.fmean(samples),
                       rel_noise=1.4826 * mad / med, converged=True, rotation_sets=1,
                       sm_clock_mhz=[min(known, default=0), max(known, default=0)],
                       throttled_samples=sum(c < max_clock for c in known),
                       throttled=any(c < max_clock for c in known),
                       tflops=ref["flops"] / (med * 1e-3) / 1e12,
                       gbps=ref["bytes"] / (med * 1e-3) / 1e9)
            if "ceiling" in ref:  # the same ceiling as klab's record of the problem
                c = dict(ref["ceiling"])
                c["pct"] = 100.0 * rec["tflops"] / c["value"] if c.get("value") else 0.0
                rec["ceiling"] = c
            if (text, dtype) in cudnn_ms:  # cuDNN through klab, in the same run
                rec["baseline"] = {"id": "attention.baseline_cudnn",
                                   "speedup": cudnn_ms[(text, dtype)] / med}
            out.append(rec)
            print(f"{name:18} {text} {dtype}: {med:.4f} ms, {rec['tflops']:.1f} TFLOP/s", flush=True)
            with open(args.out, "w") as f:
                json.dump(out, f, indent=1)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
