#include "capture/package_diff.h"

#include <algorithm>
#include <map>
#include <set>

#include "capture/capture.h"
#include "core/error.h"
#include "repo/tree_path.h"

namespace haven::capture {

namespace {

std::string NameOf(const std::string& line) { return line.substr(0, line.find('\t')); }

std::string VersionOf(const std::string& line) {
  size_t a = line.find('\t');
  if (a == std::string::npos) return "";
  size_t b = line.find('\t', a + 1);
  return line.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
}

}  // namespace

namespace {

// The regular files of one directory of the snapshot: name -> bytes.
std::map<std::string, std::string> LoadDirFiles(IndexedRepository& repo, const Snapshot& snap,
                                                std::string_view dir_path) {
  std::map<std::string, std::string> out;
  auto dir = FindTreePath(repo, snap.tree, SplitTreePath(dir_path)).DirTree();
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

}  // namespace

std::map<std::string, std::string> LoadPackageFiles(IndexedRepository& repo, const Snapshot& snap) {
  return LoadDirFiles(repo, snap, kPackagesDir);
}

std::optional<std::string> LoadStoredProfile(IndexedRepository& repo, const Snapshot& snap) {
  std::string_view file = kProfileFile;
  size_t slash = file.rfind('/');
  std::map<std::string, std::string> files = LoadDirFiles(repo, snap, file.substr(0, slash));
  auto it = files.find(std::string(file.substr(slash + 1)));
  if (it == files.end()) return std::nullopt;
  return std::move(it->second);
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
  std::map<std::string, std::vector<const std::string*>> rec_by, here_by;
  for (const auto& l : recorded) rec_by[NameOf(l)].push_back(&l);
  for (const auto& l : here) here_by[NameOf(l)].push_back(&l);
  for (auto& [name, rec] : rec_by) {
    auto it = here_by.find(name);
    if (it == here_by.end()) continue;
    auto by_version = [](const std::string* a, const std::string* b) {
      return VersionOf(*a) < VersionOf(*b);
    };
    std::sort(rec.begin(), rec.end(), by_version);
    std::sort(it->second.begin(), it->second.end(), by_version);
    for (size_t i = 0; i < std::min(rec.size(), it->second.size()); ++i)
      if (VersionOf(*rec[i]) != VersionOf(*it->second[i]))
        d.other_version.emplace_back(*rec[i], *it->second[i]);
  }
  std::sort(d.missing_here.begin(), d.missing_here.end());
  std::sort(d.extra_here.begin(), d.extra_here.end());
  d.install = InstallCommand(file, d.missing_here);
  return d;
}

}  // namespace haven::capture
