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

#include "archiver/folder_state.h"
#include "core/error.h"
#include "core/thread_pool.h"

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

// Where a walk's results go. The caller's walk hands events straight to its callbacks, in
// walk order and on its own thread; a subfolder walked on another thread collects them
// (and its folder records) here until its parent splices them in at its place.
struct WalkOut {
  const OnFile* on_file = nullptr;  // set: events go straight to the callbacks
  const OnError* on_error = nullptr;
  std::vector<Event> events;    // otherwise collected here
  std::vector<WalkedDir> dirs;  // with keys: every folder walked, children first
  uint64_t not_reported = 0;    // files of known folders (DirKeyWalk::known)

  void File(std::string path, const struct stat& st) {
    if (on_file) {
      (*on_file)(path, st);
    } else {
      events.push_back(Event{std::move(path), st, {}});
    }
  }
  void Error(const std::string& path, std::string message) {
    if (on_error) {
      (*on_error)(path, message);
    } else {
      events.push_back(Event{path, {}, std::move(message)});
    }
  }
  // The results of a subfolder walked on another thread, at its place in walk order.
  void Splice(WalkOut&& sub) {
    for (auto& e : sub.events) {
      if (e.error.empty()) {
        File(std::move(e.path), e.st);
      } else {
        Error(e.path, std::move(e.error));
      }
    }
    for (auto& d : sub.dirs) dirs.push_back(std::move(d));
    not_reported += sub.not_reported;
  }
};

// The settings of one walk and the threads it may still start.
struct Walk {
  const PatternList* excludes;
  SkipDirs* skip;  // (a walk with skip runs on one thread: skipped is not shared)
  const RawId* context;  // null: no keys
  const std::function<bool(const RawId&)>* known;  // null: every file is reported
  SpareThreads spare;
};

