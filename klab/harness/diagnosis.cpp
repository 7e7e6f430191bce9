#include "klab/harness/diagnosis.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "klab/harness/profiler/demangle.hpp"

namespace klab::diagnosis {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool contains(std::string_view s, std::string_view what) {
  return s.find(what) != std::string_view::npos;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// The first integer in s at or after `from`; nullopt when none.
std::optional<int64_t> first_integer(std::string_view s, size_t from = 0) {
  size_t a = from;
  while (a < s.size() && !std::isdigit(static_cast<unsigned char>(s[a]))) ++a;
  if (a == s.size()) return std::nullopt;
  int64_t v = 0;
  for (; a < s.size() && std::isdigit(static_cast<unsigned char>(s[a])); ++a)
    v = v * 10 + (s[a] - '0');
  return v;
}

// "path/file.cu:42" -> (path/file.cu, 42); the line 0 when the text does not end in ":digits".
std::pair<std::string, int> file_line(std::string_view s) {
  s = trim(s);
  const size_t colon = s.rfind(':');
  if (colon != std::string_view::npos && all_digits(s.substr(colon + 1)))
    return {std::string(s.substr(0, colon)), static_cast<int>(*first_integer(s.substr(colon)))};
  return {std::string(s), 0};
}

// The text after "at " of a location line. New format: "kern(args)+0x70 in /p/f.cu:31" (or no
// " in ..." without line information); old format: "0x70 in /p/f.cu:31:kern(args)".
SourceLocation parse_location(std::string_view s) {
  s = trim(s);
  if (const size_t br = s.rfind(" ["); br != std::string_view::npos && s.back() == ']')
    s = trim(s.substr(0, br));  // racecheck's " [N hazards]"
  SourceLocation loc;
  if (s.starts_with("0x")) {
    const size_t in = s.find(" in ");
    if (in == std::string_view::npos) return loc;
    std::string_view rest = trim(s.substr(in + 4));
    // rest: "/p/f.cu:31:kern(args)" or "kern(args)". The line is the first ":digits:" field.
    for (size_t c = rest.find(':'); c != std::string_view::npos; c = rest.find(':', c + 1)) {
      const size_t d = rest.find(':', c + 1);
      if (d == std::string_view::npos) break;
      if (all_digits(rest.substr(c + 1, d - c - 1))) {
        loc.file = std::string(rest.substr(0, c));
        loc.line = static_cast<int>(*first_integer(rest.substr(c + 1, d - c - 1)));
        loc.kernel = std::string(trim(rest.substr(d + 1)));
        return loc;
      }
    }
    loc.kernel = std::string(rest);
    return loc;
  }
  std::string_view kern = s;
  if (const size_t in = s.rfind(" in "); in != std::string_view::npos) {
    kern = s.substr(0, in);
    std::tie(loc.file, loc.line) = file_line(s.substr(in + 4));
  }
  if (const size_t off = kern.rfind("+0x"); off != std::string_view::npos)
    kern = kern.substr(0, off);
  loc.kernel = std::string(trim(kern));
  return loc;
}

// "Invalid __global__ read of size 16 bytes" -> memory, access, size.
void parse_access(std::string_view msg, SanitizerRecord& r) {
  for (std::string_view m : {"__global__", "__shared__", "__local__", "__generic__"})
    if (contains(msg, m)) r.memory = std::string(m);
  if (contains(msg, " read")) r.access = "read";
  if (contains(msg, " write")) r.access = "write";
  if (const size_t sz = msg.find("of size "); sz != std::string_view::npos)
    r.size = static_cast<int>(first_integer(msg, sz).value_or(0));
}

// racecheck: "Write access at <loc>" / "and Read access at <loc> [N hazards]" /
// "Write Thread (0,0,0) at <loc>" (the per-hazard report).
bool parse_race_access(std::string_view s, std::string& access, SourceLocation& loc,
                       int64_t* hazards) {
  s = trim(s);
  if (s.starts_with("and ")) s.remove_prefix(4);
  const size_t at = s.find(" at ");
  if (at == std::string_view::npos) return false;
  const std::string_view head = s.substr(0, at);
  if (!(head.starts_with("Write") || head.starts_with("Read") || head.starts_with("Atomic")))
    return false;
  access = std::string(head.substr(0, head.find(' ')));
  loc = parse_location(s.substr(at + 4));
  if (hazards)
    if (const size_t br = s.rfind('['); br != std::string_view::npos && contains(s, "hazard"))
      *hazards = first_integer(s, br).value_or(1);
  return true;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string relative(std::string_view file, std::string_view root) {
  std::string_view f = file;
  if (!root.empty() && f.starts_with(root)) {
    f.remove_prefix(root.size());
    while (f.starts_with('/')) f.remove_prefix(1);
  }
  return std::string(f);
}

std::string memory_word(const std::string& m) {
  if (m == "__shared__") return "shared-memory";
  if (m == "__global__") return "global-memory";
  if (m == "__local__") return "local-memory";
  return "memory";
}

std::string times(int64_t n, std::string_view what) {
  return std::to_string(n) + " " + std::string(what) + (n == 1 ? "" : "s");
}

// printf-style formatting of one number ("%.1f", "%.3g", ...).
std::string num(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

std::string short_kernel_name(std::string_view s) { return unqualified(function_name(s)); }

std::string SourceLocation::str(std::string_view root) const {
  std::string s = kernel.empty() ? std::string("an unnamed kernel") : short_kernel_name(kernel);
  if (!file.empty())
    s += " at " + relative(file, root) + (line > 0 ? ":" + std::to_string(line) : "");
  else
    s += " (no line information: build with -lineinfo)";
  return s;
}

SanitizerReport parse_sanitizer_output(std::string_view tool, std::string_view text) {
  SanitizerReport rep;
  rep.tool = std::string(tool);
  SanitizerRecord* cur = nullptr;  // the record detail lines attach to
  bool in_host_backtrace = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    // Only the sanitizer's lines: "=========" (any number of '=' >= 3) then the text.
    std::string_view l = raw;
    size_t eq = 0;
    while (eq < l.size() && l[eq] == '=') ++eq;
    if (eq < 3) continue;
    l.remove_prefix(eq);
    const bool detail = l.size() > 1 && l[0] == ' ' && l[1] == ' ';  // indented: detail line
    l = trim(l);
    if (l.empty()) continue;

    if (l.starts_with("COMPUTE-SANITIZER")) {
      rep.ran = true;
      continue;
    }
    if (l.starts_with("ERROR SUMMARY:")) {
      rep.ran = true;
      rep.error_summary = first_integer(l).value_or(0);
      cur = nullptr;
      continue;
    }
    if (contains(l, "SUMMARY:")) {  // RACECHECK SUMMARY, LEAK SUMMARY: counts we recompute
      rep.ran = true;
      continue;
    }
    if (detail) {
      if (!cur) continue;
      if (l.starts_with("Saved host backtrace") || l.starts_with("Host Frame:")) {
        in_host_backtrace = true;  // the host stack of an API error: not a device location
        continue;
      }
      if (l.starts_with("at ") && !in_host_backtrace && cur->at.kernel.empty()) {
        cur->at = parse_location(l.substr(3));
        continue;
      }
      if (cur->kind == RecordKind::race) {
        // The first access when the record line did not carry it, else the second.
        const bool first = cur->at.kernel.empty() && cur->at.file.empty();
        if (first ? parse_race_access(l, cur->access, cur->at, nullptr)
                  : parse_race_access(l, cur->other_access, cur->other, &cur->hazards))
          continue;
      }
      if (l.starts_with("Address") && contains(l, "misaligned")) cur->kind = RecordKind::misaligned;
      continue;
    }

    // A record's first line.
    in_host_backtrace = false;
    if (l.starts_with("Internal Sanitizer Error") || l.starts_with("Error: No attachable") ||
        l.starts_with("Error: Device not supported") ||
        l.starts_with("Error: Target application terminated before") ||
        l.starts_with("Error: Could not")) {
      rep.tool_errors.emplace_back(l);
      cur = nullptr;
      continue;
    }
    if (l.starts_with("Target application returned an error") || l.starts_with("Note:") ||
        l.starts_with("LEAK") || l.starts_with("Leaked")) {
      cur = nullptr;
      continue;
    }
    SanitizerRecord r;
    r.message = std::string(l);
    const std::string low = lower(r.message);
    if (contains(low, "race reported between") || contains(low, "hazard detected")) {
      r.kind = RecordKind::race;
      r.warning = low.starts_with("warning");
      // "Error: Race reported between Write access at <loc>" (the second access follows).
      if (const size_t b = l.find("between "); b != std::string_view::npos) {
        std::string_view first = l.substr(b + 8);
        const size_t a2 = first.find(" and ");  // both accesses on one line (older versions)
        parse_race_access(first.substr(0, a2), r.access, r.at, nullptr);
        if (a2 != std::string_view::npos)
          parse_race_access(first.substr(a2 + 1), r.other_access, r.other, &r.hazards);
      }
      r.memory = "__shared__";
    } else if (contains(low, "uninitialized")) {
      r.kind = RecordKind::uninitialized;
      parse_access(l, r);
    } else if (contains(low, "barrier error") || contains(low, "invalid arguments") ||
               contains(low, "divergent thread")) {
      r.kind = RecordKind::barrier;
    } else if (contains(low, "misaligned")) {
      r.kind = RecordKind::misaligned;
      parse_access(l, r);
    } else if (low.starts_with("invalid ") || contains(low, "out of bounds") ||
               contains(low, "out-of-range")) {
      r.kind = RecordKind::out_of_bounds;
      parse_access(l, r);
    } else if (low.starts_with("program hit") || contains(low, "on cuda api call")) {
      r.kind = RecordKind::api_error;
    } else if (!low.starts_with("error") && !low.starts_with("warning") &&
               !contains(low, "detected")) {
      continue;  // not a record (a stray line of the tool's)
    }
    rep.records.push_back(std::move(r));
    cur = &rep.records.back();
  }
  return rep;
}

std::vector<Finding> sanitizer_findings(const SanitizerReport& r, std::string_view root) {
  // Distinct (kind, location, second location, accesses) with their repeat and hazard counts:
  // one fault reported at many addresses or by many threads is one finding.
  struct Group {
    const SanitizerRecord* first = nullptr;
    int64_t count = 0, hazards = 0;
  };
  using Key = std::tuple<int, std::string, std::string, std::string>;
  std::map<Key, Group> groups;
  std::vector<Key> order;
  bool device_records = false;
  for (const auto& rec : r.records) {
    device_records |= rec.kind != RecordKind::api_error;
    const bool generic = rec.kind == RecordKind::other || rec.kind == RecordKind::api_error;
    Key key{static_cast<int>(rec.kind), rec.at.str(root), rec.other.str(root),
            rec.access + "/" + rec.other_access + (generic ? "/" + rec.message : "")};
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) {
      it->second.first = &rec;
      order.push_back(key);
    }
    ++it->second.count;
    it->second.hazards += rec.hazards;
  }
  std::vector<Finding> out;
  const std::string& tool = r.tool;
  for (const auto& key : order) {
    const Group& g = groups.at(key);
    const SanitizerRecord& rec = *g.first;
    const std::string tail =
        " (" + tool + (g.count > 1 ? ", " + times(g.count, "report") : "") + ")";
    const std::string size = rec.size > 0 ? std::to_string(rec.size) + "-byte " : "";
    const std::string access = rec.access.empty() ? "access" : rec.access;
    switch (rec.kind) {
      case RecordKind::misaligned:
        out.push_back({"misaligned", size + memory_word(rec.memory) + " " + access +
                                         " at a misaligned address in " + rec.at.str(root) + tail});
        break;
      case RecordKind::out_of_bounds:
        out.push_back({"out-of-bounds", size + memory_word(rec.memory) + " " + access +
                                            " outside any allocation in " + rec.at.str(root) +
                                            tail});
        break;
      case RecordKind::race: {
        const std::string a = lower(rec.access.empty() ? "access" : rec.access),
                          b = lower(rec.other_access.empty() ? "access" : rec.other_access);
        std::string text =
            "shared-memory " + a + "-" + b + " hazard: a " + a + " in " + rec.at.str(root);
        if (!rec.other.file.empty())
          text += " and a " + b + " at " + relative(rec.other.file, root) + ":" +
                  std::to_string(rec.other.line);
        else if (!rec.other.kernel.empty())
          text += " and a " + b + " in " + rec.other.str(root);
        text += " (" + tool + ", " + times(g.hazards, "hazard") +
                (rec.warning ? ", reported as a warning" : "") + ")";
        out.push_back({"race", text});
        break;
      }
      case RecordKind::uninitialized:
        out.push_back({"uninitialized", size + memory_word(rec.memory) + " " +
                                            (rec.access.empty() ? "read" : rec.access) +
                                            " of memory never written in " + rec.at.str(root) +
                                            tail});
        break;
      case RecordKind::barrier:
        out.push_back({"barrier", rec.message + " in " + rec.at.str(root) + tail});
        break;
      case RecordKind::api_error:
        // The host side of a device fault: already said by the device record.
        if (!device_records) out.push_back({"sanitizer", tool + ": " + rec.message});
        break;
      case RecordKind::other:
        out.push_back(
            {"sanitizer", tool + ": " + rec.message +
                              (rec.at.kernel.empty() ? "" : " in " + rec.at.str(root)) +
                              (g.count > 1 ? " (" + times(g.count, "report") + ")" : "")});
        break;
    }
  }
  if (out.empty() && r.error_summary && *r.error_summary > 0)
    out.push_back({"sanitizer", tool + " reported " + times(*r.error_summary, "error") +
                                    " that klab could not read; see its output"});
  for (const auto& e : r.tool_errors) out.push_back({"sanitizer", tool + " failed: " + e});
  return out;
}

std::vector<Finding> check_findings(const Result& r) {
  std::vector<Finding> out;
  if (r.status == "error") {
    out.push_back({contains(lower(r.reason), "misaligned") ? "misaligned" : "launch",
                   "the variant failed: " + r.reason});
    return out;
  }
  if (!r.checked || r.check.passed) return out;
  const CheckResult& c = r.check;
  if (c.nan > 0) {
    std::string idx, tensor;
    int shown = 0;
    for (const auto& m : c.first)
      if (!std::isfinite(m.got) && std::isfinite(m.want) && shown < 4) {
        idx += (idx.empty() ? "" : ", ") + std::to_string(m.index);
        tensor = m.tensor;
        ++shown;
      }
    out.push_back({"nan", times(c.nan, "output") + " NaN/Inf where the reference is finite" +
                              (idx.empty() ? ""
                                           : ", first at " + tensor +
                                                 (shown > 1 ? " indices " : " index ") + idx)});
  }
  if (c.unwritten > 0)
    out.push_back(
        {"unwritten", times(c.unwritten, "output") + " never written (still holding the poison)"});
  if (c.bad > 0) {
    std::string first;
    for (const auto& m : c.first)
      if (std::isfinite(m.got)) {
        first = ", first at " + m.tensor + "[" + std::to_string(m.index) +
                "] = " + num("%.6g", m.got) + ", want " + num("%.6g", m.want);
        break;
      }
    out.push_back({"wrong", times(c.bad, "output") + " outside the tolerance (max abs error " +
                                num("%.3g", c.max_abs) + ")" + first});
  }
  if (out.empty())
    out.push_back({"wrong", "relative L2 error " + num("%.3g", c.rel_l2) +
                                " above the tolerance (" + c.summary() + ")"});
  return out;
}

std::vector<Finding> ncu_findings(const MemoryMetrics& m) {
  std::vector<Finding> out;
  const std::string kernel = short_kernel_name(m.kernel);
  auto per_request = [&](const std::optional<double>& sectors, const std::optional<double>& req,
                         const std::string& what) {
    if (!sectors || !req || *req <= 0) return;
    const double ratio = *sectors / *req;
    if (ratio > kMaxCoalescedSectorsPerRequest)
      out.push_back({"slow", num("%.1f", ratio) + " sectors per global " + what + " request in " +
                                 kernel +
                                 " (4 is a warp's 4-byte accesses coalesced, 16 its 16-byte "
                                 "ones): uncoalesced, the lanes touch scattered 32-byte sectors"});
  };
  per_request(m.global_ld_sectors, m.global_ld_requests, "load");
  per_request(m.global_st_sectors, m.global_st_requests, "store");
  auto conflicts = [&](const std::optional<double>& c, const std::optional<double>& w,
                       const std::string& what) {
    if (!c || !w || *w <= 0 || *c <= 0) return;
    const double share = *c / *w;
    if (share > kMaxBankConflictShare)
      out.push_back({"slow", "shared-memory bank conflicts in " + kernel + ": " +
                                 num("%.0f", 100 * share) + "% of the shared " + what +
                                 " wavefronts are conflict replays"});
  };
  conflicts(m.shared_ld_conflicts, m.shared_ld_wavefronts, "load");
  conflicts(m.shared_st_conflicts, m.shared_st_wavefronts, "store");
  return out;
}

}  // namespace klab::diagnosis
