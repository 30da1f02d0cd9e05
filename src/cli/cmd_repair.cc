// `haven repair index [--read-all-packs]` (restic >= 0.16) and its restic 0.14 name
// `haven rebuild-index`.
#include "cli/common.h"
#include "maintenance/repair_index.h"

namespace haven::cli {

namespace {

void RunRepairIndex(bool read_all_packs) {
  auto repo = OpenRepository();
  // Always locked, as restic does: --no-lock does not apply to commands that delete.
  auto lock = Lock::Acquire(*repo, /*exclusive=*/true);
  RepairIndexOptions opts;
  opts.read_all_packs = read_all_packs;
  opts.jobs = Jobs();
  opts.progress = [](const std::string& s) { Print(s); };
  opts.warn = [](const std::string& s) { Warn(s); };
  RepairIndexResult r = RepairIndex(*repo, opts);
  Verbose("packs: " + std::to_string(r.packs_trusted) + " from the old index, " +
          std::to_string(r.packs_read) + " read, " + std::to_string(r.packs_invalid) +
          " skipped, " + std::to_string(r.packs_forgotten) + " forgotten; index files: " +
          std::to_string(r.index_files_written) + " written, " +
          std::to_string(r.index_files_removed) + " removed");
}

}  // namespace

void RegisterRepair(CLI::App& app) {
  static bool read_all = false;
  auto* repair = app.add_subcommand("repair", "repair the repository");
  repair->require_subcommand(1);
  auto* index = repair->add_subcommand("index", "build a new index from the pack files");
  index->add_flag("--read-all-packs", read_all,
                  "read all pack files to generate new index from scratch");
  index->callback([] { RunRepairIndex(read_all); });

  static bool read_all_old = false;
  auto* rebuild = app.add_subcommand("rebuild-index", "build a new index (alias of repair index)");
  rebuild->add_flag("--read-all-packs", read_all_old,
                    "read all pack files to generate new index from scratch");
  rebuild->callback([] { RunRepairIndex(read_all_old); });
}

}  // namespace haven::cli
