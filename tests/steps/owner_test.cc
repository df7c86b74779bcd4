// Owners of processes: the host library's reading of /proc/PID/cgroup (every
// form of docs/host-library.md, cgroup v1 and v2, odd bytes), run locally
// under /bin/sh on files this test writes, and the typed owner in C++.
#include <catch2/catch.hpp>

#include <string>

#include "steps/holders.h"
#include "steps/library.h"
#include "steps/owner.h"
#include "support/files.h"
#include "support/local_proc.h"

using namespace ratchet;
using ratchet::testing::run_sh;

namespace {

const std::string kHex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// The owner field the library prints for a /proc/PID/cgroup holding `cgroup`.
std::string owner_field(const std::string& cgroup, const std::string& env = "") {
  std::string d = testing::temp_dir("ratchet-owner");
  testing::write_file(d + "/cgroup", cgroup);
  auto r = run_sh(env + steps::with_library("ratchet_owner 1 '" + d + "/cgroup'; printf '%s\\n' \"$RATCHET_OWNER\""));
  REQUIRE(r.code == 0);
  return r.out.substr(0, r.out.size() - 1);
}

}  // namespace

TEST_CASE("owner: systemd system and user units, sessions, cgroup v2 and v1", "[steps][owner]") {
  CHECK(owner_field("0::/system.slice/sglang.service\n") == "kind=unit name=sglang.service scope=system");
  CHECK(owner_field("0::/system.slice/sglang.service/worker\n") == "kind=unit name=sglang.service scope=system");
  // A user unit of UID 0 (its name looked up: root), under user@0.service.
  CHECK(owner_field("0::/user.slice/user-0.slice/user@0.service/app.slice/jupyter.service\n") ==
        "kind=unit name=jupyter.service scope=user user=root");
  // The user manager itself is the system unit user@UID.service.
  CHECK(owner_field("0::/user.slice/user-0.slice/user@0.service/init.scope\n") ==
        "kind=unit name=user@0.service scope=system");
  CHECK(owner_field("0::/user.slice/user-0.slice/session-7.scope\n") ==
        "kind=session name=session-7.scope user=root id=7");
  // Hybrid v1: the v2 line is "/", name=systemd has the unit; other hierarchies are no owner.
  CHECK(owner_field("9:name=systemd:/system.slice/nvidia-persistenced.service\n4:memory:/process_api/af0d\n0::/\n") ==
        "kind=unit name=nvidia-persistenced.service scope=system");
  CHECK(owner_field("4:memory:/process_api/af0d\n1:cpu:/\n0::/\n") == "-");
  CHECK(owner_field("0::/\n") == "-");
  // A cgroup no rule knows (the lent GPU machine's supervisor, a batch job): its path, never "no owner".
  CHECK(owner_field("0::/process_api/2acf1b030f29f3b6c34bdd389ef0359d\n") ==
        "kind=cgroup name=/process_api/2acf1b030f29f3b6c34bdd389ef0359d");
  CHECK(owner_field("9:name=systemd:/slurm/uid_1000/job_42\n0::/\n") == "kind=cgroup name=/slurm/uid_1000/job_42");
  auto o = steps::parse_owner("kind=cgroup name=/slurm/uid_1000/job_42");
  REQUIRE(o);
  CHECK(steps::describe(*o) ==
        "cgroup /slurm/uid_1000/job_42 (no unit, container, pod or session: what restarts it is unknown)");
  CHECK_FALSE(steps::restarts(*o));
  CHECK(steps::owner_from(steps::to_value(*o)) == o);
}

TEST_CASE("owner: containers of Docker, containerd, CRI-O and Podman, and Kubernetes pods", "[steps][owner]") {
  CHECK(owner_field("0::/system.slice/docker-" + kHex64 + ".scope\n") ==
        "kind=container scope=docker id=" + kHex64);
  CHECK(owner_field("9:name=systemd:/docker/" + kHex64 + "\n3:cpu:/docker/" + kHex64 + "\n0::/\n") ==
        "kind=container scope=docker id=" + kHex64);
  CHECK(owner_field("0::/system.slice/cri-containerd-" + kHex64 + ".scope\n") ==
        "kind=container scope=containerd id=" + kHex64);
  CHECK(owner_field("0::/machine.slice/libpod-" + kHex64 + ".scope/container\n") ==
        "kind=container scope=podman id=" + kHex64);
  // Podman's monitor is not the container: its cgroup, by path.
  CHECK(owner_field("0::/machine.slice/libpod-conmon-" + kHex64 + ".scope\n") ==
        "kind=cgroup name=/machine.slice/libpod-conmon-" + kHex64 + ".scope");
  // Rootless Podman under a user manager: the container wins over the user unit, with its user.
  CHECK(owner_field("0::/user.slice/user-0.slice/user@0.service/user.slice/libpod-" + kHex64 + ".scope\n") ==
        "kind=container scope=podman user=root id=" + kHex64);
  // A pod, systemd driver (dashes of the UID escaped as _) and cgroupfs driver (v1).
  CHECK(owner_field("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_1111_2222_333344445555.slice/"
                    "cri-containerd-" + kHex64 + ".scope\n") ==
        "kind=pod scope=containerd id=1a2b3c4d-0000-1111-2222-333344445555");
  CHECK(owner_field("11:cpu:/kubepods/besteffort/pod1a2b3c4d-0000-1111-2222-333344445555/" + kHex64 + "\n0::/\n") ==
        "kind=pod id=1a2b3c4d-0000-1111-2222-333344445555");
}

