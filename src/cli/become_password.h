#pragma once
// The become (sudo) password from --ask-become-pass, --become-password-file or
// --become-password-env. It is used only when `sudo -n` shows it is needed
// (engine/executor.h) and is registered as a transcript secret by the caller.
#include <optional>
#include <string>

#include "cli/options.h"

namespace ratchet::cli {

/// Reads the password the options name: asked once on /dev/tty with echo off
/// (prompt on the terminal, never stdout), read from FILE (one trailing newline
/// dropped), or taken from the environment variable NAME. Returns nullopt with
/// *err empty when no source was given, nullopt with *err set (naming the
/// option and the fix, never the value) when the source cannot be read.
std::optional<std::string> read_become_password(const Options& o, std::string* err);

}  // namespace ratchet::cli
