#pragma once
// The transcript file a report is made of: one run picked from it, whether the
// file is cut, and what its hash chain says of that run (transcript/chain.h).
#include <string>
#include <utility>
#include <vector>

#include "report/model.h"

namespace ratchet::report {

/// What the hash chain says of the run reported.
enum class ChainState {
  intact,  ///< its lines chain from run_start to run_end
  cut,     ///< it ends without run_end (killed, disk full, tail removed)
  broken,  ///< a line does not fit (edited, removed, inserted; or written before the chain)
};

struct Source {
  std::string path;
  Run run;
  size_t run_index = 0, runs = 0;  ///< which run of the file (from 1), of how many
  std::string cut_note;            ///< the reader's note on how the file ends ("" = whole)
  ChainState chain = ChainState::broken;
  std::string chain_text;  ///< for people: "lines 1-85, final head HEX", or the problem
  std::string head;        ///< the run's final head, when intact
  std::vector<std::pair<std::string, std::string>> host_digests;  ///< host, digest (intact runs)
  size_t problems = 0;  ///< events with a field of another type than events.h says
  /// Who signed the run (report/signature.h): "none", "unchecked" (as recorded),
  /// "failed" (signing failed), "good", "bad" (checked), "unknown" (chain not
  /// intact); and the words for people.
  std::string signature_state = "none", signature_text = "not signed";
};

enum class LoadError {
  none,
  usage,     ///< cannot read, not a transcript, no run of that id: exit 2
  no_event,  ///< a transcript that holds no complete event: exit 1
};

/// Reads transcript `path` and picks its run `run_id` ("" = the last run).
/// On failure returns its kind with *err naming the file (and line, where one is at fault).
LoadError load_source(const std::string& path, const std::string& run_id, Source* out,
                      std::string* err);

}  // namespace ratchet::report
