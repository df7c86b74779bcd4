#include "plan/selection.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "plan/build.h"
#include "util/spell.h"

namespace ratchet::plan {
namespace {

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Whether `name` names step `s`: its id, its register name, or an include that brought it ("free" for free.*).
bool names_step(const std::string& name, const playbook::Step& s) {
  return name == s.id || (!s.register_as.empty() && name == s.register_as) || s.id.rfind(name + ".", 0) == 0;
}

// The index of the step `ref` ("steps.ID.FIELD", ID possibly dotted) reads: the longest id or register name.
std::optional<size_t> step_read(const playbook::Playbook& pb, const std::string& ref) {
  if (ref.rfind("steps.", 0) != 0) return std::nullopt;
  const std::string rest = ref.substr(6);
  std::optional<size_t> best;
  size_t best_len = 0;
  for (size_t i = 0; i < pb.steps.size(); ++i)
    for (const std::string& n : {pb.steps[i].id, pb.steps[i].register_as})
      if (!n.empty() && (rest == n || rest.rfind(n + ".", 0) == 0) && n.size() > best_len) {
        best = i;
        best_len = n.size();
      }
  return best;
}

// A name --step or --start-at gave that no step has: the error, with the nearest id.
std::string unknown_step(const playbook::Playbook& pb, const char* flag, const std::string& name) {
  std::vector<std::string> ids;
  for (const auto& s : pb.steps) ids.push_back(s.id);
  std::string near = util::nearest(name, ids);
  return fmt::format("{} {}: the playbook has no step `{}`{}", flag, name, name,
                     near.empty() ? "" : fmt::format(" (did you mean `{}`?)", near));
}

}  // namespace

bool selects_steps(const Selection& sel) {
  return !sel.tags.empty() || !sel.skip_tags.empty() || !sel.start_at.empty() || !sel.steps.empty();
}

bool select_steps(const playbook::Playbook& pb, const Selection& sel, std::vector<bool>* keep,
                  std::vector<Unselected>* left_out, std::string* err) {
  keep->assign(pb.steps.size(), true);
  left_out->clear();
  if (!selects_steps(sel)) return true;
  std::vector<std::string> all_tags;
  for (const auto& s : pb.steps)
    for (const auto& t : s.tags)
      if (!has(all_tags, t)) all_tags.push_back(t);
  for (const auto* list : {&sel.tags, &sel.skip_tags})
    for (const auto& t : *list)
      if (!has(all_tags, t)) {
        std::string near = util::nearest(t, all_tags);
        *err = fmt::format("{} {}: no step has the tag `{}` ({}){}", list == &sel.tags ? "--tags" : "--skip-tags", t, t,
                           all_tags.empty() ? "the playbook's steps have no tags"
                                            : fmt::format("the tags are {}", fmt::join(all_tags, ", ")),
                           near.empty() ? "" : fmt::format("; did you mean `{}`?", near));
        return false;
      }
  for (const auto& name : sel.steps)
    if (std::none_of(pb.steps.begin(), pb.steps.end(), [&](const playbook::Step& s) { return names_step(name, s); })) {
      *err = unknown_step(pb, "--step", name);
      return false;
    }
  size_t start = 0;
  if (!sel.start_at.empty()) {
    auto it = std::find_if(pb.steps.begin(), pb.steps.end(), [&](const playbook::Step& s) { return names_step(sel.start_at, s); });
    if (it == pb.steps.end()) {
      *err = unknown_step(pb, "--start-at", sel.start_at);
      return false;
    }
    start = static_cast<size_t>(it - pb.steps.begin());
  }
  for (size_t i = 0; i < pb.steps.size(); ++i) {
    const playbook::Step& s = pb.steps[i];
    std::string why;
    if (!sel.steps.empty() &&
        std::none_of(sel.steps.begin(), sel.steps.end(), [&](const std::string& n) { return names_step(n, s); }))
      why = fmt::format("not named by --step {}", fmt::join(sel.steps, ", --step "));
    else if (i < start)
      why = fmt::format("before --start-at {}", sel.start_at);
    else if (!sel.tags.empty() &&
             std::none_of(s.tags.begin(), s.tags.end(), [&](const std::string& t) { return has(sel.tags, t); }))
      why = s.tags.empty() ? fmt::format("it has no tag (--tags {})", fmt::join(sel.tags, ","))
                           : fmt::format("its tags ({}) are not in --tags {}", fmt::join(s.tags, ", "), fmt::join(sel.tags, ","));
    else if (auto t = std::find_if(s.tags.begin(), s.tags.end(), [&](const std::string& x) { return has(sel.skip_tags, x); });
             t != s.tags.end())
      why = fmt::format("tagged `{}` (--skip-tags {})", *t, fmt::join(sel.skip_tags, ","));
    if (why.empty()) continue;
    (*keep)[i] = false;
    left_out->push_back({s.id, why});
  }
  if (std::none_of(keep->begin(), keep->end(), [](bool k) { return k; })) {
    *err = fmt::format("the selection keeps no step: all {} are left out (`{}`: {}); nothing would run",
                       pb.steps.size(), left_out->front().id, left_out->front().reason);
    return false;
  }
  // A kept step must not read what a dropped one would have found.
  for (size_t i = 0; i < pb.steps.size(); ++i) {
    if (!(*keep)[i]) continue;
    const playbook::Step& s = pb.steps[i];
    std::vector<std::string> refs = runtime_refs(pb, s);
    std::string w = s.when.rfind("not ", 0) == 0 ? s.when.substr(s.when.find_first_not_of(' ', 4)) : s.when;
    if (!w.empty()) refs.push_back(w);
    for (const auto& ref : refs) {
      auto j = step_read(pb, ref);
      if (!j || (*keep)[*j]) continue;
      const auto& why = std::find_if(left_out->begin(), left_out->end(), [&](const Unselected& u) { return u.id == pb.steps[*j].id; })->reason;
      // What would keep it: --step and --tags cannot undo --start-at.
      const std::string fix = *j < start ? fmt::format("start at `{}` or earlier (--start-at {})", pb.steps[*j].id,
                                                       pb.steps[*j].id)
                                         : fmt::format("select `{}` too (--step {}, or a tag it has)", pb.steps[*j].id,
                                                       pb.steps[*j].id);
      *err = fmt::format("the selection leaves out step `{}` ({}), but step `{}` ({}) reads its results (`{}`{}): {}, "
                         "or leave `{}` out",
                         pb.steps[*j].id, why, s.id, playbook::origin(s), ref, ref == w ? " in `when`" : "", fix, s.id);
      return false;
    }
  }
  return true;
}

std::string selection_lines(const Plan& p) {
  if (!selects_steps(p.selection)) return "";
  std::vector<std::string> flags;
  for (const auto& t : p.selection.tags) flags.push_back("--tags " + t);
  for (const auto& t : p.selection.skip_tags) flags.push_back("--skip-tags " + t);
  if (!p.selection.start_at.empty()) flags.push_back("--start-at " + p.selection.start_at);
  for (const auto& t : p.selection.steps) flags.push_back("--step " + t);
  std::string out = fmt::format("selection: {}; {} step(s) left out{}\n", fmt::join(flags, " "), p.not_selected.size(),
                                p.not_selected.empty() ? "" : ":");
  for (const auto& u : p.not_selected) out += fmt::format("  not selected: {}: {}\n", u.id, u.reason);
  return out;
}

}  // namespace ratchet::plan
