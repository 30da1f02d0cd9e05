// The capture's local state (docs/capture-state.md): what the last capture of a tracked set
// stored for each directory, so an unchanged directory is neither listed by the archiver,
// nor looked up in the parent's trees, nor re-encoded: its tree id is taken as it was.
//
// A directory's key is a SHA-256 over the capture's context (scan tag, excludes, time
// zone, encoding version) and, for every entry the walk keeps, in name order: the name,
// the lstat fields a tree node is made of (type and mode, owner ids and names, size,
// mtime, ctime, inode, device, links, rdev) and, for a subdirectory, its own key. Equal
// keys mean the archiver would encode the same tree (a file's content is trusted by its
// stat, as for any unchanged file against a parent). The state maps keys to tree ids and
// names the snapshot it was written with: it is used only when that snapshot is the
// trusted parent capture, so every tree it names is still referenced.
//
// The file is sealed with the repository's key (as a snapshot file is): a state written
// by someone without the key is refused, never trusted.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/id.h"
#include "core/sha256.h"
#include "repo/repository.h"

namespace haven::capture {

struct CaptureState {
  RawId context;         // ContextDigest of the capture that wrote it
  FileId snapshot;       // the snapshot written (or kept, when skipped) with it
  // The repository's index files when it was written, sorted: the state is used only while
  // all of them remain (prune and repair rewrite the index and may drop blobs a reused
  // folder's files need; a backup only adds index files).
  std::vector<FileId> index_files;
  struct Dir {
    RawId key;
    BlobId tree;
    bool operator==(const Dir&) const = default;
  };
  std::vector<Dir> dirs;  // sorted by key, keys unique

  // The tree recorded for `key`, or nullopt.
  std::optional<BlobId> Find(const RawId& key) const;
  // Puts dirs in key order and drops repeated keys (the first one stays).
  void SortDirs();
  bool operator==(const CaptureState&) const = default;
};

// The plaintext of a state (little-endian): "HVCST002", context (32), snapshot (32), index
// file count (u64), the index file ids (32 each, ascending), folder count (u64), then the
// folders: key (32), tree (32), in ascending key order.
Bytes EncodeCaptureState(const CaptureState& s);
// nullopt for anything but exactly that layout (bad magic, length, order or duplicates).
std::optional<CaptureState> ParseCaptureState(ByteView plain);

// The state file for one tracked set: DIR/capture-<16 hex of host, home and profile path>.
std::string CaptureStatePath(const std::string& dir, const std::string& host,
                             const std::string& home, const std::string& profile_name);
// Reads and opens the state at `path` with the repository's key; nullopt when it is
// missing, unreadable, not sealed by this repository's key or malformed (a cache: the
// capture then walks the parent's trees as without one).
std::optional<CaptureState> LoadCaptureState(Repository& repo, const std::string& path);
// Seals and writes it atomically (temp file, rename; no fsync: a torn file fails its MAC
// and is ignored); throws kIo on failure.
void SaveCaptureState(Repository& repo, const std::string& path, const CaptureState& s);

// What every key of one capture starts with: the scan tag, the exclude patterns, the time
// zone (TZ and /etc/localtime, which the encoded times depend on) and the tree encoding's
// version.
RawId ContextDigest(const std::string& scan_tag, const std::vector<std::string>& excludes);

// Builds one directory's key from its kept entries, given in name order.
class DirKey {
 public:
  explicit DirKey(const RawId& context);
  void AddEntry(const std::string& name, const struct stat& st);
  // After AddEntry of a subdirectory: its key.
  void AddSubdirKey(const RawId& key);
  RawId Finish();

 private:
  Sha256Stream h_;
  std::string buf_;
  uint32_t last_uid_ = 0, last_gid_ = 0;
  std::string user_, group_;  // of last_uid_ / last_gid_, NUL-ended
};

}  // namespace haven::capture
