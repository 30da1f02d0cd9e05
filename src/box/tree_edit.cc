#include "box/tree_edit.h"

#include <unistd.h>

#include <algorithm>

#include "core/error.h"
#include "repo/host_info.h"
#include "repo/tree_path.h"

namespace haven::box {

std::vector<std::string> BoxPathComponents(const std::string& path) {
  if (path.find('\0') != std::string::npos)
    Fail(ErrorCode::kInvalidArgument, "invalid path in box: contains NUL");
  std::vector<std::string> comps = SplitTreePath(path);
  for (const std::string& c : comps)
    if (!SafeNodeName(c))
      Fail(ErrorCode::kInvalidArgument, "invalid path in box \"" + path + "\": component \"" +
                                            c + "\" is not a file name");
  return comps;
}

BlobId TreeEditor::Save(const std::vector<Node>& nodes) {
  std::string bytes = EncodeTree(nodes);
  BlobId id(Sha256(AsBytes(bytes)));
  session_.SaveBlob(BlobType::kTree, id, AsBytes(bytes));
  ++trees_written_;
  saved_.emplace(id, nodes);
  return id;
}

std::vector<Node> TreeEditor::Load(const BlobId& id) {
  auto it = saved_.find(id);
  if (it != saved_.end()) return it->second;
  return session_.repo().LoadTree(id);
}

BlobId TreeEditor::EmptyTree() { return Save({}); }

namespace {

Node NewDirectory(const std::string& name) {
  Node d;
  d.name = name;
  d.type = NodeType::kDir;
  d.mode = gomode::kDir | 0755;
  d.mtime = d.atime = d.ctime = NowLocal();
  d.uid = getuid();
  d.gid = getgid();
  d.user = UserNameOf(d.uid);
  d.group = GroupNameOf(d.gid);
  return d;
}

}  // namespace

BlobId TreeEditor::Edit(const BlobId& tree, const std::vector<std::string>& comps,
                        size_t depth, const std::optional<Node>& node) {
  std::vector<Node> nodes = Load(tree);
  const std::string& name = comps[depth];
  auto it = std::find_if(nodes.begin(), nodes.end(), [&](const Node& n) { return n.name == name; });
  if (depth + 1 == comps.size()) {
    if (it != nodes.end()) {
      nodes.erase(it);
    } else if (!node) {
      Fail(ErrorCode::kNotFound, "no \"" + name + "\" in the box at that path");
    }
    if (node) {
      Node n = *node;
      n.name = name;
      nodes.push_back(std::move(n));
    }
  } else {
    if (it == nodes.end()) {
      if (!node) Fail(ErrorCode::kNotFound, "no directory \"" + name + "\" in the box");
      Node dir = NewDirectory(name);
      dir.subtree = EmptyTree();
      nodes.push_back(std::move(dir));
      it = nodes.end() - 1;
    }
    if (it->type != NodeType::kDir || !it->subtree)
      Fail(ErrorCode::kInvalidArgument, "\"" + name + "\" in the box is not a directory");
    it->subtree = Edit(*it->subtree, comps, depth + 1, node);
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const Node& a, const Node& b) { return a.name < b.name; });
  return Save(nodes);
}

BlobId TreeEditor::Put(const BlobId& root, const std::vector<std::string>& comps, Node node) {
  if (comps.empty()) Fail(ErrorCode::kInvalidArgument, "cannot replace the root of a box");
  return Edit(root, comps, 0, std::optional<Node>(std::move(node)));
}

BlobId TreeEditor::Remove(const BlobId& root, const std::vector<std::string>& comps) {
  if (comps.empty()) Fail(ErrorCode::kInvalidArgument, "cannot remove the root of a box");
  return Edit(root, comps, 0, std::nullopt);
}

}  // namespace haven::box
