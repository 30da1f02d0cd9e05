#include "repo/tree_path.h"

#include "repo/indexed_repository.h"

namespace haven {

std::optional<BlobId> TreePath::DirTree() const {
  if (!found() || nodes.empty()) return std::nullopt;
  const Node& n = nodes.back();
  if (n.type != NodeType::kDir || !n.subtree) return std::nullopt;
  return n.subtree;
}

std::vector<std::string> SplitTreePath(std::string_view path) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    if (end > pos) out.emplace_back(path.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

TreePath FindTreePath(const TreeLoader& load, const BlobId& root,
                      const std::vector<std::string>& components) {
  TreePath r;
  BlobId tree = root;
  for (size_t i = 0; i < components.size(); ++i) {
    std::vector<Node> nodes = load(tree);
    auto it = nodes.begin();
    while (it != nodes.end() && it->name != components[i]) ++it;
    if (it == nodes.end()) {
      r.stop = TreePath::Stop::kNotFound;
      r.at = i;
      return r;
    }
    r.nodes.push_back(std::move(*it));
    r.parents.push_back(tree);
    if (i + 1 == components.size()) break;
    const Node& n = r.nodes.back();
    if (n.type != NodeType::kDir || !n.subtree) {
      r.stop = TreePath::Stop::kNotADir;
      r.at = i;
      return r;
    }
    tree = *n.subtree;
  }
  return r;
}

TreePath FindTreePath(IndexedRepository& repo, const BlobId& root,
                      const std::vector<std::string>& components) {
  return FindTreePath([&repo](const BlobId& id) { return repo.LoadTree(id); }, root,
                      components);
}

}  // namespace haven
