#include "run/secrets.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ratchet::run {

std::optional<playbook::Value> resolve_secrets(const playbook::Playbook& pb, std::string* err) {
  playbook::Value out = playbook::Value::table();
  for (const auto& [name, source] : pb.secrets) {
    if (source == "-e") {
      out[name] = pb.extra_secrets.at(name);
      continue;
    }
    if (source.rfind("env:", 0) == 0) {
      const char* v = std::getenv(source.substr(4).c_str());
      if (!v) {
        *err = fmt::format("secret `{}`: environment variable {} is not set", name, source.substr(4));
        return std::nullopt;
      }
      out[name] = std::string(v);
    } else if (source.rfind("file:", 0) == 0) {
      std::ifstream in(source.substr(5), std::ios::binary);
      if (!in) {
        *err = fmt::format("secret `{}`: cannot read {}", name, source.substr(5));
        return std::nullopt;
      }
      std::ostringstream ss;
      ss << in.rdbuf();
      std::string v = ss.str();
      while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
      out[name] = v;
    }
  }
  return out;
}

std::vector<std::string> short_secret_warnings(const playbook::Value& secrets) {
  std::vector<std::string> out;
  for (const auto& it : secrets.as_table())  // masking is by value: a short one hits everywhere
    if (auto n = it.second.as_string().size(); n > 0 && n < 4)
      out.push_back(fmt::format(
          "secret `{}` is {} byte{}: every occurrence of it is masked as *** and any command "
          "holding it is refused; a longer value avoids that",
          it.first, n, n == 1 ? "" : "s"));
  return out;
}

void mask_secrets(transcript::Writer& w, const playbook::Value& secrets, const std::vector<std::string>& extra) {
  for (const auto& it : secrets.as_table()) w.add_secret(it.second.as_string());
  for (const auto& v : extra) w.add_secret(v);
}

std::vector<std::string> secret_names(const playbook::Value& secrets) {
  std::vector<std::string> out;
  for (const auto& it : secrets.as_table()) out.push_back(it.first);
  return out;
}

}  // namespace ratchet::run
