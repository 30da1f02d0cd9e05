// Registration of issue 14's remaining restic commands (mount, migrate, recover, repair
// packs): one Register function each, called from app.cc (repair packs: cmd_repair.cc).
#pragma once

#include <CLI/CLI.hpp>

namespace haven::cli {

void RegisterMount(CLI::App& app);
void RegisterMigrate(CLI::App& app);
void RegisterRecover(CLI::App& app);
// `repair packs` (restic 0.16), added to the `repair` command by cmd_repair.cc.
void RegisterRepairPacks(CLI::App* repair);

}  // namespace haven::cli
