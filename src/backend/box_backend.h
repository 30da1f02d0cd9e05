// A repository stored inside one SQLite file: the "box" (docs/box.md). Every repository
// file is one row of `files` (type, name, size) and its bytes are rows of `parts` of at
// most part_size bytes each, so a ranged read touches only the parts it needs.
//
// Transactions (docs/box.md §3): the first access of a process opens one read transaction
// (WAL mode), so a command sees one consistent state of the box however long it runs and
// whatever other processes commit meanwhile. The first write turns it into the write
// transaction; Commit() makes every change of the command visible at once. Nothing is
// visible to other processes before, and a process that dies (kill -9, power loss) leaves
// the box as it was. A write fails with kLocked when another process is writing the box or
// committed a change after this one started reading it (run the command again).
// With BoxOptions::alone a command that has the box to itself holds it exclusively, with a
// rollback journal, until its commit (new pages are written once); others wait meanwhile.
// A BoxBackend destroyed with uncommitted changes commits them when no exception is in
// flight (a command that returns normally) and rolls them back otherwise.
//
// Lock files (FileType::kLock) are kept in memory, per process: SQLite's transactions give
// the isolation restic's lock files give a directory repository (see docs/box.md).
//
// Thread safety: every method may be called from several threads. One mutex serializes the
// main connection; reads of a process that has not written run on a pool of read
// connections in parallel (see Reader below).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/writeback_pacer.h"
#include "core/mutex.h"

struct sqlite3;

namespace haven {

struct BoxOptions {
  // SQLite page size of a new box (512..65536, a power of two).
  int page_size = 65536;
  // Bytes of an object per `parts` row (>= 4096): a pack of up to 128 MiB is one row.
  uint64_t part_size = uint64_t(128) << 20;
  // For one command that writes much (box add, box import): hold the box alone from its
  // first access to its commit, with a rollback journal for that one transaction. New
  // pages then reach the file once (WAL mode writes them twice: the WAL, then the
  // checkpoint). Taken only when no other process has the box open; otherwise the command
  // runs in WAL mode beside them. Others wait for the commit (SQLite's busy timeout), and
  // the box is back in WAL mode afterwards (docs/box.md §3).
  bool alone = false;
  // The defaults, or HAVEN_BOX_PAGE_SIZE / HAVEN_BOX_PART_SIZE (bytes) when set: knobs for
  // the measurements in docs/box.md, checked like any input.
  static BoxOptions FromEnvironment();
};

class BoxBackend : public Backend {
 public:
  // The "application_id" in the header of every box file ("hbox").
  static constexpr int32_t kApplicationId = 0x68626f78;
  static constexpr int kFormatVersion = 1;

  explicit BoxBackend(std::string path, BoxOptions opts = BoxOptions::FromEnvironment());
  ~BoxBackend() override;
  BoxBackend(const BoxBackend&) = delete;
  BoxBackend& operator=(const BoxBackend&) = delete;

  std::string Location() const override { return "box:" + path_; }
  const std::string& path() const { return path_; }
  bool Exists() override;
  void Create() override;
  void Save(const Handle& h, ByteView data) override;
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override;
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override;
  std::optional<uint64_t> Stat(const Handle& h) override;
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override;
  void Remove(const Handle& h) override;
  int Connections() const override { return 4; }

  // Makes every change since the first write visible at once (space freed by removals is
  // returned to the file system first). No-op when nothing was written. Afterwards the
  // backend reads the newest state and a new write starts a new transaction.
  void Commit();
  // Wall seconds of the last Commit(): SQLite's COMMIT, then the checkpoint that moves the
  // committed pages from the WAL into the box file (HAVEN_IMPORT_TIMINGS).
  struct CommitTimes {
    double commit = 0, checkpoint = 0;
  };
  CommitTimes LastCommitTimes();
  // Drops every change since the first write.
  void Rollback();
  // True while changes are not committed.
  bool HasChanges();
  // Rewrites the whole file without free pages (VACUUM); fails inside a transaction.
  void Compact();
  // Pages of the file and pages that are free (for tests and `box compact`).
  std::pair<uint64_t, uint64_t> PageCounts();

 private:
  enum class State { kClosed, kIdle, kReading, kWriting };
  struct Object {
    int64_t id = 0;
    uint64_t size = 0, part_size = 0;
  };

