#include "maintenance/repair_snapshots.h"

#include <optional>
#include <unordered_map>

#include "core/deep_stack.h"
#include "core/error.h"
#include "repo/node.h"

namespace haven {

namespace {

class Rewriter {
 public:
  Rewriter(WriteSession& session, const RepairSnapshotsOptions& o)
      : repo_(session.repo()), session_(session), o_(o) {}

  // The repaired id of tree `id` at `path`; nullopt when the root cannot be loaded.
  std::optional<BlobId> Rewrite(const BlobId& id, const std::string& path) {
    if (auto it = done_.find(id); it != done_.end()) return it->second;
    TreeLevel level(depth_, path);
    std::vector<Node> nodes;
    try {
      nodes = repo_.LoadTree(id);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kIo) throw;  // transport errors are not damage
      if (path == "/") {
        Say("  dir \"/\": not readable");
        return std::nullopt;
      }
      Say("  dir \"" + path + "\": replaced with empty directory");
      return Empty();
    }
    bool changed = false;
    for (Node& n : nodes) {
      const std::string child = (path == "/" ? "/" : path + "/") + n.name;
      if (n.type == NodeType::kFile) {
        std::vector<BlobId> kept;
        uint64_t size = 0;
        bool missing = false;
        for (const BlobId& b : n.content) {
          auto locs = repo_.index().Lookup(BlobType::kData, b);
          if (locs.empty()) {
            missing = true;
            continue;
          }
          kept.push_back(b);
          size += locs.front().PlainLength();
        }
        if (missing) {
          Say("  file \"" + child + "\": removed missing content");
        } else if (size != n.size) {
          Say("  file \"" + child + "\": fixed incorrect size");
        }
        if (missing || size != n.size) {
          n.content = std::move(kept);
          n.size = size;
          changed = true;
        }
      } else if (n.type == NodeType::kDir) {
        BlobId sub;
        if (!n.subtree) {
          Say("  dir \"" + child + "\": replaced with empty directory");
          sub = Empty();
        } else {
          sub = *Rewrite(*n.subtree, child);  // only the root may come back empty
        }
        if (!n.subtree || sub != *n.subtree) {
          n.subtree = sub;
          changed = true;
        }
      }
    }
    BlobId out = changed ? Save(nodes) : id;
    done_[id] = out;
    return out;
  }

 private:
  void Say(const std::string& s) {
    if (o_.progress) o_.progress(s);
  }
  BlobId Save(const std::vector<Node>& nodes) {
    std::string t = EncodeTree(nodes);
    BlobId id(Sha256(AsBytes(t)));
    if (!o_.dry_run) session_.SaveBlob(BlobType::kTree, id, AsBytes(t));
    return id;
  }
  BlobId Empty() { return Save({}); }

  IndexedRepository& repo_;
  WriteSession& session_;
  const RepairSnapshotsOptions& o_;
  std::unordered_map<BlobId, BlobId, IdHash> done_;
  int depth_ = 0;
};

}  // namespace

RepairSnapshotsResult RepairSnapshots(WriteSession& session,
                                      const std::vector<std::pair<FileId, Snapshot>>& snapshots,
                                      const RepairSnapshotsOptions& opts) {
  RepairSnapshotsResult res;
  IndexedRepository& repo = session.repo();
  Rewriter rw(session, opts);
  auto say = [&](const std::string& s) {
    if (opts.progress) opts.progress(s);
  };
  for (const auto& [id, snap] : snapshots) {
    std::string paths;
    for (const auto& p : snap.paths) paths += (paths.empty() ? "" : " ") + p;
    say("\nsnapshot " + id.Short() + " of [" + paths + "] at " +
        gojson::FormatTime(snap.time) + ")");
    std::optional<BlobId> tree;
    const BlobId root = snap.tree;  // (a lambda may not capture a structured binding in clang 14)
    RunOnDeepStack([&] { tree = rw.Rewrite(root, "/"); });  // one recursion per level
    if (!opts.dry_run) session.Flush();  // trees before the snapshot that needs them
    if (!tree) {
      if (opts.dry_run) {
        say("would delete empty snapshot");
      } else {
        repo.backend().Remove({FileType::kSnapshot, id.Hex()});
        say("removed empty snapshot " + id.Short());
      }
      res.modified++;
      continue;
    }
    if (*tree == snap.tree) continue;
    res.modified++;
    if (opts.dry_run) {
      say("would save new snapshot");
      if (opts.forget) say("would remove old snapshot");
      continue;
    }
    Snapshot fresh = snap;
    fresh.original = id;
    fresh.tree = *tree;
    if (!opts.forget && !fresh.HasTag("repaired")) fresh.tags.push_back("repaired");
    FileId nid = repo.SaveJson(FileType::kSnapshot, fresh.ToJson());
    res.written.push_back(nid);
    say("saved new snapshot " + nid.Short());
    if (opts.forget) {
      repo.backend().Remove({FileType::kSnapshot, id.Hex()});
      say("removed old snapshot " + id.Short());
    }
  }
  say("");
  if (res.modified == 0) {
    say(opts.dry_run ? "no snapshots would be modified" : "no snapshots were modified");
  } else {
    say(std::string(opts.dry_run ? "would modify " : "modified ") + std::to_string(res.modified) +
        " snapshots");
  }
  return res;
}

void RemoveDamagedSnapshots(Repository& repo,
                            const std::vector<Repository::SnapshotFailure>& damaged,
                            const RepairSnapshotsOptions& opts, RepairSnapshotsResult& res,
                            const std::function<void(const std::string&)>& report) {
  for (const Repository::SnapshotFailure& f : damaged) {
    const std::string what = "snapshot " + f.id.Short() + " cannot be loaded (" + f.error + ")";
    if (f.io) {
      report(what + ": a read error, left in place");
    } else if (!opts.forget) {
      report(what + ": use --forget to remove it");
    } else if (opts.dry_run) {
      report(what + ": would remove it");
      res.removed_damaged++;
    } else {
      repo.backend().Remove({FileType::kSnapshot, f.id.Hex()});
      report(what + ": removed it");
      res.removed_damaged++;
    }
  }
}

}  // namespace haven
