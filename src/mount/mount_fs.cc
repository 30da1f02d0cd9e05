// restic 0.14's internal/fuse (root.go, snapshots_dir.go, dir.go, file.go, link.go,
// other.go) as one model; see mount_fs.h.
#include "mount/mount_fs.h"

#include <errno.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace haven::mount {

// Reads of a crafted blob stay bounded.
constexpr uint64_t kMaxDataBlob = uint64_t{32} << 20;  // restic's chunks are <= 8 MiB

namespace {

constexpr uint32_t kBlockSize = 512;  // restic's blockSize

uint32_t TypeBits(NodeType t) {
  switch (t) {
    case NodeType::kDir: return S_IFDIR;
    case NodeType::kFile: return S_IFREG;
    case NodeType::kSymlink: return S_IFLNK;
    case NodeType::kDev: return S_IFBLK;
    case NodeType::kCharDev: return S_IFCHR;
    case NodeType::kFifo: return S_IFIFO;
    case NodeType::kSocket: return S_IFSOCK;
    default: return 0;
  }
}

// filepath.Base of a stored name (restic's cleanupNodeName).
std::string BaseName(std::string_view name) {
  while (name.size() > 1 && name.back() == '/') name.remove_suffix(1);
  if (name.empty()) return ".";
  if (name == "/") return "/";
  const size_t slash = name.rfind('/');
  return std::string(slash == std::string_view::npos ? name : name.substr(slash + 1));
}

}  // namespace

uint64_t DynamicInode(uint64_t parent, std::string_view name) {
  uint64_t h = 14695981039346656037ull;
  auto add = [&h](uint8_t b) {
    h ^= b;
    h *= 1099511628211ull;
  };
  for (int i = 0; i < 8; i++) add(static_cast<uint8_t>(parent >> (8 * i)));
  for (char c : name) add(static_cast<uint8_t>(c));
  while (h <= 1) add('x');
  return h;
}

struct MountFs::Inode {
  enum class Kind { kMeta, kLatest, kDir, kFile, kSymlink, kOther };
  Kind kind = Kind::kMeta;
  uint64_t ino = 0, parent_ino = 0;
  uint64_t parent_id = 0;            // the parent's node number (0 for the root)
  std::string key;                   // this node's key in the parent's `children`
  std::string prefix;                // kMeta: its path in SnapshotDirs
  std::string link;                  // kLatest: the target name
  gojson::Timestamp time;            // kLatest: the snapshot's time
  std::shared_ptr<const Node> node;  // the tree node (kDir, kFile, kSymlink, kOther)
  Mutex mu;
  std::shared_ptr<const Items> items GUARDED_BY(mu);  // kDir: loaded on first use
  std::unordered_map<std::string, uint64_t> children GUARDED_BY(mu);
  // References the kernel holds (successful lookups minus forgets). Read and written only
  // under the parent's `mu` (which the analysis cannot name), so a lookup and a forget of
  // one name never interleave.
  uint64_t lookups = 0;
};

MountFs::MountFs(BlobSource& src, SnapshotList snapshots, MountConfig cfg, Reload reload)
    : src_(src), cfg_(std::move(cfg)), reload_(std::move(reload)), cache_(cfg_.cache_bytes) {
  auto snaps = std::make_shared<const SnapshotList>(std::move(snapshots));
  {
    MutexLock l(dirs_mu_);
    dirs_ = std::make_shared<const SnapshotDirs>(*snaps, cfg_.path_templates, cfg_.time_template);
    snapshots_ = std::move(snaps);
    checked_ = std::chrono::steady_clock::now();
  }
  auto root = std::make_shared<Inode>();
  root->kind = Inode::Kind::kMeta;
  root->ino = root->parent_ino = 1;
  Add(std::move(root));
}

MountFs::~MountFs() = default;

std::shared_ptr<MountFs::Inode> MountFs::Get(uint64_t node) {
  ReaderLock l(table_mu_);
  if (node < kRoot || node - kRoot >= nodes_.size() || !nodes_[node - kRoot])
    throw FsError{ENOENT};
  return nodes_[node - kRoot];
}

uint64_t MountFs::Add(std::shared_ptr<Inode> inode) {
  WriterLock l(table_mu_);
  nodes_.push_back(std::move(inode));
  peak_ = std::max(peak_, ++live_);
  return kRoot + nodes_.size() - 1;
}

size_t MountFs::LiveNodes() const {
  ReaderLock l(table_mu_);
  return live_;
}

size_t MountFs::PeakNodes() const {
  ReaderLock l(table_mu_);
  return peak_;
}

