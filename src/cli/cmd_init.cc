#include <cstdio>

#include "cli/common.h"
#include "core/error.h"
#include "repo/gojson.h"
#include "repo/key_file.h"

namespace haven::cli {

namespace {
struct InitOptions {
  int repository_version = 2;
  std::string scrypt = "32768,8,4";
};

crypto::ScryptParams ParseScrypt(const std::string& s) {
  unsigned long long n = 0;
  unsigned r = 0, p = 0;
  if (std::sscanf(s.c_str(), "%llu,%u,%u", &n, &r, &p) != 3)
    Fail(ErrorCode::kInvalidArgument, "invalid --scrypt \"" + s + "\" (want N,r,p)");
  crypto::ScryptParams params{n, r, p};
  crypto::CheckScryptParams(params);
  return params;
}
}  // namespace

void RegisterInit(CLI::App& app) {
  static InitOptions o;
  auto* cmd = app.add_subcommand("init", "initialize a new repository");
  cmd->add_option("--repository-version", o.repository_version, "repository format: 1 or 2")
      ->default_val(2);
  cmd->add_option("--scrypt", o.scrypt,
                  "key derivation parameters N,r,p for the new key (default 32768,8,4)");
  cmd->callback([] {
    std::string loc = RepoLocation();
    auto be = MakeBackend(loc);
    if (be->Exists())
      Fail(ErrorCode::kFatal, "create repository at " + loc +
                                  " failed: config file already exists");
    const GlobalOptions& g = Globals();
    std::string pw = ReadPassword("enter password for new repository: ", /*confirm=*/true);
    Repository::Init(*be, pw, o.repository_version, ParseScrypt(o.scrypt), Jobs());
    auto repo = Repository::Open(be, pw, Jobs());
    if (g.json) {
      std::string j = "{\"message_type\":\"initialized\",\"id\":\"" + repo->config().id +
                      "\",\"repository\":";
      gojson::AppendString(j, loc);
      std::printf("%s}\n", j.c_str());
      return;
    }
    Print("created haven repository " + repo->config().id.substr(0, 10) + " at " + loc);
    Print("");
    Print("Please note that knowledge of your password is required to access\n"
          "the repository. Losing your password means that your data is\n"
          "irrecoverably lost.");
  });
}

}  // namespace haven::cli
