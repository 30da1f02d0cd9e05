// `haven repair index [--read-all-packs]` (restic >= 0.16) and its restic 0.14 name
// `haven rebuild-index`; `haven repair snapshots [--forget] [--dry-run] [filters] [ID...]`
// (restic 0.16).
#include "cli/common.h"
#include "cli/mount_commands.h"
#include "cli/snapshot_filter.h"
#include "maintenance/repair_index.h"
#include "maintenance/repair_snapshots.h"

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

struct RepairSnapshotsFlags {
  bool forget = false, dry_run = false;
  SnapshotFilter filter;
  std::vector<std::string> ids;
};

void RunRepairSnapshots(const RepairSnapshotsFlags& f) {
  auto repo = OpenRepository();
  std::unique_ptr<Lock> lock;
  if (!f.dry_run) lock = Lock::Acquire(*repo, /*exclusive=*/true);
  auto indexed = IndexedRepository::Load(*repo);
  std::vector<Repository::SnapshotFailure> failed;
  auto all = repo->LoadSnapshots(&failed);
  std::vector<std::pair<FileId, Snapshot>> selected;
  // A damaged snapshot file is taken when no id is given, or when an id names it.
  std::vector<Repository::SnapshotFailure> damaged;
  if (f.ids.empty()) {
    selected = f.filter.Apply(all);
    damaged = failed;
  } else {
    for (const std::string& arg : f.ids) {
      bool is_damaged = false;
      for (const auto& d : failed)
        if (!arg.empty() && d.id.Hex().compare(0, arg.size(), arg) == 0) {
          damaged.push_back(d);
          is_damaged = true;
        }
      if (!is_damaged) selected.push_back(FindSnapshot(*repo, arg, f.filter));
    }
  }
  RepairSnapshotsOptions opts;
  opts.forget = f.forget;
  opts.dry_run = f.dry_run;
  opts.progress = [](const std::string& s) { Verbose(s); };
  RepairSnapshotsResult r;
  RemoveDamagedSnapshots(*repo, damaged, opts, r, [](const std::string& s) { Warn(s); });
  WriteSession session(*indexed, GlobalWriteOptions());
  RepairSnapshotsResult rewritten = RepairSnapshots(session, selected, opts);
  r.modified = rewritten.modified + r.removed_damaged;
  r.written = std::move(rewritten.written);
  if (!Globals().verbose)
    Print(r.modified == 0 ? (f.dry_run ? "no snapshots would be modified" : "no snapshots were modified")
                          : std::string(f.dry_run ? "would modify " : "modified ") +
                                std::to_string(r.modified) + " snapshots");
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

  static RepairSnapshotsFlags snaps;
  auto* rs = repair->add_subcommand("snapshots", "repair snapshots that reference missing data");
  rs->add_flag("--forget", snaps.forget, "remove original snapshots after creating new ones");
  rs->add_flag("-n,--dry-run", snaps.dry_run, "do not do anything, just print what would be done");
  rs->add_option("-H,--host", snaps.filter.hosts, "only consider snapshots for this host");
  rs->add_option("--tag", snaps.filter.tags, "only consider snapshots including tag[,tag,...]");
  rs->add_option("--path", snaps.filter.paths, "only consider snapshots including this path");
  rs->add_option("ids", snaps.ids, "snapshot IDs (default: all matching the filters)");
  rs->callback([] { RunRepairSnapshots(snaps); });
  RegisterRepairPacks(repair);  // cmd_repair_packs.cc

  static bool read_all_old = false;
  auto* rebuild = app.add_subcommand("rebuild-index", "build a new index (alias of repair index)");
  rebuild->add_flag("--read-all-packs", read_all_old,
                    "read all pack files to generate new index from scratch");
  rebuild->callback([] { RunRepairIndex(read_all_old); });
}

}  // namespace haven::cli