  void OpenDb(bool create) REQUIRES(mu_);
  bool CheckSchema() REQUIRES(mu_);
  void CreateSchema() REQUIRES(mu_);
  bool ExistsLocked() REQUIRES(mu_);
  void BeginRead() REQUIRES(mu_);
  // BoxOptions::alone: exclusive locking and a rollback journal when no other connection
  // has the box open (else nothing changes); ReleaseAlone() ends it after the transaction.
  void TryHoldAlone() REQUIRES(mu_);
  void ReleaseAlone() REQUIRES(mu_);
  // A box left in rollback-journal mode (a process holding it alone died after its
  // commit) goes back to WAL mode at the next open that can take it (once per connection).
  void RestoreWalMode() REQUIRES(mu_);
  void BeginWrite() REQUIRES(mu_);
  void CommitLocked() REQUIRES(mu_);
  void RollbackLocked() REQUIRES(mu_);
  // Look-up and ranged read on `db`: the main connection (under mu_) or a reader.
  std::optional<Object> Find(sqlite3* db, const Handle& h) const;
  void ReadRange(sqlite3* db, const Handle& h, const Object& o, uint64_t offset, uint8_t* out,
                 uint64_t n) const;

  // ---- The pool of read connections (docs/box.md §3) ----
  // While this process has not written, reads run on connections of their own, one per
  // concurrent caller, each in a read transaction at the same state as the main one (the
  // same write generation); so the restorer's workers read in parallel. A reader whose
  // state differs (another process committed) turns the pool off for this transaction.
  struct Reader {
    sqlite3* db = nullptr;
    uint64_t epoch = 0;  // the pool's epoch when it was opened
  };
  static constexpr int kMaxReaders = 16;
  // Runs fn, a read of `length` bytes of h (0: all of it), on the main connection when no
  // other thread holds it (its page cache is warm; a small command opens no reader at
  // all), else on a reader when it is a pack read of at least kPoolReadMin bytes (or a
  // whole pack), else on the main connection once it is free.
  static constexpr uint64_t kPoolReadMin = 256 << 10;
  void ReadWith(const Handle& h, uint64_t length, const std::function<void(sqlite3*)>& fn)
      EXCLUDES(mu_);
  void ReadOnMain(const Handle& h, const std::function<void(sqlite3*)>& fn) REQUIRES(mu_);
  Reader AcquireReader(const Handle& h) EXCLUDES(mu_);
  void ReleaseReader(const Reader& r) EXCLUDES(pool_mu_);
  // Closes the free readers and retires the others (at commit and rollback).
  void DropReaders() EXCLUDES(pool_mu_);
  sqlite3* OpenReader(int64_t generation) const;
  static void CloseReader(sqlite3* db);

  std::vector<FileInfo> ListRows(FileType t) REQUIRES(mu_);
  void Exec(const char* sql) REQUIRES(mu_);
  [[noreturn]] void FailDb(int rc, const std::string& what) REQUIRES(mu_);

  const std::string path_;
  const BoxOptions opts_;
  Mutex mu_;
  sqlite3* db_ GUARDED_BY(mu_) = nullptr;
  State state_ GUARDED_BY(mu_) = State::kClosed;
  bool removed_ GUARDED_BY(mu_) = false;  // this transaction removed rows
  bool alone_ GUARDED_BY(mu_) = false;    // holding the box alone (BoxOptions::alone)
  bool wal_checked_ GUARDED_BY(mu_) = false;  // RestoreWalMode() ran on this connection
  std::map<std::string, Bytes> locks_ GUARDED_BY(mu_);
  CommitTimes last_commit_ GUARDED_BY(mu_);
  int64_t generation_ GUARDED_BY(mu_) = -1;  // what the read transaction sees; -1: no schema
  // generation_ while the main connection is in its read transaction (state_ kReading with
  // a schema), else -1: what a pool reader is opened at, read without mu_ (a thread that
  // finds the main connection busy must not wait for it to learn the generation).
  std::atomic<int64_t> pool_generation_{-1};
  // From the first write to the end of the checkpoint: the WAL and the box file are written
  // back while the transaction is built (COMMIT's and the checkpoint's fsyncs wait for the
  // tail only; docs/box.md §3).
  std::unique_ptr<WritebackPacer> pacer_ GUARDED_BY(mu_);
  // Lock order: mu_, then pool_mu_.
  Mutex pool_mu_;
  std::vector<Reader> free_ GUARDED_BY(pool_mu_);
  uint64_t epoch_ GUARDED_BY(pool_mu_) = 0;
  int open_readers_ GUARDED_BY(pool_mu_) = 0;
  bool pool_off_ GUARDED_BY(pool_mu_) = false;
};

}  // namespace haven
