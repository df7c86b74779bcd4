#include "playbook/doc.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <tuple>

namespace ratchet::playbook {
namespace {

SourcePos to_pos(const std::string& file, const toml::source_position& p) {
  return {file, static_cast<int>(p.line), static_cast<int>(p.column)};
}

// Converts a node to a Value and records positions under `path`.
Value convert(const toml::node& n, const DocPath& path, Doc* doc) {
  if (doc) doc->value_pos[path.to_string()] = to_pos(doc->file, n.source().begin);
  if (auto t = n.as_table()) {
    Value out = Value::table();
    for (auto&& [k, v] : *t) {
      DocPath child = path / std::string(k.str());
      if (doc) doc->key_pos[child.to_string()] = to_pos(doc->file, k.source().begin);
      out[std::string(k.str())] = convert(v, child, doc);
    }
    return out;
  }
  if (auto a = n.as_array()) {
    Value out = Value::array();
    for (size_t i = 0; i < a->size(); ++i) out.push_back(convert(*a->get(i), path / i, doc));
    return out;
  }
  if (auto s = n.as_string()) return s->get();
  if (auto i = n.as_integer()) return i->get();
  if (auto f = n.as_floating_point()) return f->get();
  if (auto b = n.as_boolean()) return b->get();
  // Dates and times become their TOML text ("1979-05-27T07:32:00Z").
  std::ostringstream os;
  if (auto d = n.as_date())
    os << d->get();
  else if (auto t = n.as_time())
    os << t->get();
  else if (auto dt = n.as_date_time())
    os << dt->get();
  return os.str();
}

bool header_line(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  return i != std::string::npos && line[i] == '[';
}

bool blank_line(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  return i == std::string::npos || line[i] == '#';
}

// toml++ reports a table header it cannot take at the line after the header:
// point at the header itself (and its `[`), the line that caused the error.
// For an inline table extended by a later header, also say what to write.
void fix_header_error(const std::string& text, const std::string& description, SourcePos* pos,
                      std::string* hint) {
  if (description.find("table header") == std::string::npos) return;
  int line = pos->line;
  if (!header_line(source_line(text, line))) {
    for (--line; line >= 1 && blank_line(source_line(text, line)); --line) {
    }
    if (line < 1 || !header_line(source_line(text, line))) return;
    pos->line = line;
    pos->col = static_cast<int>(source_line(text, line).find('[')) + 1;
  }
  const std::string marker = "cannot insert '";
  size_t at = description.find(marker);
  if (at == std::string::npos || description.find("inline table") == std::string::npos) return;
  size_t end = description.find('\'', at + marker.size());
  if (end == std::string::npos) return;
  std::string full = description.substr(at + marker.size(), end - at - marker.size());
  size_t dot = full.rfind('.');
  if (dot == std::string::npos) return;
  std::string parent = full.substr(0, dot), key = full.substr(dot + 1);
  *hint = fmt::format(
      "`{}` is an inline table, complete where it is written: put `{}` inside its braces, or write "
      "`{}` as a [{}] table",
      parent, key, parent, parent);
}

// toml++'s words for two common slips, with the fix: a number with a leading
// zero (`mode = 0640`, as Ansible writes a mode) and a string left open.
void fix_value_error(const std::string& text, const std::string& description, const SourcePos& pos,
                     std::string* hint) {
  if (!hint->empty()) return;
  const std::string line = source_line(text, pos.line);
  if (description.find("leading zeroes are prohibited") != std::string::npos) {
    size_t eq = line.find('=');
    std::string key = eq == std::string::npos ? "" : line.substr(0, eq);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    while (!key.empty() && (key[0] == ' ' || key[0] == '\t')) key.erase(0, 1);
    *hint = key == "mode" ? "write a file mode as a string: mode = \"0640\""
                          : "TOML numbers have no leading zero: write the number without it, or a string in quotes";
  } else if (description.find("unescaped control characters") != std::string::npos &&
             static_cast<size_t>(pos.col) >= line.size()) {
    *hint = "the string is not closed on this line: add its closing quote";
  }
}

}  // namespace

DocPath DocPath::operator/(std::string_view key) const {
  DocPath out = *this;
  out.parts_.emplace_back(key);
  return out;
}

DocPath DocPath::operator/(size_t index) const {
  DocPath out = *this;
  out.parts_.push_back(std::to_string(index));
  return out;
}

DocPath DocPath::parent() const {
  DocPath out = *this;
  if (!out.parts_.empty()) out.parts_.pop_back();
  return out;
}

std::string DocPath::to_string() const {
  std::string out;
  for (const auto& p : parts_) {
    out += '/';
    for (char c : p) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  }
  return out;
}

const Value& Doc::get(const DocPath& p) const {
  static const Value null;
  const Value* v = &root;
  for (const auto& part : p.parts()) {
    if (v->is_array()) {
      size_t i = 0;
      auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), i);
      if (ec != std::errc() || end != part.data() + part.size()) return null;
      v = &(*v)[i];
    } else {
      v = &(*v)[part];
    }
  }
  return *v;
}

