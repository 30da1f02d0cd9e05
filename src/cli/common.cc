#include "cli/common.h"

#include <fcntl.h>
#include <stdio.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "backend/box_backend.h"
#include "backend/cache_backend.h"
#include "backend/index_prefetch_backend.h"
#include "backend/dry_run_backend.h"
#include "backend/kill_backend.h"
#include "backend/limit_backend.h"
#include "backend/local_backend.h"
#include "backend/retry_backend.h"
#include "backend/sftp_backend.h"
#include "cli/backend_rest.h"
#include "cli/backend_s3.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace haven::cli {

int g_exit_code = 0;

GlobalOptions& Globals() {
  static GlobalOptions g;
  return g;
}

std::string Env(const char* suffix) {
  std::string h = std::string("HAVEN_") + suffix, r = std::string("RESTIC_") + suffix;
  if (const char* v = std::getenv(h.c_str()); v && *v) return v;
  if (const char* v = std::getenv(r.c_str()); v && *v) return v;
  return "";
}

int JobsOrAuto() {
  const std::string& j = Globals().jobs;
  return j.empty() || j == "auto" ? 0 : Jobs();
}

int Jobs() {
  const std::string& j = Globals().jobs;
  if (j.empty() || j == "auto") return ResolveJobs(0);
  try {
    int n = std::stoi(j);
    if (n >= 1 && n <= 1024) return n;
  } catch (...) {
  }
  Fail(ErrorCode::kInvalidArgument, "invalid --jobs value \"" + j + "\" (want auto or 1..1024)");
}

namespace {

// The variable named exactly (no HAVEN_/RESTIC_ fallback); "" when unset or empty.
std::string EnvExact(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v ? v : "";
}

// A file's content with surrounding whitespace removed, up to its first line break.
std::string FirstLineOfFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    Fail(ErrorCode::kFatal,
         std::string("cannot read ") + what + " " + path + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  s = s.substr(b, s.find_first_of("\r\n", b) - b);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}


}  // namespace

std::string LocationFromFile(const std::string& path) {
  std::string loc = FirstLineOfFile(path, "repository file");
  if (loc.empty()) Fail(ErrorCode::kInvalidArgument, "repository file " + path + " is empty");
  return loc;
}

std::string RepoLocation() {
  const GlobalOptions& g = Globals();
  if (!g.repo.empty() && !g.repository_file.empty())
    Fail(ErrorCode::kInvalidArgument,
         "Options -r and --repository-file are mutually exclusive, please specify only one");
  if (!g.repo.empty()) return g.repo;
  if (!g.repository_file.empty()) return LocationFromFile(g.repository_file);
  for (const char* prefix : {"HAVEN_", "RESTIC_"}) {
    std::string p = prefix;
    if (std::string r = EnvExact(p + "REPOSITORY"); !r.empty()) return r;
    if (std::string f = EnvExact(p + "REPOSITORY_FILE"); !f.empty()) return LocationFromFile(f);
  }
  Fail(ErrorCode::kInvalidArgument,
       "Please specify repository location (-r/--repo, --repository-file, HAVEN_REPOSITORY "
       "or HAVEN_REPOSITORY_FILE)");
}

namespace {

uint64_t ParseCount(const std::string& v, const std::string& what, uint64_t lo, uint64_t hi) {
  uint64_t n = 0;
  bool ok = !v.empty() && v.size() <= 12;
  for (char c : v) ok = ok && c >= '0' && c <= '9';
  if (ok) n = std::stoull(v);
  if (!ok || n < lo || n > hi)
    Fail(ErrorCode::kInvalidArgument, "invalid value \"" + v + "\" for " + what + " (want " +
                                          std::to_string(lo) + ".." + std::to_string(hi) + ")");
  return n;
}

// -o backend.key=value, as restic: options of this backend go to `apply` (false: unknown
// key, an error); options of other backends are ignored with a warning.
void ApplyBackendOptions(const std::string& scheme,
                         const std::function<bool(const std::string&, const std::string&)>& apply) {
  for (const std::string& o : Globals().options) {
    size_t eq = o.find('=');
    size_t dot = o.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0)
      Fail(ErrorCode::kInvalidArgument,
           "invalid option \"" + o + "\": want -o backend.key=value, e.g. local.connections=4");
    std::string backend = o.substr(0, dot), key = o.substr(dot + 1, eq - dot - 1);
    if (backend != scheme) {
      Warn("ignoring option " + o.substr(0, eq) + ": the repository is " + scheme);
      continue;
    }
    if (!apply(key, o.substr(eq + 1)))
      Fail(ErrorCode::kInvalidArgument, "option " + o.substr(0, eq) + " is not known");
  }
}

