#include "transcript/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "transcript/events.h"
#include "transcript/sign.h"
#include "util/clock.h"
#include "util/text.h"

namespace ratchet::transcript {

Writer::Writer() = default;

Writer::Writer(const std::string& path) : path_(path) {
  std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0)
    throw std::runtime_error(fmt::format("cannot open transcript {}: {}", path, std::strerror(errno)));
}

Writer::~Writer() {
  if (fd_ >= 0) ::close(fd_);
}

void Writer::add_secret(const std::string& value) {
  if (value.empty()) return;
  std::vector<std::string> add{value};
  if (value.find('\n') != std::string::npos) {
    size_t from = 0;
    while (from <= value.size()) {
      size_t nl = value.find('\n', from);
      std::string line = value.substr(from, nl == std::string::npos ? std::string::npos : nl - from);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.size() >= 4) add.push_back(line);
      if (nl == std::string::npos) break;
      from = nl + 1;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : add)
    if (std::find(secrets_.begin(), secrets_.end(), s) == secrets_.end()) secrets_.push_back(std::move(s));
  // Longest first: a secret that holds another is masked whole.
  std::stable_sort(secrets_.begin(), secrets_.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

bool Writer::has_secrets() const {
  std::lock_guard<std::mutex> l(mu_);
  return !secrets_.empty();
}

std::string Writer::mask_unlocked(std::string s) const {
  for (const auto& secret : secrets_) {
    size_t at = 0;
    while ((at = s.find(secret, at)) != std::string::npos) {
      s.replace(at, secret.size(), "***");
      at += 3;
    }
  }
  return s;
}

std::string Writer::mask(std::string s) const {
  std::lock_guard<std::mutex> lock(mu_);
  return mask_unlocked(std::move(s));
}

std::string Writer::mask_cut(const std::string& data, const std::string& marker) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t at = marker.empty() ? std::string::npos : data.find(marker);
  if (at == std::string::npos) return mask_unlocked(data);
  std::string head = mask_unlocked(data.substr(0, at));
  std::string tail = mask_unlocked(data.substr(at + marker.size()));
  for (const auto& s : secrets_) {
    for (size_t k = std::min(s.size() - 1, head.size()); k >= 1; --k)
      if (head.compare(head.size() - k, k, s, 0, k) == 0) {
        head.replace(head.size() - k, k, "***");
        break;
      }
    for (size_t k = std::min(s.size() - 1, tail.size()); k >= 1; --k)
      if (tail.compare(0, k, s, s.size() - k, k) == 0) {
        tail.replace(0, k, "***");
        break;
      }
  }
  return head + marker + tail;
}

void Writer::mask_tree_unlocked(nlohmann::json& v) const {
  if (v.is_string()) v = mask_unlocked(v.get<std::string>());
  else if (v.is_array() || v.is_object())
    for (auto& x : v) mask_tree_unlocked(x);
}

void Writer::mask_tree(nlohmann::json& v) const {
  std::lock_guard<std::mutex> lock(mu_);
  mask_tree_unlocked(v);
}

bool Writer::checks_events() { return true; }  // in every build type: a check of a few fields is cheap

void Writer::emit(const std::string& event, nlohmann::json fields) {
  // A mismatch is the caller's bug: every run of the test suite checks every event it writes.
  if (checks_events()) {
    static const nlohmann::json none = nlohmann::json::object();
    const nlohmann::json& own = fields.is_object() ? fields : none;  // as written below
    if (std::string why = events::check_event(event, own); !why.empty()) throw std::logic_error(why);
  }
  if (fd_ < 0) return;
  // "event" and "t" first, then the fields in name order: a file's first bytes
  // say whether it is a transcript (`{"event":"run_start"`), even cut short.
  if (!fields.is_object()) fields = nlohmann::json::object();
  fields.erase("event");
  fields.erase("t");
  const auto dump = [](const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  std::string t = util::rfc3339_ms(std::chrono::system_clock::now());
  fields.erase("prev");  // the chain's, below
  if (event == events::kRunEnd) fields.erase("host_digests");
  if (event == events::kSignature) fields.erase("head");
  std::lock_guard<std::mutex> lock(mu_);
  if (!failure_.empty()) return;  // nothing after a failed write: the file ends where it broke
  if (!secrets_.empty()) mask_tree_unlocked(fields);
  // The chain's fields are hex digests and host names as written (masked
  // above): added after the mask, so the chain hashes the bytes in the file.
  if (event == events::kRunEnd && !chain_.host_digests().empty()) fields["host_digests"] = chain_.host_digests();
  if (event == events::kSignature) fields["head"] = chain_.head();  // what was signed: run_end's digest
  std::string rest = dump(fields);  // "{}" or "{...}"
  std::string prev = chain_.prev_for(event);
  // The event's name is ratchet's own constant (events.h), never masked: a
  // secret as short as "e" must not turn `connect` into "conn***ct".
  std::string text = "{\"event\":" + dump(nlohmann::json(event)) + ",\"t\":" + dump(nlohmann::json(t)) +
                     (prev.empty() ? "" : ",\"prev\":\"" + prev + "\"") +
                     (rest.size() > 2 ? "," + rest.substr(1) : std::string("}")) + "\n";
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // disk full: record why; the engine stops before the next step
      failure_ = fmt::format("cannot write transcript {}: {} (event {})", path_,
                             n < 0 ? std::strerror(errno) : "nothing written", event);
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  const auto host = fields.find("host");
  chain_.written(event, host != fields.end() && host->is_string() ? host->get_ref<const std::string&>() : "",
                 std::string_view(text).substr(0, text.size() - 1));
}

std::string Writer::head() const {
  std::lock_guard<std::mutex> lock(mu_);
  return chain_.head();
}

std::map<std::string, std::string> Writer::host_digests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return chain_.host_digests();
}

bool Writer::failed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !failure_.empty();
}

std::string Writer::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

nlohmann::json output_fields(const std::string& stream, const std::string& data,
                             unsigned long long total, unsigned long long dropped, const std::string& sha256) {
  nlohmann::json f = {{"stream", stream}, {"bytes", total}};
  if (!sha256.empty()) f["sha256"] = sha256;
  if (util::valid_utf8(data)) f["data"] = data;
  else f["data_b64"] = util::base64(data);
  if (dropped) f["dropped"] = dropped;
  return f;
}

}  // namespace ratchet::transcript