TEST_CASE("owner: a container's name and restart policy where Docker's files say them", "[steps][owner]") {
  std::string root = testing::temp_dir("ratchet-docker");
  std::string c = root + "/containers/" + kHex64;
  run_sh("mkdir -p '" + c + "'");
  // A volume's "Name" comes first; the container's name is the one starting with '/'.
  testing::write_file(c + "/config.v2.json",
                      R"({"MountPoints":{"/data":{"Name":"vol1"}},"Name":"/sglang-web","Driver":"overlay2"})");
  testing::write_file(c + "/hostconfig.json", R"({"RestartPolicy":{"Name":"unless-stopped","MaximumRetryCount":0}})");
  CHECK(owner_field("0::/system.slice/docker-" + kHex64 + ".scope\n", "RATCHET_DOCKER_ROOT='" + root + "' ") ==
        "kind=container name=sglang-web scope=docker restart=unless-stopped id=" + kHex64);
}

TEST_CASE("owner: odd bytes in a cgroup path are %-encoded, a newline in it goes on at the next line",
          "[steps][owner]") {
  CHECK(owner_field("0::/system.slice/my job%1.service\n") == "kind=unit name=my%20job%251.service scope=system");
  CHECK(owner_field("0::/system.slice/a\tb.service\n") == "kind=unit name=a%09b.service scope=system");
  // A directory named "x\ny.service": one path, not a second line.
  CHECK(owner_field("0::/system.slice/x\ny.service\n") == "kind=unit name=x%0Ay.service scope=system");
  auto o = steps::parse_owner("kind=unit name=my%20job%251.service scope=system restart=always");
  REQUIRE(o);
  CHECK(o->name == "my job%1.service");
  CHECK(steps::restarts(*o));
  CHECK(steps::describe(*o) == "unit my job%1.service (Restart=always)");
}

TEST_CASE("owner: typed, as data and back, and which owners bring a killed process back", "[steps][owner]") {
  CHECK(steps::parse_owner("-")->kind == steps::OwnerKind::none);
  CHECK_FALSE(steps::parse_owner(""));
  CHECK_FALSE(steps::parse_owner("name=x"));         // no kind
  CHECK_FALSE(steps::parse_owner("kind=unit junk"));  // a word without '='
  steps::Owner u{.kind = steps::OwnerKind::unit, .name = "a.service", .scope = "user", .user = "alice", .restart = "on-failure"};
  auto v = steps::to_value(u);
  CHECK(v["unit"] == util::Value("a.service"));
  CHECK(v["restarts"] == util::Value(true));
  CHECK(steps::owner_from(v) == u);
  util::Value forged = v;
  forged["restarts"] = false;
  CHECK_FALSE(steps::owner_from(forged));
  CHECK(steps::describe(u) == "user unit a.service of alice (Restart=on-failure)");
  CHECK_FALSE(steps::restarts({.kind = steps::OwnerKind::unit, .name = "b.service", .restart = "no"}));
  CHECK_FALSE(steps::restarts({.kind = steps::OwnerKind::unit, .name = "b.service"}));  // Restart= not known: not claimed
  CHECK(steps::restarts({.kind = steps::OwnerKind::container, .id = "abc"}));
  CHECK_FALSE(steps::restarts({.kind = steps::OwnerKind::container, .restart = "no", .id = "abc"}));
  CHECK(steps::restarts({.kind = steps::OwnerKind::pod, .id = "u"}));
  CHECK_FALSE(steps::restarts({.kind = steps::OwnerKind::session, .id = "3"}));

  auto h = steps::parse_process_line("42\troot\t100\t1700000000.00\tpy\tpython3 x\tD:nv_wait\tkind=unit name=s.service "
                                     "scope=system restart=always\t/dev/nvidia0");
  REQUIRE(h);
  CHECK(h->state == "D:nv_wait");
  CHECK(h->owner->name == "s.service");
  CHECK(h->files == std::vector<std::string>{"/dev/nvidia0"});
  CHECK(steps::holder_from(steps::to_value(*h)) == h);
  CHECK_FALSE(steps::parse_process_line("42\troot\t100\t1700000000.00\tpy\tpython3 x\t/dev/nvidia0"));  // the old shape
}

