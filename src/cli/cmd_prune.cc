// `haven prune` with restic 0.14's flags and output.
#include <chrono>
#include <cstdio>

#include "cli/common.h"
#include "cli/prune_report.h"
#include "core/error.h"
#include "core/timings.h"
#include "maintenance/prune.h"

namespace haven::cli {

void RegisterPrune(CLI::App& app) {
  static PruneOptions opts;
  static std::string unsafe_recover, grace;
  auto* cmd = app.add_subcommand("prune", "remove unneeded data from the repository");
  cmd->add_flag("-n,--dry-run", opts.dry_run,
                "do not modify the repository, just print what would be done");
  cmd->add_option("--max-unused", opts.max_unused,
                  "tolerate given limit of unused data (absolute value in bytes with suffixes "
                  "k/K, m/M, g/G, t/T, a value in % or the word 'unlimited') (default \"5%\")");
  cmd->add_option("--max-repack-size", opts.max_repack_size,
                  "maximum size to repack (allowed suffixes: k/K, m/M, g/G, t/T)");
  cmd->add_flag("--repack-cacheable-only", opts.repack_cacheable_only,
                "only repack packs which are cacheable");
  cmd->add_flag("--repack-small", opts.repack_small,
                "repack pack files below 80% of target pack size");
  cmd->add_flag("--repack-uncompressed", opts.repack_uncompressed, "repack all uncompressed data");
  cmd->add_option("--unreferenced-grace", grace,
                  "keep packs in no index that are younger than this duration (e.g. 2h; for "
                  "eventually consistent storage, where an index may be listed late)");
  cmd->add_option("--unsafe-recover-no-free-space", unsafe_recover,
                  "not supported by haven (restic: UNSAFE recovery mode)");
  cmd->callback([] {
    if (!unsafe_recover.empty())
      Fail(ErrorCode::kUnsupported, "--unsafe-recover-no-free-space is not supported by haven; "
                                    "try `prune --max-repack-size 0` first");
    // Validate the options before touching the repository.
    ParseMaxUnused(opts.max_unused);
    if (!opts.max_repack_size.empty()) ParsePruneSize(opts.max_repack_size, "--max-repack-size");
    opts.unreferenced_grace = ParseUnreferencedGrace(grace);
    auto repo = OpenRepository({.prefetch_index = true});
    // Always locked, as restic does: --no-lock does not apply to commands that delete.
    // Its check of the other locks runs beside the index and snapshot loads.
    auto early_index = StartEarlyIndex(*repo);  // beside the lock's write
    auto lock = Lock::AcquireOverlapped(*repo, /*exclusive=*/true);
    opts.early_index = early_index.get();
    opts.confirm_lock = [&lock] { lock->Confirm(); };
    opts.jobs = JobsOrAuto();
    opts.write = GlobalWriteOptions();
    opts.progress = [](const std::string& s) { Print(s); };
    opts.warn = [](const std::string& s) { Warn(s); };
    const auto start = std::chrono::steady_clock::now();
    PruneResult r = RunPrune(*repo, opts, [](const PrunePlan& plan) {
      PrintPrunePlan(plan, opts.dry_run);
    });
    Timings::PrintIfEnabled(
        "prune", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (r.remove_failures > 0)
      Warn("warning: " + std::to_string(r.remove_failures) +
           " file(s) could not be removed; a later prune removes them");
  });
}

}  // namespace haven::cli
