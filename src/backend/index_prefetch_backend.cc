#include "backend/index_prefetch_backend.h"

#include <algorithm>
#include <cstring>

namespace haven {

IndexPrefetchBackend::IndexPrefetchBackend(std::shared_ptr<Backend> inner,
                                           std::function<bool(const std::string&)> skip,
                                           uint64_t budget)
    : ForwardingBackend(std::move(inner)) {
  Start(std::move(skip), budget);
}

IndexPrefetchBackend::~IndexPrefetchBackend() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  for (auto& t : threads_) t.join();
}

void IndexPrefetchBackend::Start(std::function<bool(const std::string&)> skip, uint64_t budget) {
  const int readers = std::max(1, inner_->Connections());
  auto list = [this, skip = std::move(skip), budget] {
    std::vector<FileInfo> files;
    try {
      inner_->List(FileType::kIndex, [&](const FileInfo& f) { files.push_back(f); });
    } catch (...) {
      files.clear();  // the index load lists again and reports its own error
    }
    std::vector<FileInfo> wanted;  // (the cache is asked outside mu_: it stats files)
    uint64_t held = 0;
    for (const FileInfo& f : files) {
      if ((skip && skip(f.name)) || held + f.size > budget) continue;
      held += f.size;
      wanted.push_back(f);
    }
    {
      MutexLock lock(mu_);
      for (const FileInfo& f : wanted) {
        entries_.try_emplace(f.name);
        queue_.push_back(f.name);
      }
      listed_ = true;
    }
    cv_.NotifyAll();
    Work();
  };
  try {
    threads_.emplace_back(std::move(list));
    for (int i = 1; i < readers; ++i) threads_.emplace_back([this] { Work(); });
  } catch (...) {  // no thread for it: stop those started, then fail as the caller would
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    cv_.NotifyAll();
    for (auto& t : threads_) t.join();
    throw;
  }
}

void IndexPrefetchBackend::Work() {
  for (;;) {
    std::string name;
    {
      MutexLock lock(mu_);
      while (!stop_ && !listed_) cv_.Wait(mu_);
      if (stop_ || next_ >= queue_.size()) return;
      name = queue_[next_++];
      auto it = entries_.find(name);
      if (it == entries_.end() || it->second.state != State::kQueued) continue;  // taken
      it->second.state = State::kLoading;
    }
    Bytes bytes;
    bool ok = false;
    try {
      bytes = inner_->Load({FileType::kIndex, name});
      ok = true;
    } catch (...) {
      // left to the index load, which reads the file again and names any error
    }
    {
      MutexLock lock(mu_);
      Entry& e = entries_[name];
      e.state = State::kDone;
      e.ok = ok;
      e.bytes = std::move(bytes);
    }
    cv_.NotifyAll();
  }
}

std::optional<Bytes> IndexPrefetchBackend::Take(const std::string& name) {
  MutexLock lock(mu_);
  if (!listed_) return std::nullopt;  // (the listing may be retrying: read it now)
  for (;;) {
    auto it = entries_.find(name);  // (again after each wait: another Take may have erased it)
    if (it == entries_.end()) return std::nullopt;
    if (it->second.state == State::kLoading) {
      cv_.Wait(mu_);
      continue;
    }
    // Done, or not started (the caller reads it now, and the reader skips it).
    std::optional<Bytes> out;
    if (it->second.state == State::kDone && it->second.ok) {
      out = std::move(it->second.bytes);
      ++served_;
    }
    entries_.erase(it);
    return out;
  }
}

Bytes IndexPrefetchBackend::Load(const Handle& h, uint64_t offset, uint64_t length) {
  if (h.type == FileType::kIndex && offset == 0 && length == 0)
    if (std::optional<Bytes> b = Take(h.name)) return std::move(*b);
  return inner_->Load(h, offset, length);
}

void IndexPrefetchBackend::LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) {
  if (h.type == FileType::kIndex && offset == 0) {
    std::optional<Bytes> b = Take(h.name);
    if (b && b->size() == out.size()) {
      std::memcpy(out.data(), b->data(), out.size());
      return;
    }
  }
  inner_->LoadInto(h, offset, out);
}

size_t IndexPrefetchBackend::served() {
  MutexLock lock(mu_);
  return served_;
}

}  // namespace haven
