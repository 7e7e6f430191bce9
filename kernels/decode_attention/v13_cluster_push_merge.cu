// v13 cluster_push_merge: v11 with the splits' rows pushed to their owners instead of pulled.
// `klab timeline` of v11 at (1, 4k) (2026-12-04_0e94719_decode_timeline; medians from the first
// CTA's start, cold): inputs 0.74 us, first stage issued 1.57, first stage arrived 2.88, last
// stage done 5.95, partials 6.45, rows merged over the warps 7.94, peers met 8.71, owners' merge
// done by 11.1, end 11.3. The stream is ~3 us of ~11.3; the merge after it ~4.8; the launch
// before the first copy ~1.6, half of it between the inputs and the first issue (the tensor
// maps' fetch: the producer prefetches them just before its first copy). The hot run
// (2026-12-04_b4db8cd_decode_timeline_hot) shortens the stream's arrival but not the merge: its
// time is instructions and round trips, not code or data from DRAM.
// What changes (cluster_push_merge.cuh): the warps' rows merged a float4 a thread with each row's
// weights computed once (v11: one element a thread, four exponentials and a division each); each
// normalised float4 stored into its row's owner by st.async, completing on the owner's mbarrier
// (which expects the bytes from the start): no cluster barrier between the rows and the merge (the
// one before the stores is split: arrived at the kernel's start, long met when they go), no
// ld.shared::cluster round trips (the owner merges from its own shared memory), no second
// barrier, and a CTA that owns no row exits after its stores. The receive region sits beside the
// stages (a peer may push while the owner still streams): 16 rows of D + 1 floats, 8.3 KB at
// D = 128, two CTAs an SM still. The tensor maps are prefetched at the kernel's first instruction.
// Elsewhere (plan_v13 = plan_v11 where its rows fit the region): v10's path and counter merge.
// Expected bottleneck: the launch and the first stage's round trip; the stream.
// Prediction (written before it ran), Qwen3-8B heads, bf16, pages of 16, against v11 and cuDNN's
// paged SDPA in the same run: `klab timeline` at (1, 4k): first issue ~0.9 us (v11 1.57), end
// 7.5-8.5 us (v11 11.3); `klab bench` at (1, 4k) 11.5-12.5 us, 1.30-1.45x cuDNN (v11 1.08x); at
// (1, 8k) 1.15-1.3x; where it does not cluster, v10's kernel: within noise of v11.
// Measured (2026-12-04_adae0fb_decode_v13, _2b7f8cf_decode_v13_timeline, _52d79e9_decode_v13_final;
// docs/worklogs/decode.md): (1, 4k) 12.3-12.5 us, 1.29x cuDNN paired (v11 1.06-1.08x), the last
// CTA's end ~8.9 us (v11 ~11.4); (1, 1k) 1.29x; (1, 8k) 1.13-1.16x; at the top of the predicted
// time and just under its ratios. The prefetched tensor maps did not bring the first copy
// forward (it waits on the length and the first page index). Clustering chunks of up to 1024
// keys (v11: 512) adds (1, 16k): 1.06-1.10x (v10 and v11 1.00x); 2048 keys ((1, 32k)) lost in the
// stream what the merge saved (2026-12-04_54fa11d_decode_v13_long_chunks).
// Longer chunks then clustered where the cluster plan had the counter plan's splits (two or more:
// (16, 8k)'s two of 4096 keys, 128 clusters of two), so only the merge differs: there v10's
// counter merge ends ~8 us after the median CTA's last stage, under DRAM's load (0e94719's
// timeline). Prediction (written before it ran): (16, 8k) from 0.98x cuDNN to 1.01-1.04x paired.
// Measured (2026-12-04_6459d2f_decode_v13_pairs, _c7b13f5_decode_v13_pairs_final): (16, 8k)
// 1.002-1.011x (v10 0.973-0.989x), the last CTA's end 127.2 us against the counter path's 130.8;
// (16, 4k) 1.011-1.015x; but clusters of four and eight long splits ((8, 8k), (4, 16k)) lost 13%,
// so long chunks cluster in pairs only (plan_v13, kPushLongSplits).
// Requirements: v11's; it clusters where v11 does, chunks of up to 1024 keys, and longer ones
// where both plans split every sequence in two, where a row group's rows fit 16 receive slots a
// CTA (ceil(rows / splits) x splits <= 16).
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v13_cluster_push_merge() {
  return cluster_merge_variant<TmaRung{.elem = 2, .push = true}>(
      "v13_cluster_push_merge",
      "v11 with each CTA's rows stored into their owner's shared memory (st.async on the owner's "
      "mbarrier): no barrier after the stores and no remote loads in the merge; tensor maps "
      "prefetched "
      "first");
}

}  // namespace klab::decode_attention
