#include "backend/box_backend.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <utility>
#include <vector>

#include "core/error.h"

namespace haven {
namespace {

// rowid of part `seq` of object `id` in `parts`: the parts of one object are adjacent in
// the b-tree and found without an index.
constexpr int kSeqBits = 24;
constexpr int64_t kMaxObjectId = int64_t(1) << 38;
constexpr uint64_t kMaxParts = uint64_t(1) << kSeqBits;

int64_t PartRowId(int64_t id, uint64_t seq) {
  return (id << kSeqBits) | static_cast<int64_t>(seq);
}

// A prepared statement, finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    int rc = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr);
    if (rc != SQLITE_OK)
      Fail(ErrorCode::kCorrupt, std::string("box: cannot prepare \"") + sql +
                                    "\": " + sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& Bind(int i, int64_t v) {
    Check(sqlite3_bind_int64(s_, i, v));
    return *this;
  }
  Stmt& Bind(int i, std::string_view v) {
    Check(sqlite3_bind_text64(s_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
    return *this;
  }
  Stmt& BindBlob(int i, const uint8_t* p, uint64_t n) {
    // A zero-length blob, never NULL.
    static const uint8_t kEmpty = 0;
    Check(sqlite3_bind_blob64(s_, i, n ? p : &kEmpty, n, SQLITE_STATIC));
    return *this;
  }
  // SQLITE_ROW or SQLITE_DONE; anything else is returned for the caller to map.
  int Step() { return sqlite3_step(s_); }
  void Reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  int64_t Int(int col) { return sqlite3_column_int64(s_, col); }
  std::string Text(int col) {
    const unsigned char* t = sqlite3_column_text(s_, col);
    return t ? std::string(reinterpret_cast<const char*>(t),
                           static_cast<size_t>(sqlite3_column_bytes(s_, col)))
             : std::string();
  }

 private:
  void Check(int rc) {
    if (rc != SQLITE_OK)
      Fail(ErrorCode::kFatal, std::string("box: bind failed: ") + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

// How long a statement waits for another process's lock before failing with kLocked.
constexpr int kBusyTimeoutMs = 10000;

bool IsBusy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

std::string TypeText(FileType t) { return FileTypeName(t); }

std::string ObjectName(const Handle& h) {
  return h.type == FileType::kConfig ? std::string("config") : h.name;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

uint64_t EnvSize(const char* name, uint64_t lo, uint64_t hi, bool power_of_two, uint64_t def) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == 0) return def;
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(v, &end, 10);
  if (errno != 0 || *end != 0 || n < lo || n > hi || (power_of_two && (n & (n - 1)) != 0))
    Fail(ErrorCode::kInvalidArgument, std::string("invalid ") + name + "=" + v);
  return n;
}

// Throws the error for SQLite's result `rc` of `what` on `db`: kLocked (busy), kCorrupt
// (damaged file), else kIo.
[[noreturn]] void FailSqlite(const std::string& path, sqlite3* db, int rc,
                             const std::string& what) {
  std::string msg = "box " + path + ": " + what + ": " + sqlite3_errmsg(db);
  if (IsBusy(rc))
    Fail(ErrorCode::kLocked,
         "box " + path + " is being changed by another process, or was changed after this "
                         "command started reading it (" + what + "); run the command again");
  int prim = rc & 0xff;
  if (prim == SQLITE_CORRUPT || prim == SQLITE_NOTADB || prim == SQLITE_MISMATCH)
    Fail(ErrorCode::kCorrupt, msg);
  bool retryable = false;
  Fail(ErrorCode::kIo, msg, retryable);
}

// The integer a PRAGMA returns on `db`; SQLite's error (kLocked when busy) if it fails.
int64_t PragmaInt(const std::string& path, sqlite3* db, const char* sql) {
  Stmt s(db, sql);
  int rc = s.Step();
  if (rc != SQLITE_ROW) FailSqlite(path, db, rc, sql);
  return s.Int(0);
}

// The write generation of the state `db`'s transaction sees; -1 before the schema exists.
int64_t ReadGeneration(sqlite3* db) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='generation'", -1, &s,
                         nullptr) != SQLITE_OK) {
    sqlite3_finalize(s);
    return -1;
  }
  int64_t g = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  return g;
}

// The hardening every connection to a box gets (a box made elsewhere is untrusted).
void Harden(sqlite3* db) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
}


[[noreturn]] void FailNotFound(const std::string& path, const Handle& h) {
  Fail(ErrorCode::kNotFound, "box " + path + ": " + h.ToString() + " does not exist");
}

[[noreturn]] void FailShortRead(const std::string& path, const Handle& h, uint64_t offset,
                                uint64_t length, uint64_t size) {
  Fail(ErrorCode::kCorrupt, "box " + path + ": short read of " + h.ToString() + ": wanted " +
                                std::to_string(length) + " bytes at " + std::to_string(offset) +
                                ", object has " + std::to_string(size));
}

}  // namespace

BoxOptions BoxOptions::FromEnvironment() {
  BoxOptions o;
  o.page_size = static_cast<int>(EnvSize("HAVEN_BOX_PAGE_SIZE", 512, 65536, true, o.page_size));
  o.part_size = EnvSize("HAVEN_BOX_PART_SIZE", 4096, uint64_t(512) << 20, false, o.part_size);
  return o;
}

BoxBackend::BoxBackend(std::string path, BoxOptions opts)
    : path_(std::move(path)), opts_(opts) {
  if (path_.empty()) Fail(ErrorCode::kInvalidArgument, "box: empty file name (want box:PATH)");
}

BoxBackend::~BoxBackend() {
  MutexLock lock(mu_);
  if (db_ == nullptr) return;
  if (state_ == State::kWriting) {
    if (std::uncaught_exceptions() == 0) {
      // A command that returned normally: its changes are its result.
      try {
        CommitLocked();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "Fatal: %s\n", e.what());
        std::fflush(stderr);
        std::_Exit(1);
      }
    } else {
      RollbackLocked();
    }
  } else if (state_ == State::kReading) {
    RollbackLocked();
  }
  DropReaders();  // the main connection closes last: it checkpoints and removes the WAL
  pacer_.reset();
  sqlite3_close_v2(db_);
  db_ = nullptr;
}

