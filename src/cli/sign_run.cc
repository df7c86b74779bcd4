#include "cli/sign_run.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <iostream>

#include "cli/exit_codes.h"
#include "util/text.h"

namespace ratchet::cli {

std::optional<transcript::SignKey> sign_key_for(const Options& o, const Loaded& L, const std::string& transcript,
                                                std::string* err) {
  err->clear();
  const bool by_flag = o.sign || !o.sign_key.empty();
  if (!by_flag && !(L.inv && L.inv->sign)) return std::nullopt;
  const std::string why = by_flag ? "--sign" : "`sign = true` in " + L.inv->path;
  // The signature goes beside the transcript: /dev/null, a pipe or a terminal keeps none.
  struct stat st {};
  if (::stat(transcript.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    *err = fmt::format("{} signs the transcript file, and --transcript {} is not a regular file: write the "
                       "transcript to a file, or run without signing",
                       why, transcript);
    return std::nullopt;
  }
  auto key = transcript::find_sign_key(o.sign_key, err);
  if (!key && err->rfind("--sign-key", 0) != 0) *err = why + ": " + *err;
  return key;
}

int sign_at_end(transcript::Writer& w, const transcript::SignKey& key, int code, std::ostream& human) {
  if (w.failed()) {  // the file ends where it broke: no final head to sign
    std::cerr << "ratchet: error: not signed: the transcript could not be written whole\n";
    return code == kExitOk ? kExitFailed : code;
  }
  const std::string head = w.head();
  auto r = transcript::sign_run(w, key);
  if (!r.error.empty()) {
    std::cerr << util::escaped_line(w.mask(fmt::format(
                     "ratchet: error: not signed: {}; the run's results are in {} (its final head {} is unsigned)",
                     r.error, w.path(), head)))
              << "\n";
    return code == kExitOk ? kExitFailed : code;
  }
  human << util::escaped_line(fmt::format("signed the final head {} with {} ({}): {}", head, r.key, key.describe(),
                                          transcript::signature_path(w.path())))
        << "\n"
        << util::escaped_line(fmt::format("check who signed it: ratchet show --verify {} --allowed-signers FILE",
                                          w.path()))
        << "\n"
        << std::flush;
  return code;
}

}  // namespace ratchet::cli
