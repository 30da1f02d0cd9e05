#include "maintenance/gen_repo.h"

#include "repo/write_session.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <atomic>
#include <cstdio>
#include <set>

#include "core/error.h"
#include "maintenance/index_writer.h"
#include "repo/node.h"
#include "repo/snapshot.h"

namespace haven {

namespace {

constexpr uint32_t kFanOut = 64;
constexpr int64_t kBaseTime = 1577836800;  // 2020-01-01T00:00:00Z

uint64_t SplitMix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Mix(uint64_t a, uint64_t b) {
  uint64_t s = a ^ (b * 0xff51afd7ed558ccdull);
  return SplitMix(s);
}

gojson::Timestamp Time(int64_t sec) { return {kBaseTime + sec, 0, 0}; }

Node DirNode(const std::string& name, const BlobId& subtree, uint64_t inode) {
  Node n;
  n.name = name;
  n.type = NodeType::kDir;
  n.mode = gomode::kDir | 0755;
  n.mtime = n.atime = n.ctime = Time(0);
  n.uid = n.gid = 1000;
  n.user = n.group = "gen";
  n.inode = inode;
  n.device_id = 2049;
  n.subtree = subtree;
  return n;
}

// A snapshot of `tree` by the generator, at kBaseTime + sec.
Snapshot GenSnapshot(int64_t sec, const BlobId& tree, const char* path, const char* program) {
  Snapshot snap;
  snap.time = Time(sec);
  snap.tree = tree;
  snap.paths = {path};
  snap.hostname = "gen-host";
  snap.username = "gen";
  snap.uid = snap.gid = 1000;
  snap.program_version = program;
  return snap;
}

std::string Name(const char* prefix, uint32_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%07u", prefix, i);
  return buf;
}

class Generator {
 public:
  Generator(IndexedRepository& repo, const GenRepoOptions& o)
      : repo_(repo), session_(repo, WriteOptionsOf(o)), o_(o), threads_(std::max(1, o.threads > 0 ? o.threads : repo.threads())) {
    if (o.dirs == 0 || o.files == 0 || o.blobs_per_file == 0 || o.blob_size < 8)
      Fail(ErrorCode::kInvalidArgument, "gen-repo: dirs, files and blobs must be > 0, blob size >= 8");
    versions_.assign(size_t(o.dirs) * o.files, 0);
    leaves_.resize(o.dirs);
  }

  GenRepoResult Run() {
    std::vector<uint32_t> all(o_.dirs);
    for (uint32_t d = 0; d < o_.dirs; ++d) all[d] = d;
    std::optional<FileId> parent;
    for (uint32_t s = 0; s < o_.snapshots; ++s) {
      std::vector<uint32_t> changed;
      if (s == 0) {
        changed = all;
      } else {
        uint64_t st = Mix(o_.seed, 0x5eed0000ull + s);
        std::set<uint32_t> pick;
        for (uint32_t i = 0; i < o_.changed_dirs && pick.size() < o_.dirs; ++i) {
          uint32_t d = static_cast<uint32_t>(SplitMix(st) % o_.dirs);
          if (!pick.insert(d).second) continue;
          versions_[size_t(d) * o_.files + SplitMix(st) % o_.files]++;
        }
        changed.assign(pick.begin(), pick.end());
      }
      ParallelForEach(changed.size(), threads_, [&](size_t i) { leaves_[changed[i]] = Leaf(changed[i]); });
      BlobId root = Parents();
      Snapshot snap = GenSnapshot(int64_t(s) * 86400, root, "/gen", "haven debug gen-repo");
      snap.parent = parent;
      session_.Flush();  // packs and index before the snapshot that needs them
      parent = repo_.SaveJson(FileType::kSnapshot, snap.ToJson());
      if (o_.progress)
        o_.progress("snapshot " + std::to_string(s + 1) + "/" + std::to_string(o_.snapshots) +
                    " " + parent->Short() + ": " + std::to_string(data_blobs_.load()) +
                    " data blobs, " + std::to_string(tree_blobs_.load()) + " trees");
    }
    GenRepoResult r;
    r.data_blobs = data_blobs_;
    r.tree_blobs = tree_blobs_;
    r.snapshots = o_.snapshots;
    return r;
  }

 private:
  BlobId SaveTree(const std::vector<Node>& nodes) {
    std::string t = EncodeTree(nodes);
    BlobId id(Sha256(AsBytes(t)));
    if (session_.SaveBlob(BlobType::kTree, id, AsBytes(t))) tree_blobs_++;
    return id;
  }

