// Small POSIX helpers shared by the file-based backends (local, cache): EINTR-safe open,
// fsync, full writes and positional reads, and a random temp-file suffix (the owning fd
// is core/fd.h's Fd).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "core/bytes.h"
#include "core/fd.h"

namespace haven::posix {

// open(2) with O_CLOEXEC, retried on EINTR. Returns the fd or -1 (errno set).
int OpenNoIntr(const std::string& path, int flags, mode_t mode = 0);
// fsync(2) retried on EINTR. Returns 0 or -1 (errno set).
int FsyncNoIntr(int fd);
// Writes all of data. Returns 0 or the errno of the failed write (EIO when no progress).
int WriteAll(int fd, ByteView data);
// Reads exactly `len` bytes at `off` into out; returns 0, errno, or -1 for a short read.
int ReadAt(int fd, uint8_t* out, uint64_t len, uint64_t off);
// 16 hex characters from getrandom (a counter/time/pid mix if it is unavailable; callers
// create with O_EXCL, so this only avoids retries).
std::string RandomSuffix();

// The owning descriptor is core's (core/fd.h).
using ::haven::Fd;

}  // namespace haven::posix