void BoxBackend::FailDb(int rc, const std::string& what) { FailSqlite(path_, db_, rc, what); }

void BoxBackend::Exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    sqlite3_free(err);
    FailDb(rc, sql);
  }
}

void BoxBackend::OpenDb(bool create) {
  if (db_ != nullptr) return;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  if (create) flags |= SQLITE_OPEN_CREATE;
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path_.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    Fail(ErrorCode::kIo, "box " + path_ + ": cannot open: " + msg);
  }
  db_ = db;
  // A box made elsewhere is untrusted: no triggers, views or schema functions run, and
  // SQL cannot corrupt the file on purpose.
  Harden(db_);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  // No automatic checkpoint: it would run inside COMMIT; CommitLocked runs it after the
  // commit of every write instead (timed apart: HAVEN_IMPORT_TIMINGS). secure_delete FAST,
  // not Debian's default ON: removed cells are still zeroed in their pages (a removed key
  // file leaves nothing to read), but freed overflow pages are not written full of zeros
  // through the WAL first, since the incremental vacuum before the same commit leaves no
  // free page in the file (relocated over or truncated away; docs/box.md §1).
  Exec("PRAGMA synchronous=FULL; PRAGMA cache_size=-32768; PRAGMA journal_size_limit=67108864;"
       " PRAGMA foreign_keys=OFF; PRAGMA cell_size_check=ON; PRAGMA wal_autocheckpoint=0;"
       " PRAGMA secure_delete=FAST");
  state_ = State::kIdle;
}

// An empty file (page count 0) is no box yet (false); anything else must be a box of our
// format (true).
bool BoxBackend::CheckSchema() {
  // A failed read (another process holding the box beyond the busy timeout) is that
  // error, never "no box yet" or "not a box".
  int64_t odd = 0;
  const int64_t pages = PragmaInt(path_, db_, "PRAGMA page_count");
  if (pages == 0) return false;
  const int64_t app = PragmaInt(path_, db_, "PRAGMA application_id");
  const int64_t version = PragmaInt(path_, db_, "PRAGMA user_version");
  if (app != kApplicationId)
    Fail(ErrorCode::kCorrupt, "box " + path_ + " is not a haven box file (SQLite "
                              "application_id " + std::to_string(app) + ")");
  if (version != kFormatVersion)
    Fail(ErrorCode::kUnsupported, "box " + path_ + " has format version " +
                                      std::to_string(version) + "; this haven reads version " +
                                      std::to_string(kFormatVersion));
  Stmt s(db_, "SELECT count(*) FROM sqlite_schema WHERE type IN ('trigger','view')");
  if (s.Step() == SQLITE_ROW) odd = s.Int(0);
  if (odd != 0)
    Fail(ErrorCode::kCorrupt, "box " + path_ + " holds triggers or views: not a haven box");
  return true;
}