uint64_t MountFs::Child(Inode& parent, uint64_t parent_id, const std::string& key,
                        const std::function<std::unique_ptr<Inode>()>& make) {
  // A found child is counted under parent.mu, where Forget takes references away.
  auto counted = [&](uint64_t id) {
    ReaderLock t(table_mu_);
    nodes_[id - kRoot]->lookups++;
    return id;
  };
  {
    MutexLock l(parent.mu);
    if (auto it = parent.children.find(key); it != parent.children.end())
      return counted(it->second);
  }
  std::shared_ptr<Inode> made = make();
  made->parent_id = parent_id;
  made->key = key;
  made->lookups = 1;
  MutexLock l(parent.mu);
  if (auto it = parent.children.find(key); it != parent.children.end()) return counted(it->second);
  const uint64_t id = Add(std::move(made));
  parent.children.emplace(key, id);
  return id;
}

void MountFs::Forget(uint64_t node, uint64_t count) {
  if (node == kRoot || count == 0) return;
  std::shared_ptr<Inode> in, parent;
  try {
    in = Get(node);
    parent = Get(in->parent_id);
  } catch (const FsError&) {
    return;  // unknown, or its parent already gone (the kernel forgets children first)
  }
  MutexLock l(parent->mu);
  if (in->lookups > count) {
    in->lookups -= count;
    return;
  }
  in->lookups = 0;
  parent->children.erase(in->key);
  WriterLock t(table_mu_);
  nodes_[node - kRoot].reset();
  live_--;
}

void MountFs::ExpireSnapshots() {
  MutexLock l(dirs_mu_);
  checked_ = std::chrono::steady_clock::time_point{};
}

