#include "cli/become_password.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <termios.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/exit_codes.h"

namespace ratchet::cli {

namespace {

int g_tty = -1;
termios g_saved{};

extern "C" void restore_and_exit(int) {
  // async-signal-safe: put echo back before leaving on ^C at the prompt
  if (g_tty >= 0) tcsetattr(g_tty, TCSAFLUSH, &g_saved);
  (void)!::write(g_tty >= 0 ? g_tty : 2, "\n", 1);
  _exit(kExitInterrupted);
}

std::optional<std::string> ask(std::string* err) {
  int fd = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    *err = "--ask-become-pass needs a terminal (/dev/tty); use --become-password-file FILE or "
           "--become-password-env NAME instead";
    return std::nullopt;
  }
  termios t{};
  bool have = tcgetattr(fd, &t) == 0;
  g_tty = fd;
  g_saved = t;
  auto old_int = std::signal(SIGINT, restore_and_exit);
  auto old_term = std::signal(SIGTERM, restore_and_exit);
  const char prompt[] = "BECOME password: ";
  (void)!::write(fd, prompt, sizeof prompt - 1);
  if (have) {
    termios quiet = t;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    quiet.c_lflag |= ICANON;
    tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  std::string pw;
  char c;
  bool got_line = false;
  while (::read(fd, &c, 1) == 1) {
    if (c == '\n' || c == '\r') {
      got_line = true;
      break;
    }
    pw += c;
  }
  if (have) tcsetattr(fd, TCSAFLUSH, &t);
  (void)!::write(fd, "\n", 1);
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  g_tty = -1;
  ::close(fd);
  if (!got_line && pw.empty()) {
    *err = "--ask-become-pass: no password was entered";
    return std::nullopt;
  }
  return pw;
}

}  // namespace

std::optional<std::string> read_become_password(const Options& o, std::string* err) {
  err->clear();
  int given = o.ask_become_pass + !o.become_password_file.empty() + !o.become_password_env.empty();
  if (given > 1) {
    *err = "give one of --ask-become-pass, --become-password-file, --become-password-env";
    return std::nullopt;
  }
  if (o.ask_become_pass) return ask(err);
  if (!o.become_password_file.empty()) {
    std::ifstream in(o.become_password_file, std::ios::binary);
    if (!in) {
      *err = fmt::format("--become-password-file {}: cannot read it", o.become_password_file);
      return std::nullopt;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string pw = ss.str();
    if (!pw.empty() && pw.back() == '\n') pw.pop_back();
    if (!pw.empty() && pw.back() == '\r') pw.pop_back();
    if (pw.find('\n') != std::string::npos) {
      *err = fmt::format("--become-password-file {}: the file has more than one line; put only the password in it",
                         o.become_password_file);
      return std::nullopt;
    }
    return pw;
  }
  if (!o.become_password_env.empty()) {
    const char* v = std::getenv(o.become_password_env.c_str());
    if (!v) {
      *err = fmt::format("--become-password-env {}: that environment variable is not set",
                         o.become_password_env);
      return std::nullopt;
    }
    std::string pw = v;
    if (pw.find('\n') != std::string::npos) {
      *err = fmt::format("--become-password-env {}: the value holds a newline", o.become_password_env);
      return std::nullopt;
    }
    return pw;
  }
  return std::nullopt;
}

}  // namespace ratchet::cli
