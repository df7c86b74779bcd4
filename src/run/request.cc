#include "run/request.h"

#include <fmt/format.h>

#include <random>

#include "util/clock.h"

namespace ratchet::run {

std::string new_run_id(std::chrono::system_clock::time_point at) {
  std::random_device rd;
  return fmt::format("{}-{:04x}", util::file_stamp(at), rd() & 0xffff);
}

}  // namespace ratchet::run
