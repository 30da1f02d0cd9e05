#include "capture/package_diff.h"

#include <algorithm>
#include <set>

#include "capture/capture.h"
#include "core/error.h"
#include "repo/tree_path.h"

namespace haven::capture {

namespace {

std::string NameOf(const std::string& line) { return line.substr(0, line.find('\t')); }

}  // namespace

std::map<std::string, std::string> LoadPackageFiles(IndexedRepository& repo, const Snapshot& snap) {
  std::map<std::string, std::string> out;
  auto dir = FindTreePath(repo, snap.tree, SplitTreePath(kPackagesDir)).DirTree();
  if (!dir) return out;
  std::vector<Node> nodes = repo.LoadTree(*dir);
  for (const Node& n : nodes) {
    if (n.type != NodeType::kFile) continue;
    std::string bytes;
    for (const BlobId& b : n.content) {
      Bytes blob = repo.LoadBlob(BlobType::kData, b);
      bytes.append(reinterpret_cast<const char*>(blob.data()), blob.size());
    }
    out[n.name] = std::move(bytes);
  }
  return out;
}

PackageDiff DiffPackageList(const std::string& file, const std::vector<std::string>& recorded,
                            const std::vector<std::string>& here) {
  PackageDiff d;
  d.file = file;
  std::set<std::string> rec_names, here_names;
  for (const auto& l : recorded) rec_names.insert(NameOf(l));
  for (const auto& l : here) here_names.insert(NameOf(l));
  for (const auto& l : recorded)
    if (!here_names.count(NameOf(l))) d.missing_here.push_back(l);
  for (const auto& l : here)
    if (!rec_names.count(NameOf(l))) d.extra_here.push_back(l);
  std::sort(d.missing_here.begin(), d.missing_here.end());
  std::sort(d.extra_here.begin(), d.extra_here.end());
  d.install = InstallCommand(file, d.missing_here);
  return d;
}

}  // namespace haven::capture