// --cacert and --tls-client-cert name files that TLS backends (rest:, s3:) will read; a
// missing one is an error at start, as in restic, whatever the backend.
void CheckTlsFiles() {
  auto readable = [](const std::string& f, const char* what) {
    if (access(f.c_str(), R_OK) != 0)
      Fail(ErrorCode::kInvalidArgument,
           std::string("cannot read ") + what + " " + f + ": " + std::strerror(errno));
  };
  for (const std::string& f : Globals().cacert) readable(f, "--cacert file");
  if (!Globals().tls_client_cert.empty()) readable(Globals().tls_client_cert, "--tls-client-cert file");
}

// The decorators every backend gets: the kill hook, --limit-*, retries.
std::shared_ptr<Backend> Decorate(std::shared_ptr<Backend> be, const RetryOptions& retry = {}) {
  // Debug hook for crash tests (docs/cli.md): SIGKILL after N saves/removes.
  if (const char* kill = std::getenv("HAVEN_DEBUG_KILL_AFTER_OPS"); kill && *kill)
    be = std::make_shared<KillBackend>(be, std::stoull(kill));
  if (Globals().limit_upload || Globals().limit_download)
    be = std::make_shared<LimitBackend>(be, Globals().limit_upload, Globals().limit_download);
  return std::make_shared<RetryBackend>(be, retry);
}

// ---- sftp: (src/backend/sftp_backend.h; docs/backends.md) -----------------------------------
std::shared_ptr<Backend> MakeSftpBackend(const std::string& location) {
  SftpOptions opts;
  ApplyBackendOptions("sftp", [&](const std::string& key, const std::string& value) {
    if (key == "command") opts.command = value;
    else if (key == "args") opts.args = value;
    else if (key == "connections") opts.connections = static_cast<int>(ParseCount(value, "sftp.connections", 1, 128));
    else return false;
    return true;
  });
  CheckTlsFiles();
  return Decorate(std::make_shared<SftpBackend>(ParseSftpLocation(location), opts));
}
// ---- end of sftp: ----------------------------------------------------------------------------

}  // namespace

std::shared_ptr<Backend> DecorateRemote(std::shared_ptr<Backend> be) {
  RetryOptions retry;
  retry.max_attempts = 8;
  retry.max_delay = std::chrono::milliseconds(8000);
  retry.on_retry = [](const std::string& what, const Error& e, int attempt,
                      std::chrono::milliseconds delay) {
    char secs[32];
    std::snprintf(secs, sizeof(secs), "%.1f", static_cast<double>(delay.count()) / 1000.0);
    Warn(what + " failed (attempt " + std::to_string(attempt) + "): " + e.what() +
         ", retrying in " + secs + " s");
  };
  return Decorate(std::move(be), retry);
}

