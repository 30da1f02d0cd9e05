// A repository in a local directory, in restic's default layout (docs/format.md §1):
//   <root>/config, <root>/{keys,locks,snapshots,index}/<name>, <root>/data/<XX>/<name>.
//
// Durability: Save writes "<name>-tmp-<16 hex>" in the final folder (O_EXCL, 0600), fsyncs
// it, makes it read-only (0400), renames it to <name> without replacing an existing file,
// then fsyncs the folder. A crash leaves either nothing, a temp file (never listed), or the
// complete object. Remove fsyncs the folder after unlinking. NewPackStream writes a data
// pack as "data/XX/pack-tmp-<16 hex>" (XX random) while it is filled and publishes it the
// same way, renamed into its own data/YY.
//
// Missing folders: `locks` and `data/XX` may be absent (copy tools drop empty folders):
// listing them yields nothing and Save recreates them. Any other missing folder is damage:
// List and Save throw.
//
// Errors: kIo for file-system failures, naming the full path and the errno text;
// retryable() is false for conditions a retry cannot fix (ENOSPC, EDQUOT, EFBIG, EROFS,
// EACCES, ENOTDIR, ...). kNotFound for a missing object, kCorrupt for a short read.
//
// Thread safety: the object holds only its immutable root path; every method may run
// concurrently.
#pragma once

#include <sys/stat.h>

#include <string>

#include "backend/backend.h"

namespace haven {

class LocalBackend : public Backend {
 public:
  // `root` need not exist until Create(); a trailing '/' is dropped.
  explicit LocalBackend(std::string root);

  std::string Location() const override { return root_; }
  bool Exists() override;
  // Creates root (and missing parents) with mode 0700, then data/00..data/ff, index, keys,
  // locks, snapshots. Existing folders are kept; an existing config throws kFatal.
  void Create() override;
  void Save(const Handle& h, ByteView data) override;
  std::unique_ptr<PackStream> NewPackStream() override;
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override;
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override;
  std::optional<uint64_t> Stat(const Handle& h) override;
  std::optional<int64_t> ModTime(const Handle& h) override;  // the file's mtime
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override;
  void Remove(const Handle& h) override;
  size_t RemoveStaleTempFiles(int64_t min_age_seconds) override;
  size_t CountStaleTempFiles(int64_t min_age_seconds) override;
  int Connections() const override { return connections_; }
  // `-o local.connections=N`: how many requests run in parallel (restic's default 2).
  void set_connections(int n) { connections_ = n; }

  // Full path of the file that stores h (h is not validated).
  std::string PathOf(const Handle& h) const;

 private:
  // Temp files older than min_age_seconds beside the objects: counted, and removed if
  // `remove`; returns how many (removed, or found).
  size_t StaleTempFiles(int64_t min_age_seconds, bool remove);
  // stat() of the object's file: nullopt when missing; not a regular file is kIo.
  std::optional<struct stat> StatObject(const Handle& h) const;
  void ListFolder(const std::string& dir, bool missing_ok,
                  const std::function<void(const FileInfo&)>& fn) const;

  std::string root_;
  int connections_ = 2;
};

}  // namespace haven
