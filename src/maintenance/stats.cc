#include "maintenance/stats.h"

#include <algorithm>

#include "core/deep_stack.h"
#include "core/error.h"
#include "maintenance/used_blobs.h"
#include "repo/tree_stream.h"

namespace haven {

std::optional<StatsMode> ParseStatsMode(const std::string& s) {
  if (s == "restore-size") return StatsMode::kRestoreSize;
  if (s == "files-by-contents") return StatsMode::kFilesByContents;
  if (s == "blobs-per-file") return StatsMode::kBlobsPerFile;
  if (s == "raw-data") return StatsMode::kRawData;
  return std::nullopt;
}

namespace {

// restic's makeFileIDByContents: SHA-256 of the content ids in sequence.
RawId ContentKey(const Node& n) {
  std::string bytes;
  bytes.reserve(n.content.size() * 32);
  for (const BlobId& b : n.content) bytes.append(reinterpret_cast<const char*>(b.bytes.data()), 32);
  return Sha256(AsBytes(bytes));
}

}  // namespace

// One snapshot's walk (restic's walker with stats' callback).
class StatsCounter::Walk {
 public:
  Walk(StatsCounter& c) : c_(c), stream_(c.repo_, c.threads_) {}

  void Run(const BlobId& root) {
    RunOnDeepStack([&] { Tree("/", root, Load(root)); });  // one recursion per level
  }

 private:
  std::vector<Node> Load(const BlobId& id) {
    try {
      return stream_.Take(id);
    } catch (const Error& e) {
      Fail(e.code(), "error walking snapshot: walking tree " + id.Hex() + ": " + e.what());
    }
  }

  void Tree(const std::string& prefix, const BlobId& id, std::vector<Node> nodes) {
    TreeLevel level(depth_, prefix);
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const Node& a, const Node& b) { return a.name < b.name; });
    const bool unique_mode = c_.mode_ != StatsMode::kRestoreSize;
    std::vector<BlobId> ahead;
    for (const Node& n : nodes)
      if (n.type == NodeType::kDir && n.subtree && !(unique_mode && ignore_.contains(*n.subtree)))
        ahead.push_back(*n.subtree);
    stream_.Expect(ahead);
    for (const Node& n : nodes) {
      const std::string path = prefix == "/" ? "/" + n.name : prefix + "/" + n.name;
      if (n.type == NodeType::kDir) {
        if (!n.subtree)
          Fail(ErrorCode::kCorrupt, "error walking snapshot: subtree for node " + n.name +
                                        " in tree " + path + " is nil");
        if (unique_mode && ignore_.contains(*n.subtree)) continue;
        std::vector<Node> children = Load(*n.subtree);
        Count(path, n, id);
        // The unique modes ignore every node: the subtree is remembered before the descent.
        if (unique_mode) ignore_.insert(*n.subtree);
        Tree(path, *n.subtree, std::move(children));
        continue;
      }
      Count(path, n, id);
    }
  }

  void Count(const std::string& path, const Node& n, const BlobId& parent) {
    RepoStats& s = c_.stats_;
    if (c_.mode_ == StatsMode::kRestoreSize) {
      ++s.total_file_count;
      if (n.inode == 0 || inodes_.insert(n.inode).second) s.total_size += n.size;
      return;
    }
    if (!c_.unique_files_.insert(ContentKey(n)).second) return;
    if (c_.mode_ == StatsMode::kFilesByContents) {
      s.total_size += n.size;
      ++s.total_file_count;
      return;
    }
    // blobs-per-file; restic keys the file by filepath.Join(path, name) (the name twice).
    const std::string key = path + "/" + n.name;
    for (const BlobId& b : n.content) {
      auto [it, fresh] = c_.file_blobs_.try_emplace(key);
      if (fresh) ++s.total_file_count;
      if (it->second.contains(b)) continue;
      auto locs = c_.repo_.index().Lookup(BlobType::kData, b);
      if (locs.empty())
        Fail(ErrorCode::kCorrupt, "error walking snapshot: blob " + b.Hex() +
                                      " not found for tree " + parent.Hex());
      s.total_size += locs.front().PlainLength();
      it->second.insert(b);
      ++s.total_blob_count;
    }
  }

  StatsCounter& c_;
  OrderedTreeStream stream_;
  std::unordered_set<BlobId, IdHash> ignore_;  // the unique modes' walked subtrees
  std::unordered_set<uint64_t> inodes_;        // restore-size: counted inodes
  int depth_ = 0;
};

StatsCounter::StatsCounter(IndexedRepository& repo, StatsMode mode, int threads)
    : repo_(repo), mode_(mode), threads_(threads > 0 ? threads : repo.threads()) {}
StatsCounter::~StatsCounter() = default;

void StatsCounter::AddSnapshot(const BlobId& root) {
  ++stats_.snapshots_count;
  if (mode_ == StatsMode::kRawData) {
    roots_.push_back(root);
    return;
  }
  Walk w(*this);
  w.Run(root);
}

RepoStats StatsCounter::Finish() {
  if (mode_ != StatsMode::kRawData || roots_.empty()) return stats_;
  std::vector<UsedBlobsRoot> roots;
  for (const BlobId& r : roots_) roots.push_back({FileId{}, r});
  UsedBlobsOptions uo;
  uo.threads = threads_;
  const UsedBlobs used = FindUsedBlobs(repo_, roots, uo);
  for (BlobType t : {BlobType::kData, BlobType::kTree})
    if (!used.Missing(t).empty())
      Fail(ErrorCode::kCorrupt, std::string("blob <") + BlobTypeName(t) + "/" +
                                    used.Missing(t).front().Short() + "> not found");
  const Index& index = repo_.index();
  index.ForEachPosition([&](BlobType t, size_t pos, size_t first, uint32_t, const PackedBlob& b) {
    if (pos != first || !used.UsedAt(t, pos)) return;
    stats_.total_size += b.length;
    ++stats_.total_blob_count;
  });
  return stats_;
}

}  // namespace haven
