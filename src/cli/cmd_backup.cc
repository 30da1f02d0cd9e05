#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <thread>

#include "archiver/archiver.h"
#include "archiver/scanner.h"
#include "cli/common.h"
#include "cli/restic_format.h"
#include "cli/snapshot_filter.h"
#include "cli/progress_reporter.h"
#include "core/error.h"
#include "core/mutex.h"
#include "core/timings.h"
#include "repo/gojson.h"

namespace haven::cli {

namespace {
struct BackupCmd {
  std::vector<std::string> paths;
  std::vector<std::string> excludes;
  std::vector<std::string> exclude_files;
  std::vector<std::string> iexcludes;
  std::vector<std::string> iexclude_files;
  std::vector<std::string> exclude_if_present;
  bool exclude_caches = false;
  std::string exclude_larger_than;
  bool one_file_system = false;
  std::vector<std::string> files_from;
  std::vector<std::string> files_from_verbatim;
  std::vector<std::string> files_from_raw;
  bool ignore_ctime = false;
  bool ignore_inode = false;
  std::string time;
  bool stdin_mode = false;
  std::string stdin_filename = "stdin";
  std::vector<std::string> tags;
  std::string host;
  std::string parent;
  bool force = false;
  bool dry_run = false;
  bool with_atime = false;
  bool skip_if_unchanged = false;
};

std::vector<std::string> ReadFilesFrom(const std::string& file) {
  std::ifstream in(file);
  if (file == "-") {
    std::vector<std::string> out;
    std::string line;
    while (std::getline(std::cin, line))
      if (!line.empty() && line[0] != '#') out.push_back(line);
    return out;
  }
  if (!in) Fail(ErrorCode::kInvalidArgument, "cannot read --files-from " + file);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    out.push_back(line);
  }
  return out;
}

// All bytes of `file`, or of stdin for "-". `flag` names the option in the error.
std::string ReadAllOf(const std::string& file, const char* flag) {
  std::ostringstream ss;
  if (file == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(file, std::ios::binary);
  if (!in)
    Fail(ErrorCode::kInvalidArgument,
         std::string("cannot read ") + flag + " " + file + ": " + std::strerror(errno));
  ss << in.rdbuf();
  if (in.bad())
    Fail(ErrorCode::kInvalidArgument, std::string("cannot read ") + flag + " " + file);
  return ss.str();
}

// restic's --files-from-verbatim: one path per line (a trailing '\r' is dropped, as Go's
// line scanner does), empty lines skipped, nothing else: no trimming, comments or globs.
// A UTF-8 byte order mark at the start of a file is dropped.
std::vector<std::string> ReadFilesFromVerbatim(const std::string& file) {
  std::string data = ReadAllOf(file, "--files-from-verbatim");
  if (file != "-" && data.starts_with("\xef\xbb\xbf")) data.erase(0, 3);
  std::vector<std::string> out;
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    std::string line = data.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) out.push_back(std::move(line));
    start = end + 1;
  }
  return out;
}

