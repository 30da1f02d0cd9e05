// The lookup of a path inside a snapshot: from a root tree id, each component's node in
// turn (restic's walker semantics: the first node of that name in its tree; every node but
// the last must be a directory with a subtree). Used by dump, restore SNAPSHOT:SUBDIR,
// the package lists of a capture and the home tree of a capture.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/id.h"
#include "repo/node.h"

namespace haven {

class IndexedRepository;

// Loads one tree (IndexedRepository::LoadTree).
using TreeLoader = std::function<std::vector<Node>(const BlobId&)>;

struct TreePath {
  enum class Stop {
    kFound,     // every component found; nodes.back() is the target
    kNotFound,  // component `at` is not in its tree
    kNotADir,   // node `at` is not a directory with a subtree, and components follow
  };
  Stop stop = Stop::kFound;
  size_t at = 0;                // the component where the walk stopped (not kFound)
  std::vector<Node> nodes;      // the nodes found, one per component reached
  std::vector<BlobId> parents;  // parents[i]: the tree that lists nodes[i]

  bool found() const { return stop == Stop::kFound; }
  // The target's subtree when it was found and is a directory with one.
  std::optional<BlobId> DirTree() const;
};

// "/a//b/" -> {"a", "b"}: the components, empty ones dropped.
std::vector<std::string> SplitTreePath(std::string_view path);

// Walks `components` from the tree `root`. Errors of loading a tree are thrown. With no
// components the result is found with no nodes (the root itself).
TreePath FindTreePath(const TreeLoader& load, const BlobId& root,
                      const std::vector<std::string>& components);
TreePath FindTreePath(IndexedRepository& repo, const BlobId& root,
                      const std::vector<std::string>& components);

}  // namespace haven
