// What every command shares: global options (restic's names and environment variables),
// password sources, opening the repository and its lock, and output helpers.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/bytes.h"
#include "core/error.h"
#include "repo/early_index.h"
#include "repo/lock.h"
#include "repo/indexed_repository.h"
#include "repo/repository.h"
#include "repo/write_session.h"

namespace haven::cli {

struct GlobalOptions {
  std::string repo;
  std::string repository_file;
  std::string password_file;
  std::string password_command;
  bool json = false;
  bool quiet = false;
  int verbose = 0;
  std::string jobs = "auto";
  std::string cache_dir;
  bool no_cache = false;
  bool no_lock = false;
  std::string compression;  // empty = env or auto
  std::string key_hint;     // empty = env KEY_HINT
  std::vector<std::string> options;  // -o backend.key=value
  std::string pack_size;             // MiB; empty = env PACK_SIZE or 16
  uint64_t limit_upload = 0, limit_download = 0;  // KiB/s, 0 = unlimited
  std::vector<std::string> cacert;   // for TLS backends (checked, kept for them)
  std::string tls_client_cert;
  bool insecure_tls = false;
  bool cleanup_cache = false;
};

GlobalOptions& Globals();

// Environment lookup with the HAVEN_ name first, then the RESTIC_ fallback.
std::string Env(const char* suffix);

int Jobs();  // resolved --jobs
// --jobs as given: 0 for auto. Restore, check and prune then use at least as many workers
// as the storage serves requests at once (S3: 5) for their loads; a number is taken as is.
int JobsOrAuto();
std::shared_ptr<Backend> MakeBackend(const std::string& location);
// A network backend with the decorators every backend gets (kill hook, --limit-*) and
// patient retries: 8 attempts, up to 8 s apart, each retry warned about (s3:, rest:, rclone:).
std::shared_ptr<Backend> DecorateRemote(std::shared_ptr<Backend> be);
// The repository location, first of: -r, --repository-file (both at once is an error, as in
// restic), HAVEN_REPOSITORY, HAVEN_REPOSITORY_FILE, RESTIC_REPOSITORY, RESTIC_REPOSITORY_FILE.
// A repository file holds the location on its first line. Throws when none is set.
// The repository location on the first line of a file (--repository-file and the like);
// throws naming the file when it cannot be read or is empty.
std::string LocationFromFile(const std::string& path);
std::string RepoLocation();
// The repository password, with restic's precedence: --password-command, --password-file
// (both at once is an error), then per environment prefix (HAVEN_, then RESTIC_)
// *_PASSWORD_COMMAND, *_PASSWORD_FILE (both at once is an error), *_PASSWORD; else one line
// of standard input when it is not a terminal, else a prompt on the terminal (asked twice
// with confirm).
std::string ReadPassword(const std::string& prompt = "enter password for repository: ",
                         bool confirm = false);
// True when ReadPassword would take the password from a variable or a file: nothing is
// asked and no command runs (a command may ask, e.g. a GPG agent).
bool PasswordNeedsNoAsking();
// A password from `file`, else `command`, else standard input / the terminal as above.
std::string ReadPasswordFrom(const std::string& file, const std::string& command,
                             const std::string& prompt, bool confirm);

// What OpenRepository wraps the storage in; chosen once, at open.
struct OpenOptions {
  // The local cache (CacheBackend) under CacheBaseDir(), unless --no-cache; `check` opens
  // without it so that it verifies the repository's own files.
  bool use_cache = true;
  // Every write and removal is discarded (DryRunBackend), except lock files: the lock is
  // taken as for a real run (backup/capture --dry-run).
  bool dry_run = false;
  // Decides the cache's base folder from the storage itself, before the cache is put in
  // front of it; "" for no cache. Unset: CacheBaseDir(). (check: a temporary folder when
  // every request to the storage is a round trip, Backend::RoundTrips, none otherwise.)
  std::function<std::string(const Backend&)> cache_base;
  // The command loads the index: on storage with round trips its files are read in the
  // background from here on (IndexPrefetchBackend), beside the key's derivation and the
  // lock, except those the cache holds.
  bool prefetch_index = false;
};
// Opens -r's repository. Commands that need the index turn it into an IndexedRepository
// (IndexedRepository::Load) after taking the lock.
std::unique_ptr<Repository> OpenRepository(const OpenOptions& opts = {});

// A second repository named by restic's --from-* flags (init --copy-chunker-params, copy).
struct FromOptions {
  std::string repo, repository_file, password_file, password_command, key_hint;
};
// Opens it: --from-repo / --from-repository-file, else the FROM_REPOSITORY /
// FROM_REPOSITORY_FILE variables; the password from --from-password-file /
// --from-password-command, the FROM_PASSWORD* variables, else standard input / terminal.
// `for_what` ends the message when no location is given (e.g. " for --copy-chunker-params").
std::unique_ptr<Repository> OpenFromRepository(const FromOptions& o, const std::string& for_what);
// How new packs are written: --pack-size (or $HAVEN_PACK_SIZE) and --compression (or
// $HAVEN_COMPRESSION), as a WriteSession takes them.
WriteOptions GlobalWriteOptions();
// --cache-dir, else $HAVEN_CACHE_DIR / $RESTIC_CACHE_DIR, else haven's own default
// ($XDG_CACHE_HOME/haven or ~/.cache/haven); "" when none can be determined.
// $HOME without trailing slashes; throws when it is not an absolute path.
std::string HomeDir();
std::string CacheBaseDir();

// Where the secret scanner keeps its compiled rule databases: CacheBaseDir()/scanner, or
// "" (compile every time) with --no-cache or no cache base.
std::string ScannerCacheDir();

// A repository lock unless --no-lock; nullptr when not taken.
std::unique_ptr<Lock> LockRepository(Repository& repo, bool exclusive);
// The same with Lock::AcquireOverlapped: the caller confirms (ConfirmLock) before it acts
// on what it read.
std::unique_ptr<Lock> LockRepositoryOverlapped(Repository& repo, bool exclusive);
// On remote storage, the index loading from the open's listing before the lock is taken
// (repo/early_index.h); null on a local disk or a box (nothing to overlap there).
// `then`: EarlyIndex's (reads with that index, also before the lock).
std::unique_ptr<EarlyIndex> StartEarlyIndex(Repository& repo,
                                            std::function<void(IndexedRepository&)> then = nullptr);
// What a command that reads the whole repository starts from (find, stats, diff): its
// lock, held until the command ends (null with --no-lock), every snapshot, and the index.
// Read beside the lock's check (LockRepositoryOverlapped; on remote storage the index
// starts loading before the lock, StartEarlyIndex); the lock is confirmed before this
// returns, so nothing is printed on a state an exclusive lock holder is changing.
struct ReadOnlyStart {
  std::unique_ptr<Lock> lock;
  std::vector<std::pair<FileId, Snapshot>> snapshots;
  std::unique_ptr<IndexedRepository> index;
};
ReadOnlyStart LockAndLoadForReading(Repository& repo);
// Every snapshot, listed and loaded beside the check of a LockRepositoryOverlapped lock
// (with `also`, more reads in the same window), then the lock confirmed; the snapshots
// that did not load are warned about only after the confirmation.
std::vector<std::pair<FileId, Snapshot>> LoadSnapshotsThenConfirm(
    Repository& repo, const std::unique_ptr<Lock>& lock,
    const std::function<void()>& also = nullptr);
// Confirms a lock of LockRepositoryOverlapped (none with --no-lock).
inline void ConfirmLock(const std::unique_ptr<Lock>& lock) {
  if (lock) lock->Confirm();
}
// Runs `read` (listings and loads made while the lock's check runs), then confirms the
// lock; when `read` fails the lock is confirmed first, so a conflicting lock is the error
// then. Returns what `read` returned.
template <class Read>
auto ReadThenConfirm(const std::unique_ptr<Lock>& lock, Read&& read) {
  auto result = [&] {
    try {
      return read();
    } catch (...) {
      ConfirmLock(lock);
      throw;
    }
  }();
  ConfirmLock(lock);
  return result;
}

// ReadThenConfirm, then `warn()` (what `read` found to warn about, e.g. the snapshots it
// could not load): after the confirmation, or, when `read` failed, before its error (the
// snapshot asked for may be one that did not load), unless the lock is the error.
template <class Warn, class Read>
auto ReadThenWarn(const std::unique_ptr<Lock>& lock, Warn&& warn, Read&& read) {
  try {
    auto result = ReadThenConfirm(lock, std::forward<Read>(read));
    warn();
    return result;
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kLocked) warn();
    throw;
  }
}

