// self-update: restic's command to replace its own binary. haven refuses it: the system's
// package manager installs and updates haven (exit 1, with a message saying so).
#include "cli/common.h"
#include "cli/more_commands.h"
#include "core/error.h"

namespace haven::cli {

void RegisterSelfUpdate(CLI::App& app) {
  auto* cmd = app.add_subcommand("self-update", "update haven (refused: use the system's package manager)");
  static std::string output;
  cmd->add_option("--output", output, "ignored: haven does not replace its own binary");
  cmd->callback([] {
    Fail(ErrorCode::kUnsupported,
         "self-update is not supported: haven is installed and updated by the system's package "
         "manager (for example `sudo apt-get install --only-upgrade haven`, or your "
         "distribution's equivalent); it never replaces its own binary");
  });
}

}  // namespace haven::cli
