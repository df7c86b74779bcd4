// Secrets against a real sshd on 127.0.0.1 (issue 4, item 5): values of the
// [secrets] table (env: and file: sources) never appear, in clear or base64,
// in the transcript, `show`, `plan`, the progress lines, the recap, the --json
// summary or error messages, even when the host echoes them back or a failing
// command's output becomes the step's reason; "***" stands where they were.
#include <catch2/catch.hpp>

#include <fstream>

#include "support/files.h"
#include "support/base64.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"
#include "util/text.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

const std::string kToken = "tok3n-S3CR3T-7781";  // from env:RATCHET_TEST_TOKEN
const std::string kPw = "filePw-zX81-q7";         // from file:DIR/pw.txt

struct Env {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-secrets");
  std::string inv = dir + "/inventory.toml";

  Env() {
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
    write_file(dir + "/pw.txt", kPw + "\n");  // the trailing newline is not part of the secret
  }
  std::string playbook(const std::string& name, const std::string& body) {
    std::string p = dir + "/" + name;
    write_file(p, "name = \"sec\"\n[secrets]\ntoken = \"env:RATCHET_TEST_TOKEN\"\npw = \"file:" + dir +
                      "/pw.txt\"\n" + body);
    return p;
  }
  ShellResult ratchet(const std::string& args) {
    return run_sh("RATCHET_TEST_TOKEN=" + kToken + " " + RATCHET_BINARY + " " + args + " -F none");
  }
};

/// Where `text` shows any of the secrets: in clear, as a prefix of 6 bytes or
/// more (a cut line), or base64-encoded at any of the three alignments.
std::string leaks(const std::string& text) {
  std::string found;
  for (const auto& s : {kToken, kPw}) {
    for (size_t n = s.size(); n >= 6; --n)
      if (text.find(s.substr(0, n)) != std::string::npos) {
        found += "clear '" + s.substr(0, n) + "'; ";
        break;
      }
    for (const std::string pad : {"", "x", "xy"}) {
      std::string b = ratchet::util::base64(pad + s);
      // the characters that encode only the secret's own bytes
      size_t skip = pad.empty() ? 0 : 4;
      std::string core = b.substr(skip, (s.size() + pad.size()) / 3 * 4 - skip);
      if (core.size() >= 8 && text.find(core) != std::string::npos) found += "base64 '" + core + "'; ";
    }
  }
  return found;
}

std::vector<json> events(const std::string& t) { return ratchet::transcript::read_transcript(t).events; }

json find(const std::string& t, const std::string& event, const std::string& step, const std::string& extra_key = "",
          const std::string& extra_val = "") {
  for (const auto& ev : events(t))
    if (ev["event"] == event && ev.value("step", "") == step &&
        (extra_key.empty() || (ev.contains(extra_key) && ev[extra_key] == extra_val)))
      return ev;
  return json();
}

std::string body(const std::string& d) {
  return "[[step]]\nid = \"stdin_echo\"\nkind = \"run\"\ncommand = \"tee /dev/stderr\"\nstdin = \"{{ token }}\\n\"\n"
         "[[step]]\nid = \"store\"\nkind = \"write\"\npath = \"" + d + "/host-secret.txt\"\nmode = \"0600\"\n"
         "content = \"pw={{ pw }} token={{ token }}\\n\"\n"
         "[[step]]\nid = \"echo_file\"\nkind = \"run\"\ncommand = \"cat " + d + "/host-secret.txt\"\n"
         "[[step]]\nid = \"echo_binary\"\nkind = \"run\"\ncommand = \"printf '\\\\377'; cat " + d + "/host-secret.txt\"\n"
         "[[step]]\nid = \"fails\"\nkind = \"run\"\non_failure = \"continue\"\n"
         "command = \"cat " + d + "/host-secret.txt >&2; exit 3\"\n"
         "[[step]]\nid = \"carry\"\nkind = \"run\"\non_failure = \"continue\"\n"
         "command = \"echo {{ steps.echo_file.stdout }}\"\n";
}

}  // namespace

