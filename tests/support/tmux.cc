#include "support/tmux.h"

#include <unistd.h>

#include "support/local_proc.h"

namespace ratchet::testing {

std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Tmux::Tmux() {
  static int n = 0;
  sock_ = "ratchet-test-" + std::to_string(getpid()) + "-" + std::to_string(n++);
}

Tmux::~Tmux() { run_sh("tmux -L " + sock_ + " kill-server 2>/dev/null"); }

bool Tmux::start(const std::string& command, int cols, int rows) {
  return run_sh("tmux -L " + sock_ + " -f /dev/null new-session -d -x " + std::to_string(cols) +
                " -y " + std::to_string(rows) + " -s t " + sh_quote(command))
             .code == 0;
}

std::string Tmux::capture(bool escapes) const {
  return run_sh("tmux -L " + sock_ + " capture-pane -p -J " + (escapes ? "-e " : "") + "-S -2000 -t t").out;
}

void Tmux::type(const std::string& keys, bool enter) const {
  run_sh("tmux -L " + sock_ + " send-keys -t t -l " + sh_quote(keys) +
         (enter ? " && tmux -L " + sock_ + " send-keys -t t Enter" : ""));
}

}  // namespace ratchet::testing
