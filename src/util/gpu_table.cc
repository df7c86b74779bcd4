#include "util/gpu_table.h"

#include <fmt/format.h>

namespace ratchet::util {

namespace {

std::string text(const Value& v) {
  if (v.is_string()) return v.as_string();
  if (v.is_null()) return "n/a";
  return toml_text(v);
}

const Value::Array& items(const Value& v) {
  static const Value::Array none;
  return v.is_array() ? v.as_array() : none;
}

std::string cell(std::string s) {  // one Markdown cell: no '|', no newline
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r' || c == '\t') out += ' ';
    else out += c;
  }
  return out;
}

// Safe readers: evidence may come from a var or a transcript, of any shape.
const Value::Array& arr(const Value& g, const char* k) { return items(g[k]); }
bool flag(const Value& g, const char* k, bool def) {
  return g[k].is_bool() ? g[k].as_bool() : def;
}
std::string field(const Value& g, const char* k) {
  return g.contains(k) ? text(g[k]) : "";
}

std::string base_name(const std::string& p) {
  auto i = p.find_last_of('/');
  return i == std::string::npos ? p : p.substr(i + 1);
}

std::string mib(const Value& g, const char* k) {
  return g[k].is_int() ? std::to_string(g[k].as_int()) : "n/a";
}

std::string processes(const Value& g) {
  std::string out;
  for (const auto& p : arr(g, "processes")) {
    if (!p.is_table()) continue;
    std::string one = fmt::format("PID {} {}", field(p, "pid"), base_name(field(p, "process_name")));
    if (p.contains("user")) one += " (" + field(p, "user") + ")";
    one += " " + mib(p, "used_memory_mib") + " MiB";
    if (p.contains("left_out")) one += ", left out: " + field(p, "left_out");
    if (!flag(p, "visible", true)) one += ", not a process here";
    out += (out.empty() ? "" : "; ") + one;
  }
  return out.empty() ? "none" : out;
}

std::string holders(const Value& g) {
  std::string out;
  for (const auto& h : arr(g, "holders")) {
    if (!h.is_table()) continue;
    std::string one = fmt::format("PID {} {} ({})", field(h, "pid"), field(h, "comm"), field(h, "user"));
    if (h.contains("left_out")) one += ", left out: " + field(h, "left_out");
    out += (out.empty() ? "" : "; ") + one;
  }
  return out.empty() ? "none" : out;
}

std::string verdict(const Value& g) {
  if (!flag(g, "selected", true)) return "not asked";
  std::string r;
  for (const auto& w : arr(g, "reasons")) r += (r.empty() ? "" : ", ") + text(w);
  if (flag(g, "idle", false)) return "idle";
  return r.empty() ? "could not check" : "busy: " + r;
}

}  // namespace

bool is_gpu_evidence(const Value& v) {
  if (!v.is_array() || v.empty()) return false;
  for (const auto& e : v.as_array())
    if (!e.is_table() || !e.contains("index") || !e.contains("uuid") || !e.contains("processes") ||
        !e["processes"].is_array())
      return false;
  return true;
}

std::string gpu_table(const Value& gpus) {
  std::string out =
      "| GPU | name | memory used / total | util | compute processes (driver: nvidia-smi) | holders of its "
      "device file (kernel: /proc) | verdict |\n|---|---|---|---|---|---|---|\n";
  std::string notes;
  for (const auto& g : items(gpus)) {
    out += fmt::format("| {} {} | {} | {} / {} MiB | {} % | {} | {} | {} |\n", cell(field(g, "index")),
                       cell(field(g, "uuid")), cell(field(g, "name")), mib(g, "memory_used_mib"),
                       mib(g, "memory_total_mib"), mib(g, "utilization_pct"), cell(processes(g)), cell(holders(g)),
                       cell(verdict(g)));
    for (const auto& d : arr(g, "disagreements")) notes += fmt::format("- GPU {}: {}\n", field(g, "index"), text(d));
  }
  if (!notes.empty()) out += "\nWhere the driver and the kernel disagree:\n" + notes;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::vector<std::string> gpu_lines(const Value& gpus) {
  std::vector<std::string> out;
  for (const auto& g : items(gpus)) {
    out.push_back(fmt::format("GPU {} {} ({}): {}; {} / {} MiB used, {} %; driver: {}; holders: {}", field(g, "index"),
                              field(g, "name"), field(g, "uuid"), verdict(g), mib(g, "memory_used_mib"),
                              mib(g, "memory_total_mib"), mib(g, "utilization_pct"), processes(g), holders(g)));
    for (const auto& d : arr(g, "disagreements")) out.push_back(fmt::format("GPU {}: disagree: {}", field(g, "index"), text(d)));
  }
  return out;
}

}  // namespace ratchet::util
