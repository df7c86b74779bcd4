#pragma once
// A TOML file read into a Value plus the source position of every key and value,
// so that validation works on plain data. Internal to the playbook module.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "playbook/loader.h"
#include "playbook/model.h"

namespace ratchet::playbook {

/// A path into a Doc's value: table keys and array indexes from the root.
class DocPath {
 public:
  DocPath() = default;
  DocPath operator/(std::string_view key) const;
  DocPath operator/(size_t index) const;
  /// The path one level up; the root's parent is the root.
  DocPath parent() const;
  bool empty() const { return parts_.empty(); }
  /// As a JSON pointer ("/step/0/kind"; "~" and "/" in a key as "~0", "~1").
  std::string to_string() const;
  /// The keys and indexes (as decimal text), root first.
  const std::vector<std::string>& parts() const { return parts_; }

 private:
  std::vector<std::string> parts_;
};

/// A parsed TOML document with positions.
struct Doc {
  std::string file;  ///< the path positions name
  std::string text;  ///< the file's bytes
  Value root = Value::table();
  std::map<std::string, SourcePos> value_pos;  ///< pointer -> where the value starts
  std::map<std::string, SourcePos> key_pos;    ///< pointer -> where its key is written

  /// Where the value at `p` starts; falls back to the nearest enclosing value.
  SourcePos at(const DocPath& p) const;
  /// Where the key of `p` is written; falls back to at(p).
  SourcePos key_at(const DocPath& p) const;
  /// The value at `p`; a null when there is none.
  const Value& get(const DocPath& p) const;
};

/// Parses TOML `text`. On a syntax error returns nullopt and appends the error
/// (toml++'s description, at its position) to *errors.
std::optional<Doc> parse_doc(std::string text, const std::string& file,
                             std::vector<LoadError>* errors);

/// Reads `text` as the right-hand side of "x = ..." ("42", "[1, 2]", "'a b'");
/// nullopt when it is not exactly one TOML value, then *why (toml++'s words)
/// and *at (the 1-based byte of `text` where reading stopped), when given.
std::optional<Value> parse_toml_value(const std::string& text, std::string* why = nullptr, size_t* at = nullptr);

/// Line `line` (1-based) of `text` without its line end; "" when out of range.
std::string source_line(const std::string& text, int line);

/// A LoadError at `pos`, with its source line taken from `text`.
LoadError make_error(const SourcePos& pos, std::string message, std::string hint,
                     const std::string& text);

/// The position of byte `offset` of `text`: 1-based line, column in code points.
SourcePos pos_of_offset(const std::string& file, const std::string& text, size_t offset);

/// The byte offset of `pos` (line, code-point column) in `text`; npos when outside.
size_t offset_of_pos(const std::string& text, const SourcePos& pos);

/// Reads a whole file into *out. On failure returns false and sets *err to the
/// reason (strerror text: "No such file or directory").
bool read_text_file(const std::string& path, std::string* out, std::string* err);

/// Orders errors[from..] for reading: those in `file` first, by line and column,
/// then the rest (-e, other files) in the order found.
void sort_errors(std::vector<LoadError>* errors, size_t from, const std::string& file);

/// Collects errors against one document.
struct Diag {
  const Doc& doc;
  std::vector<LoadError>* out;
  /// Appends an error at `pos`, its source line taken from the document.
  void error(const SourcePos& pos, std::string message, std::string hint = "") const {
    out->push_back(make_error(pos, std::move(message), std::move(hint), doc.text));
  }
};

}  // namespace ratchet::playbook
