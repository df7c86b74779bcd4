// libFuzzer target: the playbook and inventory loaders over arbitrary bytes.
// The loaders read a path, so each input is written to one file per process
// (under /dev/shm when it is there) and loaded as a playbook and as an inventory.
// Invariants: nothing throws; failure always names at least one error, each with
// the file, a message and a position inside the text; format_error never throws;
// success leaves no error, keeps the source byte for byte and has a name and
// unique step ids; check_references runs on whatever loaded.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "fuzz_file.h"
#include "playbook/loader.h"
#include "util/text.h"

using namespace ratchet::playbook;

namespace {

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(f != nullptr);
  if (size) FUZZ_CHECK(std::fwrite(data, 1, size, f) == size);
  FUZZ_CHECK(std::fclose(f) == 0);
}

void check_errors(const std::vector<LoadError>& errors, const std::string& path,
                  const std::string& text) {
  FUZZ_CHECK(!errors.empty());
  // Lines the text has (a last line without '\n' counts; one past the end is
  // where an "unexpected end of file" points).
  long lines = 1;
  for (char c : text) lines += c == '\n';
  for (const auto& e : errors) {
    FUZZ_CHECK(!e.message.empty());
    // Errors from the file name the file; -e errors would name "-e" (none here);
    // an error in a file the input includes names that file and the include site.
    const bool included = e.pos.file != path;
    FUZZ_CHECK(!included || (e.message.find(" (included from ") != std::string::npos &&
                             e.message.find("from " + path + ":") != std::string::npos));
    FUZZ_CHECK(e.pos.line >= 0 && e.pos.col >= 0);
    FUZZ_CHECK(included || e.pos.line <= lines + 1);
    std::string shown = format_error(e);
    FUZZ_CHECK(shown.rfind(e.pos.str(), 0) == 0);
    // The message as the terminal may see it: values echoed from the file hold
    // no control byte once shown (only the newlines and tabs format_error adds).
    FUZZ_CHECK(shown.find(ratchet::util::terminal_line(e.message)) != std::string::npos);
    for (unsigned char c : shown) FUZZ_CHECK(c >= 0x20 || c == '\n' || c == '\t');
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const FuzzFile file("loader-fuzz", ".toml");
  const std::string& path = file.path;
  write_file(path, data, size);
  const std::string text(reinterpret_cast<const char*>(data), size);

  std::vector<LoadError> inv_errors;
  auto inv = load_inventory(path, &inv_errors);
  if (inv) {
    FUZZ_CHECK(inv_errors.empty());
  } else {
    check_errors(inv_errors, path, text);
  }

  std::vector<LoadError> errors;
  auto pb = load_playbook(path, LoadOptions{}, &errors);
  if (!pb) {
    check_errors(errors, path, text);
    return 0;
  }
  FUZZ_CHECK(errors.empty());
  FUZZ_CHECK(pb->source == text);
  FUZZ_CHECK(!pb->name.empty());
  FUZZ_CHECK(!pb->steps.empty());
  std::set<std::string> ids;
  for (const auto& s : pb->steps) {
    FUZZ_CHECK(!s.id.empty());
    FUZZ_CHECK(ids.insert(s.id).second);
  }
  // Cross-checks against the playbook's own inventory, then the file read as one.
  std::vector<LoadError> refs;
  check_references(*pb, pb->inventory ? &*pb->inventory : nullptr, &refs);
  check_references(*pb, inv ? &*inv : nullptr, &refs);
  for (const auto& e : refs) {
    FUZZ_CHECK(!e.message.empty());
    (void)format_error(e);
  }
  return 0;
}
