// `ratchet report`: a transcript's run as one self-contained HTML file
// (docs/report.md); also what `run --report` and `apply --report` call.
#include <fmt/format.h>
#include <sys/stat.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/usage.h"
#include "report/report.h"
#include "util/text.h"

namespace ratchet::cli {

namespace {

/// Whether `a` and `b` name one existing file (device and inode).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

int cmd_report(const ReportOptions& o) {
  if (o.out.empty()) return usage_error("report", "-o is empty: name the HTML file to write");
  if (o.out == o.path || same_file(o.out, o.path))
    return usage_error(
        "report",
        fmt::format("-o {} is the transcript itself: the report goes to a file of its own", o.out));
  auto m = report::make_report(o.path, o.out, o.run_id, o.allowed_signers, o.signer);
  if (m.error == report::LoadError::usage) return usage_error("report", m.message);
  if (m.error == report::LoadError::no_event) {
    std::cerr << util::escaped_line("ratchet: error: " + m.message) << "\n";
    return kExitFailed;
  }
  std::cout << util::escaped_line(m.message) << "\n";
  if (!m.source.run.ended)
    std::cerr << util::escaped_line(fmt::format(
                     "ratchet: note: {}: the run has no run_end; the report shows what the "
                     "file holds and says it is cut",
                     o.path))
              << "\n";
  return kExitOk;
}

std::string report_option_problem(const std::string& report, const std::string& transcript) {
  if (report.empty()) return "--report is empty: name the HTML file to write";
  struct stat st {};
  // The report is made from the transcript file after the run: it must be one.
  if (::stat(transcript.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return fmt::format(
        "--report needs the transcript in a regular file, and --transcript {} is not one "
        "(write the transcript to a file, or run without --report)",
        transcript);
  if (report == transcript || same_file(report, transcript))
    return fmt::format("--report {} is the transcript itself: the report goes to a file of its own",
                       report);
  if (::lstat(report.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return fmt::format(
        "--report {} exists and is not a regular file: a report goes to a file of its own", report);
  return "";
}

bool write_run_report(const std::string& report, const std::string& transcript,
                      const std::string& run_id, std::ostream& human) {
  auto m = report::make_report(transcript, report, run_id);
  if (m.error != report::LoadError::none) {
    std::cerr << util::escaped_line("ratchet: error: " + m.message) << "\n";
    return false;
  }
  human << util::escaped_line(m.message) << "\n" << std::flush;
  return true;
}

}  // namespace ratchet::cli
