#include <unistd.h>

#include "cli/common.h"
#include "cli/snapshot_filter.h"
#include "core/error.h"
#include "repo/node.h"

namespace haven::cli {

void RegisterDump(CLI::App& app) {
  static std::string snap, path;
  static SnapshotFilter f;
  auto* cmd = app.add_subcommand("dump", "print a file of a snapshot to stdout");
  cmd->add_option("snapshot", snap, "snapshot id, prefix or latest")->required();
  cmd->add_option("path", path, "file path inside the snapshot")->required();
  cmd->add_option("-H,--host", f.hosts, "for latest: only this host");
  cmd->add_option("--tag", f.tags, "for latest: only these tags");
  cmd->add_option("--path", f.paths, "for latest: only this path");
  cmd->callback([] {
    auto repo = OpenRepository();
    auto lock = LockRepository(*repo, false);
    auto [id, s] = FindSnapshot(*repo, snap, f);
    repo->LoadIndex();
    BlobId tree = s.tree;
    std::vector<std::string> parts;
    size_t pos = 0;
    while (pos <= path.size()) {
      size_t end = path.find('/', pos);
      if (end == std::string::npos) end = path.size();
      if (end > pos) parts.push_back(path.substr(pos, end - pos));
      pos = end + 1;
    }
    if (parts.empty()) Fail(ErrorCode::kInvalidArgument, "dump: give the path of a file");
    for (size_t i = 0; i < parts.size(); ++i) {
      const Node* found = nullptr;
      auto nodes = repo->LoadTree(tree);
      for (const Node& n : nodes)
        if (n.name == parts[i]) found = &n;
      if (!found) Fail(ErrorCode::kNotFound, "cannot dump file: path \"" + path + "\" not found in snapshot");
      if (i + 1 < parts.size()) {
        if (found->type != NodeType::kDir || !found->subtree)
          Fail(ErrorCode::kNotFound, "path \"" + path + "\" not found in snapshot");
        tree = *found->subtree;
        continue;
      }
      if (found->type != NodeType::kFile)
        Fail(ErrorCode::kInvalidArgument,
             "dump: \"" + path + "\" is a " + NodeTypeName(found->type) +
                 ", not a file (directories as tar are not supported yet)");
      for (const BlobId& b : found->content) {
        Bytes data = repo->LoadBlob(BlobType::kData, b);
        size_t done = 0;
        while (done < data.size()) {
          ssize_t w = write(STDOUT_FILENO, data.data() + done, data.size() - done);
          if (w < 0) {
            if (errno == EINTR) continue;
            Fail(ErrorCode::kIo, "write to stdout failed");
          }
          done += static_cast<size_t>(w);
        }
      }
    }
  });
}

}  // namespace haven::cli
