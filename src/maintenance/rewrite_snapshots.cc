#include "maintenance/rewrite_snapshots.h"

#include "core/deep_stack.h"
#include "core/error.h"
#include "repo/node.h"

namespace haven {

namespace {

void Say(const RewriteSnapshotsOptions& o, const std::string& s) {
  if (o.progress) o.progress(s);
}

BlobId FilterTreeAt(WriteSession& session, const std::string& path, const BlobId& id,
                    const RewriteSnapshotsOptions& opts, int& depth) {
  TreeLevel level(depth, path);
  IndexedRepository& repo = session.repo();
  std::vector<Node> nodes = repo.LoadTree(id);
  if (!EncodesBackTo(nodes, id))
    Fail(ErrorCode::kCorrupt, "cannot encode tree at \"" + path + "\" without loosing information");
  bool changed = false;
  std::vector<Node> kept;
  kept.reserve(nodes.size());
  for (Node& n : nodes) {
    const std::string child = (path == "/" ? "/" : path + "/") + n.name;
    if (opts.exclude && opts.exclude(child)) {
      Say(opts, "excluding " + child);
      changed = true;
      continue;
    }
    if (n.subtree) {
      const BlobId sub = FilterTreeAt(session, child, *n.subtree, opts, depth);
      if (sub != *n.subtree) changed = true;
      n.subtree = sub;
    }
    kept.push_back(std::move(n));
  }
  if (!changed) return id;
  const std::string out = EncodeTree(kept);
  const BlobId nid(Sha256(AsBytes(out)));
  if (!opts.dry_run) session.SaveBlob(BlobType::kTree, nid, AsBytes(out));
  return nid;
}

}  // namespace

BlobId FilterTree(WriteSession& session, const std::string& path, const BlobId& id,
                  const RewriteSnapshotsOptions& opts) {
  BlobId out;
  int depth = 0;
  RunOnDeepStack([&] { out = FilterTreeAt(session, path, id, opts, depth); });
  return out;
}

RewriteSnapshotsResult RewriteSnapshots(WriteSession& session,
                                        const std::vector<std::pair<FileId, Snapshot>>& snapshots,
                                        const RewriteSnapshotsOptions& opts) {
  RewriteSnapshotsResult res;
  IndexedRepository& repo = session.repo();
  for (const auto& [id, snap] : snapshots) {
    if (opts.begin) opts.begin(id, snap);
    BlobId tree;
    try {
      tree = FilterTree(session, "/", snap.tree, opts);
      if (!opts.dry_run) session.Flush();  // the trees before the snapshot that needs them
    } catch (const Error& e) {
      Fail(e.code(), "unable to rewrite snapshot ID \"" + id.Short() + "\": " + e.what());
    }
    if (tree == snap.tree) continue;
    res.modified++;
    if (opts.dry_run) {
      Say(opts, "would save new snapshot");
      if (opts.forget) Say(opts, "would remove old snapshot");
      continue;
    }
    Snapshot fresh = snap;
    fresh.original = id;
    fresh.tree = tree;
    if (!opts.forget && !fresh.HasTag("rewrite")) fresh.tags.push_back("rewrite");
    repo.CheckLock();
    const FileId nid = repo.SaveJson(FileType::kSnapshot, fresh.ToJson());
    res.written.push_back(nid);
    if (opts.forget) {
      repo.backend().Remove({FileType::kSnapshot, id.Hex()});
      Say(opts, "removed old snapshot " + id.Short());
    }
    Say(opts, "saved new snapshot " + nid.Short());
  }
  Say(opts, "");
  if (res.modified == 0) {
    Say(opts, opts.dry_run ? "no snapshots would be modified" : "no snapshots were modified");
  } else {
    Say(opts, std::string(opts.dry_run ? "would modify " : "modified ") +
                  std::to_string(res.modified) + " snapshots");
  }
  return res;
}

}  // namespace haven
