#include "engine/fleet.h"

#include "transcript/run_events.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <semaphore>
#include <thread>

namespace ratchet::engine {

std::vector<size_t> batch_sizes(size_t total, const playbook::HostCount& serial) {
  std::vector<size_t> out;
  if (total == 0) return out;
  size_t per = total;
  if (serial.set) {
    long long n = serial.percent ? static_cast<long long>(total) * serial.value / 100 : serial.value;
    per = static_cast<size_t>(std::clamp<long long>(n, 1, static_cast<long long>(total)));
  }
  for (size_t left = total; left > 0; left -= std::min(per, left)) out.push_back(std::min(per, left));
  return out;
}

long long fail_limit(size_t total, const playbook::HostCount& max_fail) {
  if (!max_fail.set) return -1;
  return max_fail.percent ? static_cast<long long>(total) * max_fail.value / 100 : max_fail.value;
}

namespace {

using Permits = std::counting_semaphore<1 << 20>;

/// RAII: holds one fork while connecting or running a step.
struct Fork {
  explicit Fork(Permits& p) : p_(p) { p_.acquire(); }
  ~Fork() { p_.release(); }
  Permits& p_;
};

HostReport not_run(const HostJob& job, HostStatus status, const std::string& why,
                   const RunShared& shared) {
  HostReport r;
  r.host = job.host.name;
  r.status = status;
  r.reason = why;
  for (StepStatus k : kStepStatuses) r.counts[std::string(name(k))] = 0;  // same shape as a run host
  transcript::write_host_end(*shared.w, {r.host, std::string(name(r.status)), r.counts, 0, why, std::nullopt});
  shared.progress->host_done(r);
  return r;
}

/// One batch, every host on its own thread; `forks` bounds the work in flight.
void run_batch(std::vector<HostJob>& jobs, const std::vector<size_t>& idx, const FleetPolicy& policy,
               const TransportFactory& make, const RunShared& shared,
               std::vector<HostReport>& reports) {
  const bool linear = policy.run.strategy == playbook::Strategy::linear;
  Permits permits(std::max(1, policy.forks));
  std::barrier<> step_done(static_cast<std::ptrdiff_t>(idx.size()));
  auto host_thread = [&](size_t i) {
    HostJob& job = jobs[i];
    std::unique_ptr<transport::Transport> t = make(job.endpoint);
    HostRun hr(job, *t, shared);
    bool alive;
    {
      Fork f(permits);
      alive = hr.connect();
    }
    for (size_t k = 0; alive && k < hr.step_count(); ++k) {
      {
        Fork f(permits);
        alive = hr.run_step(k);
      }
      // linear: wait until every host still running has ended step k
      if (linear && alive && k + 1 < hr.step_count()) step_done.arrive_and_wait();
    }
    // Done (ended the last step, stopped, or unreachable): later phases stop counting it.
    if (linear) step_done.arrive_and_drop();
    reports[i] = hr.finish();
  };
  if (!linear) {
    // free: a pool of `forks` workers, each takes the next host and runs it to the end
    for_each_host(idx.size(), policy.forks, [&](size_t k) {
      size_t i = idx[k];
      if (shared.interrupted && shared.interrupted->load()) {
        reports[i] = not_run(jobs[i], HostStatus::interrupted, "not run: interrupted", shared);
        return;
      }
      std::unique_ptr<transport::Transport> t = make(jobs[i].endpoint);
      reports[i] = run_host(jobs[i], *t, shared);
    });
    return;
  }
  std::vector<std::thread> th;
  th.reserve(idx.size());
  for (size_t i : idx) th.emplace_back(host_thread, i);
  for (auto& x : th) x.join();
}

}  // namespace

void for_each_host(size_t n, int forks, const std::function<void(size_t)>& work) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k; (k = next++) < n;) work(k);
  };
  size_t threads = std::min<size_t>(std::max(1, forks), n);
  std::vector<std::thread> th;
  for (size_t k = 0; k < threads; ++k) th.emplace_back(worker);
  for (auto& x : th) x.join();
}

std::vector<HostReport> run_fleet(std::vector<HostJob>& jobs, const FleetPolicy& policy,
                                  const TransportFactory& make, const RunShared& shared) {
  std::vector<HostReport> reports(jobs.size());
  auto sizes = batch_sizes(jobs.size(), policy.run.serial);
  long long limit = fail_limit(jobs.size(), policy.run.max_fail);
  long long failed = 0;
  size_t at = 0;
  for (size_t b = 0; b < sizes.size(); ++b) {
    std::vector<size_t> idx;
    for (size_t k = 0; k < sizes[b]; ++k) idx.push_back(at + k);
    bool stop = (limit >= 0 && failed > limit) || (shared.interrupted && shared.interrupted->load());
    if (stop) {
      std::string why = failed > limit && limit >= 0
                            ? fmt::format("not run: {} host(s) failed, more than max_fail = {}", failed, limit)
                            : "not run: interrupted";
      bool intr = shared.interrupted && shared.interrupted->load();
      for (size_t i : idx) reports[i] = not_run(jobs[i], intr ? HostStatus::interrupted : HostStatus::skipped, why, shared);
    } else {
      std::vector<std::string> names;
      for (size_t i : idx) names.push_back(jobs[i].host.name);
      if (sizes.size() > 1) {
        shared.w->emit(transcript::events::kBatchStart, {{"batch", b + 1}, {"batches", sizes.size()}, {"hosts", names}});
        shared.progress->batch_started(static_cast<int>(b + 1), static_cast<int>(sizes.size()), names);
      }
      run_batch(jobs, idx, policy, make, shared, reports);
      for (size_t i : idx) failed += counts_as_failed(reports[i].status);
    }
    at += sizes[b];
  }
  return reports;
}

}  // namespace ratchet::engine
