// Signing a run's final head with an SSH key and checking it (transcript/sign.h),
// through the real ssh-keygen and a real ssh-agent (tests/support/ssh_agent_fixture.h).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/ssh_agent_fixture.h"
#include "support/sshd_fixture.h"
#include "transcript/sign.h"
#include "transcript/writer.h"
#include "util/shell.h"

using namespace ratchet::transcript;
using namespace ratchet::testing;

namespace {

/// Two keys (alice's, and bob's that no allowed signer names) and an allowed
/// signers file for alice, in a fresh directory.
struct Keys {
  std::string dir = temp_dir("ratchet-sign");
  std::string alice = dir + "/alice", bob = dir + "/bob", allowed = dir + "/allowed_signers";
  Keys() {
    for (const auto& k : {alice, bob}) {
      int st = -1;
      run_local("ssh-keygen -q -t ed25519 -N '' -C test -f " + ratchet::util::shell_quote(k) + " </dev/null", &st);
      REQUIRE(st == 0);
    }
    std::string pub = read_file(alice + ".pub");
    write_file(allowed, "alice@example.org " + pub.substr(0, pub.rfind(' ')) + "\n");
  }
  /// "ED25519 SHA256:..." of `key`, as ssh-keygen -l prints it.
  std::string fingerprint(const std::string& key) const {
    std::string l = run_local("ssh-keygen -l -f " + ratchet::util::shell_quote(key + ".pub"));
    std::string fp = l.substr(l.find(' ') + 1);
    fp = fp.substr(0, fp.find(' '));
    return "ED25519 " + fp;
  }
};

const std::string kHead(64, 'a');
const std::string kOther = std::string(63, 'a') + "b";

}  // namespace

