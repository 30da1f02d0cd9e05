#include "cli/snapshot_args.h"

#include <algorithm>

#include "core/error.h"

namespace haven::cli {

std::vector<SnapshotEntry> SelectSnapshots(const std::vector<SnapshotEntry>& all,
                                           const std::vector<std::string>& args,
                                           const SnapshotFilter& filter,
                                           const std::function<void(const std::string&)>& warn) {
  if (args.empty()) return filter.Apply(all);
  bool used_filter = false;
  std::vector<FileId> ids;
  for (const std::string& a : args) {
    try {
      if (a == "latest") {
        used_filter = true;
        const auto matching = filter.Apply(all);
        if (matching.empty()) {
          warn("Ignoring \"latest\", no snapshot matched given filter " + filter.String());
          continue;
        }
        ids.push_back(matching.back().first);
      } else {
        ids.push_back(ResolveSnapshot(a, all));
      }
    } catch (const Error& e) {
      warn("Ignoring \"" + a + "\": " + e.what());
    }
  }
  if (!used_filter && !filter.Empty()) warn("Ignoring filters as there are explicit snapshot ids given");
  std::vector<SnapshotEntry> out;
  for (const FileId& id : ids) {
    if (std::any_of(out.begin(), out.end(), [&](const SnapshotEntry& e) { return e.first == id; }))
      continue;
    for (const auto& e : all)
      if (e.first == id) out.push_back(e);
  }
  return out;
}

}  // namespace haven::cli
