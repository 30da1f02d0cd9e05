// The virtual directories above the snapshots in a mount (restic's SnapshotsDirStructure):
// every snapshot is placed at the paths its path templates give ("ids/%i", "snapshots/%T",
// "hosts/%h/%T", "tags/%t/%T" by default), a name that is taken gets "-1", "-2", ... (restic's
// uniqueName), and a directory whose template ends in %T gets a "latest" symlink to the
// newest snapshot's name. Pure data: built once from a snapshot list, then only read.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/id.h"
#include "repo/gojson.h"
#include "repo/snapshot.h"

namespace haven::mount {

// Go's time.Time.Format for the layouts mount's --time-template takes: the reference
// tokens 2006 06 01 1 Jan January 02 2 _2 15 03 3 04 4 05 5 PM pm Mon Monday MST
// Z07:00 -07:00 Z0700 -0700 Z07 -07 .000 .999 (any count); everything else is literal.
// The time shows in its stored zone offset (as Go formats a parsed time). MST prints
// "UTC" for offset 0, else the numeric offset as Go does for an unnamed zone ("+0100").
std::string FormatGoTime(const gojson::Timestamp& t, std::string_view layout);

inline constexpr const char* kRfc3339 = "2006-01-02T15:04:05Z07:00";
std::vector<std::string> DefaultPathTemplates();

// One entry of the structure: a pseudo directory (names), a snapshot's root, or a
// "latest" symlink (link non-empty) to a sibling snapshot name.
struct MetaEntry {
  int snapshot = -1;      // index into the snapshot list; -1 for a pseudo directory
  std::string link;       // set for a "latest" link
  std::set<std::string> names;  // children of a pseudo directory
  bool IsDir() const { return snapshot < 0; }
};

class SnapshotDirs {
 public:
  using SnapshotList = std::vector<std::pair<FileId, Snapshot>>;
  // `snapshots` sorted by time, oldest first (as Repository::LoadSnapshots returns them).
  SnapshotDirs(const SnapshotList& snapshots, const std::vector<std::string>& path_templates,
               const std::string& time_template);
  // The entry at `path` ("" is the root, children are "/snapshots", "/snapshots/x", ...),
  // nullptr when there is none.
  const MetaEntry* Find(const std::string& path) const;

 private:
  void Mount(const std::string& path, int snapshot, const std::string& link,
             const std::string& child);
  std::map<std::string, MetaEntry> entries_;
};

// The paths one template gives a snapshot (a %t with several tags gives one per tag) and
// the time suffix when the template ends in %T (restic's pathsFromSn). No paths when %t
// meets a snapshot without tags.
std::pair<std::vector<std::string>, std::string> PathsFromSnapshot(
    std::string_view templ, const std::string& time_str, const FileId& id, const Snapshot& sn);
// A tag as a file name: "" and "." become "_", ".." "__", '/' becomes '_'.
std::string FilenameFromTag(std::string_view tag);

}  // namespace haven::mount
