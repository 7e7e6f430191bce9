#!/usr/bin/env python3
"""FlashInfer's paged-KV batch decode (BatchDecodeWithPagedKVCacheWrapper) at the problems of a
klab decode_attention record file, timed the way `klab bench` times a cold launch: the L2 flushed
before every sample by a read-only pass over twice its size, the stream then held by a GPU sleep
so that the Python of FlashInfer's run() is enqueued before the timed region opens, CUDA events
around the run() call alone, warm-up first, the median of many samples (library_records.py). Writes klab records (same problem
text, FLOP and byte counts as klab's record of that problem), so `klab report` puts them in the
table beside klab's rungs of the same run.

Usage: scripts/flashinfer_decode.py KLAB_RECORDS.json OUT.json [--max-time SECONDS]
           [--variants flashinfer_paged,flashinfer_paged_cuda_cores] [--seed N]
Variants: flashinfer_paged = use_tensor_cores=True (FlashInfer's FA2 prefill kernel over the
paged cache; FlashInfer recommends it for large GQA groups, e.g. 32/8 = 4), and
flashinfer_paged_cuda_cores = use_tensor_cores=False (its CUDA-core decode kernel, one query
token per sequence). Both kv_layout="HND": klab's pool (pages, Hkv, P, D) as it is.
Inputs: the lengths of klab's context_lengths() (a function of the shape alone, so the FLOP and
byte counts are klab's exactly), placed in the slots and their pages drawn from the pool
(need + need/8 + 1 pages, as klab's pool_pages()) in an order drawn from --seed; random data.
plan() runs once per problem, outside the timed region (a serving engine reuses it across
layers); the timed call writes o and lse into preallocated tensors, as klab's rungs do.
e4m3: FlashInfer takes one k_scale and one v_scale per call (klab: one per KV head); k_scale is
folded into the softmax scale, v_scale applied by FlashInfer's own `out *= v_scale` (timed).
qlen > 1 (speculative verify): the tensor-core path's q_len_per_req, causal, bottom-right as
klab's; FlashInfer refuses it where a sequence is shorter than qlen (recorded as skipped).
Not a klab rung: no correctness check (the record says so).
Needs FlashInfer 0.6.18 (pip install flashinfer-python==0.6.18.post1) beside PyTorch; its JIT
builds each module once (FLASHINFER_CUDA_ARCH_LIST=9.0a limits it to Hopper), and modules built
ahead of time in flashinfer/data/aot load without nvcc."""
import argparse
import json
import math
import random
import sys

from library_records import L2Flush, METHOD, finish, load_problems, parse_problem, record, time_held

VARIANTS = {  # variant suffix -> use_tensor_cores
    "flashinfer_paged": True,
    "flashinfer_paged_cuda_cores": False,
}
BASELINE = "decode_attention.baseline_cudnn_paged"


def context_lengths(s):
    """klab's context_lengths() (kernels/decode_attention/family.cpp): b - empty lengths spread
    geometrically from min_len to len, both included, then `empty` zeros, ascending."""
    n = s["b"] - s["empty"]
    lo, hi = float(s["min_len"]), float(s["len"])
    out = []
    for i in range(n):
        if n == 1 or i == n - 1:
            out.append(s["len"])
            continue
        f = i / (n - 1)
        v = math.floor(lo * math.pow(hi / lo, f) + 0.5)  # llround of a positive value
        out.append(min(max(v, s["min_len"]), s["len"]))
    out += [0] * s["empty"]
    return sorted(out)


