// A debug decorator for crash tests: after `ops` completed mutating calls (Save and
// Remove of anything but lock files) the process sends itself SIGKILL at the start of
// the next one, so that call never reaches the inner backend. The CLI installs it when
// HAVEN_DEBUG_KILL_AFTER_OPS=N is set (docs/cli.md, tests/integration/prune_kill.sh).
// Lock files are not counted so that N points at the same step of a command however
// often its lock is refreshed. A streamed pack (NewPackStream) counts at its Commit, as
// its Save would: the kill then leaves the pack's temp file, never the pack.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "backend/forwarding_backend.h"

namespace haven {

class KillBackend : public ForwardingBackend {
 public:
  KillBackend(std::shared_ptr<Backend> inner, uint64_t ops)
      : ForwardingBackend(std::move(inner)), ops_(ops) {}

  void Save(const Handle& h, ByteView data) override;
  void SaveFrom(const Handle& h, const SaveSource& src) override;
  void Remove(const Handle& h) override;
  std::unique_ptr<PackStream> NewPackStream() override;

 private:
  void Count(const Handle& h);
  const uint64_t ops_;
  std::atomic<uint64_t> done_{0};
};

}  // namespace haven
