// The read-only filesystem a mount shows (restic 0.14's internal/fuse), without FUSE: the
// virtual directories of snapshot_dirs.h above each snapshot's tree, trees loaded on first
// use, files read blob by blob through a BlobCache. fuse_mount.h translates kernel requests
// into these calls; the unit tests call them directly.
//
// Nodes are numbered from kRoot on as they are looked up. Each successful Lookup counts one
// reference, as the kernel counts them; Forget drops references, and a node with none left
// is freed with its loaded tree (the kernel forgets what it evicts, so the model holds what
// the kernel's inode cache holds, not everything ever visited). A forgotten name looked up
// again gets a new node number and the same st_ino: st_ino is restic's, bazil's
// GenerateDynamicInode(parent's st_ino, name), the root 1, so `ls -i` shows what restic's
// mount shows.
//
// Thread safety: every method may run on many threads at once.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/mutex.h"
#include "mount/blob_cache.h"
#include "mount/blob_source.h"
#include "mount/snapshot_dirs.h"
#include "repo/node.h"

namespace haven::mount {

// A request the filesystem answers with an errno (ENOENT, ENOTDIR, EISDIR, EINVAL,
// ENODATA, EOPNOTSUPP). Repository failures are haven::Error (the FUSE glue answers EIO).
struct FsError {
  int err;
};

struct MountConfig {
  bool owner_root = false;           // --owner-root: uid/gid 0 everywhere
  uint32_t uid = 0, gid = 0;         // owner of the virtual directories (the mounting user)
  std::vector<std::string> path_templates = DefaultPathTemplates();
  std::string time_template = kRfc3339;
  gojson::Timestamp start;           // times of the virtual directories (the mount's start)
  size_t cache_bytes = BlobCache::kDefaultBytes;
};

struct Attr {
  uint64_t ino = 0;
  uint32_t mode = 0;  // st_mode: type and permission bits
  uint32_t nlink = 0, uid = 0, gid = 0, blksize = 0;
  uint64_t size = 0, blocks = 0;
  gojson::Timestamp atime, mtime, ctime;
};

struct DirEntry {
  std::string name;
  uint64_t ino = 0;
  uint32_t type = 0;  // S_IFDIR, S_IFREG, S_IFLNK, or 0 when restic does not say
};

// A file opened for reading: its content's cumulative sizes (restic's cumsize).
struct OpenFile {
  std::shared_ptr<const Node> node;
  std::vector<uint64_t> cumsize;  // cumsize[i]: bytes of content[0, i)
  uint64_t size() const { return cumsize.back(); }
};

// bazil.org/fuse/fs.GenerateDynamicInode: FNV-1a over the parent (8 bytes, little endian)
// and the name; 0 and 1 are avoided by hashing an extra 'x'.
uint64_t DynamicInode(uint64_t parent, std::string_view name);

class MountFs {
 public:
  using SnapshotList = SnapshotDirs::SnapshotList;
  // Returns the current snapshot list when it changed since the last call (and has made
  // `src` read the index that covers it), nullopt when it did not.
  using Reload = std::function<std::optional<SnapshotList>()>;
  static constexpr uint64_t kRoot = 1;
  static constexpr std::chrono::seconds kReloadInterval{60};  // restic's minSnapshotsReloadTime

  MountFs(BlobSource& src, SnapshotList snapshots, MountConfig cfg, Reload reload = {});
  ~MountFs();
  MountFs(const MountFs&) = delete;
  MountFs& operator=(const MountFs&) = delete;

  // The child `name` of directory `parent`, with one more reference; nullopt when there is
  // none. Throws FsError (ENOENT for an unknown node, ENOTDIR) or haven::Error.
  std::optional<uint64_t> Lookup(uint64_t parent, std::string_view name);
  // Drops `count` references to `node` (FUSE's forget); the node is freed at zero. The root
  // and unknown nodes are ignored.
  void Forget(uint64_t node, uint64_t count);
  // Nodes held now, the root included, and the most held at once.
  size_t LiveNodes() const EXCLUDES(table_mu_);
  size_t PeakNodes() const EXCLUDES(table_mu_);
  Attr GetAttr(uint64_t node);
  // ".", "..", then the entries by name.
  std::vector<DirEntry> ReadDir(uint64_t node);
  std::string ReadLink(uint64_t node);  // EINVAL when not a link
  std::shared_ptr<const OpenFile> Open(uint64_t node);  // EISDIR / EINVAL when not a file
  // Copies up to `size` bytes at `offset` into `out`; fewer at the end of the file.
  size_t Read(const OpenFile& f, uint64_t offset, size_t size, uint8_t* out);
  // Directories and files (EOPNOTSUPP for the others, as restic).
  std::vector<std::string> ListXattr(uint64_t node);
  std::string GetXattr(uint64_t node, std::string_view name);  // ENODATA when absent
  BlobCache& cache() { return cache_; }
  // Forces the next virtual-directory access to ask `reload` (tests).
  void ExpireSnapshots() EXCLUDES(dirs_mu_);

 private:
  struct Inode;
  using Items = std::map<std::string, std::shared_ptr<const Node>>;
  std::shared_ptr<Inode> Get(uint64_t node) EXCLUDES(table_mu_);
  uint64_t Add(std::shared_ptr<Inode> inode) EXCLUDES(table_mu_);
  // The child node for `key` under `parent`, made by `make` the first time; one more
  // reference to it.
  uint64_t Child(Inode& parent, uint64_t parent_id, const std::string& key,
                 const std::function<std::unique_ptr<Inode>()>& make);
  std::shared_ptr<const Items> LoadItems(Inode& dir);
  std::shared_ptr<const SnapshotDirs> Dirs(std::shared_ptr<const SnapshotList>* snaps = nullptr)
      EXCLUDES(dirs_mu_);
  std::optional<uint64_t> LookupMeta(Inode& dir, uint64_t dir_id, const std::string& name);
  std::vector<DirEntry> ReadMeta(Inode& dir);
  Attr TreeAttr(const Inode& in, const Node& n);

  BlobSource& src_;
  const MountConfig cfg_;
  const Reload reload_;
  BlobCache cache_;
  Mutex dirs_mu_;
  std::shared_ptr<const SnapshotList> snapshots_ GUARDED_BY(dirs_mu_);
  std::shared_ptr<const SnapshotDirs> dirs_ GUARDED_BY(dirs_mu_);
  std::chrono::steady_clock::time_point checked_ GUARDED_BY(dirs_mu_);
  mutable SharedMutex table_mu_;
  // Indexed by node number - kRoot; a forgotten node's slot is empty (8 bytes each).
  std::vector<std::shared_ptr<Inode>> nodes_ GUARDED_BY(table_mu_);
  size_t live_ GUARDED_BY(table_mu_) = 0;
  size_t peak_ GUARDED_BY(table_mu_) = 0;
};

}  // namespace haven::mount
