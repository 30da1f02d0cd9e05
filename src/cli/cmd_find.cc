// find: paths matching patterns, or tree/blob/pack ids, in snapshots (restic 0.14's find):
// the search is maintenance/find (restic's walker semantics); this file prints restic's
// text ("Found matching entries in snapshot ...", one path per line or -l's long form;
// "Found blob ..." blocks) and its JSON (a list of {"matches":[...],"hits","snapshot"}
// per snapshot, or a list of objects), and --show-pack-id's lines.
#include <cstdio>
#include <iostream>
#include <set>

#include "cli/common.h"
#include "cli/more_commands.h"
#include "cli/snapshot_args.h"
#include "cli/snapshot_filter.h"
#include "cli/table.h"
#include "core/error.h"
#include "maintenance/find.h"
#include "maintenance/repair_index.h"
#include "repo/gojson.h"

namespace haven::cli {

namespace {

struct FindCmdOptions {
  std::vector<std::string> args;
  std::string oldest, newest;
  std::vector<std::string> snapshots;
  bool blob = false, tree = false, pack = false, show_pack_id = false;
  bool ignore_case = false, long_format = false;
  SnapshotFilter filter;
};

// A node as restic's find prints it in JSON: path and permissions, then the node's fields
// without name, inode, extended_attributes, device, content and subtree.
std::string NodeJson(const std::string& path, const Node& n) {
  std::string j = "{\"path\":";
  gojson::AppendString(j, path);
  j += ",\"permissions\":\"" + GoModeString(n.mode) + "\",\"type\":\"" + NodeTypeName(n.type) + "\"";
  if (n.mode) j += ",\"mode\":" + std::to_string(n.mode);
  j += ",\"mtime\":\"" + gojson::FormatTime(n.mtime) + "\",\"atime\":\"" +
       gojson::FormatTime(n.atime) + "\",\"ctime\":\"" + gojson::FormatTime(n.ctime) + "\"";
  j += ",\"uid\":" + std::to_string(n.uid) + ",\"gid\":" + std::to_string(n.gid);
  auto str = [&](const char* k, const std::string& v) {
    if (v.empty()) return;
    j += std::string(",\"") + k + "\":";
    gojson::AppendString(j, v);
  };
  auto num = [&](const char* k, uint64_t v) {
    if (v) j += std::string(",\"") + k + "\":" + std::to_string(v);
  };
  str("user", n.user);
  str("group", n.group);
  num("device_id", n.device_id);
  num("size", n.size);
  num("links", n.links);
  str("linktarget", n.linktarget);
  str("error", n.error);
  return j + "}";
}

// restic's formatNode with -l: the Go mode string with the type bits, owner, size, local
// mtime, path, a symlink's target.
std::string LongNode(const std::string& path, const Node& n) {
  uint32_t type = 0;
  switch (n.type) {
    case NodeType::kDir: type = gomode::kDir; break;
    case NodeType::kSymlink: type = gomode::kSymlink; break;
    case NodeType::kDev: type = gomode::kDevice; break;
    case NodeType::kCharDev: type = gomode::kDevice | gomode::kCharDevice; break;
    case NodeType::kFifo: type = gomode::kNamedPipe; break;
    case NodeType::kSocket: type = gomode::kSocket; break;
    default: break;
  }
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s %5u %5u %6llu %s ", GoModeString(type | n.mode).c_str(),
                n.uid, n.gid, (unsigned long long)n.size, FormatTimeShort(n.mtime).c_str());
  std::string s = buf + path;
  if (n.type == NodeType::kSymlink) s += " -> " + n.linktarget;
  return s;
}

// restic's statefulOutput.
class Output {
 public:
  Output(bool json, bool long_format) : json_(json), long_(long_format) {}

  void Pattern(const SnapshotEntry& sn, const std::string& path, const Node& n) {
    if (json_) {
      if (!inuse_) out_ += "[", inuse_ = true;
      if (cur_ != &sn) {
        if (cur_) out_ += "],\"hits\":" + std::to_string(hits_) + ",\"snapshot\":\"" + cur_->first.Hex() + "\"},";
        out_ += "{\"matches\":[";
        cur_ = &sn;
        hits_ = 0;
      }
      if (hits_ > 0) out_ += ",";
      out_ += NodeJson(path, n);
      ++hits_;
    } else {
      if (cur_ != &sn) {
        if (cur_ && !Globals().quiet) out_ += "\n";
        cur_ = &sn;
        if (!Globals().quiet)
          out_ += "Found matching entries in snapshot " + sn.first.Short() + " from " +
                  FormatTimeShort(sn.second.time) + "\n";
      }
      out_ += (long_ ? LongNode(path, n) : path) + "\n";
    }
    Flush(false);
  }

