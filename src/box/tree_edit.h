// Copy-on-write edits of a snapshot tree (docs/box.md §4): a change at one path rewrites
// only the trees from the root down to that path; every other subtree keeps its id, so
// nothing else is read or stored again.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/id.h"
#include "repo/indexed_repository.h"
#include "repo/node.h"
#include "repo/write_session.h"

namespace haven::box {

// The components of a path inside a box ("/a/b" -> {"a","b"}); each must be a safe node
// name (no "..", ".", NUL or empty component). Throws kInvalidArgument naming the path.
std::vector<std::string> BoxPathComponents(const std::string& path);

class TreeEditor {
 public:
  explicit TreeEditor(WriteSession& session) : session_(session) {}

  // The empty tree, saved.
  BlobId EmptyTree();
  // `root` with `node` at `comps` (renamed to comps.back()), replacing any node of that
  // name. Missing directories on the way are created (mode 0755, owned by this process,
  // times now). comps must not be empty. A non-directory on the way: kInvalidArgument.
  BlobId Put(const BlobId& root, const std::vector<std::string>& comps, Node node);
  // `root` without the node at `comps`; kNotFound when there is none.
  BlobId Remove(const BlobId& root, const std::vector<std::string>& comps);
  // How many trees the edits so far saved (the rewritten path), for tests and -v.
  size_t trees_written() const { return trees_written_; }

 private:
  BlobId Edit(const BlobId& tree, const std::vector<std::string>& comps, size_t depth,
              const std::optional<Node>& node);
  BlobId Save(const std::vector<Node>& nodes);
  // A tree saved by this editor (not indexed before the session's Flush) or stored.
  std::vector<Node> Load(const BlobId& id);

  WriteSession& session_;
  std::map<BlobId, std::vector<Node>> saved_;
  size_t trees_written_ = 0;
};

}  // namespace haven::box
