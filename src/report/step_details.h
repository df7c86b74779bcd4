#pragma once
// Per host, per step: its commands with exit codes, timings and output
// (escaped, capped, folded in <details>), and its evidence (holders as tables).
#include <string>

#include "report/model.h"

namespace ratchet::report {

struct DetailOptions {
  size_t output_cap =
      16 * 1024;  ///< bytes of each output stream shown; the rest is named, not shown
};

/// The section of host `h` (the run's host number `hi`, from 0): its connection, then each step.
std::string host_details_html(const Host& h, size_t hi, const DetailOptions& opt);

}  // namespace ratchet::report
