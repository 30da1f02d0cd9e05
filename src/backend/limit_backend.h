// restic's --limit-upload / --limit-download: a decorator that keeps the bytes saved and
// the bytes loaded under a rate (KiB/s, 0 = unlimited) with one token bucket per
// direction, shared by every thread (backend/rate_limiter.h).
// Uploads are paid as their bytes go out: a transport that sends a body piece by piece on
// the caller's thread (HttpClient, SFTP) pays each piece just before sending it, and what
// no transport paid (a local file, rclone's multiplexed pipe) is paid after the Save
// succeeded. A Save that fails before sending (refused connection) costs no wait, so the
// retries of a pack to a server that went away are not each held back by the limit.
// Downloads are paid as pieces arrive (LoadStream) or after the load (Load, LoadInto).
#pragma once

#include <memory>

#include "backend/forwarding_backend.h"
#include "backend/rate_limiter.h"

namespace haven {

class LimitBackend : public ForwardingBackend {
 public:
  // Rates in KiB/s (restic's unit); 0 leaves that direction unlimited.
  LimitBackend(std::shared_ptr<Backend> inner, uint64_t upload_kib, uint64_t download_kib);

  void Save(const Handle& h, ByteView data) override;
  void SaveFrom(const Handle& h, const SaveSource& src) override;
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override;
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override;
  void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                  const std::function<void(ByteView)>& sink) override;

 private:
  std::unique_ptr<RateLimiter> up_, down_;
};

}  // namespace haven
