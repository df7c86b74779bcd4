#pragma once
// kind = "fetch" (docs/playbook.md#fetch): one listing command, expanded on the
// host (ratchet_fetch_list), then one download per listed file
// (ratchet_fetch_cat, its stdout streamed into the artifact directory by
// engine/fetch.h). Pure: commands in and out, no I/O.
#include <string>
#include <vector>

#include "steps/action.h"

namespace ratchet::steps {

/// One line of ratchet_fetch_list's output.
struct FetchListed {
  enum class What { file, too_big, skipped };
  What what = What::file;
  std::string path;  ///< on the host, as the glob matched it (%-decoded: any byte but NUL)
  unsigned long long size = 0;  ///< file, too_big: bytes when listed
  std::string why;   ///< skipped: why ("a directory", "not a regular file")
};

/// The listing's lines, in order; a line that is none of its forms is skipped.
std::vector<FetchListed> parse_fetch_list(const std::string& out);

/// The download of `path`: at most max_size + 1 bytes of it on stdout (one
/// more than the cap shows a file that grew past it since it was listed).
Command fetch_cat_command(const std::string& path, unsigned long long max_size, util::Millis timeout);

/// "%" -> "%25", "\t" -> "%09", "\n" -> "%0A" undone (the host library's encoding).
std::string percent_decode(const std::string& s);

}  // namespace ratchet::steps
