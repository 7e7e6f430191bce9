#pragma once
// Parser and summary of cuobjdump's SASS listing (`cuobjdump -sass`, nvdisasm-style labels
// accepted): instructions, their classes, loops and the main loop's steady-state path.
// Host code only, tested on embedded samples.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace klab {

struct SassInstr {
  int line = 0;                ///< line number in the function's listing (1-based)
  uint32_t offset = 0;         ///< byte offset printed as /*0110*/
  std::string opcode;          ///< with modifiers: "LDG.E.128"
  std::string text;            ///< the whole instruction, predicate included
  std::string target;          ///< branch target label (nvdisasm style), "" when none
  int64_t target_offset = -1;  ///< branch target address (cuobjdump style), -1 when none
};

struct SassFunction {
  std::string name;  ///< mangled
  std::vector<SassInstr> instrs;
  std::map<std::string, int, std::less<>> labels;  ///< label -> index of the next instruction
  std::string listing;                             ///< the function's lines as printed
};

/// Splits `cuobjdump -sass` output into functions ("Function : name" headers).
std::vector<SassFunction> parse_sass(std::string_view text);

/// The row an opcode is counted in ("LDG.128", "STS.32", "LDSM.x4", "FFMA", "HGMMA", ...), and
/// its group ("global load" (LDG, LDGSTS, TMA), "global store", "shared", "local (spill)",
/// "atomic", "math", "special function" (MUFU), "shuffle", "barrier", "branch", "other").
struct SassClass {
  std::string row;
  std::string group;
};
SassClass classify_sass(std::string_view opcode);

struct SassSummary {
  int instructions = 0;  ///< NOPs excluded
  struct Row {
    std::string name, group;
    int count = 0;
    int first = -1, last = -1;  ///< instruction indices
  };
  std::vector<Row> rows;  ///< counted rows in display order (groups, then width)
  struct Region {
    std::string group;
    int count = 0;
    int first = -1, last = -1;  ///< instruction indices
  };
  std::vector<Region> regions;  ///< where each group sits in the listing
  struct Loop {
    int head = 0, tail = 0;  ///< instruction indices: label target .. backward branch
  };
  std::vector<Loop> loops;
  /// One character per stretch of the listing: G global load, S shared, M math, W global
  /// store, T tma, L local (spill), B barrier, '.' other.
  std::string strip;
  /// One iteration of the main loop (the loop doing the most math on that path), walked from
  /// its head along the fall-through path:
  /// conditional branches not taken, unconditional ones followed, `@!PT` (never executed)
  /// instructions and NOPs skipped. That is what a steady-state iteration issues when no edge
  /// case fires (a static estimate: a loop whose common path is a taken branch is misread).
  struct Path {
    int head = -1, tail = -1;  ///< the loop's instruction indices (SassSummary::Loop)
    int instructions = 0;
    int math = 0, shared = 0, global = 0, barrier = 0;  ///< by classify_sass group
    std::string top_math;  ///< the most frequent math row ("FFMA", "HMMA.16816.F32.BF16", ...)
    int top_math_count = 0;
    int tensor = 0;       ///< tensor-core instructions (HMMA, HGMMA, IMMA, QGMMA, IGMMA)
    int special = 0;      ///< special-function instructions (MUFU: ex2, rcp, ...; the XU pipe)
    int inner_loops = 0;  ///< backward branches inside it: their bodies are counted once
    /// FFMAs on the path, and those with a register bank conflict by the two-bank model: the
    /// sources the reuse cache does not serve (what the previous FFMA marked .reuse, slot by slot),
    /// each distinct register once, are three and all in one bank (register % 2). A static
    /// estimate: the model is what microbenchmarks found on Volta and Turing; NVIDIA documents
    /// no register banks.
    int ffma = 0, ffma_bank_conflicts = 0;
  };
  std::optional<Path> main_loop;
  /// One iteration of the innermost loop whose fall-through path issues tensor-core instructions,
  /// walked as main_loop is: a tensor kernel's k loop. The main loop can be another: a persistent
  /// kernel's tile loop (the k loop inside it, its body counted once) or a split reduction's FADD
  /// loop. Empty when no loop issues them.
  std::optional<Path> tensor_loop;
};

/// Whether a SASS opcode is a tensor-core instruction (HMMA, HGMMA, IMMA, QGMMA, IGMMA).
bool is_tensor_sass(std::string_view opcode);
SassSummary summarize_sass(const SassFunction& f, int strip_width = 64);

}  // namespace klab
