#include "support/every_kind.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/files.h"
#include "transcript/reader.h"

namespace ratchet::testing {

std::string EveryKind::playbook() const {
  const std::string h = host_dir;
  std::filesystem::create_directories(local_dir + "/tree/bin");
  write_file(local_dir + "/tree/a.conf", "conf\n");
  write_file(local_dir + "/tree/bin/tool.sh", "#!/bin/sh\necho tool\n");
  chmod((local_dir + "/tree/bin/tool.sh").c_str(), 0755);
  const std::string p = local_dir + "/every-kind.toml";
  const std::string user = scan_user.empty() ? "" : "user = \"" + scan_user + "\"\n";
  write_file(p, "name = \"every-kind\"\ntargets = [\"box\"]\nlock = true\nlock_path = \"" + h +
                    "/lock\"\naudit_log = \"" + h + "/audit.log\"\n"
                    "[[step]]\nid = \"run\"\nkind = \"run\"\ncommand = \"echo ran > " + h + "/run.out\"\n"
                    "creates = \"" + h + "/run.out\"\n"
                    "[[step]]\nid = \"service\"\nkind = \"service\"\nunit = \"ratchet-absent.service\"\n"
                    "state = \"stopped\"\non_failure = \"continue\"\n"
                    "[[step]]\nid = \"kill\"\nkind = \"kill\"\nholders_of = \"" + held() + "\"\nsignal = \"KILL\"\n" + user +
                    "[[step]]\nid = \"verify\"\nkind = \"verify\"\nno_holders = [\"" + held() + "\"]\n"
                    "file_exists = [\"" + h + "/run.out\"]\n" + user +
                    "[[step]]\nid = \"write\"\nkind = \"write\"\npath = \"" + h + "/write.txt\"\n"
                    "content = \"written\\n\"\nmode = \"0640\"\n"
                    "[[step]]\nid = \"copy\"\nkind = \"copy\"\nsrc = \"tree\"\ndest = \"" + h + "/tree\"\n"
                    "[[step]]\nid = \"fetch\"\nkind = \"fetch\"\nsrc = \"" + h + "/run.out\"\n");
  return p;
}

const std::vector<std::pair<std::string, std::string>>& EveryKind::expected() {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"run", "changed"},  {"service", ""},     {"kill", "changed"}, {"verify", "ok"},
      {"write", "changed"}, {"copy", "changed"}, {"fetch", "changed"}};
  return k;
}

namespace {
std::map<std::string, std::string> step_field(const std::string& transcript, const char* field) {
  std::map<std::string, std::string> out;
  for (const auto& ev : transcript::read_transcript(transcript).events)
    if (ev["event"] == "step_end") out[ev["step"].get<std::string>()] = ev.value(field, std::string());
  return out;
}
}  // namespace

std::map<std::string, std::string> step_statuses(const std::string& transcript) {
  return step_field(transcript, "status");
}

std::map<std::string, std::string> step_reasons(const std::string& transcript) {
  return step_field(transcript, "reason");
}

std::vector<std::string> lines_with(const std::string& transcript, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(read_file(transcript));
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos && line.find("\"event\":\"host_library\"") == std::string::npos)
      out.push_back(line.substr(0, 400));
  return out;
}

}  // namespace ratchet::testing
