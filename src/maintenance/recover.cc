// restic 0.14's cmd_recover.go, rewritten (see recover.h).
#include "maintenance/recover.h"

#include <algorithm>
#include <unordered_set>

#include "core/error.h"
#include "core/mutex.h"
#include "core/thread_pool.h"

namespace haven {

std::vector<BlobId> FindUnreferencedRoots(IndexedRepository& repo,
                                          const std::vector<BlobId>& snapshot_trees,
                                          const RecoverOptions& opts) {
  std::vector<BlobId> trees;
  repo.index().ForEach([&](const PackId&, const PackedBlob& b) {
    if (b.type == BlobType::kTree) trees.push_back(b.id);
  });
  std::sort(trees.begin(), trees.end());
  trees.erase(std::unique(trees.begin(), trees.end()), trees.end());
  if (opts.verbose) opts.verbose("load " + std::to_string(trees.size()) + " trees");
  struct Shared {
    Mutex mu;
    std::unordered_set<BlobId, IdHash> referenced GUARDED_BY(mu);
  } shared;
  ParallelFor(trees.size(), std::max(1, opts.threads), [&](size_t i) {
    std::vector<Node> nodes;
    try {
      nodes = repo.LoadTree(trees[i]);
    } catch (const Error& e) {
      if (opts.warn) opts.warn("unable to load tree " + trees[i].Short() + ": " + e.what());
      return;
    }
    std::vector<BlobId> subtrees;
    for (const Node& n : nodes)
      if (n.type == NodeType::kDir && n.subtree) subtrees.push_back(*n.subtree);
    MutexLock l(shared.mu);
    shared.referenced.insert(subtrees.begin(), subtrees.end());
  });
  if (opts.verbose) opts.verbose("load snapshots");
  MutexLock l(shared.mu);
  shared.referenced.insert(snapshot_trees.begin(), snapshot_trees.end());
  if (opts.verbose) opts.verbose("done");
  std::vector<BlobId> roots;
  for (const BlobId& id : trees)
    if (!shared.referenced.contains(id)) roots.push_back(id);
  return roots;
}

std::string RecoverTree(const std::vector<BlobId>& roots, const gojson::Timestamp& now) {
  std::vector<Node> nodes;
  for (const BlobId& id : roots) {
    Node n;
    n.type = NodeType::kDir;
    n.name = id.Short();
    n.mode = 0755;  // restic writes these bits only (no directory bit)
    n.subtree = id;
    n.atime = n.mtime = n.ctime = now;
    nodes.push_back(std::move(n));
  }
  std::sort(nodes.begin(), nodes.end(), [](const Node& a, const Node& b) { return a.name < b.name; });
  for (size_t i = 1; i < nodes.size(); i++)
    if (nodes[i].name == nodes[i - 1].name)
      Fail(ErrorCode::kFatal, "node \"" + nodes[i].name + "\" already present");
  return EncodeTree(nodes);
}

FileId SaveRecoverSnapshot(Repository& repo, WriteSession& session,
                           const std::vector<BlobId>& roots, Snapshot base) {
  const std::string tree = RecoverTree(roots, base.time);
  const BlobId tree_id(Sha256(AsBytes(tree)));
  try {
    session.SaveBlob(BlobType::kTree, tree_id, AsBytes(tree));
    session.Flush();
  } catch (const Error& e) {
    Fail(e.code(), std::string("unable to save new tree to the repository: ") + e.what());
  }
  base.tree = tree_id;
  base.paths = {"/recover"};
  base.tags = {"recovered"};
  repo.CheckLock();
  try {
    return repo.SaveJson(FileType::kSnapshot, base.ToJson());
  } catch (const Error& e) {
    Fail(e.code(), std::string("unable to save snapshot: ") + e.what());
  }
}

}  // namespace haven
