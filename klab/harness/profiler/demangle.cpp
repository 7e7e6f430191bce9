#include "klab/harness/profiler/demangle.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "klab/harness/profiler/text.hpp"

namespace klab {

using profiler_text::starts_with;

namespace {

// Drops "<unnamed>::" and its truncated form "unnamed>::". A '<' right before "unnamed>::" is the
// marker's own when it starts the name or follows a space, '<', ',' or '(' ("void <unnamed>::k",
// "k<<unnamed>::Cfg"); after an identifier it opens a template argument list ("k<unnamed>::Cfg",
// truncated) and stays.
std::string without_unnamed_namespaces(std::string s) {
  constexpr std::string_view kMarker = "unnamed>::";
  for (size_t at = s.find(kMarker); at != std::string::npos; at = s.find(kMarker, at)) {
    size_t from = at;
    if (at > 0 && s[at - 1] == '<') {
      const char before = at > 1 ? s[at - 2] : ' ';
      if (before == ' ' || before == '<' || before == ',' || before == '(') from = at - 1;
    }
    s.erase(from, at + kMarker.size() - from);
    at = from;
  }
  return s;
}

}  // namespace

std::string demangle(std::string_view mangled) {
  const std::string m(mangled);
  if (!starts_with(m, "_Z")) return without_unnamed_namespaces(m);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(m.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : m;
}

std::string function_name(std::string_view s) {
  s = profiler_text::trim(s);
  // The parameter list: the last balanced "(...)" at the end.
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      if (s[i] == '(' && --depth == 0) {
        if (i > 0) s = s.substr(0, i);
        break;
      }
    }
  }
  // The return type: what precedes the last space outside <> and () ("(anonymous namespace)").
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' || s[i] == '(') ++depth;
    if (s[i] == '>' || s[i] == ')') --depth;
    if (depth == 0 && s[i] == ' ') start = i + 1;
  }
  return std::string(profiler_text::trim(s.substr(start)));
}

std::string without_template_arguments(std::string_view s) {
  std::string out;
  int depth = 0;
  for (const char c : s) {
    if (c == '<') ++depth;
    if (depth == 0) out += c;
    if (c == '>' && depth > 0) --depth;
  }
  return out;
}

std::string unqualified(std::string_view s) {
  // Everything up to the last "::" outside <> and ().
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] == '<' || s[i] == '(') ++depth;
    if (s[i] == '>' || s[i] == ')') --depth;
    if (depth == 0 && s[i] == ':' && s[i + 1] == ':') start = i + 2;
  }
  return std::string(profiler_text::trim(s.substr(start)));
}

}  // namespace klab
