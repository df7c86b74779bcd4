// libFuzzer target: the {{ }} template engine over arbitrary template text.
// The first byte picks the render options (text/shell, plan); the rest is the
// template, rendered against a fixed scope shaped like a real host's.
// Invariants: nothing throws; template_refs and template_ref_spans agree, every
// span lies inside the text and is a whole "{{ ... }}"; a syntax error fails
// render as well, with a message and an offset at a "{{"; text without "{{"
// renders to itself; shell mode gives a string; the quote and here-document
// checks return -1 or the offset of a "{{".
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "playbook/template.h"
#include "transcript/value_json.h"

using namespace ratchet::playbook;

namespace {

const Value& scope() {
  static const Value s = ratchet::transcript::from_json(nlohmann::json::parse(R"({
    "unit": "inference.service",
    "devices": ["/dev/nvidia*", "/dev/nvidia-uvm"],
    "keep": ["nvidia-persistenced"],
    "count": 3, "ratio": 0.5, "flag": true, "empty": "", "nothing": [],
    "quote": "it's \"here\" $(rm -rf /) `x` \\ {{ '{{' }}",
    "nested": {"a": {"b": ["x", {"c": 1}]}},
    "host": {"name": "gpu01", "address": "127.0.0.1", "port": 2222, "user": "root"},
    "run": {"id": "r1", "started": "2026-01-01T00:00:00Z"},
    "playbook": {"name": "fuzz", "dir": "/tmp"},
    "ratchet": {"version": "0.2.0"},
    "steps": {"stop": {"status": "changed", "stdout": "a\nb", "exit": 0,
                       "holders": [{"pid": 42, "user": "root", "start": "T",
                                    "cmdline": ["python", "serve.py"],
                                    "files": ["/dev/nvidia0"]}]}}
  })"));
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  RenderOptions opt;
  opt.mode = (data[0] & 1) ? RenderMode::shell : RenderMode::text;
  opt.plan = (data[0] & 2) != 0;
  const std::string tmpl(reinterpret_cast<const char*>(data + 1), size - 1);

  std::string refs_err, spans_err;
  size_t err_offset = static_cast<size_t>(-1);
  auto refs = template_refs(tmpl, &refs_err);
  auto spans = template_ref_spans(tmpl, &spans_err, &err_offset);
  FUZZ_CHECK(refs.has_value() == spans.has_value());
  if (spans) {
    FUZZ_CHECK(refs->size() == spans->size());
    for (size_t i = 0; i < spans->size(); ++i) {
      const auto& r = (*spans)[i];
      FUZZ_CHECK((*refs)[i] == r.name);
      FUZZ_CHECK(!r.name.empty());
      FUZZ_CHECK(r.length >= 4 && r.offset + r.length <= tmpl.size());
      FUZZ_CHECK(tmpl.compare(r.offset, 2, "{{") == 0);
      FUZZ_CHECK(tmpl.compare(r.offset + r.length - 2, 2, "}}") == 0);
      if (i) FUZZ_CHECK((*spans)[i - 1].offset + (*spans)[i - 1].length <= r.offset);
    }
  } else {
    FUZZ_CHECK(!refs_err.empty() && refs_err == spans_err);
    FUZZ_CHECK(err_offset < tmpl.size());
    FUZZ_CHECK(tmpl.compare(err_offset, 2, "{{") == 0);
  }

  std::string err;
  auto out = render(tmpl, scope(), opt, &err);
  if (!spans) FUZZ_CHECK(!out);
  if (out) {
    if (opt.mode == RenderMode::shell) FUZZ_CHECK(out->is_string());
    if (tmpl.find("{{") == std::string::npos) FUZZ_CHECK(*out == Value(tmpl));
    (void)to_text(*out);
  } else {
    FUZZ_CHECK(!err.empty());
  }

  // render_tree walks arrays and tables and must agree with render on a lone string.
  std::string tree_err;
  auto tree = render_tree(Value::array({tmpl, Value::table({{"k", tmpl}})}), scope(), opt.plan,
                          &tree_err);
  if (opt.mode == RenderMode::text) FUZZ_CHECK(tree.has_value() == out.has_value());
  if (!tree) FUZZ_CHECK(!tree_err.empty());

  std::string why;
  long unsafe = unsafe_template_offset(tmpl, &why);
  if (unsafe >= 0) FUZZ_CHECK(!why.empty());
  for (long at : {quoted_template_offset(tmpl), heredoc_template_offset(tmpl), unsafe}) {
    FUZZ_CHECK(at >= -1);
    if (at >= 0) {
      FUZZ_CHECK(static_cast<size_t>(at) < tmpl.size());
      FUZZ_CHECK(tmpl.compare(static_cast<size_t>(at), 2, "{{") == 0);
    }
  }
  return 0;
}