std::shared_ptr<Backend> MakeBackend(const std::string& location) {
  std::string loc = location;
  if (loc.rfind("local:", 0) == 0) loc = loc.substr(6);
  if (loc.rfind("s3:", 0) == 0) return MakeS3Backend(loc, ApplyBackendOptions);  // cli/backend_s3.h
  if (loc.rfind("sftp:", 0) == 0) return MakeSftpBackend(loc);
  if (loc.rfind("rest:", 0) == 0 || loc.rfind("rclone:", 0) == 0)
    return MakeRestBackend(loc, ApplyBackendOptions);  // rest: and rclone:, cli/backend_rest.h
  if (loc.rfind("box:", 0) == 0) {  // one SQLite file (docs/box.md): no retries
    std::shared_ptr<Backend> box = std::make_shared<BoxBackend>(loc.substr(4));
    if (const char* kill = std::getenv("HAVEN_DEBUG_KILL_AFTER_OPS"); kill && *kill)
      box = std::make_shared<KillBackend>(box, std::stoull(kill));
    return box;
  }
  for (const char* scheme : {"b2:", "azure:", "gs:", "swift:"}) {
    if (loc.rfind(scheme, 0) == 0)
      Fail(ErrorCode::kUnsupported, std::string("backend \"") + scheme +
                                        "\" is not built into haven: reach it through rclone "
                                        "(rclone:REMOTE:PATH with an rclone remote of that type, "
                                        "docs/backends.md)");
  }
  auto local = std::make_shared<LocalBackend>(loc);
  ApplyBackendOptions("local", [&](const std::string& key, const std::string& value) {
    if (key == "connections") {
      local->set_connections(static_cast<int>(ParseCount(value, "local.connections", 1, 128)));
      return true;
    }
    return false;
  });
  CheckTlsFiles();
  return Decorate(local);
}

namespace {

std::string RunPasswordCommand(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) Fail(ErrorCode::kFatal, "cannot run password command: " + cmd);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  if (rc != 0) Fail(ErrorCode::kFatal, "password command failed: " + cmd);
  return out;
}

std::string FirstLine(std::string s) {
  size_t nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return s;
}

std::string PromptTerminal(const std::string& prompt) {
  int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    Fail(ErrorCode::kFatal, "no password given and no terminal to ask for one: use "
                            "--password-file, --password-command or HAVEN_PASSWORD");
  if (write(fd, prompt.data(), prompt.size()) < 0) {
  }
  struct termios old, noecho;
  bool term = tcgetattr(fd, &old) == 0;
  if (term) {
    noecho = old;
    noecho.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    tcsetattr(fd, TCSAFLUSH, &noecho);
  }
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') line += c;
  if (term) tcsetattr(fd, TCSAFLUSH, &old);
  if (write(fd, "\n", 1) < 0) {
  }
  close(fd);
  return line;
}

// One line of standard input, read a byte at a time so that nothing after it is consumed
// (`printf 'old\nnew\n' | haven key add` reads both passwords; `backup --stdin` keeps the
// data that follows the password).
std::string ReadStdinLine() {
  std::string line;
  char c;
  for (bool first = true;; first = false) {
    ssize_t n = read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      Fail(ErrorCode::kIo, std::string("cannot read password from stdin: ") + std::strerror(errno));
    if (n == 0 && first)
      Fail(ErrorCode::kFatal,
           "no password given: standard input is not a terminal and is empty; use "
           "--password-file, --password-command or HAVEN_PASSWORD");
    if (n == 0 || c == '\n') break;
    line += c;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

// No password source is set: standard input when it is not a terminal (as restic), else a
// prompt on the terminal, asked twice with confirm.
std::string ReadInteractive(const std::string& prompt, bool confirm) {
  if (!isatty(STDIN_FILENO)) {
    if (!Globals().quiet) Warn("reading repository password from stdin");
    return ReadStdinLine();
  }
  std::string pw = PromptTerminal(prompt);
  if (confirm && PromptTerminal("enter password again: ") != pw)
    Fail(ErrorCode::kFatal, "passwords do not match");
  return pw;
}

std::string CheckedPassword(std::string pw) {
  if (pw.empty()) Fail(ErrorCode::kFatal, "an empty password is not allowed");
  return pw;
}

}  // namespace

std::string ReadPasswordFrom(const std::string& file, const std::string& command,
                             const std::string& prompt, bool confirm) {
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) Fail(ErrorCode::kFatal, "cannot read password file " + file);
    std::stringstream ss;
    ss << in.rdbuf();
    return CheckedPassword(FirstLine(ss.str()));
  }
  if (!command.empty()) return CheckedPassword(FirstLine(RunPasswordCommand(command)));
  return CheckedPassword(ReadInteractive(prompt, confirm));
}

