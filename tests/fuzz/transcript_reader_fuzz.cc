// libFuzzer target: reading arbitrary bytes as a JSON Lines transcript, then
// `ratchet show`'s renderer and filter over whatever was read.
// Invariants: reading never fails for a readable file and never throws; every
// event is a JSON object; cut_off exactly when the bytes end inside a line; no
// more events than lines; render and filter never throw, with or without a
// host/step filter; filter keeps a subset, and filtering twice changes nothing;
// the HTML report of each run never throws and holds no markup from the input
// (no <script, <img or <svg anywhere: the page itself has none).
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz_check.h"
#include "fuzz_file.h"
#include "report/model.h"
#include "report/page.h"
#include "transcript/reader.h"
#include "transcript/render.h"

using namespace ratchet::transcript;

namespace {

std::string str_field(const nlohmann::json& e, const char* key) {
  auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const FuzzFile file("transcript-fuzz", ".jsonl");
  const std::string& path = file.path;
  FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(f != nullptr);
  if (size) FUZZ_CHECK(std::fwrite(data, 1, size, f) == size);
  FUZZ_CHECK(std::fclose(f) == 0);

  ReadResult r = read_transcript(path);
  FUZZ_CHECK(r.error.empty());
  FUZZ_CHECK(r.cut_off == (size > 0 && data[size - 1] != '\n'));
  size_t lines = 0;
  for (size_t i = 0; i < size; ++i) lines += data[i] == '\n';
  FUZZ_CHECK(r.events.size() <= lines + 1);
  for (const auto& e : r.events) FUZZ_CHECK(e.is_object());
  if (size == 0) FUZZ_CHECK(r.events.empty() && r.note.empty());

  RenderOptions all;
  (void)render(r.events, all);
  FUZZ_CHECK(filter(r.events, all).size() == r.events.size());

  RenderOptions one;
  one.output_lines = 1;
  one.commands = (size & 1) != 0;
  for (const auto& e : r.events) {
    if (one.host.empty()) one.host = str_field(e, "host");
    if (one.step.empty()) one.step = str_field(e, "step");
  }
  (void)render(r.events, one);
  auto kept = filter(r.events, one);
  FUZZ_CHECK(kept.size() <= r.events.size());
  FUZZ_CHECK(filter(kept, one) == kept);

  for (auto& run : ratchet::report::build_runs(r)) {
    ratchet::report::Source src;
    src.path = path;
    src.run = std::move(run);
    std::string page = ratchet::report::render_page(src);
    for (auto& c : page) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    FUZZ_CHECK(page.find("<script") == std::string::npos);
    FUZZ_CHECK(page.find("<img") == std::string::npos);
    FUZZ_CHECK(page.find("<svg") == std::string::npos);
  }
  return 0;
}
