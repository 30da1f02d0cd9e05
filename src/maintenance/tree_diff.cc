#include "maintenance/tree_diff.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>
#include <vector>

#include "core/deep_stack.h"
#include "core/error.h"
#include "maintenance/used_blobs.h"
#include "repo/tree_stream.h"

namespace haven {

namespace {

bool SameInstant(const gojson::Timestamp& a, const gojson::Timestamp& b) {
  return a.sec == b.sec && a.nsec == b.nsec;
}

bool SameXattrs(const std::vector<Xattr>& a, const std::vector<Xattr>& b) {
  if (a.size() != b.size()) return false;
  std::map<std::string, std::string> left;
  for (const auto& x : a) left[x.name] = x.value.value_or("");
  std::map<std::string, bool> seen;
  for (const auto& x : b) {
    auto it = left.find(x.name);
    if (it == left.end() || it->second != x.value.value_or("")) return false;
    seen[x.name] = true;
  }
  return seen.size() == left.size();
}

using IdSet = std::unordered_set<BlobId, IdHash>;

// restic's BlobSet: handles of both types.
struct BlobSet {
  IdSet data, tree;
  // restic's addBlobs: a file's content, a directory's subtree.
  void AddNode(const Node& n) {
    if (n.type == NodeType::kFile) {
      data.insert(n.content.begin(), n.content.end());
    } else if (n.type == NodeType::kDir && n.subtree) {
      tree.insert(*n.subtree);
    }
  }
};

// a minus b.
IdSet Minus(const IdSet& a, const IdSet& b) {
  IdSet out;
  for (const auto& id : a)
    if (!b.contains(id)) out.insert(id);
  return out;
}

// Go's path.Join(prefix, name) for the clean absolute prefixes the walk builds.
std::string JoinPath(const std::string& prefix, const std::string& name) {
  std::string p = prefix;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p == "/" ? "/" + name : p + "/" + name;
}

// The nodes of a tree by name (the last of a repeated name wins, as restic's map).
std::map<std::string, const Node*> ByName(const std::vector<Node>& nodes) {
  std::map<std::string, const Node*> m;
  for (const auto& n : nodes) m[n.name] = &n;
  return m;
}

class Differ {
 public:
  Differ(IndexedRepository& repo, const TreeDiffOptions& o)
      : repo_(repo), o_(o), stream_(repo, o.threads > 0 ? o.threads : repo.threads()) {}

  DiffStats Run(const BlobId& from, const BlobId& to) {
    before_.tree.insert(from);
    after_.tree.insert(to);
    RunOnDeepStack([&] { DiffTree("/", from, to, /*top=*/true); });  // one recursion per level
    CountBlobs();
    return stats_;
  }

 private:
  void Change(const std::string& path, const std::string& mod) {
    if (o_.change) o_.change(DiffChange{path, mod});
  }
  void Warn(const std::string& msg) {
    if (o_.warn) o_.warn(msg);
  }

  // Takes a tree from the stream; below the roots a failure is a warning (nullopt).
  std::optional<std::vector<Node>> Take(const BlobId& id, bool top) {
    if (top) return stream_.Take(id);
    try {
      return stream_.Take(id);
    } catch (const Error& e) {
      Warn(std::string("error: ") + e.what());
      return std::nullopt;
    }
  }

  // The subtrees DiffTree will take next, in its order.
  static std::vector<BlobId> Descents(const std::map<std::string, const Node*>& a,
                                      const std::map<std::string, const Node*>& b,
                                      const std::vector<std::string>& names) {
    std::vector<BlobId> out;
    for (const auto& name : names) {
      auto i = a.find(name);
      auto j = b.find(name);
      const Node* n1 = i == a.end() ? nullptr : i->second;
      const Node* n2 = j == b.end() ? nullptr : j->second;
      auto dir = [](const Node* n) { return n && n->type == NodeType::kDir && n->subtree; };
      if (n1 && n2) {
        if (dir(n1) && dir(n2) && *n1->subtree != *n2->subtree) {
          out.push_back(*n1->subtree);
          out.push_back(*n2->subtree);
        }
      } else if (dir(n1)) {
        out.push_back(*n1->subtree);
      } else if (dir(n2)) {
        out.push_back(*n2->subtree);
      }
    }
    return out;
  }

