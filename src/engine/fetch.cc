#include "engine/fetch.h"

#include <fmt/format.h>

#include <chrono>

#include "engine/artifacts.h"
#include "steps/fetch.h"
#include "util/clock.h"
#include "util/text.h"

namespace ratchet::engine {

StepOutcome run_fetch(const steps::PreparedStep& ps, Executor& ex, transcript::Writer& w, const std::string& host,
                      const std::string& artifacts) {
  const auto t0 = std::chrono::steady_clock::now();
  StepOutcome o;
  const steps::Rung& r = ps.rungs.at(0);
  auto done = [&](StepStatus s) {
    o.status = s;
    o.ms = util::ms_since(t0);
    return o;
  };
  auto list = ex.run(*r.action, 0, "");
  o.rc = list.exit_code;
  o.out = list.out.data;
  o.err = list.err.data;
  std::vector<std::string> problems;
  // 2: a pattern matched nothing: what did match is still fetched.
  if (!list.error.empty() || list.timed_out || !list.signal.empty() || (list.exit_code != 0 && list.exit_code != 2)) {
    auto v = steps::judge_action(*r.action, list, {0});
    o.reason = "could not list the files: " + v.reason;
    return done(StepStatus::failed);
  }
  if (list.exit_code == 2) {
    std::string first = list.err.data.substr(0, list.err.data.find('\n'));
    problems.push_back(first.rfind("ratchet: ", 0) == 0 ? first.substr(9) : first);
  }
  const auto items = steps::parse_fetch_list(list.out.data);
  const std::string& step = ex.step();
  size_t fetched = 0;
  for (const auto& it : items) {
    if (ex.interrupted()) break;
    // A path that is not UTF-8 goes as "KEY_b64" too (JSON holds only text): the exact bytes, to find the file by.
    auto put_path = [](nlohmann::json& j, const char* key, const std::string& p) {
      j[key] = p;
      if (!util::valid_utf8(p)) j[std::string(key) + "_b64"] = util::base64(p);
    };
    nlohmann::json ev = {{"host", host}, {"step", step}, {"rung", 0}};
    put_path(ev, "remote", it.path);
    auto refuse = [&](const std::string& why) {
      ev["ok"] = false;
      ev["error"] = why;
      w.emit(transcript::events::kFetch, ev);
      problems.push_back(fmt::format("{}: {}", it.path, why));
    };
    if (it.what == steps::FetchListed::What::skipped) {
      refuse("not fetched: " + it.why);
      continue;
    }
    if (it.what == steps::FetchListed::What::too_big) {
      refuse(fmt::format("{} bytes, over max_size {}: not fetched", it.size, r.max_size));
      continue;
    }
    ArtifactFile f(artifacts, artifact_rel(host, it.path));
    std::string err;
    put_path(ev, "local", f.path());
    if (!f.open(&err)) {
      refuse(err);
      continue;
    }
    ex.set_stdout_sink(f.fd(), r.max_size);
    auto res = ex.run(steps::fetch_cat_command(it.path, r.max_size, r.action->timeout), 0, "");
    ex.set_stdout_sink(-1, 0);
    auto v = steps::judge_action(*r.action, res, {0});
    if (!v.holds) {
      refuse("the download failed: " + v.reason);
      continue;
    }
    if (res.out.total > r.max_size) {
      refuse(fmt::format("grew past max_size {} since it was listed: not kept", r.max_size));
      continue;
    }
    if (!res.out.sink_error.empty() || !f.commit(&err)) {
      refuse(res.out.sink_error.empty() ? err : res.out.sink_error);
      continue;
    }
    ev["ok"] = true;
    ev["bytes"] = res.out.total;
    ev["sha256"] = res.out.sha256;
    w.emit(transcript::events::kFetch, ev);
    ++fetched;
  }
  o.out = fmt::format("{} file(s) fetched into {}/{}\n", fetched, artifacts, artifact_rel(host, ""));
  if (ex.interrupted()) {
    o.reason = "interrupted";
    return done(StepStatus::failed);
  }
  if (!problems.empty()) {
    o.reason = fmt::format("{} file(s) fetched; {}", fetched, fmt::join(problems, "; "));
    return done(StepStatus::failed);
  }
  return done(StepStatus::changed);
}

}  // namespace ratchet::engine
