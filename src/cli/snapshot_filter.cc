#include "cli/snapshot_filter.h"

#include <algorithm>
#include <future>
#include <optional>

#include "cli/common.h"
#include "core/error.h"

namespace haven::cli {

std::vector<forget::TagList> SnapshotFilter::TagLists() const {
  std::vector<forget::TagList> lists;
  for (const std::string& group : tags) lists.push_back(forget::SplitTagList(group));
  return lists;
}

bool SnapshotFilter::Matches(const Snapshot& s) const {
  if (!hosts.empty() && std::find(hosts.begin(), hosts.end(), s.hostname) == hosts.end())
    return false;
  // restic's TagList semantics: tags trimmed; "" selects untagged snapshots.
  if (!tags.empty() && !forget::HasTagList(s, TagLists())) return false;
  for (const std::string& p : paths)
    if (std::find(s.paths.begin(), s.paths.end(), p) == s.paths.end()) return false;
  return true;
}

std::vector<SnapshotEntry> SnapshotFilter::Apply(const std::vector<SnapshotEntry>& all) const {
  std::vector<SnapshotEntry> out;
  for (const auto& e : all)
    if (Matches(e.second)) out.push_back(e);
  return out;
}

std::string SnapshotFilter::String() const {
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? " " : "") + v[i];
    return out;
  };
  return "(Paths:[" + join(paths) + "] Tags:" + forget::TagListsString(TagLists()) +
         " Hosts:[" + join(hosts) + "])";
}

PrefixMatch MatchIdPrefix(const std::vector<SnapshotEntry>& snaps, std::string_view prefix) {
  PrefixMatch m;
  for (const auto& e : snaps) {
    if (e.first.Hex().compare(0, prefix.size(), prefix) == 0) {
      ++m.count;
      m.id = e.first;
    }
  }
  return m;
}

FileId ResolveSnapshot(std::string_view arg, const std::vector<SnapshotEntry>& snaps) {
  if (arg == "latest") {
    if (snaps.empty()) Fail(ErrorCode::kNotFound, "no snapshot found");
    return snaps.back().first;
  }
  const PrefixMatch m = MatchIdPrefix(snaps, arg);
  if (m.count > 1)
    Fail(ErrorCode::kInvalidArgument, "snapshot prefix \"" + std::string(arg) + "\" is ambiguous");
  if (m.count == 0 || arg.empty())
    Fail(ErrorCode::kNotFound, "no snapshot matched \"" + std::string(arg) + "\"");
  return m.id;
}

namespace {

// The snapshot `arg` names among `all` ("latest" honours the filter).
SnapshotEntry PickSnapshot(std::vector<SnapshotEntry> all, const std::string& arg,
                           const SnapshotFilter& filter) {
  auto list = arg == "latest" ? filter.Apply(all) : all;
  FileId id = ResolveSnapshot(arg, list);
  for (auto& e : list)
    if (e.first == id) return e;
  Fail(ErrorCode::kNotFound, "no snapshot matched \"" + arg + "\"");
}

}  // namespace

SnapshotEntry FindSnapshot(Repository& repo, const std::string& arg,
                           const SnapshotFilter& filter) {
  return PickSnapshot(repo.LoadSnapshots(), arg, filter);
}

std::unique_ptr<EarlyIndex> StartEarlySnapshot(Repository& repo, const std::string& arg,
                                               const SnapshotFilter& filter) {
  std::function<void(IndexedRepository&)> then;
  if (repo.cache())
    then = [&repo, arg, filter](IndexedRepository& index) {
      auto listed = repo.backend().EarlierListing(FileType::kSnapshot);
      if (!listed) return;
      std::vector<FileId> ids;
      for (const FileInfo& fi : *listed)
        if (auto id = FileId::FromHex(fi.name)) ids.push_back(*id);
      std::vector<Repository::SnapshotFailure> failures;  // (not reported: a head start)
      index.LoadTree(PickSnapshot(repo.LoadSnapshots(ids, &failures), arg, filter).second.tree);
    };
  return StartEarlyIndex(repo, std::move(then));
}

std::pair<SnapshotEntry, std::unique_ptr<IndexedRepository>> FindSnapshotAndLoadIndex(
    Repository& repo, const std::unique_ptr<Lock>& lock, const std::string& arg,
    const SnapshotFilter& filter, EarlyIndex* early) {
  // A snapshot that is not found still waits for the load to end (the future's
  // destructor) before the error.
  auto index_load =
      std::async(std::launch::async, [&repo, early] { return EarlyIndex::LoadWith(early, repo); });
  return ReadThenConfirm(lock, [&] {
    SnapshotEntry e = FindSnapshot(repo, arg, filter);  // first: the load runs meanwhile
    return std::make_pair(std::move(e), index_load.get());
  });
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
