// diff: the changes from one snapshot to another (restic 0.14's diff): "comparing snapshot
// A to B:", one "%-5s%s" line per change (+ - M T U), then the statistics block; with
// --json one {"message_type":"change"} line per change and one "statistics" line. The
// comparison is maintenance/tree_diff (unchanged subtrees are not walked).
#include <cstdio>
#include <iostream>

#include "cli/common.h"
#include "cli/more_commands.h"
#include "cli/restic_format.h"
#include "cli/snapshot_filter.h"
#include "core/error.h"
#include "maintenance/tree_diff.h"
#include "repo/gojson.h"

namespace haven::cli {

namespace {

struct DiffCmdOptions {
  std::vector<std::string> snapshots;
  bool metadata = false;
};

void AppendStat(std::string& j, const char* name, const DiffStat& s) {
  j += std::string(",\"") + name + "\":{\"files\":" + std::to_string(s.files) +
       ",\"dirs\":" + std::to_string(s.dirs) + ",\"others\":" + std::to_string(s.others) +
       ",\"data_blobs\":" + std::to_string(s.data_blobs) +
       ",\"tree_blobs\":" + std::to_string(s.tree_blobs) +
       ",\"bytes\":" + std::to_string(s.bytes) + "}";
}

std::string StatsJson(const DiffCmdOptions& o, const DiffStats& st) {
  std::string j = "{\"message_type\":\"statistics\",\"source_snapshot\":";
  gojson::AppendString(j, o.snapshots[0]);
  j += ",\"target_snapshot\":";
  gojson::AppendString(j, o.snapshots[1]);
  j += ",\"changed_files\":" + std::to_string(st.changed_files);
  AppendStat(j, "added", st.added);
  AppendStat(j, "removed", st.removed);
  return j + "}\n";
}

std::string StatsText(const DiffStats& st) {
  const DiffStat &a = st.added, &r = st.removed;
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "\nFiles:       %5llu new, %5llu removed, %5llu changed\n"
                "Dirs:        %5llu new, %5llu removed\n"
                "Others:      %5llu new, %5llu removed\n"
                "Data Blobs:  %5llu new, %5llu removed\n"
                "Tree Blobs:  %5llu new, %5llu removed\n",
                (unsigned long long)a.files, (unsigned long long)r.files,
                (unsigned long long)st.changed_files, (unsigned long long)a.dirs,
                (unsigned long long)r.dirs, (unsigned long long)a.others,
                (unsigned long long)r.others, (unsigned long long)a.data_blobs,
                (unsigned long long)r.data_blobs, (unsigned long long)a.tree_blobs,
                (unsigned long long)r.tree_blobs);
  std::string out = buf;
  std::snprintf(buf, sizeof(buf), "  Added:   %-5s\n  Removed: %-5s\n",
                ResticBytes(a.bytes).c_str(), ResticBytes(r.bytes).c_str());
  return out + buf;
}

void RunDiff(const DiffCmdOptions& o) {
  if (o.snapshots.size() != 2) Fail(ErrorCode::kInvalidArgument, "specify two snapshot IDs");
  auto repo = OpenRepository({.prefetch_index = true});
  auto [lock, all, indexed] = LockAndLoadForReading(*repo);
  const FileId id1 = ResolveSnapshot(o.snapshots[0], all);
  const FileId id2 = ResolveSnapshot(o.snapshots[1], all);
  const Snapshot *s1 = nullptr, *s2 = nullptr;
  for (const auto& [id, s] : all) {
    if (id == id1) s1 = &s;
    if (id == id2) s2 = &s;
  }
  const bool json = Globals().json, quiet = Globals().quiet;
  if (!json && !quiet) std::cout << "comparing snapshot " << id1.Short() << " to " << id2.Short() << ":\n\n";
  std::string out;
  TreeDiffOptions to;
  to.metadata = o.metadata;
  to.threads = Jobs();
  to.warn = [&](const std::string& m) { Warn(m); };
  to.change = [&](const DiffChange& c) {
    if (quiet) return;
    if (json) {
      out += "{\"message_type\":\"change\",\"path\":";
      gojson::AppendString(out, c.path);
      out += ",\"modifier\":";
      gojson::AppendString(out, c.modifier);
      out += "}\n";
    } else {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "%-5s", c.modifier.c_str());
      out += buf + c.path + "\n";
    }
    if (out.size() > (1 << 20)) {
      std::cout << out;
      out.clear();
    }
  };
  const DiffStats st = DiffTrees(*indexed, s1->tree, s2->tree, to);
  std::cout << out << (json ? StatsJson(o, st) : StatsText(st)) << std::flush;
}

}  // namespace

void RegisterDiff(CLI::App& app) {
  static DiffCmdOptions o;
  auto* cmd = app.add_subcommand("diff", "show differences between two snapshots");
  cmd->add_option("snapshot", o.snapshots, "two snapshot ids (or prefixes, or latest)");
  cmd->add_flag("--metadata", o.metadata, "print changes in metadata");
  cmd->callback([] { RunDiff(o); });
}

}  // namespace haven::cli
