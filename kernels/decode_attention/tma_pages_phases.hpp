#pragma once
// The phases a traced tma_pages_kernel marks (`klab timeline`), shared by its merges
// (tma_pages_kernel.cuh's cluster_merge, cluster_push_merge.cuh).
#include <string>
#include <vector>

namespace klab::decode_attention {

/// The phases a traced tma_pages_kernel marks (kTrace: `klab timeline`), in order: the CTA's
/// first instruction; the sequence's length arrived at the marking thread (before the barriers'
/// initialisation); its inputs loaded (length, Q, the first stage's table entries) and its
/// barriers initialised; the producer at its first stage's copies (before their instructions,
/// which use its table entries, loaded beside the length); the producer's first table entry
/// arrived (its lane 0 waits for it); the first stage's barrier armed (after the warp barrier);
/// lane 0's first copy issued; its first stage issued (after the copies' instructions);
/// math warp 0's first stage arrived; its last stage done; the warps' partials in shared memory;
/// (v13, v16) the rows' weights over the warps computed and shared (a barrier), then the
/// cluster's arrivals waited for (the peers' receive barriers initialised); the CTA's rows merged
/// over its warps (v13: and the marking thread's stores into their owners issued); its split's peers met
/// (the cluster barrier; v13: an owner's rows received; on the counter path the arrival's
/// atomic); the splits merged (the cluster merge, or the counter path's last CTA); the CTA's end.
/// kEarlyIssue (v23): the producer's phases, first_ready to first_issue, come before `inputs`
/// (its first stages are issued before the CTA's barrier).
inline const std::vector<std::string>& tma_pages_phases() {
  static const std::vector<std::string> names{
      "start",       "length",      "inputs",     "first_ready", "first_entry", "armed",
      "first_copy",  "first_issue", "first_full", "last_done",   "partials",    "weights",
      "peers_ready", "rows",        "peers_met",  "merged",      "end"};
  return names;
}
enum TmaPagesPhase : int {
  kPhStart,
  kPhLength,
  kPhInputs,
  kPhFirstReady,
  kPhFirstEntry,
  kPhArmed,
  kPhFirstCopy,
  kPhFirstIssue,
  kPhFirstFull,
  kPhLastDone,
  kPhPartials,
  kPhWeights,
  kPhPeersReady,
  kPhRows,
  kPhPeersMet,
  kPhMerged,
  kPhEnd,
  kPhCount
};

}  // namespace klab::decode_attention