void BoxBackend::RestoreWalMode() {
  wal_checked_ = true;
  // Best effort, without waiting: a process holding the box alone switches it back itself
  // (the command's first read then waits for it), and a read-only box file stays as it is.
  sqlite3_busy_timeout(db_, 0);
  std::string mode;
  {
    Stmt s(db_, "PRAGMA journal_mode");
    if (s.Step() == SQLITE_ROW) mode = s.Text(0);
  }
  if (!mode.empty() && mode != "wal")
    sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
}

// SQLite leaves WAL mode only when no other connection has the file open; in exclusive
// locking mode the switch takes the EXCLUSIVE lock and keeps it until ReleaseAlone().
void BoxBackend::TryHoldAlone() {
  sqlite3_busy_timeout(db_, 0);  // in use by others: WAL mode beside them, at once
  // Only from WAL mode: there the switch proves nobody else has the box open. (A box still
  // in rollback mode, which RestoreWalMode could not switch back because another process
  // holds it, is used the normal way.)
  bool held = false;
  {
    Stmt s(db_, "PRAGMA journal_mode");
    held = s.Step() == SQLITE_ROW && s.Text(0) == "wal";
  }
  if (held)
    held = sqlite3_exec(db_, "PRAGMA locking_mode=EXCLUSIVE", nullptr, nullptr, nullptr) ==
           SQLITE_OK;
  if (held) {
    Stmt s(db_, "PRAGMA journal_mode=DELETE");
    held = s.Step() == SQLITE_ROW && s.Text(0) == "delete";
  }
  if (!held) sqlite3_exec(db_, "PRAGMA locking_mode=NORMAL", nullptr, nullptr, nullptr);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  alone_ = held;
}

void BoxBackend::ReleaseAlone() {
  if (!alone_) return;
  alone_ = false;
  // Normal locking takes effect at the next access: the switch back to WAL mode, which
  // still holds the lock it needs and removes the rollback journal. Should it fail, the
  // box stays valid in rollback-journal mode until RestoreWalMode() of a later open.
  sqlite3_exec(db_, "PRAGMA locking_mode=NORMAL", nullptr, nullptr, nullptr);
  sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
}

