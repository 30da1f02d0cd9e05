// A data pack for remote storage spooled to an unnamed temp file while it fills, then
// uploaded from that file by SaveFrom (restic's packer does the same with its temp files):
// a backup or repack over S3, REST, rclone or SFTP holds no 16 MiB pack in memory, only
// the pieces in flight, and the bytes go out in the transport's small pieces.
//
// The file is made with O_TMPFILE in $TMPDIR (else /tmp), so it has no name and vanishes
// with its descriptor whatever happens to the process; where O_TMPFILE is refused it is
// created under a random name and unlinked at once. RetryBackend makes these for backends
// whose requests are round trips, with itself as `owner`, so the commit's SaveFrom is
// retried (and paced by --limit-upload) like any Save.
#pragma once

#include <string>

#include "backend/backend.h"
#include "core/fd.h"

namespace haven {

class SpoolPackStream : public PackStream {
 public:
  // `owner` must outlive the stream. Throws kIo when no temp file can be made.
  explicit SpoolPackStream(Backend& owner);

  void Append(ByteView data) override;
  // owner.SaveFrom(pack `name`, the file's bytes).
  void Commit(const std::string& name) override;

  // The folder the temp files go to: $TMPDIR when set and not empty, else /tmp.
  static std::string Dir();

 private:
  Backend& owner_;
  std::string dir_;
  Fd fd_;
  uint64_t size_ = 0;
};

}  // namespace haven
