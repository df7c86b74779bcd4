#pragma once
// Reads a transcript while it is written (`show --follow`): a file that does
// not exist yet, grows, and may end inside a line for a while.
#include <string>
#include <vector>

namespace ratchet::transcript {

class LineTail {
 public:
  /// Follows `path`; opens nothing yet (the file may not exist).
  explicit LineTail(std::string path);
  ~LineTail();
  LineTail(const LineTail&) = delete;
  LineTail& operator=(const LineTail&) = delete;

  /// The lines completed since the last call, without their newlines, in
  /// order; none while the file does not exist. A last line without its
  /// newline waits for it. Sets *error (and returns none) when the file cannot
  /// be read or shrank below what was read (it was cut or replaced).
  std::vector<std::string> poll(std::string* error);

  /// How many complete lines poll() has returned so far.
  size_t lines_read() const { return lines_; }

 private:
  std::string path_;
  int fd_ = -1;
  unsigned long long offset_ = 0;  ///< bytes read so far
  std::string partial_;            ///< a line begun, its newline not yet written
  size_t lines_ = 0;
};

}  // namespace ratchet::transcript
