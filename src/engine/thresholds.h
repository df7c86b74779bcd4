#pragma once
// The fleet policy in hosts, for people: what `serial` and `max_fail` come to
// for the hosts selected (fleet.h's rules), as `ratchet plan` prints it.
#include <string>
#include <vector>

#include "playbook/model.h"

namespace ratchet::engine {

/// One line per key set in `p`, for `hosts` selected hosts:
/// "serial 30% of 10 hosts = 3: 4 batches of 3 hosts, the last of 1" and
/// "max_fail 10% of 5 hosts = 0: the first failed host stops later batches".
/// Empty when neither is set.
std::vector<std::string> threshold_lines(const playbook::RunPolicy& p, size_t hosts);

}  // namespace ratchet::engine
