// The storage interface every repository location implements (local directory today;
// REST, S3, SFTP, SQLite box and in-memory later). It is deliberately small: whole-object
// atomic save, ranged load, stat, paged list, remove. Retry, connection limits, caching
// and fault injection are decorators around a Backend, never inside one.
//
// Names are the repository's own: "config" for the config file, 64 lowercase hex
// characters for everything else. The backend maps (type, name) to its layout
// (e.g. data/XX/<name> for packs) and hides that layout from callers.
//
// Thread safety: every method may be called concurrently from several threads.
// Errors: methods throw haven::Error. kNotFound when an object does not exist,
// kIo (retryable() == true when a retry may help) for transport/file-system failures.
// A listing that fails part-way throws; it never reports a partial list as complete.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"

namespace haven {

enum class FileType { kConfig, kKey, kLock, kSnapshot, kIndex, kPack };

// Folder name of a file type in the default layout: "keys", "locks", "snapshots",
// "index", "data"; "" for config.
const char* FileTypeDir(FileType t);
const char* FileTypeName(FileType t);  // "config", "key", "lock", "snapshot", "index", "pack"

struct Handle {
  FileType type;
  std::string name;
  std::string ToString() const;  // e.g. "data/ab/ab12..." as in the default layout
};

// kCorrupt "short read of TYPE/NAME: expected WANT bytes at offset OFFSET, got GOT".
[[noreturn]] void FailShortRead(const Handle& h, uint64_t offset, uint64_t want, uint64_t got);

struct FileInfo {
  std::string name;
  uint64_t size = 0;
};

// A data pack written piece by piece while its blobs are sealed, so that no pack is held
// in memory (the cold backup's peak RSS), then stored under its name. Made by
// Backend::NewPackStream. Not thread-safe: one writer at a time.
class PackStream {
 public:
  // Without Commit nothing is stored and the partial data is removed.
  virtual ~PackStream() = default;
  virtual void Append(ByteView data) = 0;
  // Stores everything appended as the pack `name` (its SHA-256, computed by the caller),
  // with Save's guarantees: atomic, durable, and an existing pack of equal size accepted.
  // At most once.
  virtual void Commit(const std::string& name) = 0;
};

// The bytes of an object to save that are not in memory: `size` bytes that `read`
// copies out of wherever they are kept. read(offset, out) fills `out` whole with the bytes
// at `offset` or throws; it may be asked for any range, any number of times (a retried
// upload reads again from the start), and from another thread than the caller's.
struct SaveSource {
  uint64_t size = 0;
  std::function<void(uint64_t offset, std::span<uint8_t> out)> read;
  // True when the handle's name is the SHA-256 of these bytes as their writer computed it
  // while writing them (a PackStream's Commit): a backend may rely on it instead of reading
  // the bytes once more to hash them. False: a backend that needs the hash computes it.
  bool named_by_content = false;
};

// Lowercase hex SHA-256 of a source's bytes, read through once in pieces of 1 MiB.
std::string Sha256Hex(const SaveSource& src);

class Backend {
 public:
  virtual ~Backend() = default;

  // Human-readable location for messages (path or URL, without credentials).
  virtual std::string Location() const = 0;

  // True when the repository's config object exists.
  virtual bool Exists() = 0;
  // Creates the empty layout (folders). Fails with kFatal if a config already exists.
  virtual void Create() = 0;

  // Stores data under h atomically: readers see either nothing or all bytes. Saving a
  // name that already exists fails (files are immutable), except when the existing
  // object has identical size (a retried upload), which is accepted.
  virtual void Save(const Handle& h, ByteView data) = 0;
  // Save of bytes kept outside memory (a data pack spooled to a temp file, see
  // NewPackStream): read from `src` as they are sent, never held whole. Same guarantees and
  // errors as Save; a failure of src.read is rethrown unchanged. The default reads them all
  // and calls Save (so a decorator that changes Save stays correct); the remote backends
  // and the decorators on their path (retries, --limit-upload) override it. With
  // src.named_by_content S3 signs the name as the payload's hash (a mismatch is refused by
  // the server) and REST posts without a look first; otherwise both hash the source.
  virtual void SaveFrom(const Handle& h, const SaveSource& src);

