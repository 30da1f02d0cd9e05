#include "backend/spool_pack_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "backend/posix_io.h"
#include "core/error.h"

namespace haven {

std::string SpoolPackStream::Dir() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? std::string(tmp) : std::string("/tmp");
}

SpoolPackStream::SpoolPackStream(Backend& owner) : owner_(owner), dir_(Dir()) {
  int fd = posix::OpenNoIntr(dir_, O_TMPFILE | O_RDWR, 0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    // A file system without O_TMPFILE: a random name, unlinked at once.
    const std::string path = dir_ + "/haven-pack-" + posix::RandomSuffix();
    fd = posix::OpenNoIntr(path, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd >= 0) ::unlink(path.c_str());
  }
  if (fd < 0)
    Fail(ErrorCode::kIo, "cannot create a temp file for a pack in " + dir_ + ": " +
                             std::strerror(errno) + " (set TMPDIR to a writable folder)");
  fd_ = Fd(fd);
}

void SpoolPackStream::Append(ByteView data) {
  if (int err = posix::WriteAll(fd_.get(), data))
    Fail(ErrorCode::kIo, "cannot write a pack's temp file in " + dir_ + ": " + std::strerror(err));
  size_ += data.size();
}

void SpoolPackStream::Commit(const std::string& name) {
  const int fd = fd_.get();
  const Handle h{FileType::kPack, name};
  const std::string where =
      "save " + h.ToString() + ": cannot read its temp file in " + dir_ + ": ";
  SaveSource src{.size = size_, .read = [fd, &where](uint64_t offset, std::span<uint8_t> out) {
                   if (int err = posix::ReadAt(fd, out.data(), out.size(), offset))
                     Fail(ErrorCode::kIo, where + (err < 0 ? "it is shorter than written"
                                                           : std::strerror(err)));
                 },
                 .named_by_content = true};  // Commit's contract: `name` is its SHA-256
  owner_.SaveFrom(h, src);
}

}  // namespace haven
