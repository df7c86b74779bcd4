#pragma once
// The file a fuzz target hands its input to, for code that reads only paths:
// one per process (in /dev/shm when writable, else /tmp), removed when the
// fuzzer exits normally.
#include <unistd.h>

#include <string>

struct FuzzFile {
  std::string path;
  /// "<dir>/ratchet-<name>-<pid><ext>", e.g. ("loader-fuzz", ".toml").
  FuzzFile(const char* name, const char* ext)
      : path(std::string(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") + "/ratchet-" + name + "-" +
             std::to_string(getpid()) + ext) {}
  ~FuzzFile() { unlink(path.c_str()); }
};
