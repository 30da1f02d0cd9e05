// stats: the size of snapshots in restic 0.14's four counting modes (maintenance/stats):
// "scanning...", then "Stats in MODE mode:", the snapshot count, the blob and file counts
// when not zero and the total size; --json: restic's {"total_size","total_file_count",
// "total_blob_count" (when not zero),"snapshots_count"}.
#include <cstdio>
#include <iostream>

#include "cli/common.h"
#include "cli/more_commands.h"
#include "cli/restic_format.h"
#include "cli/snapshot_args.h"
#include "cli/snapshot_filter.h"
#include "core/error.h"
#include "maintenance/stats.h"

namespace haven::cli {

namespace {

struct StatsCmdOptions {
  std::vector<std::string> snapshots;
  std::string mode = "restore-size";
  SnapshotFilter filter;
};

void PrintStats(const std::string& mode, const RepoStats& s) {
  if (Globals().json) {
    std::string j = "{\"total_size\":" + std::to_string(s.total_size) +
                    ",\"total_file_count\":" + std::to_string(s.total_file_count);
    if (s.total_blob_count) j += ",\"total_blob_count\":" + std::to_string(s.total_blob_count);
    j += ",\"snapshots_count\":" + std::to_string(s.snapshots_count) + "}\n";
    std::cout << j;
    return;
  }
  std::string out = "Stats in " + mode + " mode:\n";
  out += "Snapshots processed:   " + std::to_string(s.snapshots_count) + "\n";
  if (s.total_blob_count) out += "   Total Blob Count:   " + std::to_string(s.total_blob_count) + "\n";
  if (s.total_file_count) out += "   Total File Count:   " + std::to_string(s.total_file_count) + "\n";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%-5s", ResticBytes(s.total_size).c_str());
  out += std::string("         Total Size:   ") + buf + "\n";
  std::cout << out;
}

void RunStats(const StatsCmdOptions& o) {
  const auto mode = ParseStatsMode(o.mode);
  if (!mode)
    Fail(ErrorCode::kInvalidArgument, "unknown counting mode: " + o.mode +
                                          " (use the -h flag to get a list of supported modes)");
  auto repo = OpenRepository({.prefetch_index = true});
  auto [lock, all, indexed] = LockAndLoadForReading(*repo);
  if (!Globals().json) std::cout << "scanning...\n" << std::flush;
  StatsCounter counter(*indexed, *mode, Jobs());
  for (const auto& [id, s] : SelectSnapshots(all, o.snapshots, o.filter, [](const std::string& m) { Warn(m); }))
    counter.AddSnapshot(s.tree);
  PrintStats(o.mode, counter.Finish());
}

}  // namespace

void RegisterStats(CLI::App& app) {
  static StatsCmdOptions o;
  auto* cmd = app.add_subcommand("stats", "scan the repository and show basic statistics");
  cmd->add_option("snapshot", o.snapshots, "snapshot ids (default: all, under the filter)");
  cmd->add_option("--mode", o.mode,
                  "counting mode: restore-size (default), files-by-contents, blobs-per-file or raw-data");
  cmd->add_option("-H,--host", o.filter.hosts, "only consider snapshots with the given host");
  cmd->add_option("--tag", o.filter.tags, "only consider snapshots which include this taglist");
  cmd->add_option("--path", o.filter.paths, "only consider snapshots which include this path");
  cmd->callback([] { RunStats(o); });
}

}  // namespace haven::cli