// restic's --files-from-raw: each path ends in a NUL byte, taken as it is.
std::vector<std::string> ReadFilesFromRaw(const std::string& file) {
  std::string data = ReadAllOf(file, "--files-from-raw");
  std::vector<std::string> out;
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\0', start);
    if (end == std::string::npos)
      Fail(ErrorCode::kInvalidArgument,
           "--files-from-raw " + file + ": trailing zero byte missing");
    if (end == start)
      Fail(ErrorCode::kInvalidArgument, "--files-from-raw " + file + ": empty filename in listing");
    out.push_back(data.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Reads exactly `n` digits (or 1..n when !fixed) from s at i, as Go's time.Parse does.
std::optional<int> TimeField(const std::string& s, size_t& i, size_t n, bool fixed) {
  size_t k = 0;
  int v = 0;
  while (k < n && i + k < s.size() && s[i + k] >= '0' && s[i + k] <= '9') {
    v = v * 10 + (s[i + k] - '0');
    ++k;
  }
  if (k == 0 || (fixed && k != n)) return std::nullopt;
  i += k;
  return v;
}

// --time: "YYYY-MM-DD HH:MM:SS" (Go's layout "2006-01-02 15:04:05": the hour may have one
// digit, a fraction of a second may follow) in the local time zone.
gojson::Timestamp ParseBackupTime(const std::string& s) {
  auto bad = [&](const std::string& why) {
    Fail(ErrorCode::kInvalidArgument,
         "error in time option: parsing time \"" + s + "\" as \"2006-01-02 15:04:05\": " + why);
  };
  size_t i = 0;
  auto field = [&](size_t n, bool fixed, char sep) -> int {
    auto v = TimeField(s, i, n, fixed);
    if (!v) bad("expected YYYY-MM-DD HH:MM:SS");
    if (sep) {
      if (i >= s.size() || s[i] != sep) bad("expected YYYY-MM-DD HH:MM:SS");
      ++i;
    }
    return *v;
  };
  int year = field(4, true, '-');
  int month = field(2, true, '-');
  int day = field(2, true, ' ');
  int hour = field(2, false, ':');
  int min = field(2, true, ':');
  int sec = field(2, true, 0);
  int32_t nsec = 0;
  if (i + 1 < s.size() && (s[i] == '.' || s[i] == ',') && s[i + 1] >= '0' && s[i + 1] <= '9') {
    ++i;
    int digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (digits < 9) nsec = nsec * 10 + (s[i] - '0');
      ++digits;
      ++i;
    }
    for (int d = digits; d < 9; ++d) nsec *= 10;
  }
  if (i != s.size()) bad("extra text: \"" + s.substr(i) + "\"");
  if (month < 1 || month > 12) bad("month out of range");
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  int mdays = kDays[month - 1] + (month == 2 && leap ? 1 : 0);
  if (day < 1 || day > mdays) bad("day out of range");
  if (hour > 23) bad("hour out of range");
  if (min > 59) bad("minute out of range");
  if (sec > 59) bad("second out of range");
  struct tm tm {};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  tm.tm_isdst = -1;
  errno = 0;
  time_t t = mktime(&tm);
  if (t == static_cast<time_t>(-1) && errno != 0) bad("not a time of the local time zone");
  return gojson::LocalTime(static_cast<int64_t>(t), nsec);
}


// restic 0.14's -vv line for a file or directory done (internal/ui/backup/text.go).
// **≠** "stored" is the size before compression (haven does not know a blob's stored size
// here), and "metadata" the tree's plain size.
std::string ItemLine(const BackupItem& it) {
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%.3f", it.seconds);
  switch (it.action) {
    case BackupItem::Action::kUnchanged:
      return "unchanged " + it.item;
    case BackupItem::Action::kNew:
      if (it.dir)
        return "new       " + it.item + ", saved in " + secs + "s (" + ResticBytes(0) + " added, " +
               ResticBytes(0) + " stored, " + ResticBytes(it.tree_added) + " metadata)";
      return "new       " + it.item + ", saved in " + secs + "s (" + ResticBytes(it.data_added) +
             " added)";
    case BackupItem::Action::kModified:
      if (it.dir)
        return "modified  " + it.item + ", saved in " + secs + "s (" + ResticBytes(0) + " added, " +
               ResticBytes(0) + " stored, " + ResticBytes(it.tree_added) + " metadata)";
      return "modified  " + it.item + ", saved in " + secs + "s (" + ResticBytes(it.data_added) +
             " added, " + ResticBytes(it.data_added) + " stored)";
  }
  return {};
}

// Go's encoding/json form of a float64 (shortest, no exponent in this range).
std::string JsonFloat(double v) {
  if (v == 0) return "0";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
  return std::string(buf, ec == std::errc() ? end : buf);
}

// restic 0.14's {"message_type":"verbose_status",...} for a file or directory done.
std::string ItemJson(const BackupItem& it) {
  const char* action = it.action == BackupItem::Action::kNew         ? "new"
                       : it.action == BackupItem::Action::kUnchanged ? "unchanged"
                                                                     : "modified";
  bool unchanged = it.action == BackupItem::Action::kUnchanged;
  uint64_t data = unchanged || it.dir ? 0 : it.data_added;
  uint64_t meta = unchanged || !it.dir ? 0 : it.tree_added;
  std::string out = "{\"message_type\":\"verbose_status\",\"action\":\"";
  out += action;
  out += "\",\"item\":";
  gojson::AppendString(out, it.item);
  out += ",\"duration\":" + JsonFloat(unchanged ? 0 : it.seconds);
  out += ",\"data_size\":" + std::to_string(data);
  out += ",\"data_size_in_repo\":" + std::to_string(data);
  out += ",\"metadata_size\":" + std::to_string(meta);
  out += ",\"metadata_size_in_repo\":" + std::to_string(meta);
  out += ",\"total_files\":0}\n";
  return out;
}

void SplitTags(const std::vector<std::string>& in, std::vector<std::string>& out) {
  for (const std::string& t : in) {
    size_t start = 0;
    while (start <= t.size()) {
      size_t end = t.find(',', start);
      if (end == std::string::npos) end = t.size();
      if (end > start) out.push_back(t.substr(start, end - start));
      start = end + 1;
    }
  }
}

// --stdin excludes every --files-from form.
void CheckStdinFlags(const BackupCmd& o) {
  if (!o.stdin_mode) return;
  if (!o.files_from.empty())
    Fail(ErrorCode::kInvalidArgument, "--stdin and --files-from cannot be used together");
  if (!o.files_from_verbatim.empty())
    Fail(ErrorCode::kInvalidArgument, "--stdin and --files-from-verbatim cannot be used together");
  if (!o.files_from_raw.empty())
    Fail(ErrorCode::kInvalidArgument, "--stdin and --files-from-raw cannot be used together");
}

// What is left out: --exclude*, --iexclude*, --exclude-if-present/-caches, size, -x.
void SetExcludes(const BackupCmd& o, BackupOptions& opts) {
  std::vector<std::string> patterns = o.excludes;
  for (const auto& f : o.exclude_files)
    for (auto& p : ReadPatternFile(f)) patterns.push_back(std::move(p));
  opts.exclude_strings = patterns;
  opts.excludes = PatternList(patterns);
  std::vector<std::string> ipatterns;
  for (const auto& p : o.iexcludes) ipatterns.push_back(FoldCase(p));
  for (const auto& f : o.iexclude_files)
    for (auto& p : ReadPatternFile(f)) ipatterns.push_back(FoldCase(p));
  opts.iexcludes = PatternList(ipatterns);
  for (const auto& spec : o.exclude_if_present)
    opts.exclude_if_present.push_back(ParseExcludeIfPresent(spec));
  if (o.exclude_caches) opts.exclude_if_present.push_back(CacheDirTag());
  if (!o.exclude_larger_than.empty() && !o.stdin_mode) {
    opts.exclude_larger_than = ParseSize(o.exclude_larger_than);
    if (!opts.exclude_larger_than)
      Fail(ErrorCode::kInvalidArgument,
           "invalid --exclude-larger-than \"" + o.exclude_larger_than +
               "\": expected a number with an optional suffix b, k, m, g or t");
  }
  opts.one_file_system = o.one_file_system && !o.stdin_mode;
}

// The targets, in restic's order: --files-from, --files-from-verbatim, --files-from-raw,
// then the arguments.
void SetTargets(const BackupCmd& o, BackupOptions& opts) {
  for (const auto& f : o.files_from)
    for (auto& p : ReadFilesFrom(f)) opts.targets.push_back(std::move(p));
  for (const auto& f : o.files_from_verbatim)
    for (auto& p : ReadFilesFromVerbatim(f)) opts.targets.push_back(std::move(p));
  for (const auto& f : o.files_from_raw)
    for (auto& p : ReadFilesFromRaw(f)) opts.targets.push_back(std::move(p));
  opts.targets.insert(opts.targets.end(), o.paths.begin(), o.paths.end());
}

// The snapshot's fields and the warning hooks.
void SetSnapshotAndWarnings(const BackupCmd& o, BackupOptions& opts) {
  SplitTags(o.tags, opts.tags);
  opts.host = o.host;
  opts.force = o.force;
  opts.skip_if_unchanged = o.skip_if_unchanged;
  opts.stdin_mode = o.stdin_mode;
  opts.stdin_filename = o.stdin_filename;
  opts.with_atime = o.with_atime;
  opts.jobs = Jobs();
  opts.program_version = std::string("haven ") + kVersion;
  opts.warn = [](const std::string& w) { Warn("error: " + w); };
  if (Globals().json) {
    // restic's error message for scripts (restic 0.17's shape: the error as {"message"}).
    opts.warn_item = [](const std::string& path, const std::string& msg) {
      std::string j = "{\"message_type\":\"error\",\"error\":{\"message\":";
      gojson::AppendString(j, msg);
      j += "},\"during\":\"archival\",\"item\":";
      gojson::AppendString(j, path);
      std::fprintf(stderr, "%s}\n", j.c_str());
    };
  }
  opts.notice = [](const std::string& w) { Warn(w); };
}

// As restic: a missing source is skipped with a warning, the rest is saved and the exit
// code is 3 (incomplete snapshot); when none exists, nothing is saved. Returns whether
// one was skipped.
bool KeepExistingTargets(BackupOptions& opts) {
  if (opts.stdin_mode && !opts.targets.empty())
    Fail(ErrorCode::kInvalidArgument, "--stdin was specified and files/dirs were listed as arguments");
  if (!opts.stdin_mode && opts.targets.empty())
    Fail(ErrorCode::kInvalidArgument, "nothing to backup, please specify target files/dirs");
  if (opts.stdin_mode) return false;
  bool skipped_missing = false;
  std::vector<std::string> existing;
  for (std::string& t : opts.targets) {
    struct stat st;
    if (lstat(t.c_str(), &st) == 0) {
      existing.push_back(std::move(t));
    } else {
      int err = errno;
      Warn(err == ENOENT ? t + " does not exist, skipping"
                         : t + ": " + std::strerror(err) + ", skipping");
      skipped_missing = true;
    }
  }
  if (existing.empty())
    Fail(ErrorCode::kInvalidArgument, "all source directories/files do not exist");
  opts.targets = std::move(existing);
  return skipped_missing;
}

// restic's per-item reports: text lines with -vv, JSON verbose_status with -v.
void SetItemReports(BackupOptions& opts, const ProgressReporter& reporter) {
  const bool json = Globals().json;
  if (Globals().quiet || Globals().verbose < (json ? 1 : 2)) return;
  // On a terminal the status line is redrawn after each item line.
  const bool clear = !json && reporter.enabled();
  opts.item_done = [json, clear](const BackupItem& it) {
    std::string line = json ? ItemJson(it) : (clear ? "\r\033[K" : "") + ItemLine(it) + "\n";
    static Mutex mu;
    MutexLock lock(mu);
    std::fputs(line.c_str(), stdout);
  };
}

// RunBackup with the totals scanner beside it (for the progress line).
BackupResult RunWithScanner(WriteSession& session, const BackupOptions& opts, bool dry_run,
                            ProgressCounters& progress, const ProgressReporter& reporter) {
  std::atomic<bool> stop_scan{false};
  std::thread scanner;
  ExcludeRules scan_rules = ExcludeRulesOf(opts);
  if (reporter.enabled() && !opts.stdin_mode)
    scanner = std::thread([&] { ScanTotals(opts.targets, scan_rules, progress, stop_scan); });
  BackupResult r;
  try {
    r = RunBackup(session, opts, dry_run);
  } catch (...) {
    stop_scan = true;
    if (scanner.joinable()) scanner.join();
    throw;
  }
  stop_scan = true;
  if (scanner.joinable()) scanner.join();
  return r;
}

// restic's summary: JSON "summary" message or the text lines.
void PrintSummary(const BackupResult& r, const SaveStats& ss, double secs, bool dry_run) {
  const BackupStats& s = r.stats;
  if (Globals().json) {
    std::printf(
        "{\"message_type\":\"summary\",\"files_new\":%llu,\"files_changed\":%llu,"
        "\"files_unmodified\":%llu,\"dirs_new\":%llu,\"dirs_changed\":%llu,"
        "\"dirs_unmodified\":%llu,\"data_blobs\":%llu,\"tree_blobs\":%llu,"
        "\"data_added\":%llu,\"total_files_processed\":%llu,\"total_bytes_processed\":%llu,"
        "\"total_duration\":%.6f,\"snapshot_id\":\"%s\"}\n",
        (unsigned long long)s.files_new, (unsigned long long)s.files_changed,
        (unsigned long long)s.files_unmodified, (unsigned long long)s.dirs_new,
        (unsigned long long)s.dirs_changed, (unsigned long long)s.dirs_unmodified,
        (unsigned long long)ss.data_blobs.load(), (unsigned long long)ss.tree_blobs.load(),
        (unsigned long long)ss.data_added.load(), (unsigned long long)s.total_files,
        (unsigned long long)s.total_bytes, secs,
        dry_run || r.skipped ? "" : r.snapshot_id.Hex().c_str());
    return;
  }
  if (r.parent) Print("using parent snapshot " + r.parent->Short());
  char line[256];
  std::snprintf(line, sizeof(line), "\nFiles:       %5llu new, %5llu changed, %5llu unmodified",
                (unsigned long long)s.files_new, (unsigned long long)s.files_changed,
                (unsigned long long)s.files_unmodified);
  Print(line);
  std::snprintf(line, sizeof(line), "Dirs:        %5llu new, %5llu changed, %5llu unmodified",
                (unsigned long long)s.dirs_new, (unsigned long long)s.dirs_changed,
                (unsigned long long)s.dirs_unmodified);
  Print(line);
  if (Globals().verbose >= 1) {
    std::snprintf(line, sizeof(line), "Data Blobs:  %5llu new",
                  (unsigned long long)ss.data_blobs.load());
    Verbose(line);
    std::snprintf(line, sizeof(line), "Tree Blobs:  %5llu new",
                  (unsigned long long)ss.tree_blobs.load());
    Verbose(line);
  }
  Print((dry_run ? "Would add to the repository: " : "Added to the repository: ") +
        FormatBytes(ss.data_added.load()) + " (" + FormatBytes(ss.data_added_packed.load()) +
        " stored)");
  std::snprintf(line, sizeof(line), "\nprocessed %llu files, %s in %.2fs",
                (unsigned long long)s.total_files, FormatBytes(s.total_bytes).c_str(), secs);
  Print(line);
  if (dry_run) return;
  if (r.skipped) {
    Print("skipped creating snapshot");  // restic 0.17's words
  } else {
    Print("snapshot " + r.snapshot_id.Short() + " saved");
  }
}

void RunBackupCmd(const BackupCmd& o) {
  auto start = std::chrono::steady_clock::now();
  // Flag values first: a bad one fails before the repository is opened.
  CheckStdinFlags(o);
  BackupOptions opts;
  SetExcludes(o, opts);
  opts.ignore_ctime = o.ignore_ctime;
  opts.ignore_inode = o.ignore_inode;
  if (!o.time.empty()) opts.time = ParseBackupTime(o.time);
  // A dry run reads the repository as it is and discards every write but the lock's.
  OpenOptions open;
  open.dry_run = o.dry_run;
  open.prefetch_index = true;
  auto repo = OpenRepository(open);
  // The lock's check of the other locks runs beside the index listing; confirmed before
  // anything is read or stored.
  auto lock = LockRepositoryOverlapped(*repo, false);
  // The index is read when first needed: not at all when every folder comes from the
  // folder state.
  auto indexed =
      ReadThenConfirm(lock, [&] { return IndexedRepository::Load(*repo, IndexLoad::kOnFirstUse); });
  // After the password (which may come from stdin too, before the list).
  SetTargets(o, opts);
  SetSnapshotAndWarnings(o, opts);
  if (!o.parent.empty()) {
    auto snaps = repo->LoadSnapshots();
    opts.parent = ResolveSnapshot(o.parent, snaps);
  }
  const bool skipped_missing = KeepExistingTargets(opts);
  // The folder state lives beside the repository's cache (none with --no-cache, and none
  // for a dry run, whose trees are never stored).
  if (!o.dry_run && repo->cache() && !repo->cache()->RepoDir().empty())
    opts.folder_state_dir = repo->cache()->RepoDir() + "/backup";
  WriteSession session(*indexed, GlobalWriteOptions());
  ProgressCounters progress;
  opts.progress = &progress;
  ProgressReporter reporter("backup", progress);
  SetItemReports(opts, reporter);
  BackupResult r = RunWithScanner(session, opts, o.dry_run, progress, reporter);
  reporter.Finish();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Timings::PrintIfEnabled("backup", secs);
  PrintSummary(r, session.stats(), secs, o.dry_run);
  if (r.incomplete || skipped_missing) {
    Warn("Warning: at least one source file could not be read");
    g_exit_code = 3;
  }
}
}  // namespace