namespace {

// Where ReadPassword takes the password from, in restic's order: `value` (a *_PASSWORD
// variable), else `file` / `command` (both empty: standard input or the terminal).
struct PasswordSource {
  std::string value, file, command;
};

PasswordSource FindPasswordSource() {
  const GlobalOptions& g = Globals();
  if (!g.password_file.empty() && !g.password_command.empty())
    Fail(ErrorCode::kInvalidArgument,
         "Password file and command are mutually exclusive options (--password-file, "
         "--password-command)");
  // A flag replaces every environment source (restic 0.14 refuses some of these mixes).
  if (!g.password_command.empty() || !g.password_file.empty())
    return {"", g.password_file, g.password_command};
  for (const char* prefix : {"HAVEN_", "RESTIC_"}) {
    std::string p = prefix;
    std::string cmd = EnvExact(p + "PASSWORD_COMMAND"), file = EnvExact(p + "PASSWORD_FILE");
    if (!cmd.empty() && !file.empty())
      Fail(ErrorCode::kInvalidArgument, "Password file and command are mutually exclusive "
                                        "options (" + p + "PASSWORD_FILE, " + p +
                                        "PASSWORD_COMMAND)");
    if (!cmd.empty() || !file.empty()) return {"", file, cmd};
    if (std::string pw = EnvExact(p + "PASSWORD"); !pw.empty()) return {pw, "", ""};
  }
  return {};
}

}  // namespace

std::string ReadPassword(const std::string& prompt, bool confirm) {
  PasswordSource src = FindPasswordSource();
  if (!src.value.empty()) return src.value;
  return ReadPasswordFrom(src.file, src.command, prompt, confirm);
}

bool PasswordNeedsNoAsking() {
  const PasswordSource src = FindPasswordSource();
  return !src.value.empty() || (!src.file.empty() && src.command.empty());
}

std::string CacheBaseDir() {
  if (!Globals().cache_dir.empty()) return Globals().cache_dir;
  std::string env = Env("CACHE_DIR");
  if (!env.empty()) return env;
  return CacheBackend::DefaultBaseDir();
}

namespace {

// --cleanup-cache: removes the cache folders of repositories not used for 30 days (the
// cache touches its folder on every use), as restic; never the current one.
void CleanupOldCaches(const std::string& base, const std::string& current_id) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(24 * 30);
  size_t removed = 0;
  for (const auto& e : fs::directory_iterator(base, ec)) {
    const std::string name = e.path().filename().string();
    if (name == current_id || !IsValidObjectName(name) || !e.is_directory(ec)) continue;
    auto t = fs::last_write_time(e.path(), ec);
    if (ec || t >= cutoff) continue;
    fs::remove_all(e.path(), ec);
    if (ec) {
      Warn("unable to remove old cache folder " + e.path().string() + ": " + ec.message());
    } else {
      removed++;
    }
  }
  if (removed) Print("removed " + std::to_string(removed) + " old cache folders from " + base);
}

// Tells the cache the repository id (known only now, after the config was decrypted) and
// hands it to the repository, whose indexed form and write sessions tell it about tree
// packs. Returns false when the cache cannot be used (reported; the repository is used
// without it, as restic does).
bool AttachCache(Repository& repo, const std::shared_ptr<CacheBackend>& cache) {
  cache->SetWarningHandler([](const std::string& w) { Warn("warning: " + w); });
  try {
    cache->SetRepositoryId(repo.config().id);
  } catch (const Error& e) {
    Warn(std::string("unable to open cache: ") + e.what());
    return false;
  }
  repo.set_cache(cache);
  return true;
}

}  // namespace

