// The folder state (docs/folder-state.md): a local record, kept beside the repository's
// cache, of the tree the last run stored for each folder under a key over what the folder
// held, so an unchanged folder is neither looked up in the parent's trees nor encoded
// again: its tree id is taken as it was. `haven backup` and `haven capture` keep one each.
//
// A folder's key (DirKey) is a SHA-256 over a context (what the encoding of a tree depends
// on beyond the entries: the key version, the time zone, and for a capture its scan tag and
// excludes) and, for every entry the walk keeps, in name order: the name, the lstat fields
// a tree node is made of (type and mode, owner ids and names, size, mtime, ctime, inode,
// device, links, rdev). A capture adds each subfolder's own key (AddSubdirKey), so a key
// covers the whole subtree; a backup does not, and records the subfolders' trees beside the
// folder's (Dir::subtrees): the folder's tree is reused when its key and every subfolder's
// tree are the same. A file's content is trusted by its stat, as for any file unchanged
// against a parent.
//
// The state names the snapshot it was written with and the index files the repository had
// then: it is used only against that snapshot as parent and while all those index files
// remain (prune and repair rewrite the index and may drop blobs a reused folder's files
// need). The file is sealed with the repository's key (as a snapshot file is): a state
// written by someone without the key is refused, never trusted.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"
#include "core/id.h"
#include "core/sha256.h"
#include "repo/index.h"
#include "repo/repository.h"

namespace haven {

struct FolderState {
  RawId context;    // FolderContext of the run that wrote it
  FileId snapshot;  // the snapshot written (or kept, when skipped) with it
  // That snapshot's root tree. A later snapshot with the same root tree holds every tree
  // and blob the state names just as well: a run whose parent is one uses the state, and
  // a run that changed nothing keeps the file as it is (SaveNextFolderState).
  BlobId tree;
  // The repository's index files when it was written, sorted (see above).
  std::vector<FileId> index_files;
  struct Dir {
    RawId key;
    BlobId tree;
    // A backup's folder: the trees of its subfolders, in name order (a capture's key
    // covers its subfolders already and records none).
    std::vector<BlobId> subtrees;
    bool operator==(const Dir&) const = default;
  };
  std::vector<Dir> dirs;  // sorted by key, keys unique
  // A capture's blobs outside its tracked folders (the trees of the root and of the
  // directories above the targets, the profile and package lists under /.haven and their
  // trees) with their pack locations: the next capture of an unchanged set finds and reads
  // them without the index (IndexedRepository::AddKnownBlobs). Sorted by (type, id),
  // unique. A backup records none.
  std::vector<KnownBlob> blobs;

  // The folder recorded under `key`, or nullptr.
  const Dir* Find(const RawId& key) const;
  // Puts dirs in key order and drops repeated keys (the first one stays); the same for
  // blobs by (type, id).
  void SortDirs();
  // Every index file the state recorded is among `now` (the repository's index files).
  bool IndexFilesRemain(std::vector<FileId> now) const;
  bool operator==(const FolderState&) const = default;
};

// The plaintext of a state (little-endian): "HVFST004", context (32), snapshot (32), its
// root tree (32), index file count (u64), the index file ids (32 each, ascending), folder
// count (u64), then the folders in ascending key order: key (32), tree (32), subtree count (u64), subtrees (32
// each); then the blob count (u64) and the blobs in ascending (type, id) order: type (u8:
// 0 data, 1 tree), id (32), pack (32), offset, sealed length, uncompressed length (u32
// each; 0 = stored uncompressed; a sealed length is at least 32).
Bytes EncodeFolderState(const FolderState& s);
// nullopt for anything but exactly that layout (bad magic, length, order or duplicates).
std::optional<FolderState> ParseFolderState(ByteView plain);

// The state file DIR/<kind>-<16 hex of SHA-256 over `who`'s parts, NUL-separated>.
std::string FolderStatePath(const std::string& dir, std::string_view kind,
                            const std::vector<std::string>& who);
// Reads and opens the state at `path` with the repository's key; nullopt when it is
// missing, unreadable, not sealed by this repository's key or malformed (a cache: the run
// then reads the parent's trees as without one).
std::optional<FolderState> LoadFolderState(Repository& repo, const std::string& path);
// Seals and writes it atomically (temp file, rename; no fsync: a torn file fails its MAC
// and is ignored); throws kIo on failure.
void SaveFolderState(Repository& repo, const std::string& path, const FolderState& s);

// The state at `path` when a run with `context` against `parent` (whose root tree is
// `parent_tree`) may use it: written with that context and with that snapshot or one of
// the same root tree, and every index file it recorded is among `index_files` (the
// repository's now). nullopt otherwise (see LoadFolderState).
std::optional<FolderState> LoadUsableFolderState(Repository& repo, const std::string& path,
                                                 const RawId& context, const FileId& parent,
                                                 const std::optional<BlobId>& parent_tree,
                                                 const std::vector<FileId>& index_files);
// Completes `next` (the repository's index files, sorted; folders sorted) and writes it
// unless it says what `read` (the state the run used) says: the same but for a snapshot of
// the same root tree (an unchanged run leaves the file alone). Throws kIo as
// SaveFolderState.
void SaveNextFolderState(Repository& repo, const std::string& path,
                         const std::optional<FolderState>& read, FolderState next,
                         std::vector<FileId> index_files);

// What every key of one run starts with: `version` (the kind of key and its version),
// each of `parts`, the time zone (TZ and /etc/localtime, which the encoded times depend
// on).
RawId FolderContext(std::string_view version, const std::vector<std::string>& parts);

// Builds one folder's key from its kept entries, given in name order.
class DirKey {
 public:
  explicit DirKey(const RawId& context);
  void AddEntry(std::string_view name, const struct stat& st);
  // After AddEntry of a subfolder (capture keys only): its key.
  void AddSubdirKey(const RawId& key);
  RawId Finish();

 private:
  static constexpr size_t kFlushAt = 8192;
  void Flush();
  Sha256Stream h_;
  std::string buf_;  // entries not hashed yet
  uint32_t last_uid_ = 0, last_gid_ = 0;
  std::string user_, group_;  // of last_uid_ / last_gid_, NUL-ended
};

}  // namespace haven