TEST_CASE("owner: an unreadable or empty /proc/PID/cgroup is an unknown owner, never none", "[steps][owner]") {
  // Unreadable (a process gone before the read), or read empty (gone mid-read): unknown, with the file.
  auto r = run_sh(steps::with_library("ratchet_owner 1 /nonexistent-r27/cgroup; printf '%s\\n' \"$RATCHET_OWNER\""));
  CHECK(r.out == "kind=unknown name=/nonexistent-r27/cgroup\n");
  CHECK(owner_field("").rfind("kind=unknown name=/", 0) == 0);
  // "none" stays the root cgroup's alone.
  CHECK(owner_field("0::/\n") == "-");
  auto o = steps::parse_owner("kind=unknown name=/proc/42/cgroup");
  REQUIRE(o);
  CHECK(o->kind == steps::OwnerKind::unknown);
  CHECK(steps::describe(*o) == "could not tell the owner: /proc/42/cgroup unreadable");
  CHECK_FALSE(steps::restarts(*o));
  auto v = steps::to_value(*o);
  CHECK(v["kind"] == util::Value("unknown"));
  CHECK(steps::owner_from(v) == o);
  // Kinds are typed: a word the library does not print is no owner; none is "-" only.
  CHECK_FALSE(steps::parse_owner("kind=bogus name=x"));
  CHECK_FALSE(steps::parse_owner("kind=none"));
  for (auto k : {util::OwnerKind::none, util::OwnerKind::unknown, util::OwnerKind::unit, util::OwnerKind::container,
                 util::OwnerKind::pod, util::OwnerKind::session, util::OwnerKind::cgroup})
    CHECK(util::parse_owner_kind(util::name(k)) == k);
  // A holder line of an unknown owner keeps it through the transcript's data.
  auto h = steps::parse_process_line("42\troot\t100\t1700000000.00\tpy\tpython3 x\tS\tkind=unknown name=/proc/42/cgroup\t/d");
  REQUIRE(h);
  CHECK(h->owner->kind == steps::OwnerKind::unknown);
  CHECK(steps::holder_from(steps::to_value(*h)) == h);
}

TEST_CASE("owner: Podman and CRI-O containers named from their runtime's files, restart policy not told",
          "[steps][owner]") {
  // A stand-in containers/storage (RATCHET_CONTAINERS_ROOT), never this machine's /var/lib.
  std::string root = testing::temp_dir("ratchet-containers");
  const std::string other = "ffff" + kHex64.substr(4);
  run_sh("mkdir -p '" + root + "/overlay-containers/" + kHex64 + "/userdata'");
  // Pretty-printed, another container first, the metadata an escaped JSON string.
  testing::write_file(root + "/overlay-containers/containers.json",
                      "[\n  {\"id\": \"" + other + "\", \"names\": [\"other\"]},\n  {\n    \"id\": \"" + kHex64 +
                          "\",\n    \"names\": [\n      \"sglang-web\", \"alias\"\n    ],\n    \"metadata\": "
                          "\"{\\\"image-name\\\":\\\"x\\\"}\"\n  }\n]\n");
  testing::write_file(root + "/overlay-containers/" + kHex64 + "/userdata/config.json",
                      R"({"ociVersion":"1.0.2","annotations":{"io.kubernetes.pod.namespace":"ml",)"
                      R"("io.kubernetes.container.name":"server","io.kubernetes.pod.name":"sglang-0"}})");
  const std::string env = "RATCHET_CONTAINERS_ROOT='" + root + "' ";
  CHECK(owner_field("0::/machine.slice/libpod-" + kHex64 + ".scope/container\n", env) ==
        "kind=container name=sglang-web scope=podman id=" + kHex64);
  CHECK(owner_field("0::/machine.slice/libpod-" + other + ".scope\n", env) ==
        "kind=container name=other scope=podman id=" + other);
  CHECK(owner_field("0::/system.slice/crio-" + kHex64 + ".scope\n", env) ==
        "kind=container name=server scope=cri-o id=" + kHex64 + " pod=ml/sglang-0");
  // In a pod's cgroup: the pod, named by CRI-O's annotations.
  CHECK(owner_field("0::/kubepods.slice/kubepods-pod1a2b3c4d_0000_1111_2222_333344445555.slice/crio-" + kHex64 +
                        ".scope\n",
                    env) == "kind=pod name=ml/sglang-0 scope=cri-o id=1a2b3c4d-0000-1111-2222-333344445555");
  // The monitors are not the container.
  CHECK(owner_field("0::/system.slice/crio-conmon-" + kHex64 + ".scope\n", env) ==
        "kind=cgroup name=/system.slice/crio-conmon-" + kHex64 + ".scope");
  // No files: the id alone.
  CHECK(owner_field("0::/system.slice/crio-" + other + ".scope\n", env) == "kind=container scope=cri-o id=" + other);
  auto o = steps::parse_owner("kind=container name=server scope=cri-o id=" + kHex64 + " pod=ml/sglang-0");
  REQUIRE(o);
  CHECK(o->pod == "ml/sglang-0");
  CHECK(steps::describe(*o) ==
        "container server (cri-o 0123456789ab) of pod ml/sglang-0, whether something restarts it cannot be told");
  CHECK(steps::owner_from(steps::to_value(*o)) == o);
  auto rootless = steps::parse_owner("kind=container name=web scope=podman user=alice id=" + kHex64);
  REQUIRE(rootless);
  CHECK(steps::describe(*rootless) ==
        "container web (podman 0123456789ab, rootless, of alice), whether something restarts it cannot be told");
}
