// ls: the nodes of a snapshot, as restic 0.14 lists them: a header line ("snapshot ID of
// [paths] filtered by [dirs] at TIME):", Go's time.Time String format), then one path per
// line (-l: mode, owner, size, mtime), or JSON lines. DIR arguments (absolute) restrict the
// listing to those directories and their direct children; --recursive lists everything
// below them.
#include <cstdio>
#include <ctime>
#include <iostream>

#include "archiver/archiver.h"
#include "cli/common.h"
#include "cli/restic_format.h"
#include "cli/snapshot_filter.h"
#include "core/deep_stack.h"
#include "core/error.h"
#include "repo/node.h"
#include "repo/tree_stream.h"

namespace haven::cli {

namespace {

// Go's path.Clean for absolute slash paths: no empty or "." components, ".." resolved (the
// archiver's cleaning of absolute targets).
std::string CleanPath(const std::string& p) {
  std::string out;
  for (const auto& c : TargetComponents("/" + p)) out += "/" + c;
  return out.empty() ? "/" : out;
}

// restic's fs.HasPathPrefix for absolute paths: `base` is `p` or one of its ancestors.
bool HasPathPrefix(const std::string& base, const std::string& p) {
  std::string b = CleanPath(base), q = CleanPath(p);
  if (b == q || b == "/") return true;
  return q.size() > b.size() && q.compare(0, b.size(), b) == 0 && q[b.size()] == '/';
}

struct LsOptions {
  std::string snapshot;
  std::vector<std::string> dirs;
  bool long_format = false;
  bool recursive = false;
  SnapshotFilter filter;
};

class Lister {
 public:
  Lister(IndexedRepository& repo, const LsOptions& o) : stream_(repo, repo.threads()), o_(o) {}

  // Lists the tree's nodes in order, each directory's entries right after it (the trees
  // descended into are loaded ahead, in that order, by the stream).
  void Walk(const BlobId& tree, const std::string& prefix) {
    TreeLevel level(depth_, prefix);
    const std::vector<Node> nodes = stream_.Take(tree);
    std::vector<char> descend(nodes.size());
    std::vector<BlobId> subtrees;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      const std::string path = prefix + "/" + n.name;
      // restic: below a listed directory only with --recursive, else toward one.
      const bool toward = (o_.recursive && WithinDir(path)) || ApproachingDir(path);
      descend[i] = toward && n.type == NodeType::kDir && n.subtree;
      if (descend[i]) subtrees.push_back(*n.subtree);
    }
    stream_.Expect(subtrees);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const std::string path = prefix + "/" + nodes[i].name;
      if (WithinDir(path)) Print(nodes[i], path);
      if (out_.size() > (1 << 20)) Flush();
      if (descend[i]) Walk(*nodes[i].subtree, path);
    }
  }

  void Flush() {
    std::cout << out_;
    out_.clear();
  }
  std::string& out() { return out_; }

 private:
  // The node is one of the DIR arguments or below one (restic's withinDir).
  bool WithinDir(const std::string& path) const {
    if (o_.dirs.empty()) return true;
    for (const auto& d : o_.dirs)
      if (HasPathPrefix(d, path)) return true;
    return false;
  }
  // A DIR argument is this node or below it (restic's approachingMatchingTree).
  bool ApproachingDir(const std::string& path) const {
    if (o_.dirs.empty()) return true;
    for (const auto& d : o_.dirs)
      if (HasPathPrefix(path, d)) return true;
    return false;
  }

  void Print(const Node& n, const std::string& path) {
    if (Globals().json) {
      out_ += "{\"name\":";
      gojson::AppendString(out_, n.name);
      out_ += ",\"type\":\"";
      out_ += NodeTypeName(n.type);
      out_ += "\",\"path\":";
      gojson::AppendString(out_, path);
      out_ += ",\"uid\":" + std::to_string(n.uid) + ",\"gid\":" + std::to_string(n.gid);
      if (n.type == NodeType::kFile) out_ += ",\"size\":" + std::to_string(n.size);
      if (n.mode) {
        out_ += ",\"mode\":" + std::to_string(n.mode) + ",\"permissions\":\"" +
                GoModeString(n.mode) + "\"";
      }
      out_ += ",\"mtime\":\"" + gojson::FormatTime(n.mtime) + "\",\"atime\":\"" +
              gojson::FormatTime(n.atime) + "\",\"ctime\":\"" + gojson::FormatTime(n.ctime) +
              "\",\"struct_type\":\"node\"}\n";
    } else if (o_.long_format) {
      char buf[128];
      // restic 0.14: "%s %5d %5d %6d %s %s" (mode, uid, gid, size, local mtime, path).
      std::snprintf(buf, sizeof(buf), "%s %5u %5u %6llu %s ", GoModeString(n.mode).c_str(),
                    n.uid, n.gid, (unsigned long long)n.size, FormatTimeShort(n.mtime).c_str());
      out_ += buf + path;
      if (n.type == NodeType::kSymlink) out_ += " -> " + n.linktarget;
      out_ += '\n';
    } else {
      out_ += path + '\n';
    }
  }

  OrderedTreeStream stream_;
  const LsOptions& o_;
  std::string out_;
  int depth_ = 0;
};

// Go's %v of a []string: "[a b c]".
std::string GoList(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + v[i];
  return s + "]";
}

}  // namespace

void RegisterLs(CLI::App& app) {
  static LsOptions o;
  auto* cmd = app.add_subcommand("ls", "list files in a snapshot");
  cmd->add_option("snapshot", o.snapshot, "snapshot id, prefix or latest")->required();
  cmd->add_option("dir", o.dirs,
                  "only list these (absolute) directories and their direct children");
  cmd->add_flag("-l,--long", o.long_format, "long listing");
  cmd->add_flag("--recursive", o.recursive,
                "include files in subfolders of the listed directories");
  cmd->add_option("-H,--host", o.filter.hosts, "for latest: only this host");
  cmd->add_option("--tag", o.filter.tags, "for latest: only these tags");
  cmd->add_option("--path", o.filter.paths, "for latest: only this path");
  cmd->callback([] {
    for (const auto& d : o.dirs)
      if (d.empty() || d[0] != '/')
        Fail(ErrorCode::kInvalidArgument,
             "All path filters must be absolute, starting with a forward slash '/' (got \"" +
                 d + "\")");
    auto repo = OpenRepository({.prefetch_index = true});
    // The snapshot and the index read at once, beside the lock's check.
    auto early_index = StartEarlySnapshot(*repo, o.snapshot, o.filter);  // beside the lock's write
    auto lock = LockRepositoryOverlapped(*repo, false);
    auto [entry, indexed] = FindSnapshotAndLoadIndex(*repo, lock, o.snapshot, o.filter, early_index.get());
    const auto& [id, s] = entry;
    Lister lister(*indexed, o);
    if (Globals().json) {
      lister.out() += SnapshotListJson(id, s, "snapshot") + "\n";
    } else if (!Globals().quiet) {
      lister.out() += "snapshot " + id.Short() + " of " + GoList(s.paths) + " filtered by " +
                      GoList(o.dirs) + " at " + GoTimeString(s.time) + "):\n";
    }
    const BlobId root = s.tree;  // (a lambda may not capture a structured binding in clang 14)
    RunOnDeepStack([&] { lister.Walk(root, ""); });  // one recursion per level
    lister.Flush();
  });
}

}  // namespace haven::cli