void BoxBackend::CreateSchema() {
  std::string pragmas = "PRAGMA page_size=" + std::to_string(opts_.page_size) +
                        "; PRAGMA auto_vacuum=INCREMENTAL";
  Exec(pragmas.c_str());
  Exec("BEGIN IMMEDIATE");
  try {
    Exec("CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, type TEXT NOT NULL,"
         " name TEXT NOT NULL, size INTEGER NOT NULL, part_size INTEGER NOT NULL,"
         " UNIQUE(type, name));"
         " CREATE TABLE IF NOT EXISTS parts(id INTEGER PRIMARY KEY, data BLOB NOT NULL);"
         " CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
         " INSERT OR IGNORE INTO meta VALUES('generation', 0);");
    std::string ids = "PRAGMA application_id=" + std::to_string(kApplicationId) +
                      "; PRAGMA user_version=" + std::to_string(kFormatVersion);
    Exec(ids.c_str());
    Exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  Stmt s(db_, "PRAGMA journal_mode=WAL");
  if (s.Step() != SQLITE_ROW || s.Text(0) != "wal")
    Fail(ErrorCode::kIo, "box " + path_ + ": cannot switch to WAL mode");
}

void BoxBackend::BeginRead() {
  if (state_ != State::kIdle) return;
  if (CheckSchema()) {
    if (!wal_checked_) RestoreWalMode();
    if (opts_.alone && !alone_) TryHoldAlone();
  }
  try {
    Exec(alone_ ? "BEGIN EXCLUSIVE" : "BEGIN");
  } catch (...) {
    ReleaseAlone();
    throw;
  }
  // The read transaction (and with it the state this command sees) starts at the first read.
  try {
    Stmt s(db_, "SELECT count(*) FROM sqlite_schema");
    if (int rc = s.Step(); rc != SQLITE_ROW) FailDb(rc, "read the box's schema");
    generation_ = ReadGeneration(db_);
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    ReleaseAlone();
    throw;
  }
  state_ = State::kReading;
  // Held alone, the pool's connections could not read: the main one serves every read.
  pool_generation_ = alone_ ? -1 : generation_;
}

void BoxBackend::BeginWrite() {
  if (state_ == State::kWriting) return;
  BeginRead();
  pool_generation_ = -1;  // from now on this process reads its own writes: main only
  // Takes the write lock now: fails at once (kLocked) if another process writes, or has
  // committed since this command's read transaction began.
  int rc = sqlite3_exec(db_, "UPDATE meta SET value = value + 1 WHERE key = 'generation'",
                        nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) FailDb(rc, "begin the write transaction");
  state_ = State::kWriting;
  pacer_ = std::make_unique<WritebackPacer>(std::vector<std::string>{path_ + "-wal", path_});
  removed_ = false;
}

void BoxBackend::CommitLocked() {
  pool_generation_ = -1;
  DropReaders();  // their transactions see the state before this commit
  if (state_ == State::kWriting && removed_) {
    // Gives the pages of removed rows back to the file system (auto_vacuum=INCREMENTAL).
    Exec("PRAGMA incremental_vacuum");
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const bool wrote = state_ == State::kWriting;
  if (state_ == State::kWriting || state_ == State::kReading) {
    int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) FailDb(rc, "commit");
  }
  ReleaseAlone();
  state_ = db_ ? State::kIdle : State::kClosed;
  removed_ = false;
  const auto committed = Clock::now();
  // Moves the committed pages from the WAL into the box file (PASSIVE: never waits for
  // readers; what a reader still needs stays in the WAL for a later checkpoint). The
  // commit is durable before this: a failure or crash here loses nothing.
  if (!wrote) return;
  sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  pacer_.reset();
  last_commit_.commit = std::chrono::duration<double>(committed - start).count();
  last_commit_.checkpoint = std::chrono::duration<double>(Clock::now() - committed).count();
}

void BoxBackend::RollbackLocked() {
  pool_generation_ = -1;
  DropReaders();
  pacer_.reset();
  if (state_ == State::kWriting || state_ == State::kReading)
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  ReleaseAlone();
  state_ = db_ ? State::kIdle : State::kClosed;
  removed_ = false;
}

void BoxBackend::Commit() {
  MutexLock lock(mu_);
  if (db_ == nullptr) return;
  CommitLocked();
}

BoxBackend::CommitTimes BoxBackend::LastCommitTimes() {
  MutexLock lock(mu_);
  return last_commit_;
}

void BoxBackend::Rollback() {
  MutexLock lock(mu_);
  if (db_ != nullptr) RollbackLocked();
}

bool BoxBackend::HasChanges() {
  MutexLock lock(mu_);
  return state_ == State::kWriting;
}

void BoxBackend::Compact() {
  MutexLock lock(mu_);
  OpenDb(false);
  if (state_ == State::kWriting)
    Fail(ErrorCode::kFatal, "box " + path_ + ": compact inside a transaction");
  RollbackLocked();
  CheckSchema();
  Exec("VACUUM");
  sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
}

std::pair<uint64_t, uint64_t> BoxBackend::PageCounts() {
  MutexLock lock(mu_);
  OpenDb(false);
  BeginRead();
  uint64_t pages = 0, free_pages = 0;
  {
    Stmt s(db_, "PRAGMA page_count");
    if (s.Step() == SQLITE_ROW) pages = static_cast<uint64_t>(s.Int(0));
  }
  Stmt s(db_, "PRAGMA freelist_count");
  if (s.Step() == SQLITE_ROW) free_pages = static_cast<uint64_t>(s.Int(0));
  return {pages, free_pages};
}

bool BoxBackend::ExistsLocked() {
  if (db_ == nullptr) {
    if (!FileExists(path_)) return false;
    OpenDb(false);
  }
  BeginRead();
  Stmt tables(db_, "SELECT count(*) FROM sqlite_schema WHERE type='table' AND name='files'");
  if (tables.Step() != SQLITE_ROW || tables.Int(0) == 0) return false;
  Stmt s(db_, "SELECT 1 FROM files WHERE type='config' AND name='config'");
  int rc = s.Step();
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) FailDb(rc, "look up the config");
  return false;
}

