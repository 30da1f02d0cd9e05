#include "backend/posix_io.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>

namespace haven::posix {

int OpenNoIntr(const std::string& path, int flags, mode_t mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

int FsyncNoIntr(int fd) {
  int rc;
  do {
    rc = ::fsync(fd);
  } while (rc != 0 && errno == EINTR);
  return rc;
}

int WriteAll(int fd, ByteView data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;  // no progress and no error: do not spin
    done += static_cast<size_t>(n);
  }
  return 0;
}

int ReadAt(int fd, uint8_t* out, uint64_t len, uint64_t off) {
  uint64_t got = 0;
  while (got < len) {
    ssize_t n = ::pread(fd, out + got, len - got, static_cast<off_t>(off + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return -1;
    got += static_cast<uint64_t>(n);
  }
  return 0;
}

std::string RandomSuffix() {
  uint8_t buf[8];
  size_t got = 0;
  while (got < sizeof(buf)) {
    ssize_t n = ::getrandom(buf + got, sizeof(buf) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got < sizeof(buf)) {
    static std::atomic<uint64_t> counter{0};
    uint64_t v = counter.fetch_add(1) ^ (uint64_t(::getpid()) << 40) ^
                 uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    for (size_t i = 0; i < sizeof(buf); ++i) buf[i] = static_cast<uint8_t>(v >> (8 * i));
  }
  return HexEncode(ByteView(buf, sizeof(buf)));
}

}  // namespace haven::posix
