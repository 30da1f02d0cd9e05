// migrate: restic 0.14's migrations. Without arguments the applicable ones are listed;
// with names, each is checked (--force applies it anyway), the repository is checked when
// the migration asks for it, and it is applied. upgrade_repo_v2 is
// maintenance/upgrade_repo_v2; s3_layout (restic's move away from the s3legacy layout)
// never applies: haven's S3 backend has only the default layout.
#include <cstdlib>
#include <functional>
#include <iostream>

#include "cli/common.h"
#include "cli/mount_commands.h"
#include "core/error.h"
#include "maintenance/check.h"
#include "maintenance/upgrade_repo_v2.h"

namespace haven::cli {

namespace {

struct Migration {
  const char* name;
  const char* desc;
  std::function<bool(Repository&)> check;
  bool repo_check;
  std::function<void(Repository&)> apply;
};

std::vector<Migration> AllMigrations() {
  return {
      {"s3_layout", "move files from 's3legacy' to the 'default' repository layout",
       [](Repository&) { return false; }, false,
       [](Repository&) {
         Fail(ErrorCode::kUnsupported, "haven's S3 backend uses only the default layout");
       }},
      {kUpgradeRepoV2, kUpgradeRepoV2Desc,
       [](Repository& r) { return UpgradeRepoV2Applicable(r); }, true,
       [](Repository& r) {
         const char* tmp = std::getenv("TMPDIR");
         UpgradeRepoV2(r, tmp && *tmp ? tmp : "/tmp");
       }},
  };
}

// restic's runCheck inside migrate (the lock is already held).
void CheckRepository(Repository& repo) {
  Print("checking repository integrity...");
  CheckOptions opts;
  opts.jobs = Jobs();
  opts.progress = [](const std::string& s) { Print(s); };
  CheckResult r = RunCheck(repo, opts);
  for (const auto& h : r.hints) Print(h);
  for (const auto& e : r.errors) Warn("error: " + e);
  if (!r.ok()) Fail(ErrorCode::kFatal, "repository contains errors");
  Print("no errors were found");
}

void ListMigrations(Repository& repo) {
  std::cout << "available migrations:\n";
  bool found = false;
  for (const auto& m : AllMigrations()) {
    if (!m.check(repo)) continue;
    std::cout << "  " << m.name << '\t' << m.desc << '\n';
    found = true;
  }
  if (!found) std::cout << "no migrations found";
  std::cout << std::flush;
}

void RunMigrate(const std::vector<std::string>& names, bool force) {
  auto repo = OpenRepository({.use_cache = false});
  auto lock = LockRepository(*repo, true);
  if (names.empty()) return ListMigrations(*repo);
  bool failed = false;
  for (const auto& name : names) {
    for (const auto& m : AllMigrations()) {
      if (name != m.name) continue;
      if (!m.check(*repo)) {
        if (!force) {
          Warn("migration " + name + " cannot be applied: check failed\nIf you want to apply "
               "this migration anyway, re-run with option --force");
          continue;
        }
        Warn("check for migration " + name + " failed, continuing anyway");
      }
      if (m.repo_check) CheckRepository(*repo);
      std::cout << "applying migration " << name << "...\n" << std::flush;
      try {
        m.apply(*repo);
      } catch (const Error& e) {
        Warn("migration " + name + " failed: " + e.what());
        failed = true;
        continue;
      }
      std::cout << "migration " << name << ": success\n" << std::flush;
    }
  }
  if (failed) g_exit_code = 1;
}

}  // namespace

void RegisterMigrate(CLI::App& app) {
  static std::vector<std::string> names;
  static bool force = false;
  auto* cmd = app.add_subcommand("migrate", "apply migrations");
  cmd->add_option("name", names, "migrations to apply (none: list the available ones)");
  cmd->add_flag("-f,--force", force, "apply a migration a second time");
  cmd->callback([] { RunMigrate(names, force); });
}

}  // namespace haven::cli
