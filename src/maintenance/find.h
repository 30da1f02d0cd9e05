// restic 0.14's `find`: the search of snapshot trees for paths matching patterns, or for
// given tree and blob ids, with restic's walker semantics so the same repository gives
// the same hits:
//  * nodes in name order, paths joined from "/";
//  * pattern mode: a node matches when any pattern matches its path (restic's filter.Match:
//    an unanchored pattern matches at any depth, and everything below a match), optionally
//    lower-cased, and its mtime lies within [oldest, newest]; a directory is descended
//    into when it matched or a child may match (anchored patterns); a subtree whose nodes
//    were all left out is remembered by id and skipped wherever it appears again, in this
//    and every later snapshot (restic's ignoreTrees, shared by the finder);
//  * id mode: every tree of every snapshot; a directory whose subtree id is one of the
//    tree ids (full or its 8-character short form), a file whose content holds one of the
//    blob ids. With only tree ids, a snapshot's walk ends once as many trees were found as
//    ids were given (counted over all snapshots, as restic).
// Trees are read through an OrderedTreeStream (the subtrees a directory descends into are
// loaded ahead on the workers). In pattern mode the walk of each subtree at each path is
// recorded (its directories, what was descended into, the hits); where the same subtree
// appears at the same path again (a later snapshot of a mostly unchanged tree) the record is
// walked instead, with restic's ignoreTrees decisions taken afresh, so the output is the same
// without loading, decoding or matching the subtree again.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/id.h"
#include "core/path_match.h"
#include "repo/gojson.h"
#include "repo/indexed_repository.h"
#include "repo/node.h"

namespace haven {

struct FindCallbacks {
  // A matching node (pattern mode).
  std::function<void(const std::string& path, const Node& node)> match;
  // Id mode: a tree id found as the subtree of the directory `path`.
  std::function<void(const std::string& id, const std::string& path)> tree;
  // Id mode: a blob id found in the content of the file `path`, listed by `parent`.
  std::function<void(const std::string& id, const std::string& path, const BlobId& parent)> blob;
  // A tree that could not be loaded; `parent` is the tree that lists it (the root itself
  // for a root), as restic prints it.
  std::function<void(const BlobId& parent, const std::string& error)> unloadable;
};

struct FindPatterns {
  std::vector<std::string> patterns;
  bool ignore_case = false;  // patterns and paths lower-cased (Go's strings.ToLower)
  std::optional<gojson::Timestamp> oldest, newest;
};

struct FindIds {
  // As given (full hex or the 8-character short form); nullopt: not searched for.
  std::optional<std::set<std::string>> blobs, trees;
};

class Finder {
 public:
  Finder(IndexedRepository& repo, FindPatterns patterns, int threads);
  Finder(IndexedRepository& repo, FindIds ids, int threads);

  // Searches one snapshot's tree. Throws kCorrupt for a directory without a subtree.
  void Search(const BlobId& root, const FindCallbacks& cb);

  // Id mode: the blob ids as they stand after the search (a short id that was found is
  // replaced by the full one, as restic does before --show-pack-id looks them up).
  const std::optional<std::set<std::string>>& blob_ids() const { return ids_.blobs; }

 private:
  class Walk;
  IndexedRepository& repo_;
  int threads_;
  bool id_mode_;
  FindPatterns pat_;
  PatternList list_;
  FindIds ids_;
  size_t trees_found_ = 0;
  std::unordered_set<BlobId, IdHash> ignore_trees_;
  // Pattern mode: the recorded walks by (subtree, path), and about how much memory they hold
  // (no more walks are recorded past a bound, to keep a huge repository's search in check).
  struct Visit;
  using VisitKey = std::pair<BlobId, std::string>;
  struct VisitKeyHash {
    size_t operator()(const VisitKey& k) const {
      return IdHash{}(k.first) ^ std::hash<std::string>{}(k.second);
    }
  };
  std::unordered_map<VisitKey, std::shared_ptr<const Visit>, VisitKeyHash> visits_;
  size_t visit_bytes_ = 0;
};

// restic find's --oldest/--newest: "2006-01-02", "2006-01-02 15:04", "2006-01-02 15:04:05",
// with " -0700" or " MST" after the seconds, the same with "02.01.2006", and "Mon Jan 2
// 15:04:05 -0700 MST 2006"; read in the local time zone unless an offset is given.
// nullopt when none fits.
std::optional<gojson::Timestamp> ParseFindTime(const std::string& s);

}  // namespace haven