  void Object(const char* kind, const std::string& id, const std::string& path,
              const std::string& tree, const SnapshotEntry& sn) {
    if (json_) {
      if (!inuse_) out_ += "[", inuse_ = true;
      if (hits_ > 0) out_ += ",";
      out_ += std::string("{\"object_type\":\"") + kind + "\",\"id\":\"" + id + "\",\"path\":";
      gojson::AppendString(out_, path);
      if (!tree.empty()) out_ += ",\"parent_tree\":\"" + tree + "\"";
      out_ += ",\"snapshot\":\"" + sn.first.Hex() + "\",\"time\":\"" +
              gojson::FormatTime(sn.second.time) + "\"}";
      ++hits_;
    } else {
      out_ += std::string("Found ") + kind + " " + id + "\n";
      if (std::string(kind) == "blob") {
        out_ += " ... in file " + path + "\n     (tree " + tree + ")\n";
      } else {
        out_ += " ... path " + path + "\n";
      }
      out_ += " ... in snapshot " + sn.first.Short() + " (" + FormatTimeShort(sn.second.time) + ")\n";
    }
    Flush(false);
  }

  void Text(const std::string& s) {
    out_ += s;
    Flush(false);
  }

  void FlushAll() { Flush(true); }

  void Finish() {
    if (json_) {
      if (cur_) out_ += "],\"hits\":" + std::to_string(hits_) + ",\"snapshot\":\"" + cur_->first.Hex() + "\"}";
      out_ += inuse_ ? "]\n" : "[]\n";
    }
    Flush(true);
  }