bool BoxBackend::Exists() {
  MutexLock lock(mu_);
  return ExistsLocked();
}

void BoxBackend::Create() {
  MutexLock lock(mu_);
  if (db_ == nullptr) OpenDb(true);
  if (ExistsLocked()) Fail(ErrorCode::kFatal, "box " + path_ + ": config already exists");
  // The schema is made outside the repository's transaction (PRAGMAs that shape the file
  // cannot run inside one). A box without a config is "no repository" to every command.
  RollbackLocked();
  bool has_schema = false;
  {
    Stmt s(db_, "SELECT count(*) FROM sqlite_schema WHERE type='table' AND name='files'");
    has_schema = s.Step() == SQLITE_ROW && s.Int(0) > 0;
  }
  if (!has_schema) CreateSchema();
}

std::optional<BoxBackend::Object> BoxBackend::Find(sqlite3* db, const Handle& h) const {
  Stmt s(db, "SELECT id, size, part_size FROM files WHERE type=?1 AND name=?2");
  s.Bind(1, TypeText(h.type)).Bind(2, ObjectName(h));
  int rc = s.Step();
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) FailSqlite(path_, db, rc, "look up " + h.ToString());
  Object o{s.Int(0), static_cast<uint64_t>(s.Int(1)), static_cast<uint64_t>(s.Int(2))};
  // A hostile box must not make a size or part size that asks for unbounded memory.
  if (o.id <= 0 || o.id >= kMaxObjectId || s.Int(1) < 0 || s.Int(2) < 4096 ||
      o.part_size > (uint64_t{512} << 20) || o.size > (uint64_t{1} << 40) ||
      (o.size + o.part_size - 1) / o.part_size > kMaxParts)
    Fail(ErrorCode::kCorrupt, "box " + path_ + ": invalid row for " + h.ToString());
  return o;
}

void BoxBackend::ReadRange(sqlite3* db, const Handle& h, const Object& o, uint64_t offset,
                           uint8_t* out, uint64_t n) const {
  sqlite3_blob* blob = nullptr;
  struct Closer {
    sqlite3_blob*& b;
    ~Closer() {
      if (b) sqlite3_blob_close(b);
    }
  } closer{blob};
  while (n > 0) {
    uint64_t seq = offset / o.part_size, in_part = offset % o.part_size;
    uint64_t part_len = std::min(o.part_size, o.size - seq * o.part_size);
    uint64_t take = std::min(n, part_len - in_part);
    int64_t row = PartRowId(o.id, seq);
    int rc = blob ? sqlite3_blob_reopen(blob, row)
                  : sqlite3_blob_open(db, "main", "parts", "data", row, 0, &blob);
    if (rc != SQLITE_OK) {
      if ((rc & 0xff) == SQLITE_ERROR)
        Fail(ErrorCode::kCorrupt, "box " + path_ + ": part " + std::to_string(seq) + " of " +
                                      h.ToString() + " is missing");
      FailSqlite(path_, db, rc, "read " + h.ToString());
    }
    if (static_cast<uint64_t>(sqlite3_blob_bytes(blob)) != part_len)
      Fail(ErrorCode::kCorrupt, "box " + path_ + ": part " + std::to_string(seq) + " of " +
                                    h.ToString() + " has the wrong length");
    rc = sqlite3_blob_read(blob, out, static_cast<int>(take), static_cast<int>(in_part));
    if (rc != SQLITE_OK) FailSqlite(path_, db, rc, "read " + h.ToString());
    out += take;
    offset += take;
    n -= take;
  }
}

