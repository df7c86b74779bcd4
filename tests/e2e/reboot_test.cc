// The reboot step on a real systemd host: gpu-release with -e reboot=true
// reboots the host (systemd-nspawn boots it again), waits for it to come back
// with a new boot id, and the unit it enabled is active after boot. With --lock
// at the default path (the lab host's own /run/lock, a tmpfs): taken before the
// first step, taken again over the new session after the reboot, released at
// the end; and the audit line at the default /var/log/ratchet/runs.log.
#include <catch2/catch.hpp>

#include <fstream>

#include "support/local_proc.h"
#include "support/systemd_fixture.h"
#include "transcript/reader.h"

using ratchet::testing::run_sh;
using ratchet::testing::SystemdHost;
using nlohmann::json;

TEST_CASE("reboot: gpu-release with a final reboot leaves the unit active after boot",
          "[systemd][e2e][reboot]") {
  SystemdHost host;
  auto scene = host.stage_inference();
  std::string dir = ratchet::testing::temp_dir("ratchet-reboot");
  std::ofstream(dir + "/inv.toml") << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << host.port()
                                   << "\nuser = \"root\"\nidentity = \"" << host.client_key()
                                   << "\"\nknown_hosts = \"" << host.known_hosts()
                                   << "\"\n\n[groups]\ngpu = [\"lab\"]\n";
  std::string boot_before;
  REQUIRE(host.ssh("cat /proc/sys/kernel/random/boot_id", &boot_before) == 0);

  std::string t = dir + "/t.jsonl";
  auto r = run_sh(std::string(RATCHET_BINARY) + " run " + RATCHET_SOURCE_DIR +
                  "/playbooks/gpu-release.toml -i " + dir + "/inv.toml -F none -e 'devices=[\"" +
                  scene.at("DEVICE_GLOB") + "\"]' -e reboot=true --lock --json --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);

  auto tr = ratchet::transcript::read_transcript(t);
  std::map<std::string, json> ends;
  json evidence;
  int connects = 0, waits = 0;
  std::vector<std::string> locks;
  for (const auto& e : tr.events) {
    if (e["event"] == "lock" && e["ok"] == true) locks.push_back(e["action"]);
    if (e["event"] == "step_end") ends[e["step"]] = e;
    if (e["event"] == "evidence" && e["step"] == "reboot") evidence = e;
    connects += e["event"] == "connect";
    waits += e["event"] == "reboot_wait";
  }
  CHECK(ends["reboot"]["status"] == "changed");
  CHECK(ends["active_after_boot"]["status"] == "ok");
  CHECK(connects == 2);  // the first session, and the fresh one after boot
  CHECK(locks == std::vector<std::string>{"take", "take_again", "release"});
  std::string none;
  CHECK(host.ssh("test ! -e /run/lock/ratchet.lock", &none) == 0);
  // The audit line, on the host, with the digest run printed.
  json sum = json::parse(r.out);
  std::string log;
  REQUIRE(host.ssh("cat /var/log/ratchet/runs.log", &log) == 0);
  int mine = 0;
  for (size_t at = 0, nl; (nl = log.find('\n', at)) != std::string::npos; at = nl + 1) {
    json a = json::parse(log.substr(at, nl - at));
    if (a["run_id"] != sum["run_id"]) continue;  // an earlier test's run on the same root file system
    ++mine;
    CHECK(a["digest"] == sum["hosts"][0]["digest"]);
    CHECK(a["status"] == "ok");
  }
  CHECK(mine == 1);
  REQUIRE(evidence.is_object());
  CHECK(evidence["boot_id_before"] == boot_before.substr(0, boot_before.size() - 1));
  CHECK(evidence["boot_id_after"] != evidence["boot_id_before"]);

  // Seen from outside: a new boot, and the unit came up by itself.
  std::string boot_after, active;
  REQUIRE(host.ssh("cat /proc/sys/kernel/random/boot_id", &boot_after) == 0);
  CHECK(boot_after != boot_before);
  CHECK(boot_after.substr(0, boot_after.size() - 1) == evidence["boot_id_after"]);
  host.ssh("systemctl is-active inference; systemctl is-enabled inference", &active);
  CHECK(active == "active\nenabled\n");
}
