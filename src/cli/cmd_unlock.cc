#include "cli/common.h"
#include "repo/lock.h"

namespace haven::cli {

void RegisterUnlock(CLI::App& app) {
  static bool all = false;
  auto* cmd = app.add_subcommand("unlock", "remove stale locks");
  cmd->add_flag("--remove-all", all, "remove all locks, even active ones");
  cmd->callback([] {
    auto repo = OpenRepository();
    int n = RemoveLocks(*repo, all);
    Print("successfully removed " + std::to_string(n) + " locks");
  });
}

void RegisterVersion(CLI::App& app) {
  auto* cmd = app.add_subcommand("version", "print version information");
  cmd->callback([] {
    Print(std::string("haven ") + kVersion + " compiled with g++ " + __VERSION__ +
          " on linux (repository format: restic v1/v2)");
  });
}

}  // namespace haven::cli