sqlite3* BoxBackend::OpenReader(int64_t generation) const {
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  if (sqlite3_open_v2(path_.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    sqlite3_close_v2(db);
    return nullptr;
  }
  Harden(db);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // The reader's transaction must see the state the main connection sees: the same write
  // generation (every committed write transaction raises it).
  bool ok = sqlite3_exec(db, "PRAGMA query_only=1; PRAGMA cell_size_check=ON; BEGIN", nullptr,
                         nullptr, nullptr) == SQLITE_OK &&
            ReadGeneration(db) == generation;
  if (!ok) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close_v2(db);
    return nullptr;
  }
  return db;
}

BoxBackend::Reader BoxBackend::AcquireReader(const Handle& h) {
  int64_t generation = pool_generation_;
  uint64_t epoch = 0;
  if (generation < 0) {
    MutexLock lock(mu_);
    if (db_ == nullptr && !FileExists(path_)) FailNotFound(path_, h);
    OpenDb(false);
    BeginRead();
    // A process that has written reads through its own (writing) connection.
    if (state_ != State::kReading || generation_ < 0 || alone_) return {};
    generation = generation_;
  }
  {
    // (After a commit or rollback of this process since `generation` was read, a reader
    // opened at it finds another generation and is not used: reads then go through the
    // main connection until the next commit or rollback. Never a stale read.)
    MutexLock pool(pool_mu_);
    epoch = epoch_;
    if (pool_off_) return {};
    if (!free_.empty()) {
      Reader r = free_.back();
      free_.pop_back();
      return r;
    }
    if (open_readers_ >= kMaxReaders) return {};
    open_readers_++;
  }
  sqlite3* db = OpenReader(generation);
  MutexLock pool(pool_mu_);
  if (db == nullptr || epoch != epoch_) {
    if (db != nullptr) CloseReader(db);
    open_readers_--;
    if (epoch == epoch_) pool_off_ = true;  // another process committed meanwhile
    return {};
  }
  return Reader{db, epoch};
}

void BoxBackend::CloseReader(sqlite3* db) {
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close_v2(db);
}

void BoxBackend::ReleaseReader(const Reader& r) {
  MutexLock pool(pool_mu_);
  // An I/O or memory error makes SQLite roll back the reader's transaction (autocommit
  // again): pooled, it would see later commits of other processes. Closed instead.
  if (r.epoch == epoch_ && sqlite3_get_autocommit(r.db) == 0) {
    free_.push_back(r);
    return;
  }
  CloseReader(r.db);
  open_readers_--;
}

void BoxBackend::DropReaders() {
  MutexLock pool(pool_mu_);
  epoch_++;
  pool_off_ = false;
  for (const Reader& r : free_) {
    CloseReader(r.db);
    open_readers_--;
  }
  free_.clear();
}

void BoxBackend::ReadOnMain(const Handle& h, const std::function<void(sqlite3*)>& fn) {
  if (db_ == nullptr && !FileExists(path_)) FailNotFound(path_, h);
  OpenDb(false);
  BeginRead();
  fn(db_);
}

void BoxBackend::ReadWith(const Handle& h, uint64_t length,
                          const std::function<void(sqlite3*)>& fn) {
  // A `box cat` of 1 MiB from a 1 GiB box spent a tenth of its time opening readers (a
  // connection each, its schema parsed, its page cache cold: about 3 ms) for reads of a
  // few KiB that the main connection serves in microseconds. So: the main connection when
  // it is free; a reader only for a pack read big enough to pay for opening one.
  if (mu_.try_lock()) {
    try {
      ReadOnMain(h, fn);
    } catch (...) {
      mu_.unlock();
      throw;
    }
    mu_.unlock();
    return;
  }
  const bool big = h.type == FileType::kPack && (length == 0 || length >= kPoolReadMin);
  Reader r = big ? AcquireReader(h) : Reader{};
  if (r.db != nullptr) {
    struct Give {
      BoxBackend* b;
      const Reader& r;
      ~Give() { b->ReleaseReader(r); }
    } give{this, r};
    fn(r.db);
    return;
  }
  MutexLock lock(mu_);
  ReadOnMain(h, fn);
}