std::shared_ptr<const SnapshotDirs> MountFs::Dirs(std::shared_ptr<const SnapshotList>* snaps) {
  MutexLock l(dirs_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (reload_ && now - checked_ >= kReloadInterval) {
    checked_ = now;
    if (auto fresh = reload_()) {  // under dirs_mu_: one reload at a time, as restic
      auto list = std::make_shared<const SnapshotList>(std::move(*fresh));
      dirs_ = std::make_shared<const SnapshotDirs>(*list, cfg_.path_templates,
                                                   cfg_.time_template);
      snapshots_ = std::move(list);
    }
  }
  if (snaps) *snaps = snapshots_;
  return dirs_;
}

std::shared_ptr<const MountFs::Items> MountFs::LoadItems(Inode& dir) {
  {
    MutexLock l(dir.mu);
    if (dir.items) return dir.items;
  }
  auto items = std::make_shared<Items>();
  auto put = [&](const Node& n) {
    std::string name = BaseName(n.name);
    if (!SafeNodeName(name)) return;  // ".." or "/" would leave the directory
    (*items)[name] = std::make_shared<const Node>(n);
  };
  for (const Node& n : src_.LoadTree(*dir.node->subtree)) {
    // restic's replaceSpecialNodes: a directory named "." or "/" shows its contents.
    if (n.type == NodeType::kDir && n.subtree && (n.name == "." || n.name == "/")) {
      for (const Node& inner : src_.LoadTree(*n.subtree)) put(inner);
    } else {
      put(n);
    }
  }
  MutexLock l(dir.mu);
  if (!dir.items) dir.items = std::move(items);
  return dir.items;
}

std::optional<uint64_t> MountFs::LookupMeta(Inode& dir, uint64_t dir_id,
                                           const std::string& name) {
  std::shared_ptr<const SnapshotList> snaps;
  const auto dirs = Dirs(&snaps);
  const MetaEntry* self = dirs->Find(dir.prefix);
  if (!self) throw FsError{ENOENT};
  const std::string path = dir.prefix + "/" + name;
  const MetaEntry* e = self->names.contains(name) ? dirs->Find(path) : nullptr;
  if (!e) return std::nullopt;
  const uint64_t ino = DynamicInode(dir.ino, name);
  if (e->IsDir()) {
    return Child(dir, dir_id, "d/" + name, [&] {
      auto in = std::make_unique<Inode>();
      in->kind = Inode::Kind::kMeta;
      in->ino = ino;
      in->parent_ino = dir.ino;
      in->prefix = path;
      return in;
    });
  }
  const FileId& id = (*snaps)[e->snapshot].first;
  const Snapshot& sn = (*snaps)[e->snapshot].second;
  if (!e->link.empty()) {
    return Child(dir, dir_id, "l/" + name + "/" + e->link + "/" + id.Hex(), [&] {
      auto in = std::make_unique<Inode>();
      in->kind = Inode::Kind::kLatest;
      in->ino = ino;
      in->parent_ino = dir.ino;
      in->link = e->link;
      in->time = sn.time;
      return in;
    });
  }
  return Child(dir, dir_id, "s/" + name + "/" + id.Hex(), [&] {
    auto in = std::make_unique<Inode>();
    in->kind = Inode::Kind::kDir;
    in->ino = ino;
    in->parent_ino = dir.ino;
    auto n = std::make_shared<Node>();  // restic's newDirFromSnapshot
    n->type = NodeType::kDir;
    n->mode = gomode::kDir | 0555;
    n->atime = n->mtime = n->ctime = sn.time;
    n->subtree = sn.tree;
    in->node = std::move(n);
    return in;
  });
}

std::optional<uint64_t> MountFs::Lookup(uint64_t parent, std::string_view name_view) {
  const std::shared_ptr<Inode> held = Get(parent);
  Inode& dir = *held;
  const std::string name(name_view);
  if (dir.kind == Inode::Kind::kMeta) return LookupMeta(dir, parent, name);
  if (dir.kind != Inode::Kind::kDir) throw FsError{ENOTDIR};
  const auto items = LoadItems(dir);
  auto it = items->find(name);
  if (it == items->end()) return std::nullopt;
  const std::shared_ptr<const Node>& n = it->second;
  Inode::Kind kind;
  switch (n->type) {
    case NodeType::kDir: kind = Inode::Kind::kDir; break;
    case NodeType::kFile: kind = Inode::Kind::kFile; break;
    case NodeType::kSymlink: kind = Inode::Kind::kSymlink; break;
    case NodeType::kDev:
    case NodeType::kCharDev:
    case NodeType::kFifo:
    case NodeType::kSocket: kind = Inode::Kind::kOther; break;
    default: return std::nullopt;  // restic: ENOENT for other types
  }
  if (kind == Inode::Kind::kDir && !n->subtree) return std::nullopt;
  return Child(dir, parent, name, [&] {
    auto in = std::make_unique<Inode>();
    in->kind = kind;
    in->ino = DynamicInode(dir.ino, name);
    in->parent_ino = dir.ino;
    in->node = n;
    return in;
  });
}

Attr MountFs::TreeAttr(const Inode& in, const Node& n) {
  Attr a;
  a.ino = in.ino;
  // With the sticky bit, which restic's FUSE library (bazil.org/fuse) drops.
  a.mode = TypeBits(n.type) | PosixPermFromGoMode(n.mode);
  if (!cfg_.owner_root) {
    a.uid = n.uid;
    a.gid = n.gid;
  }
  a.atime = n.atime;
  a.mtime = n.mtime;
  a.ctime = n.ctime;
  a.nlink = static_cast<uint32_t>(n.links);
  if (n.type == NodeType::kFile) {
    a.size = n.size;
    a.blocks = n.size / kBlockSize + 1;
    a.blksize = kBlockSize;
  } else if (n.type == NodeType::kSymlink) {
    a.size = n.linktarget.size();
    a.blocks = 1 + a.size / kBlockSize;
  }
  return a;
}

Attr MountFs::GetAttr(uint64_t node) {
  const std::shared_ptr<Inode> held = Get(node);
  Inode& in = *held;
  Attr a;
  a.ino = in.ino;
  switch (in.kind) {
    case Inode::Kind::kMeta:
      a.mode = S_IFDIR | 0555;
      a.uid = cfg_.uid;
      a.gid = cfg_.gid;
      a.nlink = 1;
      a.atime = a.mtime = a.ctime = cfg_.start;
      return a;
    case Inode::Kind::kLatest:
      a.mode = S_IFLNK | 0777;
      a.size = in.link.size();
      a.blocks = 1 + a.size / kBlockSize;
      a.uid = cfg_.uid;
      a.gid = cfg_.gid;
      a.atime = a.mtime = a.ctime = in.time;
      a.nlink = 1;
      return a;
    case Inode::Kind::kDir: {
      a = TreeAttr(in, *in.node);
      // restic's calcNumberOfLinks: 2 plus the subdirectories, counted once the directory
      // has been read (before that, 2).
      a.nlink = 2;
      MutexLock l(in.mu);
      if (in.items)
        for (const auto& [name, n] : *in.items) a.nlink += n->type == NodeType::kDir;
      return a;
    }
    default:
      return TreeAttr(in, *in.node);
  }
}

std::vector<DirEntry> MountFs::ReadMeta(Inode& dir) {
  const auto dirs = Dirs();
  const MetaEntry* self = dirs->Find(dir.prefix);
  if (!self) throw FsError{ENOENT};
  std::vector<DirEntry> out;
  for (const std::string& name : self->names) {
    const MetaEntry* e = dirs->Find(dir.prefix + "/" + name);
    out.push_back({name, DynamicInode(dir.ino, name),
                   static_cast<uint32_t>(e && !e->link.empty() ? S_IFLNK : S_IFDIR)});
  }
  return out;
}

std::vector<DirEntry> MountFs::ReadDir(uint64_t node) {
  const std::shared_ptr<Inode> held = Get(node);
  Inode& dir = *held;
  std::vector<DirEntry> out = {{".", dir.ino, S_IFDIR}, {"..", dir.parent_ino, S_IFDIR}};
  if (dir.kind == Inode::Kind::kMeta) {
    auto meta = ReadMeta(dir);
    out.insert(out.end(), meta.begin(), meta.end());
    return out;
  }
  if (dir.kind != Inode::Kind::kDir) throw FsError{ENOTDIR};
  const auto items = LoadItems(dir);
  for (const auto& [name, n] : *items) {
    uint32_t type = 0;  // restic names only these three
    if (n->type == NodeType::kDir || n->type == NodeType::kFile || n->type == NodeType::kSymlink)
      type = TypeBits(n->type);
    out.push_back({name, DynamicInode(dir.ino, name), type});
  }
  return out;
}

std::string MountFs::ReadLink(uint64_t node) {
  const std::shared_ptr<Inode> held = Get(node);
  Inode& in = *held;
  if (in.kind == Inode::Kind::kLatest) return in.link;
  if (in.kind == Inode::Kind::kSymlink) return in.node->linktarget;
  throw FsError{EINVAL};
}

std::shared_ptr<const OpenFile> MountFs::Open(uint64_t node) {
  const std::shared_ptr<Inode> held = Get(node);
  Inode& in = *held;
  if (in.kind == Inode::Kind::kDir || in.kind == Inode::Kind::kMeta) throw FsError{EISDIR};
  if (in.kind != Inode::Kind::kFile) throw FsError{EINVAL};
  auto f = std::make_shared<OpenFile>();
  f->node = in.node;
  f->cumsize.reserve(in.node->content.size() + 1);
  f->cumsize.push_back(0);
  for (const BlobId& id : in.node->content) {
    const auto size = src_.DataSize(id);
    if (!size) Fail(ErrorCode::kNotFound, "id " + id.Hex() + " not found in repository");
    // A chunk is at most 8 MiB: a larger blob comes from a crafted repository, and every
    // read of it would decompress and hash all of it again (the cache keeps <= 64 MiB).
    if (*size > kMaxDataBlob)
      Fail(ErrorCode::kCorrupt, "data blob " + id.Hex() + " claims " + std::to_string(*size) +
                                    " bytes, more than any chunk holds");
    f->cumsize.push_back(f->cumsize.back() + *size);
  }
  return f;
}

size_t MountFs::Read(const OpenFile& f, uint64_t offset, size_t size, uint8_t* out) {
  if (offset >= f.size()) return 0;
  // The blob holding `offset`: the last i with cumsize[i] <= offset.
  size_t i = std::upper_bound(f.cumsize.begin(), f.cumsize.end(), offset) - f.cumsize.begin() - 1;
  uint64_t skip = offset - f.cumsize[i];
  size_t done = 0;
  for (; done < size && i + 1 < f.cumsize.size(); i++) {
    const auto blob =
        cache_.Get(f.node->content[i], [this](const BlobId& id) { return src_.LoadData(id); });
    if (blob->size() != f.cumsize[i + 1] - f.cumsize[i])
      Fail(ErrorCode::kCorrupt, "blob " + f.node->content[i].Hex() +
                                    " has a different size than the index says");
    const size_t n = std::min<uint64_t>(size - done, blob->size() - skip);
    std::memcpy(out + done, blob->data() + skip, n);
    done += n;
    skip = 0;
  }
  return done;
}

// restic serves xattrs for directories and files only; the others answer EOPNOTSUPP.
std::vector<std::string> MountFs::ListXattr(uint64_t node) {
  const std::shared_ptr<Inode> held = Get(node);
  Inode& in = *held;
  if (in.kind != Inode::Kind::kDir && in.kind != Inode::Kind::kFile) throw FsError{EOPNOTSUPP};
  std::vector<std::string> out;
  for (const Xattr& x : in.node->xattrs) out.push_back(x.name);
  return out;
}

std::string MountFs::GetXattr(uint64_t node, std::string_view name) {
  const std::shared_ptr<Inode> held = Get(node);
  Inode& in = *held;
  if (in.kind != Inode::Kind::kDir && in.kind != Inode::Kind::kFile) throw FsError{EOPNOTSUPP};
  for (const Xattr& x : in.node->xattrs)
    if (x.name == name && x.value) return *x.value;
  throw FsError{ENODATA};
}

}  // namespace haven::mount
