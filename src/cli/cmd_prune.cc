// `haven prune` with restic 0.14's flags and output.
#include <chrono>
#include <cstdio>

#include "cli/common.h"
#include "core/error.h"
#include "core/timings.h"
#include "maintenance/prune.h"

namespace haven::cli {

namespace {

std::string Percent(uint64_t num, uint64_t den) {
  if (den == 0) return "";
  double p = 100.0 * double(num) / double(den);
  if (p > 100) p = 100;
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%3.2f%%", p);
  return buf;
}

std::string Line(const char* label, int width, uint64_t n, const std::string& tail) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%-*s%10llu%s%s", width, label,
                static_cast<unsigned long long>(n), tail.empty() ? "" : " ", tail.c_str());
  return buf;
}

std::string BlobLine(const char* label, uint64_t n, uint64_t size) {
  return Line(label, 14, n, "blobs / " + FormatBytes(size));
}

// restic 0.14's printPruneStats: Verbosef lines at the default verbosity, Verboseff with -v.
void PrintStats(const PruneStats& s) {
  Verbose("");
  Verbose(BlobLine("used:", s.blobs.used, s.size.used));
  if (s.blobs.duplicate > 0) Verbose(BlobLine("duplicates:", s.blobs.duplicate, s.size.duplicate));
  Verbose(BlobLine("unused:", s.blobs.unused, s.size.unused));
  if (s.size.unref > 0) Verbose("unreferenced:                    " + FormatBytes(s.size.unref));
  uint64_t total_blobs = s.blobs.used + s.blobs.unused + s.blobs.duplicate;
  uint64_t total_size = s.size.used + s.size.duplicate + s.size.unused + s.size.unref;
  uint64_t unused_size = s.size.duplicate + s.size.unused;
  Verbose(BlobLine("total:", total_blobs, total_size));
  Verbose("unused size: " + Percent(unused_size, total_size) + " of total size");

  Print("");
  Print(BlobLine("to repack:", s.blobs.repack, s.size.repack));
  Print(BlobLine("this removes:", s.blobs.repackrm, s.size.repackrm));
  Print(BlobLine("to delete:", s.blobs.remove, s.size.remove + s.size.unref));
  uint64_t prune_size = s.size.remove + s.size.repackrm + s.size.unref;
  uint64_t prune_blobs = s.blobs.remove + s.blobs.repackrm;
  Print(BlobLine("total prune:", prune_blobs, prune_size));
  uint64_t remaining = total_size > prune_size ? total_size - prune_size : 0;
  Print(BlobLine("remaining:", total_blobs > prune_blobs ? total_blobs - prune_blobs : 0,
                 remaining));
  uint64_t gone = s.size.remove + s.size.repackrm;
  uint64_t unused_after = unused_size > gone ? unused_size - gone : 0;
  Print("unused size after prune: " + FormatBytes(unused_after) + " (" +
        Percent(unused_after, remaining) + " of remaining size)");
  Print("");
  Verbose(Line("totally used packs:", 20, s.packs.used, ""));
  Verbose(Line("partly used packs:", 20, s.packs.partly_used, ""));
  Verbose(Line("unused packs:", 20, s.packs.unused, ""));
  Verbose("");
  Verbose(Line("to keep:", 14, s.packs.keep, "packs"));
  Verbose(Line("to repack:", 14, s.packs.repack, "packs"));
  Verbose(Line("to delete:", 14, s.packs.remove, "packs"));
  if (s.packs.unref > 0) Verbose(Line("to delete:", 14, s.packs.unref, "unreferenced packs"));
}

void PrintIds(const std::string& title, const std::vector<PackId>& ids) {
  Print(title);
  for (const PackId& id : ids) Print("  " + id.Hex());
  Print("");
}

}  // namespace

void RegisterPrune(CLI::App& app) {
  static PruneOptions opts;
  static std::string unsafe_recover;
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
  cmd->add_option("--unsafe-recover-no-free-space", unsafe_recover,
                  "not supported by haven (restic: UNSAFE recovery mode)");
  cmd->callback([] {
    if (!unsafe_recover.empty())
      Fail(ErrorCode::kUnsupported, "--unsafe-recover-no-free-space is not supported by haven; "
                                    "try `prune --max-repack-size 0` first");
    // Validate the options before touching the repository.
    ParseMaxUnused(opts.max_unused);
    if (!opts.max_repack_size.empty()) ParsePruneSize(opts.max_repack_size, "--max-repack-size");
    auto repo = OpenRepository();
    // Always locked, as restic does: --no-lock does not apply to commands that delete.
    auto lock = Lock::Acquire(*repo, /*exclusive=*/true);
    opts.jobs = Jobs();
    opts.progress = [](const std::string& s) { Print(s); };
    opts.warn = [](const std::string& s) { Warn(s); };
    const auto start = std::chrono::steady_clock::now();
    PruneResult r = RunPrune(*repo, opts, [](const PrunePlan& plan) {
      PrintStats(plan.stats);
      if (opts.dry_run && Globals().verbose >= 2) {
        if (!plan.remove_first.empty())
          PrintIds("Would have removed the following unreferenced packs:", plan.remove_first);
        PrintIds("Would have repacked and removed the following packs:", plan.repack);
        PrintIds("Would have removed the following no longer used packs:", plan.remove);
      }
    });
    Timings::PrintIfEnabled(
        "prune", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (r.remove_failures > 0)
      Warn("warning: " + std::to_string(r.remove_failures) +
           " file(s) could not be removed; a later prune removes them");
  });
}

}  // namespace haven::cli