  void DiffTree(const std::string& prefix, const BlobId& id1, const BlobId& id2, bool top) {
    TreeLevel level(depth_, prefix);
    auto tree1 = Take(id1, top);
    if (!tree1) return;
    auto tree2 = Take(id2, top);
    if (!tree2) return;
    const auto nodes1 = ByName(*tree1), nodes2 = ByName(*tree2);
    std::vector<std::string> names;
    for (const auto& [name, n] : nodes1) names.push_back(name);
    for (const auto& [name, n] : nodes2)
      if (!nodes1.contains(name)) names.push_back(name);
    std::sort(names.begin(), names.end());
    stream_.Expect(Descents(nodes1, nodes2, names));
    for (const auto& name : names) {
      auto i = nodes1.find(name);
      auto j = nodes2.find(name);
      const Node* n1 = i == nodes1.end() ? nullptr : i->second;
      const Node* n2 = j == nodes2.end() ? nullptr : j->second;
      if (n1) before_.AddNode(*n1);
      if (n2) after_.AddNode(*n2);
      if (n1 && n2) {
        Both(prefix, *n1, *n2);
      } else if (n1) {
        OneSide(prefix, *n1, "-", stats_.removed, before_);
      } else {
        OneSide(prefix, *n2, "+", stats_.added, after_);
      }
    }
  }

  void Both(const std::string& prefix, const Node& n1, const Node& n2) {
    std::string name = JoinPath(prefix, n1.name);
    std::string mod;
    if (n1.type != n2.type) mod += "T";
    if (n2.type == NodeType::kDir) name += "/";
    if (n1.type == NodeType::kFile && n2.type == NodeType::kFile && n1.content != n2.content) {
      mod += "M";
      ++stats_.changed_files;
    } else if (o_.metadata && !NodesEqual(n1, n2)) {
      mod += "U";
    }
    if (!mod.empty()) Change(name, mod);
    if (n1.type == NodeType::kDir && n2.type == NodeType::kDir && n1.subtree && n2.subtree) {
      if (*n1.subtree == *n2.subtree) {
        common_.push_back(*n1.subtree);
      } else {
        DiffTree(name, *n1.subtree, *n2.subtree, false);
      }
    }
  }

  // A node on one side only: it and (for a directory) everything below it.
  void OneSide(const std::string& prefix, const Node& n, const char* mod, DiffStat& stat,
               BlobSet& blobs) {
    std::string name = JoinPath(prefix, n.name);
    if (n.type == NodeType::kDir) name += "/";
    Change(name, mod);
    stat.Add(n);
    if (n.type == NodeType::kDir && n.subtree) PrintDir(mod, stat, blobs, name, *n.subtree);
  }

  void PrintDir(const char* mod, DiffStat& stat, BlobSet& blobs, const std::string& prefix,
                const BlobId& id) {
    TreeLevel level(depth_, prefix);
    auto tree = Take(id, false);
    if (!tree) return;
    std::vector<BlobId> subs;
    for (const auto& n : *tree)
      if (n.type == NodeType::kDir && n.subtree) subs.push_back(*n.subtree);
    stream_.Expect(subs);
    for (const auto& n : *tree) {
      std::string name = JoinPath(prefix, n.name);
      if (n.type == NodeType::kDir) name += "/";
      Change(name, mod);
      stat.Add(n);
      blobs.AddNode(n);
      if (n.type == NodeType::kDir && n.subtree) PrintDir(mod, stat, blobs, name, *n.subtree);
    }
  }