std::unique_ptr<Repository> OpenFromRepository(const FromOptions& o, const std::string& for_what) {
  if (!o.repo.empty() && !o.repository_file.empty())
    Fail(ErrorCode::kInvalidArgument,
         "Options --from-repo and --from-repository-file are mutually exclusive");
  std::string loc = o.repo, file = o.repository_file;
  if (loc.empty() && file.empty()) {
    loc = Env("FROM_REPOSITORY");
    if (loc.empty()) file = Env("FROM_REPOSITORY_FILE");
  }
  if (loc.empty() && !file.empty()) loc = LocationFromFile(file);
  if (loc.empty())
    Fail(ErrorCode::kInvalidArgument,
         "Please specify the source repository location (--from-repo or "
         "--from-repository-file)" + for_what);
  auto be = MakeBackend(loc);
  if (!be->Exists())
    Fail(ErrorCode::kNoRepository, "source repository " + be->Location() +
                                         " does not exist: unable to open config file");
  std::string pw, pfile = o.password_file, pcmd = o.password_command;
  if (pfile.empty() && pcmd.empty()) {
    pfile = Env("FROM_PASSWORD_FILE");
    pcmd = Env("FROM_PASSWORD_COMMAND");
    if (pfile.empty() && pcmd.empty()) pw = Env("FROM_PASSWORD");
  }
  if (pw.empty())
    pw = ReadPasswordFrom(pfile, pcmd, "enter password for source repository: ", false);
  const std::string hint = o.key_hint.empty() ? Env("FROM_KEY_HINT") : o.key_hint;
  auto src = Repository::Open(be, pw, Jobs(), hint);
  src->set_warn([](const std::string& w) { Warn(w); });
  return src;
}

std::unique_ptr<Repository> OpenRepository(const OpenOptions& opts) {
  std::string loc = RepoLocation();
  auto be = MakeBackend(loc);
  // restic's check (a HEAD on S3), before the password is asked for, so that nobody types
  // a password for a repository that is not there. When nothing is asked, remote storage
  // skips it: Repository::Open reads the config anyway and says the same (kNoRepository,
  // same words) one round trip sooner.
  if (!(be->RoundTrips() && PasswordNeedsNoAsking()) && !be->Exists())
    Fail(ErrorCode::kNoRepository,
         "repository " + be->Location() + " does not exist: unable to open config file");
  std::shared_ptr<CacheBackend> cache;
  std::string dir;
  if (opts.use_cache && !Globals().no_cache) {
    dir = opts.cache_base ? opts.cache_base(*be) : CacheBaseDir();
    if (dir.empty() && !opts.cache_base)
      Warn("unable to locate cache directory (set --cache-dir or HAVEN_CACHE_DIR)");
  }
  if (opts.prefetch_index && be->RoundTrips()) {
    // The repository's cache folder is known only once the config is decrypted: a file
    // any repository's cache under `dir` holds is this one's (names are content hashes).
    // Snapshot files too: every command that loads the index loads snapshots (one round
    // trip per file, after the lock, otherwise).
    std::vector<IndexPrefetchBackend::Kind> kinds;
    for (FileType t : {FileType::kIndex, FileType::kSnapshot})
      kinds.push_back({t, dir.empty() ? nullptr : CacheBackend::HeldUnder(dir, t)});
    be = std::make_shared<IndexPrefetchBackend>(be, std::move(kinds));
  }
  if (!dir.empty()) {
    cache = std::make_shared<CacheBackend>(be, dir);
    be = cache;
  }
  // Same repository state, but every write (other than the lock) is discarded.
  if (opts.dry_run) be = std::make_shared<DryRunBackend>(be);
  std::string hint = Globals().key_hint.empty() ? Env("KEY_HINT") : Globals().key_hint;
  auto repo = Repository::Open(be, ReadPassword(), Jobs(), hint);
  repo->set_warn([](const std::string& w) { Warn(w); });
  if (cache) AttachCache(*repo, cache);
  if (cache && !opts.cache_base && Globals().cleanup_cache)
    CleanupOldCaches(CacheBaseDir(), repo->config().id);
  // A bad --pack-size or --compression is refused here, by every command, as before the
  // write options moved to the commands that write.
  GlobalWriteOptions();
  return repo;
}