void RegisterBackup(CLI::App& app) {
  static BackupCmd o;
  auto* cmd = app.add_subcommand("backup", "create a new snapshot of files and directories");
  cmd->add_option("paths", o.paths, "files and directories to back up");
  cmd->add_option("-e,--exclude", o.excludes, "exclude a pattern (repeatable)");
  cmd->add_option("--exclude-file", o.exclude_files, "read exclude patterns from a file");
  cmd->add_option("--iexclude", o.iexcludes,
                  "same as --exclude pattern but ignores the casing of filenames");
  cmd->add_option("--iexclude-file", o.iexclude_files,
                  "same as --exclude-file but ignores casing of filenames in patterns");
  cmd->add_option("--exclude-if-present", o.exclude_if_present,
                  "takes filename[:header], exclude contents of directories containing "
                  "filename (except filename itself) if header of that file is as provided "
                  "(repeatable)");
  cmd->add_flag("--exclude-caches", o.exclude_caches,
                "excludes cache directories that are marked with a CACHEDIR.TAG file");
  cmd->add_option("--exclude-larger-than", o.exclude_larger_than,
                  "max size of the files to be backed up (allowed suffixes: k/K, m/M, g/G, t/T)");
  cmd->add_flag("-x,--one-file-system", o.one_file_system,
                "exclude other file systems, don't cross filesystem boundaries");
  cmd->add_option("--files-from", o.files_from, "read the files to back up from a file");
  cmd->add_option("--files-from-verbatim", o.files_from_verbatim,
                  "read the files to back up from a file, one per line, taken as they are");
  cmd->add_option("--files-from-raw", o.files_from_raw,
                  "read the files to back up from a file, each ended by a NUL byte");
  cmd->add_option("--time", o.time,
                  "time of the backup (ex. '2012-11-01 22:08:41') (default: now)");
  cmd->add_flag("--ignore-inode", o.ignore_inode,
                "ignore inode number changes when checking for modified files");
  cmd->add_flag("--ignore-ctime", o.ignore_ctime,
                "ignore ctime changes when checking for modified files");
  cmd->add_flag("--stdin", o.stdin_mode, "read the file to back up from stdin");
  cmd->add_option("--stdin-filename", o.stdin_filename, "file name for --stdin");
  cmd->add_option("--tag", o.tags, "add tags (comma-separated, repeatable)");
  cmd->add_option("-H,--host", o.host, "host name recorded in the snapshot");
  cmd->add_option("--parent", o.parent, "use this parent snapshot");
  cmd->add_flag("-f,--force", o.force, "re-read all files, do not use a parent");
  cmd->add_flag("-n,--dry-run", o.dry_run, "do not write anything, only show what would be done");
  cmd->add_flag("--skip-if-unchanged", o.skip_if_unchanged,
                "skip snapshot creation if identical to parent snapshot");
  cmd->add_flag("--with-atime", o.with_atime, "store the access time of files and dirs");
  cmd->callback([] { RunBackupCmd(o); });
}

}  // namespace haven::cli