  // restic: removed = before - (before & after) - common, added likewise; counted with
  // their plaintext sizes from the index.
  void CountBlobs() {
    IdSet cand_data_removed = Minus(before_.data, after_.data);
    IdSet cand_tree_removed = Minus(before_.tree, after_.tree);
    IdSet cand_data_added = Minus(after_.data, before_.data);
    IdSet cand_tree_added = Minus(after_.tree, before_.tree);
    const bool any = !cand_data_removed.empty() || !cand_tree_removed.empty() ||
                     !cand_data_added.empty() || !cand_tree_added.empty();
    std::optional<UsedBlobs> common;
    if (any && !common_.empty()) {
      std::vector<UsedBlobsRoot> roots;
      for (const auto& id : common_) roots.push_back({FileId{}, id});
      UsedBlobsOptions uo;
      uo.threads = o_.threads;
      try {
        common = FindUsedBlobs(repo_, roots, uo);
      } catch (const Error& e) {
        Warn(std::string("error: ") + e.what());
      }
    }
    // FindUsedBlobs counts the roots themselves; restic's common set holds only what is
    // below them. A root is referenced by both sides, so it is never a candidate.
    auto drop_common = [&](IdSet& s, BlobType t) {
      if (!common) return;
      for (auto it = s.begin(); it != s.end();)
        it = common->Has(t, *it) ? s.erase(it) : std::next(it);
    };
    drop_common(cand_data_removed, BlobType::kData);
    drop_common(cand_tree_removed, BlobType::kTree);
    drop_common(cand_data_added, BlobType::kData);
    drop_common(cand_tree_added, BlobType::kTree);
    Count(cand_data_removed, BlobType::kData, stats_.removed);
    Count(cand_tree_removed, BlobType::kTree, stats_.removed);
    Count(cand_data_added, BlobType::kData, stats_.added);
    Count(cand_tree_added, BlobType::kTree, stats_.added);
  }

  void Count(const IdSet& s, BlobType t, DiffStat& stat) {
    const Index& index = repo_.index();
    for (const auto& id : s) {
      (t == BlobType::kData ? stat.data_blobs : stat.tree_blobs)++;
      auto locs = index.Lookup(t, id);
      if (locs.empty()) {
        Warn(std::string("unable to find blob size for <") +
             (t == BlobType::kData ? "data" : "tree") + "/" + id.Short() + ">");
        continue;
      }
      stat.bytes += locs.front().PlainLength();
    }
  }

  IndexedRepository& repo_;
  const TreeDiffOptions& o_;
  OrderedTreeStream stream_;
  DiffStats stats_;
  BlobSet before_, after_;
  std::vector<BlobId> common_;  // subtrees equal on both sides (not descended into)
  int depth_ = 0;
};

}  // namespace

void DiffStat::Add(const Node& n) {
  if (n.type == NodeType::kFile) {
    ++files;
  } else if (n.type == NodeType::kDir) {
    ++dirs;
  } else {
    ++others;
  }
}

bool NodesEqual(const Node& a, const Node& b) {
  return a.name == b.name && a.type == b.type && a.mode == b.mode &&
         SameInstant(a.mtime, b.mtime) && SameInstant(a.atime, b.atime) &&
         SameInstant(a.ctime, b.ctime) && a.uid == b.uid && a.gid == b.gid &&
         a.user == b.user && a.group == b.group && a.inode == b.inode &&
         a.device_id == b.device_id && a.size == b.size && a.links == b.links &&
         a.linktarget == b.linktarget && a.device == b.device && a.content == b.content &&
         SameXattrs(a.xattrs, b.xattrs) && a.subtree == b.subtree && a.error == b.error;
}

DiffStats DiffTrees(IndexedRepository& repo, const BlobId& from, const BlobId& to,
                    const TreeDiffOptions& opts) {
  Differ d(repo, opts);
  return d.Run(from, to);
}

}  // namespace haven
