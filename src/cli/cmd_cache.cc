// cache: restic 0.14's `cache [--cleanup] [--max-age DAYS] [--no-size]`: the cache folders
// under the cache base (backend/cache_dirs) as restic's table (repository id cut to 10
// characters, "N days ago", "yes" when older than --max-age, the size), or with --cleanup
// (or the global --cleanup-cache) the removal of the old ones.
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "backend/cache_dirs.h"
#include "cli/common.h"
#include "cli/more_commands.h"
#include "cli/restic_format.h"
#include "cli/table.h"
#include "core/error.h"

namespace haven::cli {

namespace {

struct CacheCmdOptions {
  std::vector<std::string> args;
  bool cleanup = false;
  unsigned max_age = 30;
  bool no_size = false;
};

void Cleanup(const std::string& base, const CacheCmdOptions& o) {
  const int64_t now = std::time(nullptr);
  std::vector<CacheDir> old;
  for (auto& d : ListCacheDirs(base, false))
    if (IsOldCacheDir(d, o.max_age, now)) old.push_back(std::move(d));
  if (old.empty()) {
    Print("no old cache dirs found");
    return;
  }
  Print("remove " + std::to_string(old.size()) + " old cache directories");
  for (const auto& d : old) {
    const std::string dir = (std::filesystem::path(base) / d.name).string();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec) Warn("unable to remove " + dir + ": " + ec.message());
  }
}

void RunCache(const CacheCmdOptions& o) {
  if (!o.args.empty())
    Fail(ErrorCode::kInvalidArgument,
         "the cache command expects no arguments, only options - please see `haven help "
         "cache` for usage and flags");
  if (Globals().no_cache) Fail(ErrorCode::kInvalidArgument, "Refusing to do anything, the cache is disabled");
  const std::string base = CacheBaseDir();
  if (base.empty()) Fail(ErrorCode::kNotFound, "unable to locate cache directory (set --cache-dir or HAVEN_CACHE_DIR)");
  if (o.cleanup || Globals().cleanup_cache) return Cleanup(base, o);
  const auto dirs = ListCacheDirs(base, !o.no_size);
  if (dirs.empty()) {
    std::cout << "no cache dirs found, basedir is " << base << "\n";
    return;
  }
  Table t;
  t.headers = {"Repo ID", "Last Used", "Old"};
  if (!o.no_size) t.headers.push_back("Size");
  const int64_t now = std::time(nullptr);
  for (const auto& d : dirs) {
    std::vector<std::string> row;
    row.push_back(d.name.rfind("restic-check-cache-", 0) == 0 ? d.name : d.name.substr(0, 10));
    const int64_t age = now > d.mtime ? (now - d.mtime) / 86400 : 0;
    row.push_back(std::to_string(age) + " days ago");
    row.push_back(IsOldCacheDir(d, o.max_age, now) ? "yes" : "");
    if (!o.no_size) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%11s", ResticBytes(d.bytes).c_str());
      row.push_back(buf);
    }
    t.rows.push_back(std::move(row));
  }
  std::cout << t.Render() << dirs.size() << " cache dirs in " << base << "\n";
}

}  // namespace

void RegisterCache(CLI::App& app) {
  static CacheCmdOptions o;
  auto* cmd = app.add_subcommand("cache", "operate on local cache directories");
  cmd->add_option("args", o.args, "")->expected(0, -1);
  cmd->add_flag("--cleanup", o.cleanup, "remove old cache directories");
  cmd->add_option("--max-age", o.max_age, "max age in days for cache directories to be considered old")
      ->default_val(30);
  cmd->add_flag("--no-size", o.no_size, "do not output the size of the cache directories");
  cmd->callback([] { RunCache(o); });
}

}  // namespace haven::cli
