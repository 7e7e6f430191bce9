#include "klab/harness/profiler/sass.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <regex>

#include "klab/harness/profiler/text.hpp"

namespace klab {

using profiler_text::is_hex;
using profiler_text::split_lines;
using profiler_text::starts_with;
using profiler_text::trim;

std::vector<SassFunction> parse_sass(std::string_view text) {
  std::vector<SassFunction> out;
  SassFunction* f = nullptr;
  int line_no = 0;
  for (std::string_view line : split_lines(text)) {
    const std::string_view t = trim(line);
    if (starts_with(t, "Function : ")) {
      out.emplace_back();
      f = &out.back();
      f->name = std::string(trim(t.substr(11)));
      line_no = 0;
      f->listing.append(line).append("\n");
      continue;
    }
    if (!f) continue;
    if (starts_with(t, "Fatbin ") || starts_with(t, "code for ") || starts_with(t, "=====")) {
      f = nullptr;  // the next module's header: this function's listing is over
      continue;
    }
    ++line_no;
    f->listing.append(line).append("\n");
    if (t.size() > 1 && t.front() == '.' && t.back() == ':' &&
        t.find(' ') == std::string_view::npos) {
      f->labels[std::string(t.substr(0, t.size() - 1))] = static_cast<int>(f->instrs.size());
      continue;
    }
    // "/*0110*/   @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;   /* 0x... */"
    if (!starts_with(t, "/*")) continue;
    size_t i = 2;
    while (i < t.size() && is_hex(t[i])) ++i;
    if (i == 2 || t.substr(i, 2) != "*/") continue;  // an encoding-only line: "/* 0x000f... */"
    SassInstr in;
    in.line = line_no;
    std::from_chars(t.data() + 2, t.data() + i, in.offset, 16);
    std::string_view body = t.substr(i + 2);
    if (const size_t c = body.find("/*"); c != std::string_view::npos) body = body.substr(0, c);
    body = trim(body);
    if (!body.empty() && body.back() == ';') body = trim(body.substr(0, body.size() - 1));
    in.text = std::string(body);
    std::string_view op = body;
    if (!op.empty() && op.front() == '@') op = trim(op.substr(std::min(op.size(), op.find(' '))));
    in.opcode = std::string(op.substr(0, op.find(' ')));
    if (const size_t b = body.find("`("); b != std::string_view::npos) {
      const size_t e = body.find(')', b);
      if (e != std::string_view::npos) in.target = std::string(body.substr(b + 2, e - b - 2));
    } else if (in.opcode.starts_with("BRA")) {  // "@!P1 BRA P2, 0x4f0": the last 0x... operand
      const size_t h = body.rfind("0x");
      if (h != std::string_view::npos) {
        uint64_t a = 0;
        const auto [p, ec] = std::from_chars(body.data() + h + 2, body.data() + body.size(), a, 16);
        if (ec == std::errc() && p != body.data() + h + 2)
          in.target_offset = static_cast<int64_t>(a);
      }
    }
    if (!in.opcode.empty()) f->instrs.push_back(std::move(in));
  }
  return out;
}

SassClass classify_sass(std::string_view opcode) {
  std::vector<std::string_view> tok;
  for (size_t s = 0; s <= opcode.size();) {
    size_t e = opcode.find('.', s);
    if (e == std::string_view::npos) e = opcode.size();
    tok.push_back(opcode.substr(s, e - s));
    s = e + 1;
  }
  const std::string_view base = tok.front();
  auto width = [&] {
    for (size_t i = 1; i < tok.size(); ++i) {
      if (tok[i] == "128") return "128";
      if (tok[i] == "64") return "64";
      if (tok[i] == "U16" || tok[i] == "S16") return "16";
      if (tok[i] == "U8" || tok[i] == "S8") return "8";
    }
    return "32";
  };
  auto with_width = [&](std::string_view g) {
    return SassClass{std::string(base) + "." + width(), std::string(g)};
  };
  if (base == "LDG") return with_width("global load");
  if (base == "LDGSTS") return with_width("global load");  // cp.async: global -> shared
  if (base == "UTMALDG" || base == "UBLKCP") return {std::string(base), "global load"};  // TMA
  if (base == "STG") return with_width("global store");
  if (base == "UTMASTG" || base == "UTMAREDG") return {std::string(base), "global store"};
  if (base == "LDS" || base == "STS") return with_width("shared");
  if (base == "LDSM" || base == "STSM") {
    const std::string_view last = tok.size() > 1 ? tok.back() : "";
    return {std::string(base) + ".x" + std::string(last == "4" || last == "2" ? last : "1"),
            "shared"};
  }
  if (base == "LDL" || base == "STL") return with_width("local (spill)");
  if (base == "ATOMG" || base == "ATOM" || base == "RED" || base == "REDG" || base == "ATOMS")
    return {std::string(base), "atomic"};
  if (base == "HFMA2" && tok.size() > 1 && tok[1] == "MMA")
    return {"", "other"};  // a register-move idiom
  static constexpr std::array<std::string_view, 16> kMath{
      "FFMA", "FADD", "FMUL", "FMNMX", "HFMA2", "HADD2", "HMUL2", "HMNMX2",
      "DFMA", "DADD", "DMUL", "HMMA",  "HGMMA", "IMMA",  "QGMMA", "IGMMA"};
  if (std::find(kMath.begin(), kMath.end(), base) != kMath.end())
    return {std::string(base), "math"};
  if (base == "MUFU")
    return {std::string(opcode.substr(0, opcode.find('.', 5))), "special function"};  // MUFU.EX2
  if (base == "SHFL") return {"SHFL", "shuffle"};
  if (base == "BAR" || base == "SYNCS" || base == "DEPBAR" || base == "LDGDEPBAR" ||
      base == "WARPGROUP")
    return {std::string(base), "barrier"};
  if (base == "BRA") return {"BRA", "branch"};
  return {"", "other"};
}

bool is_tensor_sass(std::string_view opcode) {
  const std::string_view base = opcode.substr(0, opcode.find('.'));
  return base == "HMMA" || base == "HGMMA" || base == "IMMA" || base == "QGMMA" || base == "IGMMA";
}

namespace {

constexpr std::array<std::string_view, 10> kGroupOrder{
    "global load", "global store",     "shared",  "local (spill)", "atomic",
    "math",        "special function", "shuffle", "barrier",       "branch"};
int group_rank(std::string_view g) {
  auto it = std::find(kGroupOrder.begin(), kGroupOrder.end(), g);
  return static_cast<int>(it - kGroupOrder.begin());
}

char group_char(std::string_view g) {
  if (g == "global load") return 'G';
  if (g == "global store") return 'W';
  if (g == "shared") return 'S';
  if (g == "local (spill)") return 'L';
  if (g == "atomic") return 'A';
  if (g == "math") return 'M';
  if (g == "barrier") return 'B';
  return 0;
}

}  // namespace

namespace {

/// Index of the instruction a branch goes to, or -1 (unresolved).
int branch_target(const SassFunction& f, const SassInstr& in) {
  if (auto l = f.labels.find(in.target); !in.target.empty() && l != f.labels.end())
    return l->second;
  if (in.target_offset >= 0) {
    auto t =
        std::lower_bound(f.instrs.begin(), f.instrs.end(), in.target_offset,
                         [](const SassInstr& x, int64_t off) { return int64_t{x.offset} < off; });
    if (t != f.instrs.end() && int64_t{t->offset} == in.target_offset)
      return static_cast<int>(t - f.instrs.begin());
  }
  return -1;
}

/// An FFMA's register sources by operand slot (-1: RZ, an immediate or a constant) and which of
/// them carry .reuse. `text` is the instruction as printed ("@P0 FFMA R3, -R4.reuse, R5, R3 ;").
struct FfmaSources {
  std::array<int, 3> reg{-1, -1, -1};
  std::array<bool, 3> reuse{};
};

FfmaSources ffma_sources(const std::string& text, const std::string& opcode) {
  static const std::regex reg(R"(\bR(\d+)(\.reuse)?)");
  FfmaSources s;
  const size_t at = text.find(opcode);
  if (at == std::string::npos) return s;
  std::string operands = text.substr(at + opcode.size());
  std::vector<std::string> parts;
  for (size_t from = 0;;) {
    const size_t comma = operands.find(',', from);
    parts.push_back(operands.substr(from, comma == std::string::npos ? comma : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  for (size_t slot = 0; slot < 3 && slot + 1 < parts.size(); ++slot) {  // parts[0]: destination
    std::smatch m;
    if (std::regex_search(parts[slot + 1], m, reg)) {
      s.reg[slot] = std::stoi(m[1].str());
      s.reuse[slot] = m[2].matched;
    }
  }
  return s;
}

/// Whether an FFMA's register-file reads conflict, by the two-bank model: the sources the reuse
/// cache does not serve (`cached`: what the previous instruction marked .reuse, slot by slot),
/// each distinct register read once, are three and all in one bank (register % 2).
bool ffma_bank_conflict(const FfmaSources& s, const std::array<int, 3>& cached) {
  std::vector<int> reads;
  for (size_t slot = 0; slot < 3; ++slot) {
    const int r = s.reg[slot];
    if (r < 0 || cached[slot] == r) continue;
    if (std::find(reads.begin(), reads.end(), r) == reads.end()) reads.push_back(r);
  }
  return reads.size() == 3 && reads[0] % 2 == reads[1] % 2 && reads[1] % 2 == reads[2] % 2;
}

/// One iteration of `loop` along its fall-through path (see SassSummary::main_loop), or
/// nothing when that path leaves the loop or the kernel.
std::optional<SassSummary::Path> loop_path(const SassFunction& f, const SassSummary::Loop& loop) {
  SassSummary::Path p;
  p.head = loop.head;
  p.tail = loop.tail;
  std::map<std::string, int> math_rows;
  std::array<int, 3> cached{-1, -1, -1};  // registers the previous instruction marked .reuse
  int i = loop.head;
  for (int steps = 0; steps <= 4 * static_cast<int>(f.instrs.size()); ++steps) {
    if (i < loop.head || i > loop.tail) return std::nullopt;  // left the loop: not a simple path
    const SassInstr& in = f.instrs[static_cast<size_t>(i)];
    const bool never = in.text.starts_with("@!PT ");
    const bool predicated = !in.text.empty() && in.text[0] == '@' && !in.text.starts_with("@PT ");
    if (in.opcode != "NOP" && !never) {
      bool continue_cache = false;  // an FFMA: the next one may read what it marked .reuse
      ++p.instructions;
      const SassClass c = classify_sass(in.opcode);
      if (c.group == "math") {
        ++p.math;
        ++math_rows[c.row];
        if (is_tensor_sass(in.opcode)) ++p.tensor;
        if (in.opcode == "FFMA" || in.opcode.starts_with("FFMA.")) {
          const FfmaSources src = ffma_sources(in.text, in.opcode);
          ++p.ffma;
          p.ffma_bank_conflicts += ffma_bank_conflict(src, cached) ? 1 : 0;
          for (size_t slot = 0; slot < 3; ++slot)
            cached[slot] = src.reuse[slot] ? src.reg[slot] : -1;
          continue_cache = true;
        }
      } else if (c.group == "shared") {
        ++p.shared;
      } else if (c.group == "global load" || c.group == "global store") {
        ++p.global;
      } else if (c.group == "barrier") {
        ++p.barrier;
      } else if (c.group == "special function") {
        ++p.special;
      }
      if (!continue_cache) cached = {-1, -1, -1};  // another instruction sits in between
    }
    if (i == loop.tail) {
      for (const auto& [row, n] : math_rows)
        if (n > p.top_math_count) p.top_math = row, p.top_math_count = n;
      return p;
    }
    if (in.opcode == "EXIT" && !predicated && !never) return std::nullopt;  // leaves the kernel
    // Only a plain, unguarded BRA is taken: BRA.DIV and `BRA P2, target` are conditional too.
    const bool plain_branch = in.opcode == "BRA" && !predicated && !never &&
                              in.text.find("BRA P") == std::string::npos &&
                              in.text.find("BRA !P") == std::string::npos;
    if (in.opcode.starts_with("BRA") && !plain_branch && !never) {
      const int t = branch_target(f, in);
      if (t >= loop.head && t < i) ++p.inner_loops;  // an inner loop's back edge, not taken
    }
    if (plain_branch) {
      const int t = branch_target(f, in);
      if (t < 0) return std::nullopt;
      i = t;
    } else {
      ++i;
    }
  }
  return std::nullopt;  // did not come back to the loop's end
}

/// The main loop: of the loops whose fall-through iteration is a simple path, the one doing the
/// most math per iteration (the larger on a tie). Not simply the largest backward branch: in a
/// warp-specialised kernel the out-of-line retry of an mbarrier wait, placed after everything
/// else, branches back into the code and spans most of the kernel.
std::optional<SassSummary::Path> main_loop_path(const SassFunction& f,
                                                const std::vector<SassSummary::Loop>& loops) {
  std::optional<SassSummary::Path> best;
  for (const SassSummary::Loop& l : loops) {
    const std::optional<SassSummary::Path> p = loop_path(f, l);
    if (p && (!best || p->math > best->math ||
              (p->math == best->math && p->instructions > best->instructions)))
      best = p;
  }
  return best;
}

/// The tensor loop (SassSummary::tensor_loop): of the loops whose fall-through iteration issues
/// tensor-core instructions, the shortest in the listing (the innermost).
std::optional<SassSummary::Path> tensor_loop_path(const SassFunction& f,
                                                  const std::vector<SassSummary::Loop>& loops) {
  std::optional<SassSummary::Path> best;
  int best_span = 0;
  for (const SassSummary::Loop& l : loops) {
    const std::optional<SassSummary::Path> p = loop_path(f, l);
    if (!p || p->tensor == 0) continue;
    if (!best || l.tail - l.head < best_span) best = p, best_span = l.tail - l.head;
  }
  return best;
}

}  // namespace

SassSummary summarize_sass(const SassFunction& f, int strip_width) {
  SassSummary s;
  std::vector<char> chars(f.instrs.size(), 0);
  for (size_t i = 0; i < f.instrs.size(); ++i) {
    const SassInstr& in = f.instrs[i];
    if (in.opcode == "NOP") continue;
    ++s.instructions;
    const SassClass c = classify_sass(in.opcode);
    chars[i] = group_char(c.group);
    const int idx = static_cast<int>(i);
    if (!c.row.empty()) {
      auto it = std::find_if(s.rows.begin(), s.rows.end(),
                             [&](const auto& r) { return r.name == c.row; });
      if (it == s.rows.end())
        it = s.rows.insert(s.rows.end(), SassSummary::Row{c.row, c.group, 0, idx, idx});
      ++it->count;
      it->last = idx;
    }
    if (group_char(c.group) != 0) {
      auto it = std::find_if(s.regions.begin(), s.regions.end(),
                             [&](const auto& r) { return r.group == c.group; });
      if (it == s.regions.end())
        it = s.regions.insert(s.regions.end(), SassSummary::Region{c.group, 0, idx, idx});
      ++it->count;
      it->last = idx;
    }
    // A branch back to an earlier label closes a loop (a branch to itself is the end-of-code trap).
    if (in.opcode.starts_with("BRA")) {
      const int head = branch_target(f, in);
      if (head >= 0 && head < idx) s.loops.push_back(SassSummary::Loop{head, idx});
    }
  }
  std::stable_sort(s.rows.begin(), s.rows.end(), [](const auto& a, const auto& b) {
    if (group_rank(a.group) != group_rank(b.group))
      return group_rank(a.group) < group_rank(b.group);
    return a.name < b.name;
  });
  std::stable_sort(s.regions.begin(), s.regions.end(), [](const auto& a, const auto& b) {
    return group_rank(a.group) < group_rank(b.group);
  });

  s.main_loop = main_loop_path(f, s.loops);
  s.tensor_loop = tensor_loop_path(f, s.loops);

  const size_t n = f.instrs.size();
  const size_t w = std::min<size_t>(n, static_cast<size_t>(std::max(1, strip_width)));
  static constexpr std::string_view kTieOrder = "WGLATSMB";  // rarer, more telling groups first
  for (size_t b = 0; b < w; ++b) {
    std::array<int, 128> count{};
    for (size_t i = b * n / w; i < (b + 1) * n / w; ++i)
      if (chars[i]) ++count[static_cast<unsigned char>(chars[i])];
    char best = '.';
    int best_n = 0;
    for (char c : kTieOrder)
      if (count[static_cast<unsigned char>(c)] > best_n)
        best = c, best_n = count[static_cast<unsigned char>(c)];
    s.strip += best;
  }
  return s;
}

}  // namespace klab
