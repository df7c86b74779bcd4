// verify `gpus_idle`, step one: ratchet_gpus_idle's lines (docs/host-library.md)
// read into the driver's view and the kernel's (steps/gpus_view.h).
#include "steps/gpus_view.h"

#include <fmt/format.h>

#include <cctype>
#include <sstream>

namespace ratchet::steps {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t b = 0;;) {
    size_t e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) return out;
    b = e + 1;
  }
}

// "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]": the driver has no value.
bool not_available(std::string_view s) {
  return s == "N/A" || (s.size() >= 2 && s.front() == '[' && s.back() == ']');
}

// A number, or nullopt for a value the driver does not have; false when neither.
bool value(std::string_view s, std::optional<long long>* out) {
  s = trim(s);
  if (not_available(s)) {
    *out = std::nullopt;
    return true;
  }
  *out = read_number(s);
  return out->has_value();
}

}  // namespace

std::optional<long long> read_number(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  long long n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::string ascii_lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string path_base_name(const std::string& p) {
  auto i = p.find_last_of('/');
  return i == std::string::npos ? p : p.substr(i + 1);
}

std::optional<long long> gpu_minor(const std::string& path) {
  std::string b = path_base_name(path);
  if (b.size() <= 6 || b.compare(0, 6, "nvidia") != 0) return std::nullopt;
  return read_number(std::string_view(b).substr(6));
}

bool is_mig_name(const std::string& name) { return ascii_lower(name.substr(0, 4)) == "mig-"; }

std::optional<SmiGpu> parse_smi_gpu(std::string_view line, std::string* err) {
  auto f = split(line, ',');
  auto bad = [&](const char* what) {
    *err = fmt::format("a line ratchet cannot read ({}): \"{}\"", what, short_line(std::string(trim(line))));
    return std::nullopt;
  };
  if (f.size() < 6) return bad("not index, uuid, name, memory.used, memory.total, utilization.gpu");
  SmiGpu g;
  auto idx = read_number(trim(f[0]));
  if (!idx) return bad("index is not a number");
  g.index = *idx;
  g.uuid = std::string(trim(f[1]));
  if (g.uuid.empty() || g.uuid.find(' ') != std::string::npos) return bad("no uuid");
  std::string name;
  for (size_t i = 2; i + 3 < f.size(); ++i) name += (i > 2 ? "," : "") + std::string(f[i]);
  g.name = std::string(trim(name));
  const size_t n = f.size();
  if (!value(f[n - 3], &g.memory_used)) return bad("memory.used is not a number");
  if (!value(f[n - 2], &g.memory_total)) return bad("memory.total is not a number");
  if (!value(f[n - 1], &g.utilization)) return bad("utilization.gpu is not a number");
  return g;
}

std::optional<SmiApp> parse_smi_app(std::string_view line, std::string* err) {
  auto f = split(line, ',');
  auto bad = [&](const char* what) {
    *err = fmt::format("a line ratchet cannot read ({}): \"{}\"", what, short_line(std::string(trim(line))));
    return std::nullopt;
  };
  if (f.size() < 4) return bad("not gpu_uuid, pid, process_name, used_memory");
  SmiApp a;
  a.gpu_uuid = std::string(trim(f[0]));
  if (a.gpu_uuid.empty()) return bad("no gpu_uuid");
  auto pid = read_number(trim(f[1]));
  if (!pid || *pid < 1) return bad("pid is not a number");
  a.pid = *pid;
  std::string name;
  for (size_t i = 2; i + 1 < f.size(); ++i) name += (i > 2 ? "," : "") + std::string(f[i]);
  a.process_name = std::string(trim(name));
  if (!value(f.back(), &a.used_memory)) return bad("used_memory is not a number");
  return a;
}

GpuScan read_gpu_scan(const std::string& out) {
  GpuScan s;
  std::istringstream in(out);
  std::string holder_lines;
  for (std::string line; std::getline(in, line);) {
    auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    std::string tag = line.substr(0, tab);
    std::string_view rest = std::string_view(line).substr(tab + 1);
    std::string why;
    if (tag == "gpu") {
      if (auto g = parse_smi_gpu(rest, &why)) s.gpus.push_back(*g);
      else if (s.bad.empty()) s.bad = "nvidia-smi --query-gpu printed " + why;
    } else if (tag == "app") {
      if (trim(rest) == "No running processes found") continue;
      if (auto a = parse_smi_app(rest, &why)) s.apps.push_back(*a);
      else if (s.bad.empty()) s.bad = "nvidia-smi --query-compute-apps printed " + why;
    } else if (tag == "minor") {
      auto f = split(rest, '\t');
      if (f.size() == 2)
        if (auto m = read_number(trim(f[1]))) s.minors[ascii_lower(std::string(trim(f[0])))] = *m;
    } else if (tag == "holder" || tag == "node") {
      holder_lines += line + "\n";  // read as one, below: a node line belongs to its holder
    } else if (tag == "listed") {
      if (auto h = parse_process_line(rest)) s.listed[h->pid] = *h;
    } else if (tag == "migl") {
      s.mig_list.emplace_back(rest);
    } else if (tag == "migx") {
      s.mig_xml.emplace_back(rest);
    } else if (tag == "migcap") {
      s.mig_caps.emplace_back(rest);
    } else if (tag == "selected") {
      if (auto p = read_number(trim(rest))) s.selected.insert(*p);
    } else if (tag == "nspid") {
      auto f = split(rest, '\t');
      if (f.size() != 2) continue;
      auto p = read_number(trim(f[0]));
      if (!p) continue;
      std::vector<long long> ns;
      for (auto w : split(trim(f[1]), ' '))
        if (auto n = read_number(trim(w))) ns.push_back(*n);
      s.nspid[*p] = ns;
    }
  }
  s.holders = parse_process_lines(holder_lines, "holder");
  return s;
}

}  // namespace ratchet::steps
