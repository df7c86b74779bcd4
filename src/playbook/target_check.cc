// `targets` names checked against the inventory, at their place in the file.
#include "playbook/target_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "playbook/doc.h"
#include "util/spell.h"

namespace ratchet::playbook {

bool check_targets(const Playbook& pb, const Inventory& inv, std::vector<LoadError>* errors) {
  std::vector<std::string> names = {"all"};
  for (const auto& h : inv.order.size() == inv.hosts.size() ? inv.order : std::vector<std::string>{})
    names.push_back(h);
  if (names.size() == 1)
    for (const auto& [h, _] : inv.hosts) names.push_back(h);
  for (const auto& [g, _] : inv.groups) names.push_back(g);
  auto known = [&](const std::string& t) { return std::find(names.begin(), names.end(), t) != names.end(); };
  bool ok = true;
  std::vector<LoadError> ignored;  // the file parsed when it loaded: only its positions are read here
  std::optional<Doc> doc = parse_doc(pb.source, pb.path, &ignored);
  const bool one = doc && doc->get(DocPath() / "targets").is_string();
  for (size_t i = 0; i < pb.targets.size(); ++i) {
    const std::string& t = pb.targets[i];
    if (known(t)) continue;
    ok = false;
    const std::string where = inv.path.empty() || inv.path == pb.path ? "the playbook's [inventory]"
                                                                       : "inventory " + inv.path;
    SourcePos pos = doc ? doc->at(one ? DocPath() / "targets" : DocPath() / "targets" / i) : SourcePos{pb.path, 0, 0};
    std::string near = util::nearest(t, names);
    std::string list;
    for (size_t k = 1; k < names.size() && k <= 6; ++k) list += (k > 1 ? ", " : "") + names[k];
    if (names.size() > 7) list += fmt::format(" and {} more", names.size() - 7);
    errors->push_back(make_error(
        pos, fmt::format("`{}` in `targets` is no host or group of {}", t, where),
        !near.empty() ? fmt::format("did you mean `{}`?", near)
                      : fmt::format("add [hosts.{}] there, or name one of its hosts or groups: {}", t,
                                    list.empty() ? "(none)" : list),
        pb.source));
  }
  return ok;
}

}  // namespace ratchet::playbook
