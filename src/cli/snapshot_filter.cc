#include "cli/snapshot_filter.h"

#include <algorithm>
#include <optional>

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

FileId ResolveSnapshot(std::string_view arg,
                       const std::vector<std::pair<FileId, Snapshot>>& snaps) {
  if (arg == "latest") {
    if (snaps.empty()) Fail(ErrorCode::kNotFound, "no snapshot found");
    return snaps.back().first;
  }
  std::optional<FileId> found;
  for (const auto& [id, s] : snaps) {
    if (id.Hex().compare(0, arg.size(), arg) == 0) {
      if (found)
        Fail(ErrorCode::kInvalidArgument,
             "snapshot prefix \"" + std::string(arg) + "\" is ambiguous");
      found = id;
    }
  }
  if (!found || arg.empty())
    Fail(ErrorCode::kNotFound, "no snapshot matched \"" + std::string(arg) + "\"");
  return *found;
}

std::pair<FileId, Snapshot> FindSnapshot(Repository& repo, const std::string& arg,
                                         const SnapshotFilter& filter) {
  auto all = repo.LoadSnapshots();
  auto list = arg == "latest" ? filter.Apply(all) : all;
  FileId id = ResolveSnapshot(arg, list);
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
