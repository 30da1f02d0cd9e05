// An in-memory Backend for tests: same contract as LocalBackend (name checks, immutable
// objects, equal-size re-save accepted, short read -> kCorrupt, missing -> kNotFound).
// Thread-safe (one mutex); List calls fn without holding it, so fn may call back in.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "backend/backend.h"
#include "core/mutex.h"

namespace haven {

class MemBackend : public Backend {
 public:
  explicit MemBackend(std::string location = "mem:") : location_(std::move(location)) {}

  std::string Location() const override { return location_; }
  bool Exists() override;
  // Throws kFatal if a config exists; otherwise there is nothing to create.
  void Create() override;
  void Save(const Handle& h, ByteView data) override;
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override;
  std::optional<uint64_t> Stat(const Handle& h) override;
  // The time of the Save by the backend's clock (set_clock; the system clock by default).
  std::optional<int64_t> ModTime(const Handle& h) override;
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override;
  void Remove(const Handle& h) override;

  // Number of stored objects of all types (for tests).
  size_t Size() const;
  // Tests: the storage's clock (seconds since the epoch), e.g. an hour off the machine's.
  void set_clock(std::function<int64_t()> clock) EXCLUDES(mu_);

 private:
  using Key = std::pair<FileType, std::string>;
  static Key KeyOf(const Handle& h);

  const std::string location_;
  mutable Mutex mu_;
  std::map<Key, Bytes> objects_ GUARDED_BY(mu_);
  std::map<Key, int64_t> mtimes_ GUARDED_BY(mu_);
  std::function<int64_t()> clock_ GUARDED_BY(mu_);
};

}  // namespace haven
