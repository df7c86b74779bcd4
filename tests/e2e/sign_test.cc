// `run --sign` on a real sshd on 127.0.0.1 and `show --verify --allowed-signers`
// with the real ssh-keygen (issue 29 item 2): a signed run verifies and names
// its signer; an edited line, a swapped .sig, another signer, a key not
// allowed and a missing .sig each fail with the reason; a key file and the
// agent's key both sign; no key is a usage error before anything connects.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/ssh_agent_fixture.h"
#include "support/sshd_fixture.h"
#include "transcript/chain.h"
#include "util/shell.h"

using namespace ratchet::testing;
using ratchet::util::shell_quote;

namespace {

/// The loopback sshd, an inventory naming it `box`, a playbook of one step, and
/// keys: alice's (allowed as alice@example.org), bob's (allowed nowhere).
struct Env {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-sign-e2e");
  std::string inv = dir + "/inventory.toml", pb = dir + "/pb.toml";
  std::string alice = dir + "/alice", bob = dir + "/bob", allowed = dir + "/allowed_signers";
  const std::string bin = RATCHET_BINARY;

  explicit Env(const std::string& inventory_extra = "") {
    std::ofstream(inv) << inventory_extra << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
    std::ofstream(pb) << "name = \"signed\"\n[[step]]\nid = \"hi\"\nkind = \"run\"\ncommand = \"echo signed\"\n";
    for (const auto& k : {alice, bob}) {
      int st = -1;
      run_local("ssh-keygen -q -t ed25519 -N '' -C " + k.substr(k.rfind('/') + 1) + " -f " + shell_quote(k) +
                    " </dev/null",
                &st);
      REQUIRE(st == 0);
    }
    allow(allowed, "alice@example.org", alice);
  }
  /// Writes an allowed signers file naming `principal` for `key`'s public half.
  void allow(const std::string& file, const std::string& principal, const std::string& key) const {
    std::string pub = read_file(key + ".pub");
    write_file(file, principal + " " + pub.substr(0, pub.rfind(' ')) + "\n");
  }
  ShellResult run(const std::string& t, const std::string& flags, const std::string& env = "") const {
    return run_sh(env + " " + bin + " run " + pb + " -i " + inv + " -F none --transcript " + t + " " + flags);
  }
  ShellResult verify(const std::string& t, const std::string& flags) const {
    return run_sh(bin + " show --verify " + t + " " + flags);
  }
  /// "ED25519 SHA256:..." of `key`.
  std::string fingerprint(const std::string& key) const {
    std::string l = run_local("ssh-keygen -l -f " + shell_quote(key + ".pub"));
    l = l.substr(l.find(' ') + 1);
    return "ED25519 " + l.substr(0, l.find(' '));
  }
};

/// The 64 hex digits after `label` in `text`, or "".
std::string hex_after(const std::string& text, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(label + "([0-9a-f]{64})"))) return "";
  return m[1];
}