void BoxBackend::Save(const Handle& h, ByteView data) {
  CheckHandle(h);
  MutexLock lock(mu_);
  if (h.type == FileType::kLock) {
    locks_.emplace(h.name, Bytes(data.begin(), data.end()));
    return;
  }
  OpenDb(false);
  BeginWrite();
  if (auto o = Find(db_, h)) {
    if (o->size == data.size()) return;  // a retried upload
    Fail(ErrorCode::kFatal, "box " + path_ + ": " + h.ToString() + " already exists with size " +
                                std::to_string(o->size));
  }
  const uint64_t ps = opts_.part_size;
  if ((data.size() + ps - 1) / ps > kMaxParts)
    Fail(ErrorCode::kInvalidArgument, "box " + path_ + ": " + h.ToString() + " is too large");
  Stmt ins(db_, "INSERT INTO files(type, name, size, part_size) VALUES(?1, ?2, ?3, ?4)");
  ins.Bind(1, TypeText(h.type)).Bind(2, ObjectName(h)).Bind(3, int64_t(data.size()));
  ins.Bind(4, int64_t(ps));
  if (int rc = ins.Step(); rc != SQLITE_DONE) FailDb(rc, "store " + h.ToString());
  int64_t id = sqlite3_last_insert_rowid(db_);
  if (id <= 0 || id >= kMaxObjectId)
    Fail(ErrorCode::kCorrupt, "box " + path_ + ": object ids exhausted");
  // Each part is inserted as a zeroblob and then filled with incremental blob I/O: binding
  // the bytes would make SQLite build the whole record (a fresh part-sized buffer, page
  // faults and a copy) before it writes the pages (docs/box.md §2).
  Stmt part(db_, "INSERT INTO parts(id, data) VALUES(?1, zeroblob(?2))");
  sqlite3_blob* blob = nullptr;
  struct Closer {
    sqlite3_blob*& b;
    ~Closer() {
      if (b) sqlite3_blob_close(b);
    }
  } closer{blob};
  for (uint64_t seq = 0; seq * ps < data.size(); ++seq) {
    uint64_t len = std::min<uint64_t>(ps, data.size() - seq * ps);
    const int64_t row = PartRowId(id, seq);
    part.Bind(1, row).Bind(2, static_cast<int64_t>(len));
    if (int rc = part.Step(); rc != SQLITE_DONE) FailDb(rc, "store " + h.ToString());
    part.Reset();
    if (len == 0) continue;
    int rc = blob ? sqlite3_blob_reopen(blob, row)
                  : sqlite3_blob_open(db_, "main", "parts", "data", row, 1, &blob);
    if (rc == SQLITE_OK)
      rc = sqlite3_blob_write(blob, data.data() + seq * ps, static_cast<int>(len), 0);
    if (rc != SQLITE_OK) FailDb(rc, "store " + h.ToString());
  }
}

Bytes BoxBackend::Load(const Handle& h, uint64_t offset, uint64_t length) {
  CheckHandle(h);
  if (h.type == FileType::kLock) {
    MutexLock lock(mu_);
    auto it = locks_.find(h.name);
    if (it == locks_.end()) FailNotFound(path_, h);
    uint64_t size = it->second.size();
    if (offset > size || length > size - offset) FailShortRead(path_, h, offset, length, size);
    uint64_t n = length ? length : size - offset;
    return Bytes(it->second.begin() + static_cast<long>(offset),
                 it->second.begin() + static_cast<long>(offset + n));
  }
  Bytes out;
  ReadWith(h, length, [&](sqlite3* db) {
    auto o = Find(db, h);
    if (!o) FailNotFound(path_, h);
    if (offset > o->size || length > o->size - offset)
      FailShortRead(path_, h, offset, length, o->size);
    uint64_t n = length ? length : o->size - offset;
    out = Bytes(n);
    ReadRange(db, h, *o, offset, out.data(), n);
  });
  return out;
}

void BoxBackend::LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) {
  CheckHandle(h);
  if (h.type == FileType::kLock) {
    Bytes b = Load(h, offset, out.size());
    std::copy(b.begin(), b.end(), out.begin());
    return;
  }
  ReadWith(h, out.size(), [&](sqlite3* db) {
    auto o = Find(db, h);
    if (!o) FailNotFound(path_, h);
    if (offset > o->size || out.size() > o->size - offset)
      FailShortRead(path_, h, offset, out.size(), o->size);
    ReadRange(db, h, *o, offset, out.data(), out.size());
  });
}

