#include "cli/snapshot_filter.h"

#include <algorithm>

#include "core/error.h"
#include "maintenance/forget_policy.h"

namespace haven::cli {

bool SnapshotFilter::Matches(const Snapshot& s) const {
  if (!hosts.empty() && std::find(hosts.begin(), hosts.end(), s.hostname) == hosts.end())
    return false;
  if (!tags.empty()) {
    // restic's TagList semantics: tags trimmed; "" selects untagged snapshots.
    std::vector<forget::TagList> lists;
    for (const std::string& group : tags) lists.push_back(forget::SplitTagList(group));
    if (!forget::HasTagList(s, lists)) return false;
  }
  for (const std::string& p : paths)
    if (std::find(s.paths.begin(), s.paths.end(), p) == s.paths.end()) return false;
  return true;
}

std::vector<std::pair<FileId, Snapshot>> SnapshotFilter::Apply(
    const std::vector<std::pair<FileId, Snapshot>>& all) const {
  std::vector<std::pair<FileId, Snapshot>> out;
  for (const auto& e : all)
    if (Matches(e.second)) out.push_back(e);
  return out;
}

std::pair<FileId, Snapshot> FindSnapshot(Repository& repo, const std::string& arg,
                                         const SnapshotFilter& filter) {
  auto all = repo.LoadSnapshots();
  auto list = arg == "latest" ? filter.Apply(all) : all;
  FileId id = repo.ResolveSnapshot(arg, list);
  for (auto& e : list)
    if (e.first == id) return e;
  Fail(ErrorCode::kNotFound, "no snapshot matched \"" + arg + "\"");
}

std::string SnapshotListJson(const FileId& id, const Snapshot& s, const char* struct_type) {
  std::string j = s.ToJson();
  j.pop_back();
  j += ",\"id\":\"" + id.Hex() + "\",\"short_id\":\"" + id.Short() + "\"";
  if (struct_type) j += std::string(",\"struct_type\":\"") + struct_type + "\"";
  j += '}';
  return j;
}

std::string GoModeString(uint32_t m) {
  static const char kTypes[] = "dalTLDpSugct?";
  std::string out;
  for (int i = 0; i < 13; ++i)
    if (m & (1u << (31 - i))) out += kTypes[i];
  if (out.empty()) out = "-";
  static const char kRwx[] = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i) out += (m & (1u << (8 - i))) ? kRwx[i] : '-';
  return out;
}

}  // namespace haven::cli
