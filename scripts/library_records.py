"""What the scripts that time a library beside klab's rungs share (torch_sdpa.py,
flashinfer_decode.py): klab's problem text, the problems of a klab record file, the cold timing
loop as `klab bench` runs it (L2 flushed before every sample by a read-only pass over twice the
L2, the stream held by a GPU sleep while the host enqueues the call, CUDA events around the call,
warm-up first) and the klab records they write, with the same FLOP and byte counts, ceiling and
baseline as klab's record of the problem, so `klab report` tables them beside klab's rungs.

The flush reads and does not write (klab/harness/l2_flush.cu says why: a write leaves the L2 full
of dirty lines whose write-back overlaps the timed call). Records of runs before 2026-12-06 were
timed after a 256 MiB write and without the hold; each record's `method` says which."""
import datetime
import json
import statistics
import time

# Each record's `method`: how its samples were taken.
METHOD = ("CUDA events around one call, L2 flushed by a read of twice its size, the stream held "
          "by a GPU sleep while the host enqueues")


def parse_problem(text):
    return {k: int(v) for k, v in (kv.split("=") for kv in text.split(","))}


def clock_mhz(torch):
    try:
        return int(torch.cuda.clock_rate())
    except Exception:  # pynvml missing: the record says 0 (unknown)
        return 0


def load_problems(path, family, baseline_id):
    """klab's records of `family` in `path`: a record of each (problem, dtype), one that ran
    where any did (it carries the ceiling), and the baseline's median time at each where it ran."""
    with open(path) as f:
        records = json.load(f)
    if isinstance(records, dict):
        records = records.get("results", [])
    problems, baseline_ms = {}, {}
    for r in records:
        if r.get("family") == family and r.get("flops"):
            key = (r["problem"], r["dtype"])
            if key not in problems or (problems[key].get("status") != "ok"
                                       and r.get("status") == "ok"):
                problems[key] = r
            if r["variant"] == baseline_id and r.get("median_ms"):
                baseline_ms[(r["problem"], r["dtype"])] = r["median_ms"]
    return problems, baseline_ms


class L2Flush:
    """klab's cold-L2 flush in PyTorch: a buffer of twice the L2 (fp32 zeros), read by a sum into
    a one-element sink of its own dtype before every sample (a sum into another dtype would first
    write a converted copy), so the L2 is left holding clean lines only. The L2's size from the
    device's properties (PyTorch 2.5 on); 64 MiB where they lack it."""

    def __init__(self, torch):
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or (64 << 20)
        self.buffer = torch.zeros(max(2 * l2, 1 << 20) // 4, dtype=torch.float32, device="cuda")
        self.sink = torch.zeros((), dtype=torch.float32, device="cuda")
        self.torch = torch

    def __call__(self):
        self.torch.sum(self.buffer, dim=0, out=self.sink)


def time_cold(torch, fn, max_time, flush, hold_cycles=0):
    """Cold samples of fn(): the L2 flushed (flush(): an L2Flush), then (hold_cycles > 0) the
    stream held by a GPU sleep so that the host's time in fn() falls before the timed region,
    events around fn(), the SM clock read before the sample ends."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    samples, clocks, spent = [], [], 0.0
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    while (spent < max_time and len(samples) < 200) or len(samples) < 10:
        flush()
        if hold_cycles > 0:
            torch.cuda._sleep(hold_cycles)
        start.record()
        fn()
        stop.record()
        # The clock read while the sample runs, as klab reads it (after the synchronisation the
        # GPU is idle, and an idle GPU's clock is not the one the kernel ran at).
        clocks.append(clock_mhz(torch))
        stop.synchronize()
        ms = start.elapsed_time(stop)
        samples.append(ms)
        spent += ms / 1e3 + 1e-4
    return samples, clocks


def time_held(torch, fn, max_time, flush, max_mhz):
    """Cold samples (time_cold) with the stream held by a GPU sleep long enough to cover the
    host's time in fn() (measured first: max(200 us, 4x one call's enqueue) at the top clock,
    longer at any lower one), so that the timed region holds the kernels alone. Returns the
    samples, their clocks and the host's microseconds a call."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        fn()
    host_us = (time.perf_counter() - t0) / 5 * 1e6  # enqueue time of one call
    torch.cuda.synchronize()
    hold_cycles = int(max(200.0, 4 * host_us) * (max_mhz or 1980))
    samples, clocks = time_cold(torch, fn, max_time, flush, hold_cycles)
    return samples, clocks, host_us


def record(variant, family, text, dtype, ref, build_type):
    """A record of `variant` at klab's problem `ref` (no timing yet)."""
    return {"variant": variant, "family": family, "problem": text, "dtype": dtype, "misalign": 0,
            "device_kind": "gpu", "baseline_variant": False,
            "timestamp": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "flops": ref["flops"], "bytes": ref["bytes"], "device": ref.get("device", {}),
            "build": {"git_sha": ref.get("build", {}).get("git_sha", ""), "type": build_type}}


def finish(rec, ref, samples, clocks, method, baseline_id=None, baseline_ms=None):
    """The record's statistics from its samples, klab's ceiling of the problem, and the speed-up
    over the baseline's median in the same run (where it ran)."""
    med = statistics.median(samples)
    max_clock = ref.get("device", {}).get("max_sm_clock_mhz", 0)  # 0: unknown, none flagged
    qs = statistics.quantiles(samples, n=10)
    mad = statistics.median(abs(s - med) for s in samples)
    known = [c for c in clocks if c > 0]
    rec.update(status="ok", mode="cold", method=method, launches_per_sample=1,
               discarded_samples=0, samples_ms=samples, median_ms=med, p10_ms=qs[0],
               p90_ms=qs[-1], mean_ms=statistics.fmean(samples), rel_noise=1.4826 * mad / med,
               converged=True, rotation_sets=1,
               sm_clock_mhz=[min(known, default=0), max(known, default=0)],
               throttled_samples=sum(c < max_clock for c in known),
               throttled=any(c < max_clock for c in known),
               tflops=ref["flops"] / (med * 1e-3) / 1e12,
               gbps=ref["bytes"] / (med * 1e-3) / 1e9)
    if "ceiling" in ref:  # the same ceiling as klab's record of the problem
        c = dict(ref["ceiling"])
        value = rec["gbps"] if c.get("unit") == "GB/s" else rec["tflops"]
        c["pct"] = 100.0 * value / c["value"] if c.get("value") else 0.0
        rec["ceiling"] = c
    key = (rec["problem"], rec["dtype"])
    if baseline_ms and key in baseline_ms:  # the baseline through klab, in the same run
        rec["baseline"] = {"id": baseline_id, "speedup": baseline_ms[key] / med}
    return med
