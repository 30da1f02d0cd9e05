#include "archiver/scanner.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>

#include "archiver/archiver.h"

namespace haven {

namespace {

void ScanDir(const std::string& path, const Excluder* ex, ProgressCounters& c,
             const std::atomic<bool>& stop) {
  DIR* d = opendir(path.c_str());
  if (!d) return;
  int dfd = dirfd(d);
  std::vector<std::string> subdirs;
  uint64_t files = 0, bytes = 0;
  Excluder::DirState dir_state;
  while (struct dirent* de = readdir(d)) {
    if (stop.load(std::memory_order_relaxed)) break;
    std::string name = de->d_name;
    if (name == "." || name == "..") continue;
    std::string child = path == "/" ? "/" + name : path + "/" + name;
    if (ex && ex->by_name() && ex->ExcludedByName(child, path, name, dir_state)) continue;
    struct stat st;
    if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (ex && ex->by_stat() && ex->ExcludedByStat(child, st)) continue;
    if (S_ISDIR(st.st_mode)) {
      subdirs.push_back(std::move(child));
    } else if (S_ISREG(st.st_mode)) {
      files++;
      bytes += static_cast<uint64_t>(st.st_size);
    }
  }
  closedir(d);
  c.AddTotal(files, bytes);
  for (const auto& s : subdirs) {
    if (stop.load(std::memory_order_relaxed)) return;
    ScanDir(s, ex, c, stop);
  }
}

}  // namespace

void ScanTotals(const std::vector<std::string>& targets, const ExcludeRules& rules,
                ProgressCounters& counters, const std::atomic<bool>& stop) {
  std::vector<std::string> abs;
  for (const auto& t : targets) abs.push_back(AbsoluteTargetPath(t));
  std::unique_ptr<Excluder> ex;
  // Silent: the backup itself reports what the rules run into.
  if (rules.by_name() || rules.by_stat()) ex = std::make_unique<Excluder>(rules, abs, nullptr);
  for (const auto& t : abs) {
    struct stat st;
    if (lstat(t.c_str(), &st) != 0) continue;
    if (ex && ex->by_stat() && ex->ExcludedByStat(t, st)) continue;
    if (S_ISDIR(st.st_mode)) {
      ScanDir(t, ex.get(), counters, stop);
    } else if (S_ISREG(st.st_mode)) {
      counters.AddTotal(1, static_cast<uint64_t>(st.st_size));
    }
  }
  if (!stop) counters.totals_final = true;
}

}  // namespace haven
