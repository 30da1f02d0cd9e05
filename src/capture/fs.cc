#include "capture/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <future>
#include <optional>

#include "capture/capture_state.h"
#include "core/error.h"

namespace haven::capture {

namespace {

using OnFile = std::function<void(const std::string&, const struct stat&)>;
using OnError = std::function<void(const std::string&, const std::string&)>;

// What a walk found, in walk order: a regular file (error empty) or a problem.
struct Event {
  std::string path;
  struct stat st;
  std::string error;
};
struct WalkOut {
  std::vector<Event> events;
  std::vector<WalkedDir> dirs;  // with keys: every folder walked, children first
};

// The settings of one walk and the threads it may still start: a subfolder is walked on
// a thread of its own while one is spare (else inline), its results merged in name order.
struct Walk {
  const PatternList* excludes;
  SkipDirs* skip;  // (a walk with skip runs on one thread: skipped is not shared)
  const RawId* context;  // null: no keys
  std::atomic<int> spare{0};
  bool TakeThread() {
    int n = spare.load();
    while (n > 0)
      if (spare.compare_exchange_weak(n, n - 1)) return true;
    return false;
  }
};

void Error(WalkOut& out, const std::string& path, std::string message) {
  out.events.push_back(Event{path, {}, std::move(message)});
}

// Walks the open directory `fd` (closed here) of `path`: entries are stat'ed and opened
// relative to it, so the kernel resolves one name per entry instead of the whole path.
// Appends to `out`; returns the index of this folder's record in out.dirs, or -1 without
// keys or when it could not be listed.
long WalkDirectory(int fd, const std::string& path, const struct stat& dir_st, Walk& w,
                   WalkOut& out) {
  DIR* d = fdopendir(fd);
  if (!d) {
    Error(out, path, "open directory " + path + ": " + strerror(errno));
    close(fd);
    return -1;
  }
  std::vector<std::string> names;
  while (struct dirent* de = readdir(d)) {
    std::string n = de->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  std::sort(names.begin(), names.end());
  const int dfd = dirfd(d);
  struct Entry {
    std::string path;
    const std::string* name;
    struct stat st;
    std::optional<WalkOut> sub;             // a subfolder walked inline
    std::future<WalkOut> later;             // ... or on a thread of its own
    bool failed = false;
    std::string error;  // of its lstat
  };
  std::vector<Entry> entries;
  entries.reserve(names.size());
  WalkedDir rec;
  for (const auto& n : names) {
    std::string child = path.back() == '/' ? path + n : path + "/" + n;
    if (w.excludes && !w.excludes->empty() && w.excludes->Matches(child)) continue;
    Entry& e = entries.emplace_back();
    e.path = std::move(child);
    e.name = &n;
    if (fstatat(dfd, n.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) {
      e.failed = true;
      e.error = "lstat " + e.path + ": " + strerror(errno);
    }
  }
  // The subfolders are walked (some on threads), then every entry's events are appended
  // in name order.
  auto walk_sub = [&w](int cfd, std::string cpath, struct stat cst) {
    WalkOut o;
    WalkDirectory(cfd, cpath, cst, w, o);
    return o;
  };
  for (Entry& e : entries) {
    if (e.failed || !S_ISDIR(e.st.st_mode)) continue;
    if (w.skip && w.skip->Has(e.st)) continue;
    int cfd = openat(dfd, e.name->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cfd < 0) {
      e.failed = true;
      e.sub.emplace();
      Error(*e.sub, e.path, "open directory " + e.path + ": " + strerror(errno));
      continue;
    }
    if (!w.skip && w.TakeThread()) {
      e.later = std::async(std::launch::async, [&w, walk_sub, cfd, p = e.path, st = e.st] {
        struct Give {
          std::atomic<int>& n;
          ~Give() { n++; }
        } give{w.spare};
        return walk_sub(cfd, p, st);
      });
    } else {
      e.sub = walk_sub(cfd, e.path, e.st);
    }
  }
  std::optional<DirKey> key;
  if (w.context) key.emplace(*w.context);
  for (Entry& e : entries) {
    if (e.later.valid()) e.sub = e.later.get();
    if (e.failed && !e.sub) {
      Error(out, e.path, std::move(e.error));
      rec.complete = false;
      continue;
    }
    if (key) key->AddEntry(*e.name, e.st);
    if (S_ISREG(e.st.st_mode)) {
      rec.files++;
      rec.bytes += static_cast<uint64_t>(e.st.st_size);
      out.events.push_back(Event{std::move(e.path), e.st, {}});
      continue;
    }
    if (!S_ISDIR(e.st.st_mode)) continue;
    rec.dirs++;
    if (!e.sub) {  // a folder the walk skips
      if (w.skip) w.skip->skipped.push_back(e.path);
      rec.complete = false;
      continue;
    }
    WalkOut& sub = *e.sub;
    for (auto& ev : sub.events) out.events.push_back(std::move(ev));
    if (e.failed || sub.dirs.empty() || sub.dirs.back().path != e.path) {
      rec.complete = false;  // could not be opened or listed
    } else if (key) {
      const WalkedDir& c = sub.dirs.back();
      key->AddSubdirKey(c.key);
      rec.complete = rec.complete && c.complete;
      rec.files += c.files;
      rec.bytes += c.bytes;
      rec.dirs += c.dirs;
    }
    for (auto& sd : sub.dirs) out.dirs.push_back(std::move(sd));
    e.sub.reset();
  }
  closedir(d);
  if (!key) return -1;
  rec.path = path;
  rec.st = dir_st;
  rec.key = key->Finish();
  out.dirs.push_back(std::move(rec));
  return static_cast<long>(out.dirs.size() - 1);
}

}  // namespace

void WalkRegularFiles(const std::string& path, const PatternList* excludes,
                      const std::function<void(const std::string&, const struct stat&)>& on_file,
                      const std::function<void(const std::string&, const std::string&)>& on_error,
                      SkipDirs* skip, DirKeyWalk* keys, int threads) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    on_error(path, "lstat " + path + ": " + strerror(errno));
    return;
  }
  if (S_ISREG(st.st_mode)) {
    on_file(path, st);
    return;
  }
  if (!S_ISDIR(st.st_mode)) return;
  int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    on_error(path, "open directory " + path + ": " + strerror(errno));
    return;
  }
  Walk w{excludes, skip, keys ? &keys->context : nullptr};
  w.spare = skip ? 0 : std::max(0, threads - 1);
  WalkOut out;
  WalkDirectory(fd, path, st, w, out);
  for (const Event& e : out.events) {
    if (e.error.empty()) {
      on_file(e.path, e.st);
    } else {
      on_error(e.path, e.error);
    }
  }
  if (keys)
    for (auto& d : out.dirs) keys->dirs.push_back(std::move(d));
}

