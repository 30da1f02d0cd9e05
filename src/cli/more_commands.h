// Registration of the restic commands added by issue 14 (diff, find, stats, tag, list,
// cache, self-update, rewrite, copy): one Register function each, called from app.cc.
#pragma once

#include <CLI/CLI.hpp>

namespace haven::cli {

void RegisterDiff(CLI::App& app);
void RegisterFind(CLI::App& app);
void RegisterStats(CLI::App& app);
void RegisterTag(CLI::App& app);
void RegisterList(CLI::App& app);
void RegisterCache(CLI::App& app);
void RegisterRewrite(CLI::App& app);
void RegisterCopy(CLI::App& app);
void RegisterSelfUpdate(CLI::App& app);  // refuses: the package manager updates haven

}  // namespace haven::cli