TEST_CASE("sign: a head signed with a key file verifies for its principal and names the key", "[transcript][sign]") {
  Keys k;
  std::string err;
  auto key = find_sign_key(k.alice, &err);
  REQUIRE(key);
  CHECK(err == "");
  const std::string sig = k.dir + "/t.jsonl.sig";
  auto r = sign_head(*key, kHead, sig);
  REQUIRE(r.error == "");
  CHECK(r.key == k.fingerprint(k.alice));
  CHECK(read_file(sig).rfind("-----BEGIN SSH SIGNATURE-----\n", 0) == 0);
  struct stat st {};
  REQUIRE(::stat(sig.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
  // The signed message is the 64 hex digits, no newline: ssh-keygen checks it so by hand too.
  int rc = -1;
  run_local("printf %s " + kHead + " | ssh-keygen -Y verify -f " + k.allowed +
                " -I alice@example.org -n ratchet-transcript -s " + sig + " >/dev/null 2>&1",
            &rc);
  CHECK(rc == 0);

  auto good = verify_signature(sig, kHead, k.allowed, "");
  CHECK(good.problem == "");
  CHECK(good.ok);
  CHECK(good.principal == "alice@example.org");
  CHECK(good.key == r.key);
  CHECK(verify_signature(sig, kHead, k.allowed, "alice@example.org").ok);

  SECTION("another head fails: a signature of one run is not one of another") {
    auto c = verify_signature(sig, kOther, k.allowed, "");
    CHECK_FALSE(c.ok);
    CHECK(c.problem.rfind(sig + " is not a signature of this run's final head " + kOther +
                              " (ssh-keygen exit 255: Signature verification failed: incorrect signature",
                          0) == 0);
  }
  SECTION("another signer than --signer fails naming both") {
    auto c = verify_signature(sig, kHead, k.allowed, "bob@example.org");
    CHECK_FALSE(c.ok);
    CHECK(c.problem == "signed by " + r.key + ", which " + k.allowed +
                           " names as alice@example.org, not as --signer bob@example.org");
  }
  SECTION("a missing .sig fails saying so") {
    auto c = verify_signature(k.dir + "/none.sig", kHead, k.allowed, "");
    CHECK_FALSE(c.ok);
    CHECK(c.problem == "no signature: " + k.dir +
                           "/none.sig does not exist (the run was not signed with --sign, or its .sig was not "
                           "kept beside it)");
  }
}

TEST_CASE("sign: a key the allowed signers file does not name fails with that reason", "[transcript][sign]") {
  Keys k;
  std::string err;
  auto key = find_sign_key(k.bob, &err);
  REQUIRE(key);
  const std::string sig = k.dir + "/t.jsonl.sig";
  auto r = sign_head(*key, kHead, sig);
  REQUIRE(r.error == "");
  auto c = verify_signature(sig, kHead, k.allowed, "");
  CHECK_FALSE(c.ok);
  CHECK(c.problem == "the key that signed it (" + k.fingerprint(k.bob) + ") is not in " + k.allowed +
                         " (ssh-keygen exit 255: No principal matched.)");
  CHECK_FALSE(verify_signature(sig, kHead, k.allowed, "alice@example.org").ok);
}

TEST_CASE("sign: the agent's first key signs when no key file is given, and sign_run records it",
          "[transcript][sign]") {
  Keys k;
  SshAgent agent;
  agent.add(k.alice);
  ScopedEnv sock("SSH_AUTH_SOCK", agent.socket());
  const std::string tmp = k.dir + "/tmp";
  std::filesystem::create_directory(tmp);
  ScopedEnv tmpdir("TMPDIR", tmp);
  std::string err;
  auto key = find_sign_key("", &err);
  REQUIRE(key);
  CHECK(err == "");
  CHECK(key->file == "");
  CHECK(key->agent_key == agent.list().substr(0, agent.list().find('\n')));
  CHECK(key->describe() == "the agent's first key (ssh-ed25519 test)");

  const std::string path = k.dir + "/t.jsonl";
  Writer w(path);
  w.emit(events::kRunStart, {{"schema", kSchemaVersion}, {"ratchet_version", "v"}, {"targets", {"a"}}});
  w.emit(events::kRunEnd, {{"status", "ok"}, {"exit_code", 0}, {"hosts", {{"ok", 1}}}});
  const std::string head = w.head();
  auto r = sign_run(w, *key);
  REQUIRE(r.error == "");
  CHECK(r.key == k.fingerprint(k.alice));
  auto lines = read_file(path);
  auto last = nlohmann::json::parse(lines.substr(lines.rfind('\n', lines.size() - 2) + 1));
  CHECK(last["event"] == "signature");
  CHECK(last["head"] == head);
  CHECK(last["key"] == r.key);
  CHECK(last["file"] == path + ".sig");
  CHECK(last["namespace"] == "ratchet-transcript");
  auto c = verify_signature(path + ".sig", head, k.allowed, "");
  CHECK(c.ok);
  CHECK(c.principal == "alice@example.org");
  // The temporary .pub it handed ssh-keygen is gone.
  CHECK(entries(tmp) == 0);
}

TEST_CASE("sign: no agent, an agent without a key and an unreadable key file each say the fix",
          "[transcript][sign]") {
  std::string err;
  {
    ScopedEnv none("SSH_AUTH_SOCK", "");
    CHECK_FALSE(find_sign_key("", &err));
    CHECK(err == "no key to sign with: SSH_AUTH_SOCK is not set (no agent); start one and `ssh-add` your key, "
                 "or give --sign-key FILE");
  }
  {
    SshAgent agent;
    ScopedEnv sock("SSH_AUTH_SOCK", agent.socket());
    CHECK_FALSE(find_sign_key("", &err));
    CHECK(err == "no key to sign with: the agent at " + agent.socket() +
                     " holds no key; `ssh-add` your key, or give --sign-key FILE");
  }
  CHECK_FALSE(find_sign_key("/nonexistent/key", &err));
  CHECK(err == "--sign-key /nonexistent/key: cannot read the key file (No such file or directory): give a "
               "private key file, or a .pub whose private half is in the agent");
}

TEST_CASE("sign: a failed signing is recorded as the signature event's error", "[transcript][sign]") {
  Keys k;
  SshAgent agent;  // holds no key: the .pub handed to ssh-keygen has no private half anywhere
  ScopedEnv sock("SSH_AUTH_SOCK", agent.socket());
  SignKey key;
  key.agent_key = read_file(k.alice + ".pub");
  key.agent_key.pop_back();
  const std::string path = k.dir + "/t.jsonl";
  Writer w(path);
  w.emit(events::kRunStart, {{"schema", kSchemaVersion}, {"ratchet_version", "v"}, {"targets", {"a"}}});
  w.emit(events::kRunEnd, {{"status", "ok"}, {"exit_code", 0}, {"hosts", {{"ok", 1}}}});
  auto r = sign_run(w, key);
  CHECK(r.key == "");
  CHECK(r.error.rfind("ssh-keygen -Y sign with the agent's first key (ssh-ed25519 test) failed: ssh-keygen exit ", 0) ==
        0);
  auto lines = read_file(path);
  auto last = nlohmann::json::parse(lines.substr(lines.rfind('\n', lines.size() - 2) + 1));
  CHECK(last["event"] == "signature");
  CHECK(last["error"] == r.error);
  CHECK_FALSE(last.contains("key"));
  CHECK_FALSE(std::filesystem::exists(path + ".sig"));
}
