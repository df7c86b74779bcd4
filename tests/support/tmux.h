#pragma once
// A tmux server of the test's own (its own socket): a real pseudo-terminal to
// drive the ratchet binary in, read back as the screen a person would see.
#include <string>

namespace ratchet::testing {

class Tmux {
 public:
  /// Picks a socket name unique to this process; starts nothing yet.
  Tmux();
  /// Kills this socket's tmux server and everything running in it.
  ~Tmux();
  Tmux(const Tmux&) = delete;
  Tmux& operator=(const Tmux&) = delete;

  /// Starts `command` (run by /bin/sh) in a detached cols x rows pane; false on failure.
  bool start(const std::string& command, int cols = 160, int rows = 60);
  /// The pane's text with up to 2000 lines of scrollback, wrapped lines joined;
  /// `escapes` keeps color and attribute sequences (tmux capture-pane -e).
  std::string capture(bool escapes = false) const;
  /// Types `keys` literally into the pane, then Enter when `enter`.
  void type(const std::string& keys, bool enter = true) const;

 private:
  std::string sock_;
};

/// `s` in single quotes for /bin/sh.
std::string sh_quote(const std::string& s);

}  // namespace ratchet::testing