/// `text` with `from` replaced by `to` in its lines, and the chain recomputed
/// after it, as a forger who knows the format would: every prev, host_digests
/// and the signature's head rewritten to the new digests.
std::string forge(const std::string& text, const std::string& from, const std::string& to) {
  std::map<std::string, std::string> renamed;  // old digest -> new
  std::string out;
  for (size_t at = 0, nl; at < text.size(); at = nl + 1) {
    nl = text.find('\n', at);
    const std::string old_line = text.substr(at, nl - at);
    std::string line = old_line;
    for (size_t p = 0; (p = line.find(from, p)) != std::string::npos; p += to.size())
      line.replace(p, from.size(), to);
    for (const auto& [o, n] : renamed)
      for (size_t p = 0; o != n && (p = line.find(o, p)) != std::string::npos; p += n.size())
        line.replace(p, o.size(), n);
    renamed[ratchet::transcript::line_digest(old_line)] = ratchet::transcript::line_digest(line);
    out += line + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("run --sign-key signs the final head and show --verify --allowed-signers names who signed",
          "[ssh][e2e][sign]") {
  Env e;
  const std::string t = e.dir + "/t.jsonl";
  auto r = e.run(t, "--sign-key " + e.alice);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const std::string head = hex_after(r.out, "final head \\(the whole run, up to its run_end\\): ");
  REQUIRE(head.size() == 64);
  const std::string fp = e.fingerprint(e.alice);
  CHECK(r.out.find("signed the final head " + head + " with " + fp + " (key " + e.alice + "): " + t + ".sig\n") !=
        std::string::npos);
  CHECK(r.out.find("check who signed it: ratchet show --verify " + t + " --allowed-signers FILE\n") !=
        std::string::npos);
  // The key's content never reaches the transcript or the terminal.
  const std::string priv = read_file(e.alice);
  const std::string body = priv.substr(priv.find('\n') + 1, 40);
  CHECK(read_file(t).find(body) == std::string::npos);
  CHECK(r.out.find(body) == std::string::npos);

  auto v = e.verify(t, "--allowed-signers " + e.allowed);
  INFO(v.out << v.err);
  CHECK(v.code == 0);
  CHECK(v.err == "");
  CHECK(std::regex_search(v.out, std::regex("signature: the final head " + head +
                                            " of run [0-9A-Za-z-]+ is signed by alice@example\\.org \\(key " +
                                            std::regex_replace(fp, std::regex("[+.]"), "\\$&") +
                                            "\\), allowed by ")));
  CHECK(e.verify(t, "--allowed-signers " + e.allowed + " --signer alice@example.org").code == 0);
  // show and report say it was signed, without checking it.
  auto s = run_sh(e.bin + " show " + t);
  CHECK(s.out.find("signed: final head " + head + " by key " + fp) != std::string::npos);
  auto rep = run_sh(e.bin + " report " + t + " -o " + e.dir + "/r.html");
  CHECK(rep.code == 0);
  CHECK(rep.out.find("signature: unchecked") != std::string::npos);
  CHECK(read_file(e.dir + "/r.html").find("data-signature=\"unchecked\">by key " + fp) != std::string::npos);
  auto rep2 = run_sh(e.bin + " report " + t + " -o " + e.dir + "/r2.html --allowed-signers " + e.allowed);
  CHECK(rep2.out.find("signature: good") != std::string::npos);
  CHECK(read_file(e.dir + "/r2.html").find("data-signature=\"good\">alice@example.org (key " + fp) !=
        std::string::npos);

  SECTION("another signer than --signer fails naming the signer found") {
    auto x = e.verify(t, "--allowed-signers " + e.allowed + " --signer bob@example.org");
    CHECK(x.code == 1);
    CHECK(x.err.find(": signature: the final head " + head + " of run ") != std::string::npos);
    CHECK(x.err.find("signed by " + fp + ", which " + e.allowed +
                     " names as alice@example.org, not as --signer bob@example.org\n") != std::string::npos);
  }
  SECTION("a key not in allowed_signers fails") {
    const std::string only_bob = e.dir + "/only_bob";
    e.allow(only_bob, "bob@example.org", e.bob);
    auto x = e.verify(t, "--allowed-signers " + only_bob);
    CHECK(x.code == 1);
    CHECK(x.err.find("the key that signed it (" + fp + ") is not in " + only_bob +
                     " (ssh-keygen exit 255: No principal matched.)\n") != std::string::npos);
    auto rx = run_sh(e.bin + " report " + t + " -o " + e.dir + "/r3.html --allowed-signers " + only_bob);
    CHECK(rx.out.find("signature: bad") != std::string::npos);
  }
  SECTION("a missing .sig fails") {
    std::filesystem::remove(t + ".sig");
    auto x = e.verify(t, "--allowed-signers " + e.allowed);
    CHECK(x.code == 1);
    CHECK(x.err.find("signature: the final head " + head) != std::string::npos);
    CHECK(x.err.find("no signature: " + t + ".sig does not exist") != std::string::npos);
  }
  SECTION("a .sig swapped in from another run fails") {
    const std::string t2 = e.dir + "/t2.jsonl";
    REQUIRE(e.run(t2, "--sign-key " + e.alice).code == 0);
    std::filesystem::copy_file(t2 + ".sig", t + ".sig", std::filesystem::copy_options::overwrite_existing);
    auto x = e.verify(t, "--allowed-signers " + e.allowed);
    CHECK(x.code == 1);
    CHECK(x.err.find(t + ".sig is not a signature of this run's final head " + head +
                     " (ssh-keygen exit 255: Signature verification failed: incorrect signature") !=
          std::string::npos);
  }
  SECTION("an edited line fails: as a chain problem, and with the chain recomputed as a signature problem") {
    const std::string text = read_file(t);
    REQUIRE(text.find("\"data\":\"signed\\n\"") != std::string::npos);
    write_file(t, forge(text, "\"data\":\"signed\\n\"", "\"data\":\"forged\\n\"") );
    auto x = e.verify(t, "--allowed-signers " + e.allowed);
    INFO(x.out << x.err);
    CHECK(x.code == 1);
    CHECK(x.out.find(t + ": every chain is intact (1 run, ") != std::string::npos);  // the forger's work
    CHECK(x.err.find(t + ".sig is not a signature of this run's final head ") != std::string::npos);
    CHECK(x.err.find("Signature verification failed: incorrect signature") != std::string::npos);

    std::string plain = text;
    plain.replace(plain.find("\"data\":\"signed\\n\""), 17, "\"data\":\"forged\\n\"");
    write_file(t, plain);
    auto y = e.verify(t, "--allowed-signers " + e.allowed);
    CHECK(y.code == 1);
    CHECK(std::regex_search(y.err, std::regex(": line [0-9]+: prev does not match line [0-9]+\n$")));
  }
}

TEST_CASE("run --sign without --sign-key signs with the agent's first key", "[ssh][e2e][sign]") {
  Env e;
  SshAgent agent;
  agent.add(e.alice);
  agent.add(e.bob);  // the second: not used
  const std::string t = e.dir + "/t.jsonl";
  auto r = e.run(t, "--sign", "SSH_AUTH_SOCK=" + shell_quote(agent.socket()));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("with " + e.fingerprint(e.alice) + " (the agent's first key (ssh-ed25519 alice)): " + t +
                   ".sig\n") != std::string::npos);
  auto v = e.verify(t, "--allowed-signers " + e.allowed + " --signer alice@example.org");
  INFO(v.out << v.err);
  CHECK(v.code == 0);
  CHECK(v.out.find("is signed by alice@example.org (key " + e.fingerprint(e.alice) + ")") != std::string::npos);
}

TEST_CASE("run --sign with no agent and no key is a usage error before anything connects", "[ssh][e2e][sign]") {
  Env e;
  const std::string t = e.dir + "/t.jsonl";
  auto r = e.run(t, "--sign", "SSH_AUTH_SOCK=");
  CHECK(r.code == 2);
  CHECK(r.err.find("--sign: no key to sign with: SSH_AUTH_SOCK is not set (no agent); start one and `ssh-add` "
                   "your key, or give --sign-key FILE") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(t));  // nothing ran, nothing was recorded
  auto d = e.run("/dev/null", "--sign-key " + e.alice);
  CHECK(d.code == 2);
  CHECK(d.err.find("--sign signs the transcript file, and --transcript /dev/null is not a regular file") !=
        std::string::npos);
}

TEST_CASE("a signing that fails at the run's end exits 1 naming why and keeps the run's record",
          "[ssh][e2e][sign]") {
  Env e;
  SshAgent agent;  // holds no key: alice's .pub alone (its private half moved away) cannot sign
  const std::string pub = e.dir + "/lonely.pub";
  std::filesystem::copy_file(e.alice + ".pub", pub);
  const std::string t = e.dir + "/t.jsonl";
  auto r = e.run(t, "--sign-key " + pub, "SSH_AUTH_SOCK=" + shell_quote(agent.socket()));
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("ratchet: error: not signed: ssh-keygen -Y sign with key " + pub + " failed: ssh-keygen exit ") !=
        std::string::npos);
  CHECK(r.err.find("; the run's results are in " + t) != std::string::npos);
  CHECK(r.out.find("ok (exit 0)") != std::string::npos);  // the run itself
  auto chain = e.verify(t, "");
  CHECK(chain.code == 0);  // the record is whole
  auto v = e.verify(t, "--allowed-signers " + e.allowed);
  CHECK(v.code == 1);
  CHECK(v.err.find("was not signed: signing failed when it ended (line ") != std::string::npos);
}

TEST_CASE("sign = true in the inventory's defaults signs as --sign does, and names the inventory when it cannot",
          "[ssh][e2e][sign]") {
  Env e("[defaults]\nsign = true\n");
  const std::string t = e.dir + "/t.jsonl";
  auto none = e.run(t, "", "SSH_AUTH_SOCK=");
  CHECK(none.code == 2);
  CHECK(none.err.find("`sign = true` in " + e.inv + ": no key to sign with: SSH_AUTH_SOCK is not set") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(t));
  SshAgent agent;
  agent.add(e.alice);
  auto r = e.run(t, "", "SSH_AUTH_SOCK=" + shell_quote(agent.socket()));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("(the agent's first key (ssh-ed25519 alice)): " + t + ".sig\n") != std::string::npos);
  CHECK(e.verify(t, "--allowed-signers " + e.allowed).code == 0);
}