  // Reads `length` bytes at `offset`; length 0 means "to the end". A range that
  // extends past the end of the object throws kCorrupt (short read), naming the object.
  virtual Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) = 0;
  // Reads exactly out.size() bytes at `offset` into caller-owned memory, so that a reader
  // of many ranges (check --read-data, the used-blob walk, the index load) can reuse one
  // buffer instead of allocating a fresh one per read. Same errors as Load. The default calls Load and copies; backends that
  // can read in place (LocalBackend) and pass-through decorators override it.
  virtual void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out);
  // Reads `length` (> 0) bytes at `offset` and hands them to `sink` in order, in pieces of
  // any size, as they arrive: a reader of a large range over a network (restore of a remote
  // repository) then holds none of it. Exactly `length` bytes are delivered, or the call
  // throws; bytes delivered before a failure are never delivered again (a retry resumes
  // after them). An exception thrown by `sink` ends the read and is rethrown unchanged.
  // Same errors as Load. The default loads the range with Load and delivers it whole;
  // backends that can stream (REST, S3 over a connection of their own) and pass-through
  // decorators override it.
  virtual void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                          const std::function<void(ByteView)>& sink);

  // Size of the object, or nullopt if it does not exist.
  virtual std::optional<uint64_t> Stat(const Handle& h) = 0;

  // When the object was last written, in seconds since the epoch by the storage's own
  // clock, or nullopt when the backend cannot tell (the default) or the object is missing.
  // Locks compare it with a probe's to age other clients' locks without trusting any
  // client's clock (a machine whose clock runs an hour fast must not see live locks as
  // stale), and to warn when this machine's clock differs from the storage's.
  virtual std::optional<int64_t> ModTime(const Handle& h) {
    (void)h;
    return std::nullopt;
  }

  // Calls fn once per object of type t (any order). Names that are not valid for the
  // type (e.g. temp files, non-hex names) are skipped. Throws on any listing error.
  virtual void List(FileType t, const std::function<void(const FileInfo&)>& fn) = 0;

  // Removes the object; removing a missing object throws kNotFound.
  virtual void Remove(const Handle& h) = 0;

  // A stream for one new data pack, or nullptr when this backend stores whole objects
  // only (the default: the caller then builds the pack in memory and calls Save). Only a
  // backend that keeps a pack outside the process's memory while it is written returns
  // one: the local directory (a temp file beside the packs) and, for remote storage,
  // RetryBackend (a SpoolPackStream: an unnamed temp file, committed by SaveFrom with
  // retries). A decorator that changes Save must not simply forward it (ForwardingBackend
  // does not): it would bypass its own Save.
  virtual std::unique_ptr<PackStream> NewPackStream() { return nullptr; }

  // How many requests this backend serves well in parallel.
  virtual int Connections() const { return 2; }
  // True when every request costs a network round trip (S3, REST, rclone, SFTP): readers
  // of many ranges of one object then ask for fewer, larger ones (check --read-data).
  virtual bool RoundTrips() const { return false; }
  // The files of type `t` as listed earlier in this process (IndexPrefetchBackend lists
  // them when the repository is opened, before any lock), waiting for that listing if it
  // is still running; nullopt if there is none or it failed. Never authoritative: work
  // started from it is a head start, kept only if a listing made later agrees.
  virtual std::optional<std::vector<FileInfo>> EarlierListing(FileType t) {
    (void)t;
    return std::nullopt;
  }

  // Removes temp files that a killed writer left (`*-tmp-*` beside the objects) and that
  // are older than min_age_seconds; returns how many. Only for a caller holding the
  // exclusive lock (no writer of ours is running then; the age guards the rest).
  // Backends without temp files return 0.
  virtual size_t RemoveStaleTempFiles(int64_t min_age_seconds) {
    (void)min_age_seconds;
    return 0;
  }
  // How many such temp files there are, removing none (any caller: `check` reports them).
  virtual size_t CountStaleTempFiles(int64_t min_age_seconds) {
    (void)min_age_seconds;
    return 0;
  }
};

// True for 64 lowercase hex characters.
bool IsValidObjectName(std::string_view name);

// Throws kInvalidArgument unless h names an object a backend may store: 64 lowercase hex
// for every type except kConfig, whose name must be "config" or "" (both mean the single
// config object). Backends call this first, so no name can escape their layout ("../x").
void CheckHandle(const Handle& h);

}  // namespace haven