// Walks the open directory `fd` (closed here) of `path`: entries are stat'ed and opened
// relative to it, so the kernel resolves one name per entry instead of the whole path.
// Every entry is stat'ed first, subfolders go to spare threads, then the entries are
// reported in name order (a subfolder walked inline at its place). Returns the index of
// this folder's record in out.dirs, or -1 without keys or when it could not be listed.
long WalkDirectory(int fd, const std::string& path, const struct stat& dir_st, Walk& w,
                   WalkOut& out) {
  DIR* d = fdopendir(fd);
  if (!d) {
    out.Error(path, "open directory " + path + ": " + strerror(errno));
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
  auto child_path = [&path](const std::string& n) {
    return path.back() == '/' ? path + n : path + "/" + n;
  };
  struct Entry {
    std::string path;  // only for a subfolder or an entry that failed
    const std::string* name;
    struct stat st;
    std::string error;  // of its lstat
    std::future<WalkOut> later;  // a subfolder walked on a thread of its own
    std::optional<WalkOut> done;  // or walked here while such threads ran
  };
  // Opens subfolder e (nullopt: it failed, reported into `to`).
  auto open_sub = [&](const Entry& e, WalkOut& to) -> std::optional<int> {
    int cfd = openat(dfd, e.name->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cfd < 0) {
      to.Error(e.path, "open directory " + e.path + ": " + strerror(errno));
      return std::nullopt;
    }
    return cfd;
  };
  std::vector<Entry> entries;  // (after open_sub: their threads end before it goes)
  entries.reserve(names.size());
  const bool excluding = w.excludes && !w.excludes->empty();
  for (const auto& n : names) {
    if (excluding && w.excludes->Matches(child_path(n))) continue;
    Entry& e = entries.emplace_back();
    e.name = &n;
    if (fstatat(dfd, n.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) {
      e.path = child_path(n);
      e.error = "lstat " + e.path + ": " + strerror(errno);
    } else if (S_ISDIR(e.st.st_mode)) {
      e.path = child_path(n);
    }
  }
  // Each subfolder goes to a spare thread when one is free. Once one has, the others are
  // walked here right away (into their own results, spliced in order below) rather than
  // after waiting for it: the threads work side by side.
  if (!w.skip) {
    bool threaded = false;
    for (Entry& e : entries) {
      if (!e.error.empty() || !S_ISDIR(e.st.st_mode)) continue;
      e.later = w.spare.TryAsync([&w, &e, &open_sub] {
        WalkOut sub;
        if (auto cfd = open_sub(e, sub)) WalkDirectory(*cfd, e.path, e.st, w, sub);
        return sub;
      });
      if (e.later.valid()) {
        threaded = true;
      } else if (threaded) {
        WalkOut& sub = e.done.emplace();
        if (auto cfd = open_sub(e, sub)) WalkDirectory(*cfd, e.path, e.st, w, sub);
      }
    }
  }
  std::optional<DirKey> key;
  if (w.context) key.emplace(*w.context);
  WalkedDir rec;
  // With w.known, this folder's files wait for its key (to be left out when it is known).
  const bool defer_files = key && w.known;
  std::vector<const Entry*> files_here;
  for (Entry& e : entries) {
    if (!e.error.empty()) {
      out.Error(e.path, std::move(e.error));
      rec.complete = false;
      continue;
    }
    if (key) key->AddEntry(*e.name, e.st);
    if (S_ISREG(e.st.st_mode)) {
      rec.files++;
      rec.bytes += static_cast<uint64_t>(e.st.st_size);
      if (defer_files) {
        files_here.push_back(&e);
      } else {
        out.File(child_path(*e.name), e.st);
      }
      continue;
    }
    if (!S_ISDIR(e.st.st_mode)) continue;
    rec.dirs++;
    if (w.skip && w.skip->Has(e.st)) {
      w.skip->skipped.push_back(e.path);
      rec.complete = false;
      continue;
    }
    const size_t before = out.dirs.size();
    if (e.later.valid()) {
      out.Splice(e.later.get());
    } else if (e.done) {
      out.Splice(std::move(*e.done));
    } else if (auto cfd = open_sub(e, out)) {
      WalkDirectory(*cfd, e.path, e.st, w, out);
    }
    // The subfolder's own record comes last among those it added; none: not walked.
    if (out.dirs.size() == before || out.dirs.back().path != e.path) {
      rec.complete = false;
    } else if (key) {
      const WalkedDir& c = out.dirs.back();
      key->AddSubdirKey(c.key);
      rec.complete = rec.complete && c.complete;
      rec.files += c.files;
      rec.bytes += c.bytes;
      rec.dirs += c.dirs;
    }
  }
  closedir(d);
  if (!key) return -1;
  rec.path = path;
  rec.st = dir_st;
  rec.key = key->Finish();
  if (defer_files) {
    if (rec.complete && (*w.known)(rec.key)) {
      out.not_reported += files_here.size();
    } else {
      for (const Entry* e : files_here) out.File(child_path(*e->name), e->st);
    }
  }
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
  Walk w{excludes, skip, keys ? &keys->context : nullptr,
         keys && keys->known ? &keys->known : nullptr,
         SpareThreads(skip ? 0 : std::max(0, threads - 1))};
  WalkOut out;
  out.on_file = &on_file;
  out.on_error = &on_error;
  if (keys) out.dirs = std::move(keys->dirs);
  WalkDirectory(fd, path, st, w, out);
  if (keys) {
    keys->dirs = std::move(out.dirs);
    keys->files_not_reported += out.not_reported;
  }
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

std::string ReadWholeFile(const std::string& path, struct stat* after, uint64_t size_hint) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) Fail(ErrorCode::kIo, "open " + path + ": " + strerror(errno));
  auto fail = [&](const char* what) {
    int e = errno;
    close(fd);
    Fail(ErrorCode::kIo, std::string(what) + " " + path + ": " + strerror(e));
  };
  struct stat st;
  // Without a hint, one fstat sizes the buffer (before the read, unless *after is asked for).
  if (size_hint == 0 && !after && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    size_hint = static_cast<uint64_t>(st.st_size);
  std::string buf;
  bool stat_taken = false;
  auto read_some = [&](char* to, size_t n) {
    ssize_t got;
    do {
      got = read(fd, to, n);
    } while (got < 0 && errno == EINTR);
    if (got < 0) fail("read");
    return static_cast<size_t>(got);
  };
  // Reads go straight into the result: what is left of the expected size and one byte (a
  // file that grew shows it), or, past it or without a hint, as much again as was read (the
  // result grows by doubling). A short read that the stat cannot end is followed by a probe
  // into a small buffer for the end of the file, not by a growth of the result (which would
  // copy a large file once more).
  auto next_chunk = [&]() -> size_t {
    if (size_hint > 0 && buf.size() <= size_hint) return static_cast<size_t>(size_hint + 1 - buf.size());
    return std::max<size_t>(buf.size(), 1 << 16);
  };
  size_t chunk = next_chunk();
  for (;;) {
    const size_t old = buf.size();
    buf.resize(old + chunk);
    const size_t n = read_some(buf.data() + old, chunk);
    buf.resize(old + n);
    if (n == 0) break;
    if (n == chunk) {  // more may follow
      chunk = next_chunk();
      continue;
    }
    // A short read at the expected size is the end when the stat agrees (no second read).
    if (after && buf.size() == size_hint) {
      if (fstat(fd, after) != 0) fail("stat");
      stat_taken = S_ISREG(after->st_mode) && static_cast<uint64_t>(after->st_size) == buf.size();
      if (stat_taken) break;
    }
    char probe[4096];
    const size_t more = read_some(probe, sizeof probe);
    if (more == 0) break;
    buf.append(probe, more);
    chunk = next_chunk();
  }
  if (after && !stat_taken && fstat(fd, after) != 0) fail("stat");
  close(fd);
  return buf;
}

}  // namespace haven::capture
