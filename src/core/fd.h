// File descriptors: an owning, movable `Fd`, and opening below a directory without ever
// following a symbolic link (restore and apply write into trees that untrusted snapshot
// data describes, so no path string under their target is resolved the usual way).
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <utility>

namespace haven {

// Owns a file descriptor (-1: none). Close() reports the close error; the destructor
// ignores it. Linux releases the descriptor even when close fails: never retried.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.Release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Returns 0 or errno.
  int Close();

 private:
  int fd_ = -1;
};

// Opens `rel` (components separated by '/', each a plain name: no "", "." or "..")
// below the directory `root`, refusing a symbolic link at every component, the last one
// included (ELOOP), and any escape from `root` (EXDEV). Uses openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS) where the kernel has it and walks the components with
// O_NOFOLLOW | O_DIRECTORY otherwise (and for paths longer than PATH_MAX). O_CLOEXEC is
// added. Returns the fd or -1 with errno set.
int OpenBeneath(int root, std::string_view rel, int flags, mode_t mode = 0);

// Tests: make OpenBeneath use its component walk as on a kernel without openat2 (true), or
// find out again (false).
void UseOpenBeneathWalkForTesting(bool walk);

// Splits "a/b/c" into "a/b" and "c" ("" and "c" for a single component).
std::pair<std::string_view, std::string_view> SplitParent(std::string_view rel);

// Raises this process's soft limit of open files to its hard limit (deep trees keep a
// descriptor per level open), once; as Go programs such as restic do at start.
void RaiseOpenFileLimit();

}  // namespace haven
