// Tests only: a decorator that records every load (object, offset, length) and can hold
// each one for a fixed delay, as a high-latency store would, to count the requests a
// command makes and see which of them were in flight at once. Header-only; used by the
// restore, prune, check, range-reader and index-load tests. TrickleBackend (below) streams
// in small pieces; PooledBackend (below) serves requests over a fixed number of
// connections, as an HTTP client's pool does.
//
// A fixed delay alone measures the machine as much as the code: loads a command issues
// together overlap only if the threads that issue them start within the delay, and under
// a sanitizer on two busy cores they may not (CI saw a peak of 1 where 2 were issued at
// once). HoldUntilQuiet(t, quiet) makes the peak a property of the code: each load of type
// t is held, after its delay, until no load of that type has started for `quiet`, so every
// load issued together is in flight at once however late its thread runs, and serial code
// still shows a peak of 1 (paying `quiet` per load).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

#include "backend/forwarding_backend.h"
#include "core/error.h"
#include "core/mutex.h"

namespace haven::testing {

class LoadTraceBackend : public ForwardingBackend {
 public:
  struct Record {
    Handle h;
    uint64_t offset, length;
  };

  LoadTraceBackend(std::shared_ptr<Backend> inner, std::chrono::milliseconds delay,
                   int connections)
      : ForwardingBackend(std::move(inner)), delay_(delay), connections_(connections) {}

  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override {
    Bytes out;
    Traced(h, offset, length, [&] { out = inner_->Load(h, offset, length); });
    return out;
  }
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override {
    Traced(h, offset, out.size(), [&] { inner_->LoadInto(h, offset, out); });
  }
  void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                  const std::function<void(ByteView)>& sink) override {
    Traced(h, offset, length, [&] { inner_->LoadStream(h, offset, length, sink); });
  }
  int Connections() const override { return connections_; }
  void HoldUntilQuiet(FileType t, std::chrono::milliseconds quiet) {
    MutexLock lock(mu_);
    quiet_[t] = quiet;
  }
  // With a delay it stands for a store where every request is a round trip.
  bool RoundTrips() const override { return delay_.count() > 0; }

  // The loads of objects of type t, in the order they started.
  std::vector<Record> Loads(FileType t) const {
    MutexLock lock(mu_);
    std::vector<Record> out;
    for (const auto& l : loads_)
      if (l.h.type == t) out.push_back(l);
    return out;
  }
  // The most loads of one object in flight at once; of any objects of type t at once.
  int PeakFor(const std::string& name) const {
    MutexLock lock(mu_);
    auto it = peak_by_name_.find(name);
    return it == peak_by_name_.end() ? 0 : it->second;
  }
  int PeakOfType(FileType t) const {
    MutexLock lock(mu_);
    auto it = peak_by_type_.find(t);
    return it == peak_by_type_.end() ? 0 : it->second;
  }
  void Reset() {
    MutexLock lock(mu_);
    loads_.clear();
    peak_by_name_.clear();
    peak_by_type_.clear();
  }

 private:
  template <typename Fn>
  void Traced(const Handle& h, uint64_t offset, uint64_t length, Fn&& fn) {
    Begin(h, offset, length);
    try {
      std::this_thread::sleep_for(delay_);
      WaitQuiet(h.type);
      fn();
    } catch (...) {
      End(h);
      throw;
    }
    End(h);
  }
  void Begin(const Handle& h, uint64_t offset, uint64_t length) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    loads_.push_back({h, offset, length});
    peak_by_name_[h.name] = std::max(peak_by_name_[h.name], ++now_by_name_[h.name]);
    peak_by_type_[h.type] = std::max(peak_by_type_[h.type], ++now_by_type_[h.type]);
    last_start_[h.type] = std::chrono::steady_clock::now();
  }
  void WaitQuiet(FileType t) EXCLUDES(mu_) {
    for (;;) {
      std::chrono::steady_clock::duration left{};
      {
        MutexLock lock(mu_);
        auto q = quiet_.find(t);
        if (q == quiet_.end()) return;
        left = q->second - (std::chrono::steady_clock::now() - last_start_[t]);
      }
      if (left <= std::chrono::steady_clock::duration::zero()) return;
      std::this_thread::sleep_for(left);
    }
  }
  void End(const Handle& h) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    --now_by_name_[h.name];
    --now_by_type_[h.type];
  }

  const std::chrono::milliseconds delay_;
  const int connections_;
  mutable Mutex mu_;
  std::vector<Record> loads_ GUARDED_BY(mu_);
  std::map<std::string, int> now_by_name_ GUARDED_BY(mu_), peak_by_name_ GUARDED_BY(mu_);
  std::map<FileType, int> now_by_type_ GUARDED_BY(mu_), peak_by_type_ GUARDED_BY(mu_);
  std::map<FileType, std::chrono::milliseconds> quiet_ GUARDED_BY(mu_);
  std::map<FileType, std::chrono::steady_clock::time_point> last_start_ GUARDED_BY(mu_);
};

