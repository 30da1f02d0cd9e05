// A debug decorator for crash tests: after `ops` completed mutating calls (Save and
// Remove of anything but lock files) the process sends itself SIGKILL at the start of
// the next one, so that call never reaches the inner backend. The CLI installs it when
// HAVEN_DEBUG_KILL_AFTER_OPS=N is set (docs/cli.md, tests/integration/prune_kill.sh).
// Lock files are not counted so that N points at the same step of a command however
// often its lock is refreshed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "backend/backend.h"

namespace haven {

class KillBackend : public Backend {
 public:
  KillBackend(std::shared_ptr<Backend> inner, uint64_t ops) : inner_(std::move(inner)), ops_(ops) {}

  std::string Location() const override { return inner_->Location(); }
  bool Exists() override { return inner_->Exists(); }
  void Create() override { inner_->Create(); }
  void Save(const Handle& h, ByteView data) override;
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override {
    return inner_->Load(h, offset, length);
  }
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override {
    inner_->LoadInto(h, offset, out);
  }
  std::optional<uint64_t> Stat(const Handle& h) override { return inner_->Stat(h); }
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override {
    inner_->List(t, fn);
  }
  void Remove(const Handle& h) override;
  int Connections() const override { return inner_->Connections(); }
  size_t RemoveStaleTempFiles(int64_t min_age_seconds) override {
    return inner_->RemoveStaleTempFiles(min_age_seconds);
  }

 private:
  void Count(const Handle& h);
  std::shared_ptr<Backend> inner_;
  const uint64_t ops_;
  std::atomic<uint64_t> done_{0};
};

}  // namespace haven
