// A Backend decorator for tests that injects faults into calls to another Backend and
// counts calls per kind (RELIABILITY.md: error, truncate, flip, fail-once, list-fails,
// kill after N calls).
//
// Every call gets a 1-based sequence number in arrival order, counted whether or not it
// fails. Faults are rules: each matches some calls and fires `times` times (kAlways: every
// matching call). Rules may be added or cleared while other threads use the backend.
// Injected errors are haven::Error with the requested code (kIo by default) and a message
// that starts with "injected fault".
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/error.h"
#include "core/mutex.h"

namespace haven {

class FaultBackend : public Backend {
 public:
  enum class Op { kExists, kCreate, kSave, kLoad, kStat, kList, kRemove };
  static constexpr int kAlways = -1;

  explicit FaultBackend(std::shared_ptr<Backend> inner);

  // The next `times` calls of kind `op` (restricted to handles or listings of `type` when
  // given) throw Error(code, retryable) without reaching the inner backend.
  void FailNext(Op op, int times = 1, bool retryable = true, ErrorCode code = ErrorCode::kIo,
                std::optional<FileType> type = std::nullopt);
  // The next `times` calls of kind `op` reach the inner backend, which completes them, and
  // then throw a retryable kIo error: a reply lost after the work was done.
  void FailNextAfterInner(Op op, int times = 1);
  // The call with sequence number `seq` throws kIo without reaching the inner backend.
  void FailNth(uint64_t seq, bool retryable = true);
  // Every call with sequence number >= `seq` throws a permanent kIo error: a process or
  // connection that died after seq - 1 calls.
  void FailFrom(uint64_t seq);
  // Successful loads return at most their first `keep` bytes, silently.
  void TruncateLoads(uint64_t keep, int times = kAlways,
                     std::optional<FileType> type = std::nullopt);
  // Successful loads come back with the byte at `index` of the returned buffer inverted
  // (negative: from the end, -1 = last byte). Buffers too short are left alone but still
  // use up one of `times`.
  void FlipLoadedByte(int64_t index, int times = kAlways,
                      std::optional<FileType> type = std::nullopt);
  // The next `times` listings deliver at most `entries` entries, then throw kIo.
  void FailListAfter(uint64_t entries, int times = 1, bool retryable = true);
  // Called at the start of every call, before any rule, with its kind and sequence number,
  // outside any lock. It may throw (the error propagates) or end the process.
  void SetHook(std::function<void(Op, uint64_t seq)> hook);
  // Removes all rules and the hook; counters are kept.
  void ClearFaults();

  uint64_t Count(Op op) const { return counts_[static_cast<int>(op)].load(); }
  uint64_t TotalCalls() const { return total_.load(); }
  uint64_t saves() const { return Count(Op::kSave); }
  uint64_t loads() const { return Count(Op::kLoad); }
  uint64_t lists() const { return Count(Op::kList); }
  uint64_t removes() const { return Count(Op::kRemove); }
  uint64_t stats() const { return Count(Op::kStat); }

  std::string Location() const override { return inner_->Location(); }
  bool Exists() override;
  void Create() override;
  void Save(const Handle& h, ByteView data) override;
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override;
  std::optional<uint64_t> Stat(const Handle& h) override;
  std::optional<int64_t> ModTime(const Handle& h) override { return inner_->ModTime(h); }
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override;
  void Remove(const Handle& h) override;
  int Connections() const override { return inner_->Connections(); }
  bool RoundTrips() const override { return inner_->RoundTrips(); }
  size_t RemoveStaleTempFiles(int64_t min_age_seconds) override {
    return inner_->RemoveStaleTempFiles(min_age_seconds);
  }
  size_t CountStaleTempFiles(int64_t min_age_seconds) override {
    return inner_->CountStaleTempFiles(min_age_seconds);
  }

 private:
  enum class Kind { kFailBefore, kFailAfter, kFailNth, kFailFrom, kTruncate, kFlip, kListAfter };
  struct Rule {
    Kind kind;
    Op op;
    int times;  // remaining firings; kAlways = unlimited
    bool retryable;
    ErrorCode code;
    std::optional<FileType> type;
    uint64_t param;  // sequence number, bytes kept or list entries
    int64_t index;   // byte to flip
  };

  // Counts the call, runs the hook, then throws if a sequence rule or a kFailBefore rule
  // fires. kFailAfter rules are checked by MaybeFailAfter once the inner call returned.
  void Begin(Op op, std::optional<FileType> type) EXCLUDES(mu_);
  void MaybeFailAfter(Op op, std::optional<FileType> type);
  // Finds the first rule of `kind` matching (op, type), uses up one firing and returns it.
  std::optional<Rule> Take(Kind kind, Op op, std::optional<FileType> type) EXCLUDES(mu_);
  void AddRule(const Rule& r) EXCLUDES(mu_);
  [[noreturn]] static void Throw(const Rule& r, Op op, const std::string& detail);

  const std::shared_ptr<Backend> inner_;
  std::array<std::atomic<uint64_t>, 7> counts_{};
  std::atomic<uint64_t> total_{0};
  mutable Mutex mu_;
  std::vector<Rule> rules_ GUARDED_BY(mu_);
  std::function<void(Op, uint64_t)> hook_ GUARDED_BY(mu_);  // copied out before calling
};

const char* OpName(FaultBackend::Op op);

}  // namespace haven