  BlobId Leaf(uint32_t d) {
    std::vector<Node> nodes(o_.files);
    Bytes buf(o_.blob_size);
    for (uint32_t f = 0; f < o_.files; ++f) {
      const size_t fi = size_t(d) * o_.files + f;
      const uint32_t v = versions_[fi];
      Node& n = nodes[f];
      n.name = Name("file-", f);
      n.type = NodeType::kFile;
      n.mode = 0644;
      n.mtime = n.atime = n.ctime = Time(v);
      n.uid = n.gid = 1000;
      n.user = n.group = "gen";
      n.inode = fi + 1000;
      n.device_id = 2049;
      n.links = 1;
      n.size = uint64_t(o_.blobs_per_file) * o_.blob_size;
      for (uint32_t k = 0; k < o_.blobs_per_file; ++k) {
        uint64_t st = Mix(Mix(o_.seed, fi), (uint64_t(v) << 32) | k);
        for (size_t i = 0; i < buf.size(); i += 8) {
          uint64_t x = SplitMix(st);
          std::memcpy(buf.data() + i, &x, std::min<size_t>(8, buf.size() - i));
        }
        BlobId id(Sha256(buf));
        if (session_.SaveBlob(BlobType::kData, id, buf)) data_blobs_++;
        n.content.push_back(id);
      }
    }
    return SaveTree(nodes);
  }

  // Two levels of 64-way parents over the leaves, then the root.
  BlobId Parents() {
    auto level = [&](const std::vector<BlobId>& below, const char* prefix, uint64_t inode_base) {
      std::vector<BlobId> out((below.size() + kFanOut - 1) / kFanOut);
      ParallelForEach(out.size(), threads_, [&](size_t g) {
        std::vector<Node> nodes;
        for (size_t i = g * kFanOut; i < std::min(below.size(), (g + 1) * kFanOut); ++i)
          nodes.push_back(DirNode(Name(prefix, static_cast<uint32_t>(i)), below[i], inode_base + i));
        out[g] = SaveTree(nodes);
      });
      return out;
    };
    std::vector<BlobId> l2 = level(leaves_, "dir-", 1u << 30);
    std::vector<BlobId> l1 = level(l2, "mid-", 1u << 29);
    std::vector<Node> top;
    for (size_t i = 0; i < l1.size(); ++i)
      top.push_back(DirNode(Name("top-", static_cast<uint32_t>(i)), l1[i], (1u << 28) + i));
    BlobId top_tree = SaveTree(top);
    return SaveTree({DirNode("gen", top_tree, 1u << 27)});
  }

  static WriteOptions WriteOptionsOf(const GenRepoOptions& o) {
    WriteOptions w = o.write;
    // Random data does not compress; trying costs more than everything else per blob.
    w.compression = Compression::kOff;
    return w;
  }

  IndexedRepository& repo_;
  WriteSession session_;
  const GenRepoOptions& o_;
  const int threads_;
  std::vector<uint32_t> versions_;  // per file of every leaf directory
  std::vector<BlobId> leaves_;      // current tree of every leaf directory
  std::atomic<uint64_t> data_blobs_{0}, tree_blobs_{0};
};

}  // namespace

GenRepoResult GenerateRepository(IndexedRepository& repo, const GenRepoOptions& opts) {
  return Generator(repo, opts).Run();
}

FileId GenerateDeepChain(IndexedRepository& repo, uint32_t depth, const WriteOptions& write) {
  WriteSession session(repo, write);
  const std::string text = "leaf\n";
  const BlobId data(Sha256(AsBytes(text)));
  session.SaveBlob(BlobType::kData, data, AsBytes(text));
  Node leaf;
  leaf.name = "leaf";
  leaf.type = NodeType::kFile;
  leaf.mode = 0644;
  leaf.mtime = leaf.atime = leaf.ctime = Time(0);
  leaf.uid = leaf.gid = 1000;
  leaf.user = leaf.group = "gen";
  leaf.inode = 1;
  leaf.device_id = 2049;
  leaf.links = 1;
  leaf.size = text.size();
  leaf.content = {data};
  auto save = [&session](const std::vector<Node>& nodes) {
    const std::string t = EncodeTree(nodes);
    const BlobId id(Sha256(AsBytes(t)));
    session.SaveBlob(BlobType::kTree, id, AsBytes(t));
    return id;
  };
  BlobId tree = save({leaf});
  for (uint32_t i = 0; i < depth; ++i) tree = save({DirNode("d", tree, 2 + i)});
  session.Flush();  // packs and index before the snapshot that needs them
  return repo.SaveJson(FileType::kSnapshot,
                       GenSnapshot(0, tree, "/deep", "haven debug gen-deep").ToJson());
}

}  // namespace haven
