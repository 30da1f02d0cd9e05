#include "capture/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace haven::capture {

namespace {

using OnFile = std::function<void(const std::string&, const struct stat&)>;
using OnError = std::function<void(const std::string&, const std::string&)>;

// Walks the open directory `fd` (closed here) of `path`: entries are stat'ed and opened
// relative to it, so the kernel resolves one name per entry instead of the whole path.
void WalkDirectory(int fd, const std::string& path, const PatternList* excludes,
                   const OnFile& on_file, const OnError& on_error, SkipDirs* skip) {
  DIR* d = fdopendir(fd);
  if (!d) {
    on_error(path, "open directory " + path + ": " + strerror(errno));
    close(fd);
    return;
  }
  std::vector<std::string> names;
  while (struct dirent* de = readdir(d)) {
    std::string n = de->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  std::sort(names.begin(), names.end());
  const int dfd = dirfd(d);
  for (const auto& n : names) {
    std::string child = path.back() == '/' ? path + n : path + "/" + n;
    if (excludes && !excludes->empty() && excludes->Matches(child)) continue;
    struct stat st;
    if (fstatat(dfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      on_error(child, "lstat " + child + ": " + strerror(errno));
      continue;
    }
    if (S_ISREG(st.st_mode)) {
      on_file(child, st);
    } else if (S_ISDIR(st.st_mode)) {
      if (skip && skip->Has(st)) {
        skip->skipped.push_back(child);
        continue;
      }
      int cfd = openat(dfd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (cfd < 0) {
        on_error(child, "open directory " + child + ": " + strerror(errno));
        continue;
      }
      WalkDirectory(cfd, child, excludes, on_file, on_error, skip);
    }
  }
  closedir(d);
}

}  // namespace

void WalkRegularFiles(const std::string& path, const PatternList* excludes,
                      const std::function<void(const std::string&, const struct stat&)>& on_file,
                      const std::function<void(const std::string&, const std::string&)>& on_error,
                      SkipDirs* skip) {
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
  WalkDirectory(fd, path, excludes, on_file, on_error, skip);
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