TEST_CASE("secrets are masked in the transcript, show, progress, recap and errors, even echoed by the host",
          "[ssh][secrets]") {
  Env e;
  std::string pb = e.playbook("s.toml", body(e.dir));
  std::string t = e.dir + "/t.jsonl";
  auto r = e.ratchet("run " + pb + " -i " + e.inv + " --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  // The host really got the values (the file it wrote holds them).
  CHECK(read_file(e.dir + "/host-secret.txt") == "pw=" + kPw + " token=" + kToken + "\n");
  std::string text = read_file(t);
  CHECK(leaks(text) == "");
  CHECK(leaks(r.out) == "");
  CHECK(leaks(r.err) == "");

  auto start = find(t, "run_start", "");
  CHECK(start["vars"]["token"] == "***");
  CHECK(start["vars"]["pw"] == "***");
  // stdin carrying a secret: recorded as "***", and the step's output as sizes only.
  auto cmd = find(t, "command", "stdin_echo");
  CHECK(cmd["stdin"] == "***");
  CHECK(cmd["stdin_bytes"] == kToken.size() + 1);
  CHECK_FALSE(cmd.contains("stdin_sha256"));
  for (const char* stream : {"stdout", "stderr"}) {
    auto o = find(t, "output", "stdin_echo", "stream", stream);
    INFO(stream);
    CHECK(o["bytes"] == kToken.size() + 1);
    CHECK_FALSE(o.contains("data"));
    CHECK_FALSE(o.contains("data_b64"));
  }
  CHECK(find(t, "command", "store", "role", "action")["stdin"] == "***");
  // The host prints the secret on its own: masked in data and in data_b64.
  CHECK(find(t, "output", "echo_file", "stream", "stdout")["data"] == "pw=*** token=***\n");
  auto bin = find(t, "output", "echo_binary", "stream", "stdout");
  REQUIRE(bin.contains("data_b64"));
  CHECK(unbase64(bin["data_b64"]) == "\377pw=*** token=***\n");
  // A command that would carry a secret on its command line is refused, recorded masked.
  auto carry_cmd = find(t, "command", "carry");
  CHECK(carry_cmd["command"].get<std::string>().find("pw=*** token=***") != std::string::npos);
  CHECK(find(t, "exit", "carry")["error"] ==
        "refused: the command would carry a secret on its command line (pass it on stdin)");
  CHECK(find(t, "step_end", "carry")["status"] == "failed");
  // A failing command's output is its reason: masked in the transcript and on the terminal.
  CHECK(find(t, "step_end", "fails")["reason"] == "exit 3: pw=*** token=***");
  CHECK(find(t, "host_end", "")["reason"] == "exit 3: pw=*** token=***");
  CHECK(r.out.find("exit 3: pw=*** token=***") != std::string::npos);   // progress line
  CHECK(r.out.find("fails: exit 3: pw=*** token=***") != std::string::npos);  // recap

  // show renders the masked transcript.
  auto s = run_sh(std::string(RATCHET_BINARY) + " show " + t);
  CHECK(s.code == 0);
  CHECK(leaks(s.out + s.err) == "");
  CHECK(s.out.find("| pw=*** token=***") != std::string::npos);
  CHECK(s.out.find("failed (rung 0) in ") != std::string::npos);
  CHECK(s.out.find(": exit 3: pw=*** token=***") != std::string::npos);

  // --json: the summary on stdout, masked.
  std::string t2 = e.dir + "/t2.jsonl";
  auto j = e.ratchet("run " + pb + " -i " + e.inv + " --json --transcript " + t2);
  CHECK(j.code == 1);
  CHECK(leaks(j.out + j.err + read_file(t2)) == "");
  auto sum = json::parse(j.out);
  CHECK(sum["hosts"][0]["reason"] == "exit 3: pw=*** token=***");
  CHECK(sum["hosts"][0]["failed_step"] == "fails");
}

TEST_CASE("plan shows a secret masked and never reads its value", "[ssh][secrets]") {
  Env e;
  std::string pb = e.playbook("s.toml", body(e.dir));
  auto p = e.ratchet("plan " + pb + " -i " + e.inv + " --json");
  INFO(p.err);
  REQUIRE(p.code == 0);
  CHECK(leaks(p.out + p.err) == "");
  auto j = json::parse(p.out);
  const auto& steps = j["hosts"][0]["steps"];
  std::string stdin_echo, store;
  for (const auto& s : steps)
    for (const auto& c : s["commands"])
      if (c.contains("stdin")) (s["id"] == "stdin_echo" ? stdin_echo : store) = c["stdin"].get<std::string>();
  // plan renders secrets as "***" (it never reads them): the text shows where they go.
  CHECK(stdin_echo == "***\n");
  CHECK(store == "pw=*** token=***\n");
  auto pt = e.ratchet("plan " + pb + " -i " + e.inv);
  REQUIRE(pt.code == 0);
  CHECK(leaks(pt.out + pt.err) == "");
  CHECK(pt.out.find("| pw=*** token=***\n") != std::string::npos);
  // plan works without the secret's sources (it connects to and reads nothing).
  auto bare = run_sh(std::string(RATCHET_BINARY) + " plan " + pb + " -i " + e.inv + " -F none");
  CHECK(bare.code == 0);
}

TEST_CASE("a progress line cut to its width never shows part of a secret", "[ssh][secrets]") {
  Env e;
  // The reason is "exit 3: " + 140 bytes + the token: the progress line's cut
  // (160 bytes of ": reason") falls inside the token.
  std::string filler(140, 'f');
  std::string pb = e.playbook("c.toml", "[[step]]\nid = \"fails2\"\nkind = \"run\"\n"
                                        "command = \"printf '" + filler + "%s\\\\n' \\\"$(cat " + e.dir +
                                        "/host.txt)\\\" >&2; exit 3\"\n");
  write_file(e.dir + "/host.txt", kToken);
  std::string t = e.dir + "/t.jsonl";
  auto r = e.ratchet("run " + pb + " -i " + e.inv + " --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(leaks(read_file(t)) == "");
  auto recap = r.out.find("\nRECAP\n");
  REQUIRE(recap != std::string::npos);
  std::string progress = r.out.substr(0, recap);
  CHECK(leaks(progress) == "");
  CHECK(progress.find("fails2") != std::string::npos);
}

TEST_CASE("the recap cut to its width never shows part of a secret", "[ssh][secrets]") {
  Env e;
  // "fails: exit 3: " + 130 bytes + the token: the recap cuts at 160 columns.
  std::string filler(130, 'f');
  write_file(e.dir + "/host.txt", kToken);
  std::string pb = e.playbook("c.toml", "[[step]]\nid = \"fails\"\nkind = \"run\"\n"
                                        "command = \"printf '" + filler + "%s\\\\n' \\\"$(cat " + e.dir +
                                        "/host.txt)\\\" >&2; exit 3\"\n");
  std::string t = e.dir + "/t.jsonl";
  auto r = e.ratchet("run " + pb + " -i " + e.inv + " --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  auto recap = r.out.find("\nRECAP\n");
  REQUIRE(recap != std::string::npos);
  CHECK(leaks(r.out.substr(recap)) == "");
}

TEST_CASE("a secret of several lines is masked in a reason that holds only its first line",
          "[ssh][secrets]") {
  Env e;
  write_file(e.dir + "/multi.txt", "line-one-Qw8\nline-two-Zr5\n");
  std::string pb = e.dir + "/m.toml";
  write_file(pb, "name = \"m\"\n[secrets]\nkey = \"file:" + e.dir + "/multi.txt\"\n"
                 "[[step]]\nid = \"fails\"\nkind = \"run\"\nstdin = \"{{ key }}\"\ncommand = \"cat >&2; exit 3\"\n");
  std::string t = e.dir + "/t.jsonl";
  auto r = e.ratchet("run " + pb + " -i " + e.inv + " --transcript " + t);
  CHECK(r.code == 1);
  std::string all = r.out + r.err + read_file(t);
  CHECK(all.find("line-one-Qw8") == std::string::npos);
  CHECK(all.find("line-two-Zr5") == std::string::npos);
}

TEST_CASE("a secret cut by the capture cap leaves no part of it in the transcript", "[ssh][secrets]") {
  Env e;
  // capture 64: the head keeps 32 bytes, 20 of filler and the token's first 12.
  write_file(e.dir + "/host.txt", kToken);
  std::string pb = e.playbook("cap.toml", "[[step]]\nid = \"cut\"\nkind = \"run\"\ncapture = 64\n"
                                          "command = \"printf '%020d' 0; cat " + e.dir + "/host.txt; printf '%0200d' 0\"\n");
  std::string t = e.dir + "/t.jsonl";
  auto r = e.ratchet("run " + pb + " -i " + e.inv + " --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  auto o = find(t, "output", "cut", "stream", "stdout");
  CHECK(o["bytes"] == 20 + kToken.size() + 200);
  CHECK(leaks(read_file(t)) == "");
}

TEST_CASE("a secret from the command line (-e NAME=VALUE --secret NAME) reaches the host, never the record",
          "[ssh][secrets]") {
  Env e;
  const std::string val = "cli-S3cret-9q2w";  // "1234"-like values stay text: never read as TOML
  std::string pb = e.dir + "/cli.toml";
  write_file(pb, "name = \"cli\"\n[vars]\napi_key = \"placeholder\"\n"
                 "[[step]]\nid = \"store\"\nkind = \"write\"\npath = \"" + e.dir + "/cli-secret.txt\"\n"
                 "content = \"key={{ api_key }}\\n\"\n"
                 "[[step]]\nid = \"echo\"\nkind = \"run\"\ncommand = \"cat " + e.dir + "/cli-secret.txt\"\n");
  std::string t = e.dir + "/cli.jsonl";
  auto r = e.ratchet("run " + pb + " -i " + e.inv + " -e api_key=" + val + " --secret api_key --transcript " + t);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(read_file(e.dir + "/cli-secret.txt") == "key=" + val + "\n");  // the host got it
  std::string text = read_file(t);
  CHECK(text.find(val) == std::string::npos);
  CHECK(text.find(val.substr(0, 8)) == std::string::npos);
  CHECK((r.out + r.err).find(val.substr(0, 8)) == std::string::npos);
  auto start = find(t, "run_start", "");
  CHECK(start["vars"]["api_key"] == "***");
  bool argv_masked = false;
  for (const auto& a : start["argv"]) argv_masked |= a == "api_key=***";
  CHECK(argv_masked);
  CHECK(find(t, "command", "store", "role", "action")["stdin"] == "***");
  CHECK(find(t, "output", "echo", "stream", "stdout")["data"] == "key=***\n");
  auto s = run_sh(std::string(RATCHET_BINARY) + " show " + t);
  CHECK(s.code == 0);
  CHECK((s.out + s.err).find(val.substr(0, 8)) == std::string::npos);
  CHECK(s.out.find("| key=***") != std::string::npos);

  // plan knows the value yet prints "***"; without --secret the same -e is a plain var.
  auto p = e.ratchet("plan " + pb + " -i " + e.inv + " -e api_key=" + val + " --secret api_key");
  REQUIRE(p.code == 0);
  CHECK((p.out + p.err).find(val.substr(0, 8)) == std::string::npos);
  CHECK(p.out.find("| key=***\n") != std::string::npos);
  auto plain = e.ratchet("plan " + pb + " -i " + e.inv + " -e api_key=" + val);
  CHECK(plain.out.find("| key=" + val + "\n") != std::string::npos);

  // A secret goes on stdin or into file content only, whatever its source.
  std::string bad = e.dir + "/cli-bad.toml";
  write_file(bad, "name = \"cli\"\n[[step]]\nid = \"leak\"\nkind = \"run\"\ncommand = \"echo {{ api_key }}\"\n");
  auto b = e.ratchet("run " + bad + " -i " + e.inv + " -e api_key=" + val + " --secret api_key");
  CHECK(b.code == 2);
  CHECK(b.err.find(bad + ":5:17: error: secret `api_key` used in `command` (secrets go on stdin or into file "
                         "content only)") != std::string::npos);
  CHECK((b.out + b.err).find(val.substr(0, 8)) == std::string::npos);
  // The name given twice: the earlier value is masked too (argv holds both).
  std::string t2 = e.dir + "/cli2.jsonl";
  auto twice = e.ratchet("run " + pb + " -i " + e.inv + " -e api_key=First-S3cret-11 -e api_key=" + val +
                         " --secret api_key --transcript " + t2);
  CHECK(twice.code == 0);
  std::string text2 = read_file(t2);
  CHECK(text2.find("First-S3cret") == std::string::npos);
  CHECK(text2.find(val.substr(0, 8)) == std::string::npos);
  int masked = 0;
  json start2 = find(t2, "run_start", "");  // named: a range over a temporary's member would dangle
  for (const auto& a : start2["argv"]) masked += a == "api_key=***";
  CHECK(masked == 2);
  // --secret with no -e of that name: a usage error that names the fix; nothing runs.
  auto none = e.ratchet("run " + pb + " -i " + e.inv + " --secret api_key");
  CHECK(none.code == 2);
  CHECK(none.err.find("--secret: error: `api_key`: no -e api_key=VALUE gives this secret its value (add -e "
                      "api_key=VALUE, or use a [secrets] entry (env:NAME, file:PATH))") != std::string::npos);
}

TEST_CASE("a probe of a write never shows a secret's line - the new value nor the host's old one", "[ssh][secrets][probe]") {
  // Issue 27, item 6: the rendered template holds the secret; the file on the
  // host holds the old one, which no mask knows. Both lines are "***" in the
  // terminal's diff, the probe's transcript, the saved plan (--out), and in
  // apply's probe again and its run.
  Env e;
  const std::string kOld = "OLD-hostside-4410";
  const std::string conf = e.dir + "/app.conf";
  write_file(conf, "user=app\npassword=" + kOld + "\nport=5432\n");
  write_file(e.dir + "/app.conf.tmpl", "user=app\npassword={{ token }}\nport=5433\n");
  const std::string pb = e.playbook("w.toml", "[[step]]\nid = \"conf\"\nkind = \"write\"\npath = \"" +
                                                  conf + "\"\ntemplate = \"app.conf.tmpl\"\n");
  const std::string t = e.dir + "/probe.jsonl", out = e.dir + "/plan.json";
  auto r = e.ratchet("plan " + pb + " -i " + e.inv + " --probe --out " + out + " --transcript " + t);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("     user=app\n") != std::string::npos);
  CHECK(r.out.find("-***\n") != std::string::npos);
  CHECK(r.out.find("+***\n") != std::string::npos);
  CHECK(r.out.find("-port=5432\n") != std::string::npos);  // the lines around stay readable
  CHECK(r.out.find("+port=5433\n") != std::string::npos);
  for (const std::string& where : {r.out + r.err, read_file(t), read_file(out)}) {
    CHECK(where.find(kOld) == std::string::npos);
    CHECK(where.find("OLD-host") == std::string::npos);
    CHECK(leaks(where) == "");
  }
  // The saved probe holds the same diff.
  auto saved = json::parse(read_file(out));
  const std::string diff = saved["probe"]["hosts"][0]["steps"][0].value("diff", "");
  CHECK(diff.find("\n user=app\n-***\n-port=5432\n+***\n+port=5433\n") != std::string::npos);

  // apply probes again (recorded in its transcript), then writes: still nothing of either value.
  const std::string t2 = e.dir + "/apply.jsonl";
  auto a = run_sh("RATCHET_TEST_TOKEN=" + kToken + " " + RATCHET_BINARY + " apply " + out + " --transcript " + t2);
  INFO(a.out << a.err);
  CHECK(a.code == 0);
  CHECK(a.out.find("host box: as probed, nothing changed") != std::string::npos);
  for (const std::string& where : {a.out + a.err, read_file(t2)}) {
    CHECK(where.find(kOld) == std::string::npos);
    CHECK(leaks(where) == "");
  }
  CHECK(read_file(conf) == "user=app\npassword=" + kToken + "\nport=5433\n");  // the host got the value
}
