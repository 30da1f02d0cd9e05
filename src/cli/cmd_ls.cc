#include <iostream>

#include "cli/common.h"
#include "cli/snapshot_filter.h"
#include "repo/node.h"

namespace haven::cli {

namespace {

void Walk(Repository& repo, const BlobId& tree, const std::string& prefix, bool json,
          bool long_format, std::string& out) {
  for (const Node& n : repo.LoadTree(tree)) {
    std::string path = prefix + "/" + n.name;
    if (json) {
      out += "{\"name\":";
      gojson::AppendString(out, n.name);
      out += ",\"type\":\"";
      out += NodeTypeName(n.type);
      out += "\",\"path\":";
      gojson::AppendString(out, path);
      out += ",\"uid\":" + std::to_string(n.uid) + ",\"gid\":" + std::to_string(n.gid);
      if (n.type == NodeType::kFile) out += ",\"size\":" + std::to_string(n.size);
      if (n.mode) {
        out += ",\"mode\":" + std::to_string(n.mode) + ",\"permissions\":\"" +
               GoModeString(n.mode) + "\"";
      }
      out += ",\"mtime\":\"" + gojson::FormatTime(n.mtime) + "\",\"atime\":\"" +
             gojson::FormatTime(n.atime) + "\",\"ctime\":\"" + gojson::FormatTime(n.ctime) +
             "\",\"struct_type\":\"node\"}\n";
    } else if (long_format) {
      char buf[128];
      std::snprintf(buf, sizeof(buf), "%s %5u %5u %10llu %s ", GoModeString(n.mode).c_str(),
                    n.uid, n.gid, (unsigned long long)n.size, FormatTimeShort(n.mtime).c_str());
      out += buf + path;
      if (n.type == NodeType::kSymlink) out += " -> " + n.linktarget;
      out += '\n';
    } else {
      out += path + '\n';
    }
    if (out.size() > (1 << 20)) {
      std::cout << out;
      out.clear();
    }
    if (n.type == NodeType::kDir && n.subtree)
      Walk(repo, *n.subtree, path, json, long_format, out);
  }
}

}  // namespace

void RegisterLs(CLI::App& app) {
  static std::string snap;
  static bool long_format = false;
  static SnapshotFilter f;
  auto* cmd = app.add_subcommand("ls", "list files in a snapshot");
  cmd->add_option("snapshot", snap, "snapshot id, prefix or latest")->required();
  cmd->add_flag("-l,--long", long_format, "long listing");
  cmd->add_option("-H,--host", f.hosts, "for latest: only this host");
  cmd->add_option("--tag", f.tags, "for latest: only these tags");
  cmd->add_option("--path", f.paths, "for latest: only this path");
  cmd->callback([] {
    auto repo = OpenRepository();
    auto lock = LockRepository(*repo, false);
    auto [id, s] = FindSnapshot(*repo, snap, f);
    repo->LoadIndex();
    std::string out;
    if (Globals().json) {
      out += SnapshotListJson(id, s, "snapshot") + "\n";
    } else if (!Globals().quiet) {
      std::string paths = "[";
      for (size_t i = 0; i < s.paths.size(); ++i) paths += (i ? " " : "") + s.paths[i];
      paths += "]";
      out += "snapshot " + id.Short() + " of " + paths + " filtered by [] at " +
             gojson::FormatTime(s.time) + "):\n";
    }
    Walk(*repo, s.tree, "", Globals().json, long_format, out);
    std::cout << out;
  });
}

}  // namespace haven::cli
