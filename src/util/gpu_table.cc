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

std::string base_name(const std::string& p) {
  auto i = p.find_last_of('/');
  return i == std::string::npos ? p : p.substr(i + 1);
}

std::string mib(const json& g, const char* k) {
  return g.contains(k) && g[k].is_number() ? std::to_string(g[k].get<long long>()) : "n/a";
}

std::string processes(const json& g) {
  std::string out;
  for (const auto& p : g.value("processes", json::array())) {
    std::string one = fmt::format("PID {} {}", text(p["pid"]), base_name(p.value("process_name", "")));
    if (p.contains("user")) one += " (" + text(p["user"]) + ")";
    one += p.contains("used_memory_mib") && p["used_memory_mib"].is_number()
               ? fmt::format(" {} MiB", p["used_memory_mib"].get<long long>())
               : " n/a MiB";
    if (p.contains("left_out")) one += ", left out: " + text(p["left_out"]);
    if (p.value("visible", true) == false) one += ", not a process here";
    out += (out.empty() ? "" : "; ") + one;
  }
  return out.empty() ? "none" : out;
}

std::string holders(const json& g) {
  std::string out;
  for (const auto& h : g.value("holders", json::array())) {
    std::string one = fmt::format("PID {} {} ({})", text(h["pid"]), text(h.value("comm", json(""))),
                                  text(h.value("user", json(""))));
    if (h.contains("left_out")) one += ", left out: " + text(h["left_out"]);
    out += (out.empty() ? "" : "; ") + one;
  }
  return out.empty() ? "none" : out;
}

std::string verdict(const json& g) {
  if (!g.value("selected", true)) return "not asked";
  std::string r;
  for (const auto& w : g.value("reasons", json::array())) r += (r.empty() ? "" : ", ") + text(w);
  if (g.value("idle", false)) return "idle";
  return r.empty() ? "could not check" : "busy: " + r;
}

}  // namespace

bool is_gpu_evidence(const json& v) {
  if (!v.is_array() || v.empty()) return false;
  for (const auto& e : v)
    if (!e.is_object() || !e.contains("index") || !e.contains("uuid") || !e.contains("processes")) return false;
  return true;
}

std::string gpu_table(const json& gpus) {
  std::string out =
      "| GPU | name | memory used / total | util | compute processes (driver: nvidia-smi) | holders of its "
      "device file (kernel: /proc) | verdict |\n|---|---|---|---|---|---|---|\n";
  std::string notes;
  for (const auto& g : gpus) {
    out += fmt::format("| {} {} | {} | {} / {} MiB | {} % | {} | {} | {} |\n", text(g["index"]), cell(text(g["uuid"])),
                       cell(text(g.value("name", json("")))), mib(g, "memory_used_mib"), mib(g, "memory_total_mib"),
                       mib(g, "utilization_pct"), cell(processes(g)), cell(holders(g)), cell(verdict(g)));
    for (const auto& d : g.value("disagreements", json::array()))
      notes += fmt::format("- GPU {}: {}\n", text(g["index"]), text(d));
  }
  if (!notes.empty()) out += "\nWhere the driver and the kernel disagree:\n" + notes;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::vector<std::string> gpu_lines(const json& gpus) {
  std::vector<std::string> out;
  for (const auto& g : gpus) {
    out.push_back(fmt::format("GPU {} {} ({}): {}; {} / {} MiB used, {} %; driver: {}; holders: {}", text(g["index"]),
                              text(g.value("name", json(""))), text(g["uuid"]), verdict(g), mib(g, "memory_used_mib"),
                              mib(g, "memory_total_mib"), mib(g, "utilization_pct"), processes(g), holders(g)));
    for (const auto& d : g.value("disagreements", json::array()))
      out.push_back(fmt::format("GPU {}: disagree: {}", text(g["index"]), text(d)));
  }
  return out;
}

}  // namespace ratchet::util