void Print(const std::string& s);     // stdout unless --quiet
void Verbose(const std::string& s);   // stdout with -v
void Warn(const std::string& s);      // stderr
// Writes all of `b` to fd 1 (raw bytes: cat, dump), past short writes and EINTR; a failed
// write fails with kIo naming the cause.
void WriteStdout(ByteView b);

std::string FormatBytes(uint64_t n);  // "1.234 MiB"
std::string FormatTimeShort(const gojson::Timestamp& t);  // "2006-01-02 15:04:05"

// Registers one command on the app.
void RegisterInit(CLI::App& app);
void RegisterBackup(CLI::App& app);
void RegisterSnapshots(CLI::App& app);
void RegisterLs(CLI::App& app);
void RegisterRestore(CLI::App& app);
void RegisterDump(CLI::App& app);
void RegisterCat(CLI::App& app);
void RegisterCheck(CLI::App& app);
void RegisterKey(CLI::App& app);
void RegisterUnlock(CLI::App& app);
void RegisterForget(CLI::App& app);
void RegisterPrune(CLI::App& app);
void RegisterRepair(CLI::App& app);
void RegisterVersion(CLI::App& app);
void RegisterDebug(CLI::App& app);  // hidden: gen-repo, used-blobs
void RegisterScan(CLI::App& app);
void RegisterCapture(CLI::App& app);
void RegisterApply(CLI::App& app);
void RegisterPackages(CLI::App& app);
void RegisterGenerate(CLI::App& app);  // man pages and completions from this command tree
void RegisterBox(CLI::App& app);  // box: a single encrypted file (docs/box.md)

// Exit code set by a command that finished with a partial result (e.g. 3 for backup).
extern int g_exit_code;

int Main(int argc, char** argv);

constexpr const char* kVersion = "0.1.0";

}  // namespace haven::cli
