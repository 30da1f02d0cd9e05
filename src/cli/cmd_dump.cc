// dump: a file of a snapshot to stdout, or a directory (or "/", the whole snapshot) as a tar
// stream, or a zip archive with -a zip, as restic 0.14's dump: the entries are the
// directory's contents with their paths in the snapshot minus the leading '/' (the
// directory itself is not an entry); below the top level only directories, files and
// symlinks are written. A directory is never written to a terminal.
#include <unistd.h>

#include <cstring>

#include "archiver/archiver.h"
#include "cli/archive_writer.h"
#include "cli/common.h"
#include "cli/snapshot_filter.h"
#include "core/deep_stack.h"
#include "core/error.h"
#include "repo/blob_stream.h"
#include "repo/node.h"
#include "repo/tree_path.h"

namespace haven::cli {

namespace {

struct DumpOptions {
  std::string snapshot, path, archive = "tar";
  SnapshotFilter filter;
};

[[noreturn]] void DumpFail(ErrorCode code, const std::string& why) {
  Fail(code, "cannot dump file: " + why);
}

class Dumper {
 public:
  Dumper(IndexedRepository& repo, ArchiveWriter& w) : repo_(repo), w_(w) {}

  // The nodes of `tree`, at `prefix` (a path in the snapshot, "" for the root).
  void Tree(const BlobId& tree, const std::string& prefix, bool top) {
    TreeLevel level(depth_, prefix);
    for (const Node& n : repo_.LoadTree(tree)) {
      std::string path = prefix + "/" + n.name;
      bool kind_ok = n.type == NodeType::kFile || n.type == NodeType::kDir ||
                     n.type == NodeType::kSymlink;
      if (!kind_ok && !top) continue;  // restic sends other kinds only at the top level
      w_.Begin(n, path.substr(1));
      if (n.type == NodeType::kFile) Content(n, path);
      if (n.type == NodeType::kDir && n.subtree) Tree(*n.subtree, path, false);
    }
  }

 private:
  void Content(const Node& n, const std::string& path) {
    uint64_t written = 0;
    ForEachBlobInOrder(repo_, n.content, Jobs(), [&](ByteView data) {
      if (written + data.size() > n.size)
        Fail(ErrorCode::kCorrupt, "file " + path + " in the snapshot has more content than its "
                                  "recorded size " + std::to_string(n.size));
      w_.Write(data.data(), data.size());
      written += data.size();
    });
    if (written != n.size)
      Fail(ErrorCode::kCorrupt, "file " + path + " in the snapshot has " +
                                    std::to_string(written) + " bytes of content but a "
                                    "recorded size of " + std::to_string(n.size));
  }

  IndexedRepository& repo_;
  ArchiveWriter& w_;
  int depth_ = 0;
};

// restic's splitPath(path.Clean(p)): the components of the snapshot path, none for "/"
// (the archiver's cleaning of absolute target paths is the same rule).
std::vector<std::string> SplitPath(const std::string& p) { return TargetComponents("/" + p); }

void DumpTree(IndexedRepository& repo, const BlobId& tree, const std::string& prefix,
              const DumpOptions& o) {
  if (isatty(STDOUT_FILENO))
    DumpFail(ErrorCode::kInvalidArgument, "stdout is the terminal, please redirect output");
  ArchiveWriter w(o.archive == "zip" ? ArchiveFormat::kZip : ArchiveFormat::kTar,
                  STDOUT_FILENO);
  Dumper dumper(repo, w);
  RunOnDeepStack([&] { dumper.Tree(tree, prefix, true); });  // one recursion per level
  w.Finish();
}

void RunDump(const DumpOptions& o) {
  if (o.archive != "tar" && o.archive != "zip")
    Fail(ErrorCode::kInvalidArgument,
         "unknown archive format \"" + o.archive + "\" for -a/--archive (want tar or zip)");
  auto repo = OpenRepository({.prefetch_index = true});
  // The snapshot and the index read at once, beside the lock's check.
  auto early_index = StartEarlySnapshot(*repo, o.snapshot, o.filter);  // beside the lock's write
  auto lock = LockRepositoryOverlapped(*repo, false);
  auto [entry, indexed] = FindSnapshotAndLoadIndex(*repo, lock, o.snapshot, o.filter, early_index.get());
  const auto& [id, s] = entry;
  std::vector<std::string> parts = SplitPath(o.path);
  if (parts.empty()) return DumpTree(*indexed, s.tree, "", o);
  const TreePath found = FindTreePath(*indexed, s.tree, parts);
  auto item = [&](size_t upto) {  // "/a/b" for parts[0..upto]
    std::string out;
    for (size_t i = 0; i <= upto; ++i) out += "/" + parts[i];
    return out;
  };
  if (found.stop == TreePath::Stop::kNotFound)
    DumpFail(ErrorCode::kNotFound, "path \"" + item(found.at) + "\" not found in snapshot");
  if (found.stop == TreePath::Stop::kNotADir)
    DumpFail(ErrorCode::kNotFound, "\"" + item(found.at) + "\" should be a dir, but is a " +
                                       NodeTypeName(found.nodes.back().type));
  if (auto dir = found.DirTree()) return DumpTree(*indexed, *dir, item(parts.size() - 1), o);
  const Node& file = found.nodes.back();
  if (file.type != NodeType::kFile)
    DumpFail(ErrorCode::kInvalidArgument, "\"" + item(parts.size() - 1) +
                                              "\" should be a file, but is a " +
                                              NodeTypeName(file.type));
  for (const BlobId& b : file.content) {
    Bytes data = indexed->LoadBlob(BlobType::kData, b);
    WriteStdout(data);
  }
}

}  // namespace

void RegisterDump(CLI::App& app) {
  static DumpOptions o;
  auto* cmd = app.add_subcommand(
      "dump", "print a file of a snapshot to stdout, or a directory as a tar or zip archive");
  cmd->add_option("snapshot", o.snapshot, "snapshot id, prefix or latest")->required();
  cmd->add_option("file", o.path, "path inside the snapshot (a directory or / as an archive)")
      ->required();
  cmd->add_option("-a,--archive", o.archive,
                  "archive format for a directory: tar or zip (default tar)");
  cmd->add_option("-H,--host", o.filter.hosts, "for latest: only this host");
  cmd->add_option("--tag", o.filter.tags, "for latest: only these tags");
  cmd->add_option("--path", o.filter.paths, "for latest: only this path");
  cmd->callback([] { RunDump(o); });
}

}  // namespace haven::cli