// Tests only: streams (LoadStream) its inner backend's bytes in pieces of `piece` bytes, as
// a network delivers them, and stands for storage with round trips; when `fail_at` is
// given, each stream fails (kIo, retryable) once that many of its bytes were delivered.
class TrickleBackend : public ForwardingBackend {
 public:
  TrickleBackend(std::shared_ptr<Backend> inner, size_t piece, uint64_t fail_at = UINT64_MAX)
      : ForwardingBackend(std::move(inner)), piece_(std::max<size_t>(piece, 1)), fail_at_(fail_at) {}
  void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                  const std::function<void(ByteView)>& sink) override {
    Bytes all = inner_->Load(h, offset, length);
    for (size_t at = 0; at < all.size(); at += piece_) {
      if (at >= fail_at_) Fail(ErrorCode::kIo, "connection reset", true);
      sink(ByteView(all).subspan(at, std::min(piece_, all.size() - at)));
    }
  }
  bool RoundTrips() const override { return true; }

 private:
  const size_t piece_;
  const uint64_t fail_at_;
};

// Tests only: storage with round trips reached over `connections` connections, as
// HttpClient's pool: every request holds one for its duration (a stream, LoadStream in
// pieces of `piece` bytes, holds it while its sink runs). A request that finds none free
// for `patience` fails (kFatal, "no free connection"): a caller that waits for a request
// while holding every connection would otherwise hang the test.
class PooledBackend : public ForwardingBackend {
 public:
  PooledBackend(std::shared_ptr<Backend> inner, int connections, size_t piece,
                std::chrono::milliseconds patience = std::chrono::seconds(10))
      : ForwardingBackend(std::move(inner)),
        connections_(connections),
        piece_(std::max<size_t>(piece, 1)),
        patience_(patience),
        free_(connections) {}

  void Save(const Handle& h, ByteView data) override {
    Hold(h, [&] { inner_->Save(h, data); });
  }
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override {
    Bytes out;
    Hold(h, [&] { out = inner_->Load(h, offset, length); });
    return out;
  }
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override {
    Hold(h, [&] { inner_->LoadInto(h, offset, out); });
  }
  void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                  const std::function<void(ByteView)>& sink) override {
    streams_++;
    Hold(h, [&] {
      Bytes all = inner_->Load(h, offset, length);
      for (size_t at = 0; at < all.size(); at += piece_)
        sink(ByteView(all).subspan(at, std::min(piece_, all.size() - at)));
    });
  }
  std::optional<uint64_t> Stat(const Handle& h) override {
    std::optional<uint64_t> out;
    Hold(h, [&] { out = inner_->Stat(h); });
    return out;
  }
  void Remove(const Handle& h) override {
    Hold(h, [&] { inner_->Remove(h); });
  }
  int Connections() const override { return connections_; }
  bool RoundTrips() const override { return true; }
  // LoadStream calls so far.
  int streams() const { return streams_.load(); }

 private:
  template <typename Fn>
  void Hold(const Handle& h, Fn&& fn) {
    if (!free_.try_acquire_for(patience_))
      Fail(ErrorCode::kFatal, "no free connection for " + h.name + " (every one held)");
    struct Release {
      std::counting_semaphore<>& s;
      ~Release() { s.release(); }
    } release{free_};
    fn();
  }

  const int connections_;
  const size_t piece_;
  const std::chrono::milliseconds patience_;
  std::counting_semaphore<> free_;
  std::atomic<int> streams_{0};
};

}  // namespace haven::testing