void SkipDirs::Add(const std::string& dir) {
  struct stat st;
  if (dir.empty() || stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
  ids.emplace_back(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
}

bool SkipDirs::Has(const struct stat& st) const {
  for (const auto& [dev, ino] : ids)
    if (dev == static_cast<uint64_t>(st.st_dev) && ino == static_cast<uint64_t>(st.st_ino))
      return true;
  return false;
}

std::string ReadWholeFile(const std::string& path, struct stat* after) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) Fail(ErrorCode::kIo, "open " + path + ": " + strerror(errno));
  std::string buf;
  struct stat st;
  // One fstat per file: before the read to size the buffer, or after it when asked for.
  if (!after && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    buf.reserve(static_cast<size_t>(st.st_size));
  char tmp[1 << 16];
  for (;;) {
    ssize_t n = read(fd, tmp, sizeof(tmp));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      Fail(ErrorCode::kIo, "read " + path + ": " + strerror(e));
    }
    if (n == 0) break;
    buf.append(tmp, static_cast<size_t>(n));
  }
  if (after && fstat(fd, after) != 0) {
    int e = errno;
    close(fd);
    Fail(ErrorCode::kIo, "stat " + path + ": " + strerror(e));
  }
  close(fd);
  return buf;
}

}  // namespace haven::capture