def build_inputs(torch, s, kv_dtype, seed):
    """Lengths in a seeded slot order, each sequence's pages from a seeded permutation of the
    pool (no page shared), HND caches of random data, q, o and lse."""
    rng = random.Random(seed)
    lens = context_lengths(s)
    rng.shuffle(lens)
    page = s["page"]
    used = [(l + page - 1) // page for l in lens]
    need = sum(used)
    pool = need + need // 8 + 1
    perm = list(range(pool))
    rng.shuffle(perm)
    indptr, indices, last = [0], [], []
    for l, u in zip(lens, used):
        indices += perm[len(indices):len(indices) + u]
        indptr.append(len(indices))
        last.append(l - (u - 1) * page if u else 0)
    dev = "cuda"
    i32 = dict(dtype=torch.int32, device=dev)
    g = torch.Generator(device=dev).manual_seed(seed)
    shape = (pool, s["hkv"], page, s["d"])
    caches = []
    for _ in range(2):
        t = torch.randn(shape, device=dev, dtype=torch.bfloat16, generator=g)
        caches.append(t if kv_dtype == torch.bfloat16 else t.to(kv_dtype))
        del t
    rows = s["b"] * s["qlen"]
    q = torch.randn(rows, s["hq"], s["d"], device=dev, dtype=torch.bfloat16, generator=g)
    return dict(lens=lens, indptr=torch.tensor(indptr, **i32), indices=torch.tensor(indices, **i32),
                last=torch.tensor(last, **i32), k=caches[0], v=caches[1], q=q,
                o=torch.empty_like(q),
                lse=torch.empty(rows, s["hq"], device=dev, dtype=torch.float32))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records")
    ap.add_argument("out")
    ap.add_argument("--max-time", type=float, default=0.3)
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help="comma-separated among: " + ", ".join(VARIANTS))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in VARIANTS:
            ap.error(f"unknown variant {v}")
    import torch
    import flashinfer

    fi_version = getattr(flashinfer, "__version__", "?")
    problems, baseline_ms = load_problems(args.records, "decode_attention", BASELINE)
    flush = L2Flush(torch)
    workspace = torch.zeros(512 << 20, dtype=torch.uint8, device="cuda")
    kv_dtypes = {"bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn}
    out = []

    def save():
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)

    for (text, dtype), ref in problems.items():
        s = parse_problem(text)
        inputs = None
        for name in variants:
            tc = VARIANTS[name]
            rec = record("decode_attention." + name, "decode_attention", text, dtype, ref,
                         f"flashinfer {fi_version}, torch {torch.__version__} (no klab check)")
            rec.update({
                "note": ("not a klab rung, no correctness check: FlashInfer's "
                         "BatchDecodeWithPagedKVCacheWrapper, kv_layout=HND, use_tensor_cores="
                         f"{tc}, plan() once outside the timed region, timed run() writes o and "
                         "lse"),
                "inputs": ("lengths: klab's context_lengths() of the shape; slot order and pool "
                           "pages (need + need/8 + 1) drawn with Python's random, seed "
                           f"{args.seed}; random data")})

            def skip(reason):
                rec.update(status="skipped", reason=reason)
                out.append(rec)
                print(f"{name:28} {text} {dtype}: skipped ({reason})", flush=True)

            if dtype not in kv_dtypes:
                skip(f"KV dtype {dtype} not mapped to FlashInfer")
                continue
            if s["qlen"] > 1 and not tc:
                skip("FlashInfer's CUDA-core decode kernel takes one query token per sequence")
                continue
            if dtype == "e4m3":
                rec["note"] += "; e4m3: one k_scale and v_scale per call (klab: per KV head)"
            try:
                if inputs is None:
                    inputs = build_inputs(torch, s, kv_dtypes[dtype], args.seed)
                x = inputs
                wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
                    workspace, kv_layout="HND", use_tensor_cores=tc)
                plan_kw = dict(q_data_type=torch.bfloat16, kv_data_type=kv_dtypes[dtype],
                               sm_scale=1.0 / math.sqrt(s["d"]))
                if s["qlen"] > 1:
                    plan_kw["q_len_per_req"] = s["qlen"]
                wrapper.plan(x["indptr"], x["indices"], x["last"], s["hq"], s["hkv"], s["d"],
                             s["page"], **plan_kw)
                torch.cuda.synchronize()
                run_kw = dict(out=x["o"], lse=x["lse"], return_lse=True)
                if dtype == "e4m3":
                    run_kw.update(k_scale=0.75, v_scale=1.25)  # 2^u, u in [-2, 1], as klab's

                def call():
                    return wrapper.run(x["q"], (x["k"], x["v"]), **run_kw)

                max_mhz = ref.get("device", {}).get("max_sm_clock_mhz", 0)
                samples, clocks, host_us = time_held(torch, call, args.max_time, flush, max_mhz)
            except Exception as e:  # a problem FlashInfer refuses, or a JIT build that failed
                msg = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
                skip(f"{name}: {type(e).__name__}: {msg}")
                continue
            backend = (f"{getattr(wrapper, '_backend', '?')} prefill kernel, tensor cores" if tc
                       else "decode kernel, CUDA cores")
            rec["note"] += f"; backend {backend}"
            med = finish(rec, ref, samples, clocks,
                         (f"{METHOD} (scripts/flashinfer_decode.py, one run() call; host "
                          f"enqueue {host_us:.0f} us)"), BASELINE, baseline_ms)
            out.append(rec)
            print(f"{name:28} {text} {dtype}: {med:.4f} ms, {rec['gbps']:.0f} GB/s ({backend})",
                  flush=True)
            save()
        inputs = x = call = wrapper = None  # free this problem's cache before the next one's
        torch.cuda.empty_cache()
    save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
