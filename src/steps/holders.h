#pragma once
// Process lines printed by the host library, read into typed holders.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "steps/owner.h"
#include "util/value.h"

namespace ratchet::steps {

/// One process the host library printed: a holder of a file, a process a
/// pattern matched, or one a kill signalled.
struct Holder {
  long long pid = 0;
  std::string user;
  long long start_ticks = 0;  ///< /proc/PID/stat field 22: with pid, names the process
  std::string started;        ///< RFC 3339 UTC; "" = not known
  std::string comm;
  std::string cmdline;
  std::string state;           ///< /proc/PID/stat state letter, "D:WCHAN" for D; "" = not known
  std::optional<Owner> owner;  ///< its unit, container, pod or session (kind "none"); nullopt = not read
  std::vector<std::string> files;  ///< the files it holds (decoded)
  bool operator==(const Holder&) const = default;
};

/// Decodes one %-encoded file field of a process line (%25, %09, %0A: any
/// %XX); a '%' not followed by two hex digits stays as it is.
std::string decode_file(std::string_view field);

/// Parses one tab-separated process line ("pid user ticks epoch comm cmdline
/// state owner file file ...", docs/host-library.md); nullopt when the line
/// does not have that shape.
std::optional<Holder> parse_process_line(std::string_view line);

/// Parses every line of `text` that starts with `tag` + TAB (or every line when
/// tag is ""), skipping malformed ones; one holder per PID, first wins.
std::vector<Holder> parse_process_lines(std::string_view text, std::string_view tag);

/// A holder as data, as templates (`steps.X.holders`) and the transcript see it:
/// {pid, user, start_ticks, started, comm, cmdline, state, owner, files};
/// start_ticks and started, state, owner are left out when not known (owner:
/// to_value(Owner)).
util::Value to_value(const Holder& h);
util::Value to_value(const std::vector<Holder>& hs);  ///< an array, one table per holder
/// The inverse of to_value(Holder): nullopt when `v` is not a table of that
/// shape (a member missing or of another type, or one to_value never writes).
std::optional<Holder> holder_from(const util::Value& v);

}  // namespace ratchet::steps
