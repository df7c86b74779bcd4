#pragma once
// `ratchet report`: a transcript's run as one self-contained HTML file
// (docs/report.md). What `report`, `run --report` and `apply --report` call.
#include <string>

#include "report/source.h"

namespace ratchet::report {

struct Made {
  LoadError error = LoadError::none;  ///< none: written
  std::string message;  ///< the error, naming the file; or what was written, for people
  size_t bytes = 0;     ///< the page's size
  Source source;        ///< the run it shows
};

/// Reads `transcript`, renders its run `run_id` ("" = the last) and writes it to
/// `out` (write_private_atomic). A failed write is LoadError::usage with its message.
/// With `allowed_signers`, the run's signature is checked (report/signature.h).
Made make_report(const std::string& transcript, const std::string& out, const std::string& run_id = "",
                 const std::string& allowed_signers = "", const std::string& signer = "");

}  // namespace ratchet::report