SourcePos Doc::at(const DocPath& p) const {
  for (DocPath q = p;; q = q.parent()) {
    auto it = value_pos.find(q.to_string());
    if (it != value_pos.end()) return it->second;
    if (q.empty()) return {file, 0, 0};
  }
}

SourcePos Doc::key_at(const DocPath& p) const {
  auto it = key_pos.find(p.to_string());
  return it != key_pos.end() ? it->second : at(p);
}

std::optional<Doc> parse_doc(std::string text, const std::string& file,
                             std::vector<LoadError>* errors) {
  Doc doc;
  doc.file = file;
  doc.text = std::move(text);
  try {
    toml::table tbl = toml::parse(std::string_view(doc.text), std::string_view(file));
    doc.root = convert(tbl, DocPath(), &doc);
    doc.value_pos[""] = {file, 1, 1};
  } catch (const toml::parse_error& e) {
    SourcePos pos = to_pos(file, e.source().begin);
    std::string description(e.description()), hint;
    fix_header_error(doc.text, description, &pos, &hint);
    fix_value_error(doc.text, description, pos, &hint);
    errors->push_back(make_error(pos, description, hint, doc.text));
    return std::nullopt;
  }
  return doc;
}

std::optional<Value> parse_toml_value(const std::string& text, std::string* why, size_t* at) {
  const std::string line = "x = " + text;
  try {
    toml::table tbl = toml::parse(std::string_view(line), std::string_view("-e"));
    if (tbl.size() != 1 || !tbl.contains("x")) {
      if (why) *why = "more than one value (a line break, then another key)";
      if (at) *at = std::min(text.find('\n'), text.size()) + 1;
      return std::nullopt;
    }
    return convert(*tbl.get("x"), DocPath(), nullptr);
  } catch (const toml::parse_error& e) {
    if (why) *why = std::string(e.description());
    if (at) {  // toml++'s line and column (code points) back to a character of `text`
      size_t off = offset_of_pos(line, to_pos("-e", e.source().begin));
      *at = off == std::string::npos || off < 4 ? text.size() + 1 : off - 4 + 1;
      *at = std::min(*at, text.size() + 1);
    }
    return std::nullopt;
  }
}

std::string source_line(const std::string& text, int line) {
  if (line < 1) return "";
  size_t b = 0;
  for (int l = 1; l < line; ++l) {
    b = text.find('\n', b);
    if (b == std::string::npos) return "";
    ++b;
  }
  size_t e = text.find('\n', b);
  std::string out = text.substr(b, e == std::string::npos ? std::string::npos : e - b);
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return out;
}

LoadError make_error(const SourcePos& pos, std::string message, std::string hint,
                     const std::string& text) {
  return {pos, std::move(message), std::move(hint), source_line(text, pos.line)};
}

bool read_text_file(const std::string& path, std::string* out, std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = std::strerror(errno);
    return false;
  }
  out->clear();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *err = std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

void sort_errors(std::vector<LoadError>* errors, size_t from, const std::string& file) {
  auto key = [&](const LoadError& e) {
    bool here = e.pos.file == file;
    return std::make_tuple(!here, here ? e.pos.line : 0, here ? e.pos.col : 0);
  };
  std::stable_sort(errors->begin() + static_cast<long>(from), errors->end(),
                   [&](const LoadError& a, const LoadError& b) { return key(a) < key(b); });
}

SourcePos pos_of_offset(const std::string& file, const std::string& text, size_t offset) {
  SourcePos p{file, 1, 1};
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.col = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++p.col;  // count code points, as toml++ does
    }
  }
  return p;
}

size_t offset_of_pos(const std::string& text, const SourcePos& pos) {
  if (pos.line < 1 || pos.col < 1) return std::string::npos;
  size_t i = 0;
  for (int l = 1; l < pos.line; ++l) {
    i = text.find('\n', i);
    if (i == std::string::npos) return std::string::npos;
    ++i;
  }
  for (int c = 1; c < pos.col; ++c) {
    if (i >= text.size() || text[i] == '\n') return std::string::npos;
    ++i;
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
  }
  return i;
}

}  // namespace ratchet::playbook
