#include "core/fd.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <mutex>

namespace haven {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.Release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

int Fd::Close() {
  if (fd_ < 0) return 0;
  int rc = ::close(fd_);
  fd_ = -1;
  return rc == 0 ? 0 : errno;
}

std::pair<std::string_view, std::string_view> SplitParent(std::string_view rel) {
  size_t slash = rel.rfind('/');
  if (slash == std::string_view::npos) return {std::string_view(), rel};
  return {rel.substr(0, slash), rel.substr(slash + 1)};
}

namespace {

bool PlainName(std::string_view c) { return !c.empty() && c != "." && c != ".."; }

// 0: unknown, 1: openat2 works, -1: not available (ENOSYS, or blocked by a filter).
std::atomic<int> g_openat2{0};

int OpenByWalk(int root, std::string_view rel, int flags, mode_t mode) {
  Fd cur;
  int at = root;
  size_t pos = 0;
  for (;;) {
    size_t slash = rel.find('/', pos);
    std::string name(rel.substr(pos, slash == std::string_view::npos ? rel.npos : slash - pos));
    if (!PlainName(name)) {
      errno = EINVAL;
      return -1;
    }
    if (slash == std::string_view::npos)
      return openat(at, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
    int next = openat(at, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      if (errno == ENOTDIR) {
        // A symbolic link (O_PATH|O_NOFOLLOW on a link gives ENOTDIR with O_DIRECTORY).
        struct stat st;
        if (fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
          errno = ELOOP;
      }
      return -1;
    }
    cur = Fd(next);
    at = cur.get();
    pos = slash + 1;
  }
}

}  // namespace

int OpenBeneath(int root, std::string_view rel, int flags, mode_t mode) {
  if (rel.empty()) {
    errno = EINVAL;
    return -1;
  }
  if (rel.size() < PATH_MAX && g_openat2.load(std::memory_order_relaxed) >= 0) {
    // The components are checked here so that both ways refuse the same names.
    size_t pos = 0;
    for (;;) {
      size_t slash = rel.find('/', pos);
      if (!PlainName(rel.substr(pos, slash == std::string_view::npos ? rel.npos : slash - pos))) {
        errno = EINVAL;
        return -1;
      }
      if (slash == std::string_view::npos) break;
      pos = slash + 1;
    }
    std::string path(rel);
    struct open_how how = {};
    how.flags = static_cast<uint64_t>(flags | O_NOFOLLOW | O_CLOEXEC);
    how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, root, path.c_str(), &how, sizeof(how));
    if (fd >= 0) {
      g_openat2.store(1, std::memory_order_relaxed);
      return static_cast<int>(fd);
    }
    if (errno != ENOSYS && errno != EPERM) return -1;
    if (errno == EPERM && g_openat2.load(std::memory_order_relaxed) == 1) return -1;
    g_openat2.store(-1, std::memory_order_relaxed);  // a seccomp filter, or an old kernel
  }
  return OpenByWalk(root, rel, flags, mode);
}

void UseOpenBeneathWalkForTesting(bool walk) { g_openat2.store(walk ? -1 : 0); }

void RaiseOpenFileLimit() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      setrlimit(RLIMIT_NOFILE, &rl);
    }
  });
}

}  // namespace haven