WriteOptions GlobalWriteOptions() {
  WriteOptions w;
  std::string pack = Globals().pack_size.empty() ? Env("PACK_SIZE") : Globals().pack_size;
  if (!pack.empty())
    w.pack_size = ParseCount(pack, "--pack-size (MiB)", WriteOptions::kMinPackSize >> 20,
                             WriteOptions::kMaxPackSize >> 20)
                  << 20;
  std::string comp = Globals().compression.empty() ? Env("COMPRESSION") : Globals().compression;
  if (!comp.empty()) w.compression = ParseCompression(comp);
  return w;
}

std::string ScannerCacheDir() {
  if (Globals().no_cache) return "";
  std::string base = CacheBaseDir();
  return base.empty() ? "" : base + "/scanner";
}

std::unique_ptr<Lock> LockRepository(Repository& repo, bool exclusive) {
  if (Globals().no_lock) return nullptr;
  return Lock::Acquire(repo, exclusive);
}

std::unique_ptr<Lock> LockRepositoryOverlapped(Repository& repo, bool exclusive) {
  if (Globals().no_lock) return nullptr;
  return Lock::AcquireOverlapped(repo, exclusive);
}

std::unique_ptr<EarlyIndex> StartEarlyIndex(Repository& repo,
                                            std::function<void(IndexedRepository&)> then) {
  if (!repo.backend().RoundTrips()) return nullptr;
  return std::make_unique<EarlyIndex>(repo, std::move(then));
}

ReadOnlyStart LockAndLoadForReading(Repository& repo) {
  ReadOnlyStart st;
  auto early = StartEarlyIndex(repo);
  st.lock = LockRepositoryOverlapped(repo, false);
  st.snapshots = LoadSnapshotsThenConfirm(
      repo, st.lock, [&] { st.index = EarlyIndex::LoadWith(early.get(), repo); });
  return st;
}

std::vector<std::pair<FileId, Snapshot>> LoadSnapshotsThenConfirm(
    Repository& repo, const std::unique_ptr<Lock>& lock, const std::function<void()>& also) {
  std::vector<Repository::SnapshotFailure> failures;  // warned after the confirmation
  return ReadThenWarn(lock, [&] { repo.WarnIgnored(failures); }, [&] {
    auto snaps = repo.LoadSnapshots(&failures);
    if (also) also();
    return snaps;
  });
}

void Print(const std::string& s) {
  if (!Globals().quiet) std::cout << s << '\n';
}

void Verbose(const std::string& s) {
  if (Globals().verbose > 0 && !Globals().quiet) std::cout << s << '\n';
}

void Warn(const std::string& s) { std::cerr << s << '\n'; }

void WriteStdout(ByteView b) {
  size_t done = 0;
  while (done < b.size()) {
    const ssize_t w = write(STDOUT_FILENO, b.data() + done, b.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      Fail(ErrorCode::kIo, std::string("write to stdout failed: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(w);
  }
}

std::string FormatBytes(uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (n < 1024) return std::to_string(n) + " B";
  double v = double(n);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3f %s", v, units[u]);
  return buf;
}

std::string FormatTimeShort(const gojson::Timestamp& t) {
  // Shown in the local time zone, as restic does.
  time_t s = static_cast<time_t>(t.sec);
  struct tm tm;
  localtime_r(&s, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string HomeDir() {
  const char* h = std::getenv("HOME");
  if (!h || *h != '/') Fail(ErrorCode::kInvalidArgument, "$HOME is not set (capture needs it)");
  std::string home = h;
  while (home.size() > 1 && home.back() == '/') home.pop_back();
  return home;
}

}  // namespace haven::cli
