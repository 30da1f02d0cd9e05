// Tests only: a decorator that records every load (object, offset, length) and can hold
// each one for a fixed delay, as a high-latency store would, to count the requests a
// command makes and see which of them were in flight at once. Header-only; used by the
// restore and prune tests.
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "backend/forwarding_backend.h"
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
  int Connections() const override { return connections_; }
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
};

}  // namespace haven::testing