 private:
  void Flush(bool force) {
    if (!force && out_.size() < (1 << 20)) return;
    std::cout << out_ << std::flush;
    out_.clear();
  }
  bool json_, long_;
  bool inuse_ = false;
  const SnapshotEntry* cur_ = nullptr;  // pattern mode: the snapshot of the last hit
  size_t hits_ = 0;
  std::string out_;
};

// restic's packsToBlobs: the blobs of the given packs (full ids or 8-character short
// forms), from their headers; packs not in storage from the index (with a warning).
std::set<std::string> PackBlobs(IndexedRepository& repo, const std::vector<std::string>& packs) {
  std::set<std::string> want(packs.begin(), packs.end()), blobs;
  std::vector<std::pair<PackId, uint64_t>> found;
  repo.backend().List(FileType::kPack, [&](const FileInfo& fi) {
    if (want.empty()) return;
    auto it = want.find(fi.name);
    if (it == want.end()) it = want.find(fi.name.substr(0, 8));
    if (it == want.end()) return;
    want.erase(it);
    found.emplace_back(*PackId::FromHex(fi.name), fi.size);
  });
  for (const auto& [id, size] : found)
    for (const PackedBlob& b : ReadPackHeader(repo, id, size)) blobs.insert(b.id.Hex());
  if (!want.empty()) {
    std::set<std::string> from_index;
    repo.index().ForEach([&](const PackId& pack, const PackedBlob& b) {
      const std::string hex = pack.Hex();
      if (want.contains(hex) || want.contains(hex.substr(0, 8))) {
        blobs.insert(b.id.Hex());
        from_index.insert(hex);
      }
    });
    for (const auto& hex : from_index) {
      want.erase(hex);
      want.erase(hex.substr(0, 8));
    }
    if (!from_index.empty()) {
      std::vector<std::string> l(from_index.begin(), from_index.end());
      Warn("some pack files are missing from the repository, getting their blobs from the "
           "repository index: [" + Join(l, " ") + "]\n");
    }
  }
  if (!want.empty())
    Fail(ErrorCode::kNotFound, "unable to find pack(s): [" +
                                   Join(std::vector<std::string>(want.begin(), want.end()), " ") + "]");
  return blobs;
}

// restic's findObjectPack (--show-pack-id).
std::string ObjectPack(const Index& index, const std::string& id, BlobType t) {
  auto rid = BlobId::FromHex(id);
  if (!rid) {
    const bool hex = id.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
    return "Note: cannot find pack for object '" + id + "', unable to parse ID: " +
           (hex && id.size() % 2 == 0 ? "invalid length for hash"
                                      : "hex.DecodeString: encoding/hex: invalid byte") + "\n";
  }
  auto locs = index.Lookup(t, *rid);
  if (locs.empty()) return "Object " + rid->Short() + " not found in the index\n";
  const BlobLocation& b = locs.front();
  return "Object belongs to pack " + b.pack.Hex() + "\n ... Pack " + b.pack.Short() +
         ": <Blob (" + BlobTypeName(t) + ") " + rid->Short() + ", offset " +
         std::to_string(b.offset) + ", length " + std::to_string(b.length) +
         ", uncompressed length " + std::to_string(b.uncompressed_length) + ">\n";
}

gojson::Timestamp FindTime(const std::string& s) {
  auto t = ParseFindTime(s);
  if (!t) Fail(ErrorCode::kInvalidArgument, "unable to parse time: \"" + s + "\"");
  return *t;
}

std::unique_ptr<Finder> MakeFinder(IndexedRepository& repo, const FindCmdOptions& o) {
  if (!o.blob && !o.tree && !o.pack) {
    FindPatterns p;
    p.patterns = o.args;
    p.ignore_case = o.ignore_case;
    if (!o.oldest.empty()) p.oldest = FindTime(o.oldest);
    if (!o.newest.empty()) p.newest = FindTime(o.newest);
    return std::make_unique<Finder>(repo, std::move(p), Jobs());
  }
  FindIds ids;
  if (o.blob) ids.blobs = std::set<std::string>(o.args.begin(), o.args.end());
  if (o.tree) ids.trees = std::set<std::string>(o.args.begin(), o.args.end());
  if (o.pack) ids.blobs = PackBlobs(repo, o.args);
  return std::make_unique<Finder>(repo, std::move(ids), Jobs());
}

void RunFind(const FindCmdOptions& o) {
  if (o.args.empty()) Fail(ErrorCode::kInvalidArgument, "wrong number of arguments");
  if (!o.oldest.empty()) FindTime(o.oldest);
  if (!o.newest.empty()) FindTime(o.newest);
  if ((o.blob && o.tree) || (o.blob && o.pack) || (o.tree && o.pack))
    Fail(ErrorCode::kInvalidArgument, "cannot have several ID types");
  auto repo = OpenRepository({.prefetch_index = true});
  auto [lock, all, indexed] = LockAndLoadForReading(*repo);
  auto finder = MakeFinder(*indexed, o);
  Output out(Globals().json, o.long_format);
  const auto snaps = SelectSnapshots(all, o.snapshots, o.filter, [](const std::string& m) { Warn(m); });
  for (const SnapshotEntry& sn : snaps) {
    FindCallbacks cb;
    cb.match = [&](const std::string& path, const Node& n) { out.Pattern(sn, path, n); };
    cb.tree = [&](const std::string& id, const std::string& path) {
      out.Object("tree", id, path, "", sn);
    };
    cb.blob = [&](const std::string& id, const std::string& path, const BlobId& parent) {
      out.Object("blob", id, path, parent.Hex(), sn);
    };
    cb.unloadable = [&](const BlobId& parent, const std::string&) {
      out.Text("Unable to load tree " + parent.Hex() + "\n ... which belongs to snapshot " +
               sn.first.Hex() + "\n");
    };
    finder->Search(sn.second.tree, cb);
  }
  out.Finish();
  if (o.show_pack_id && (o.blob || o.tree || o.pack)) {
    if (finder->blob_ids())
      for (const auto& id : *finder->blob_ids())
        out.Text(ObjectPack(indexed->index(), id, BlobType::kData));
    if (o.tree)
      for (const auto& id : std::set<std::string>(o.args.begin(), o.args.end()))
        out.Text(ObjectPack(indexed->index(), id, BlobType::kTree));
    out.FlushAll();
  }
}

}  // namespace

void RegisterFind(CLI::App& app) {
  static FindCmdOptions o;
  auto* cmd = app.add_subcommand("find", "find a file, a directory or restic ids");
  cmd->add_option("pattern", o.args, "patterns (or ids with --blob, --tree, --pack)");
  cmd->add_option("-O,--oldest", o.oldest, "oldest modification date/time");
  cmd->add_option("-N,--newest", o.newest, "newest modification date/time");
  cmd->add_option("-s,--snapshot", o.snapshots, "snapshot id to search in (repeatable)");
  cmd->add_flag("--blob", o.blob, "pattern is a blob-ID");
  cmd->add_flag("--tree", o.tree, "pattern is a tree-ID");
  cmd->add_flag("--pack", o.pack, "pattern is a pack-ID");
  cmd->add_flag("--show-pack-id", o.show_pack_id,
                "display the pack-ID the blobs belong to (with --blob or --tree)");
  cmd->add_flag("-i,--ignore-case", o.ignore_case, "ignore case for pattern");
  cmd->add_flag("-l,--long", o.long_format, "use a long listing format showing size and mode");
  cmd->add_option("-H,--host", o.filter.hosts, "only consider snapshots for this host (repeatable)");
  cmd->add_option("--tag", o.filter.tags, "only consider snapshots which include this taglist");
  cmd->add_option("--path", o.filter.paths, "only consider snapshots which include this path");
  cmd->callback([] { RunFind(o); });
}

}  // namespace haven::cli
