#include "util/gpu_table.h"

#include <fmt/format.h>

namespace ratchet::util {

using nlohmann::json;

namespace {

std::string text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "n/a";
  return v.dump();
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
const json& arr(const json& g, const char* k) {
  static const json empty = json::array();
  return g.is_object() && g.contains(k) && g[k].is_array() ? g[k] : empty;
}
bool flag(const json& g, const char* k, bool def) {
  return g.is_object() && g.contains(k) && g[k].is_boolean() ? g[k].get<bool>() : def;
}
std::string field(const json& g, const char* k) {
  return g.is_object() && g.contains(k) ? text(g[k]) : "";
}

std::string base_name(const std::string& p) {
  auto i = p.find_last_of('/');
  return i == std::string::npos ? p : p.substr(i + 1);
}

std::string mib(const json& g, const char* k) {
  return g.is_object() && g.contains(k) && g[k].is_number_integer() ? std::to_string(g[k].get<long long>()) : "n/a";
}

std::string processes(const json& g) {
  std::string out;
  for (const auto& p : arr(g, "processes")) {
    if (!p.is_object()) continue;
    std::string one = fmt::format("PID {} {}", field(p, "pid"), base_name(field(p, "process_name")));
    if (p.contains("user")) one += " (" + field(p, "user") + ")";
    one += " " + mib(p, "used_memory_mib") + " MiB";
    if (p.contains("left_out")) one += ", left out: " + field(p, "left_out");
    if (!flag(p, "visible", true)) one += ", not a process here";
    out += (out.empty() ? "" : "; ") + one;
  }
  return out.empty() ? "none" : out;
}

std::string holders(const json& g) {
  std::string out;
  for (const auto& h : arr(g, "holders")) {
    if (!h.is_object()) continue;
    std::string one = fmt::format("PID {} {} ({})", field(h, "pid"), field(h, "comm"), field(h, "user"));
    if (h.contains("left_out")) one += ", left out: " + field(h, "left_out");
    out += (out.empty() ? "" : "; ") + one;
  }
  return out.empty() ? "none" : out;
}

std::string verdict(const json& g) {
  if (!flag(g, "selected", true)) return "not asked";
  std::string r;
  for (const auto& w : arr(g, "reasons")) r += (r.empty() ? "" : ", ") + text(w);
  if (flag(g, "idle", false)) return "idle";
  return r.empty() ? "could not check" : "busy: " + r;
}

}  // namespace

bool is_gpu_evidence(const json& v) {
  if (!v.is_array() || v.empty()) return false;
  for (const auto& e : v)
    if (!e.is_object() || !e.contains("index") || !e.contains("uuid") || !e.contains("processes") ||
        !e["processes"].is_array())
      return false;
  return true;
}

std::string gpu_table(const json& gpus) {
  std::string out =
      "| GPU | name | memory used / total | util | compute processes (driver: nvidia-smi) | holders of its "
      "device file (kernel: /proc) | verdict |\n|---|---|---|---|---|---|---|\n";
  std::string notes;
  for (const auto& g : gpus) {
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

std::vector<std::string> gpu_lines(const json& gpus) {
  std::vector<std::string> out;
  for (const auto& g : gpus) {
    out.push_back(fmt::format("GPU {} {} ({}): {}; {} / {} MiB used, {} %; driver: {}; holders: {}", field(g, "index"),
                              field(g, "name"), field(g, "uuid"), verdict(g), mib(g, "memory_used_mib"),
                              mib(g, "memory_total_mib"), mib(g, "utilization_pct"), processes(g), holders(g)));
    for (const auto& d : arr(g, "disagreements")) out.push_back(fmt::format("GPU {}: disagree: {}", field(g, "index"), text(d)));
  }
  return out;
}

}  // namespace ratchet::util
