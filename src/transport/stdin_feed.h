#pragma once
// A command's stdin as the transports send it: an in-memory part (sudo -S's
// password line, the command's own input), then, optionally, a local file read
// in chunks as the channel takes them, so a multi-GB upload (copy) is never
// held in memory.
#include <string>
#include <string_view>

namespace ratchet::transport {

class StdinFeed {
 public:
  /// `head` first, then the bytes of the local file `file` ("" = none).
  StdinFeed(std::string head, std::string file);
  ~StdinFeed();
  StdinFeed(const StdinFeed&) = delete;
  StdinFeed& operator=(const StdinFeed&) = delete;
  /// Opens the file; false with *err ("cannot open FILE: ...") when it cannot.
  bool open(std::string* err);
  /// Nothing at all to send (EOF at once).
  bool empty() const { return head_.empty() && file_.empty(); }
  /// The next bytes to send, reading the file when the buffer is spent; an
  /// empty view = all sent (or a read error: error() says it).
  std::string_view next();
  /// `n` bytes of next()'s view were sent.
  void consume(size_t n);
  /// "" or why reading the file failed.
  const std::string& error() const { return error_; }

 private:
  std::string head_, file_, buf_, error_;
  size_t at_ = 0;  ///< into head_ while head_ lasts, then into buf_
  bool in_head_ = true, eof_ = false;
  int fd_ = -1;
};

}  // namespace ratchet::transport
