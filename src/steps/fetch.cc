// kind = "fetch": the builder and the listing's reader.
#include "steps/fetch.h"

#include <fmt/format.h>

#include <sstream>

#include "steps/kinds.h"
#include "util/shell.h"

namespace ratchet::steps {

void build_fetch(const playbook::FetchAction& a, const BuildContext& ctx, Rung* out) {
  const long long max = a.max_size.or_else(playbook::kDefaultMaxSize);
  std::string text = fmt::format("ratchet_fetch_list {}{} --", max, a.missing_ok.or_else(false) ? " --missing-ok" : "");
  for (const auto& p : *a.src) text += " " + util::shell_quote(p);
  out->action = action_command(std::move(text), ctx.timeout);
  out->always_act = true;  // nothing to check first: a fetch always reads the host now
  out->max_size = static_cast<unsigned long long>(max);
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && s.compare(i, 3, "%25") == 0) out += '%', i += 2;
    else if (s[i] == '%' && s.compare(i, 3, "%09") == 0) out += '\t', i += 2;
    else if (s[i] == '%' && s.compare(i, 3, "%0A") == 0) out += '\n', i += 2;
    else out += s[i];
  }
  return out;
}

std::vector<FetchListed> parse_fetch_list(const std::string& out) {
  std::vector<FetchListed> items;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    size_t t1 = line.find('\t');
    if (t1 == std::string::npos) continue;
    size_t t2 = line.find('\t', t1 + 1);
    if (t2 == std::string::npos) continue;
    const std::string tag = line.substr(0, t1), mid = line.substr(t1 + 1, t2 - t1 - 1), rest = line.substr(t2 + 1);
    FetchListed f;
    if (tag == "file" || tag == "big") {
      if (mid.empty() || mid.find_first_not_of("0123456789") != std::string::npos || mid.size() > 19) continue;
      f.what = tag == "file" ? FetchListed::What::file : FetchListed::What::too_big;
      f.size = std::stoull(mid);
      f.path = percent_decode(rest);
    } else if (tag == "skip") {
      f.what = FetchListed::What::skipped;
      f.why = mid;
      f.path = percent_decode(rest);
    } else {
      continue;
    }
    if (f.path.empty()) continue;
    items.push_back(std::move(f));
  }
  return items;
}

Command fetch_cat_command(const std::string& path, unsigned long long max_size, util::Millis timeout) {
  return action_command(fmt::format("ratchet_fetch_cat {} {}", util::shell_quote(path), max_size + 1), timeout);
}

}  // namespace ratchet::steps