// The rows of type t, each checked against the (type, name) index that Find uses. In a
// damaged or crafted file the two can disagree (a row the index does not find, two rows
// of one name, an index entry pointing at another row); then the box is corrupt, rather
// than listing names that Stat and Load do not find or find with another size.
std::vector<FileInfo> BoxBackend::ListRows(FileType t) {
  std::vector<FileInfo> rows;
  {
    Stmt s(db_, "SELECT name, size FROM files NOT INDEXED WHERE type=?1");
    s.Bind(1, TypeText(t));
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) {
      std::string name = s.Text(0);
      int64_t size = s.Int(1);
      bool valid = t == FileType::kConfig ? name == "config" : IsValidObjectName(name);
      if (valid && size >= 0) rows.push_back(FileInfo{std::move(name), uint64_t(size)});
    }
    if (rc != SQLITE_DONE) FailDb(rc, std::string("list ") + FileTypeDir(t));
  }
  std::sort(rows.begin(), rows.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.name < b.name; });
  auto damaged = [&](const std::string& name, const std::string& why) {
    Fail(ErrorCode::kCorrupt, "box " + path_ + " is damaged: " + FileTypeDir(t) + "/" + name +
                                  " " + why + " (its table and the index of names disagree)");
  };
  Stmt seek(db_, "SELECT size FROM files WHERE type=?1 AND name=?2");
  for (size_t i = 0; i < rows.size(); i++) {
    if (i > 0 && rows[i].name == rows[i - 1].name) damaged(rows[i].name, "is stored twice");
    seek.Bind(1, TypeText(t)).Bind(2, rows[i].name);
    const int rc = seek.Step();
    if (rc == SQLITE_DONE) damaged(rows[i].name, "is not found by its name");
    if (rc != SQLITE_ROW) FailDb(rc, std::string("list ") + FileTypeDir(t));
    if (seek.Int(0) != static_cast<int64_t>(rows[i].size))
      damaged(rows[i].name, "has two sizes");
    seek.Reset();
  }
  return rows;
}

std::optional<uint64_t> BoxBackend::Stat(const Handle& h) {
  CheckHandle(h);
  MutexLock lock(mu_);
  if (h.type == FileType::kLock) {
    auto it = locks_.find(h.name);
    if (it == locks_.end()) return std::nullopt;
    return it->second.size();
  }
  if (db_ == nullptr && !FileExists(path_)) return std::nullopt;
  OpenDb(false);
  BeginRead();
  auto o = Find(db_, h);
  if (!o) return std::nullopt;
  return o->size;
}

void BoxBackend::List(FileType t, const std::function<void(const FileInfo&)>& fn) {
  std::vector<FileInfo> all;
  {
    MutexLock lock(mu_);
    if (t == FileType::kLock) {
      for (const auto& [name, bytes] : locks_) all.push_back(FileInfo{name, bytes.size()});
    } else if (db_ != nullptr || FileExists(path_)) {
      OpenDb(false);
      BeginRead();
      all = ListRows(t);
    } else {
      Fail(ErrorCode::kNotFound, "box " + path_ + " does not exist");
    }
  }
  // Called without the lock: fn may call back (e.g. Remove).
  for (const FileInfo& fi : all) fn(fi);
}

void BoxBackend::Remove(const Handle& h) {
  CheckHandle(h);
  MutexLock lock(mu_);
  if (h.type == FileType::kLock) {
    if (locks_.erase(h.name) == 0) FailNotFound(path_, h);
    return;
  }
  if (db_ == nullptr && !FileExists(path_)) FailNotFound(path_, h);
  OpenDb(false);
  BeginRead();
  auto o = Find(db_, h);
  if (!o) FailNotFound(path_, h);
  BeginWrite();
  Stmt parts(db_, "DELETE FROM parts WHERE id BETWEEN ?1 AND ?2");
  parts.Bind(1, PartRowId(o->id, 0)).Bind(2, PartRowId(o->id, kMaxParts - 1));
  if (int rc = parts.Step(); rc != SQLITE_DONE) FailDb(rc, "remove " + h.ToString());
  Stmt file(db_, "DELETE FROM files WHERE id=?1");
  file.Bind(1, o->id);
  if (int rc = file.Step(); rc != SQLITE_DONE) FailDb(rc, "remove " + h.ToString());
  removed_ = true;
}

}  // namespace haven
