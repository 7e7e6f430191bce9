#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention (flash and cuDNN back ends) at the problems of a klab
attention record file, timed the way `klab bench` times a cold launch: the L2 flushed before every
sample by a read-only pass over twice its size, the stream held by a GPU sleep while the host
enqueues the call, CUDA events around the call alone, warm-up first, the median of many samples
(library_records.py). Writes klab records (same problem text, FLOP and byte counts as klab's record of
that problem), so `klab report` puts them in the table beside klab's rungs of the same run.

Usage: scripts/torch_sdpa.py KLAB_RECORDS.json OUT.json [--max-time SECONDS]
Layout: klab's (B, N, H, D) tensors, handed to PyTorch as (B, H, N, D) views. PyTorch's causal
mask is aligned to the top left, klab's to the bottom right: a problem with Nq != Nkv and the mask
is recorded as skipped. Not a klab rung: no correctness check (the record says so)."""
import argparse
import json
import sys

from library_records import L2Flush, METHOD, finish, load_problems, parse_problem, record, time_held


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records")
    ap.add_argument("out")
    ap.add_argument("--max-time", type=float, default=0.3)
    args = ap.parse_args()
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F

    problems, cudnn_ms = load_problems(args.records, "attention", "attention.baseline_cudnn")
    flush = L2Flush(torch)
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16}
    backends = {"torch_sdpa_flash": SDPBackend.FLASH_ATTENTION,
                "torch_sdpa_cudnn": SDPBackend.CUDNN_ATTENTION}
    out = []
    for (text, dtype), ref in problems.items():
        p = parse_problem(text)
        b, nq, nkv, hq, hkv, d = (p[k] for k in ("b", "nq", "nkv", "hq", "hkv", "d"))
        causal = bool(p.get("causal", 0))
        for name, backend in backends.items():
            rec = record("attention." + name, "attention", text, dtype, ref,
                         "torch " + torch.__version__ + " (no klab check)")
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
                max_mhz = ref.get("device", {}).get("max_sm_clock_mhz", 0)
                samples, clocks, host_us = time_held(torch, call, args.max_time, flush, max_mhz)
            except Exception as e:  # a back end that refuses the problem
                rec.update(status="skipped", reason=f"{name}: " + str(e).splitlines()[0][:160])
                out.append(rec)
                print(f"{name:18} {text} {dtype}: skipped ({rec['reason']})", flush=True)
                continue
            finally:
                del q, k, v
            med = finish(rec, ref, samples, clocks,
                         f"{METHOD} (scripts/torch_sdpa.py; host enqueue {host_us:.0f} us)",
                         "attention.baseline_cudnn", cudnn_ms)
            out.append(rec)
            print(f"{name:18} {text} {dtype}: {med:.4f} ms, {rec['tflops']:.1f} TFLOP/s", flush=True)
            with open(args.out, "w") as f:
                json.dump(out, f, indent=1)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
