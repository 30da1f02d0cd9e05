#include "backend/index_prefetch_backend.h"

#include <algorithm>
#include <cstring>

namespace haven {

IndexPrefetchBackend::IndexPrefetchBackend(std::shared_ptr<Backend> inner, std::vector<Kind> kinds,
                                           uint64_t budget)
    : ForwardingBackend(std::move(inner)), budget_(budget) {
  for (const Kind& k : kinds) types_.push_back(k.type);
  Start(std::move(kinds));
}

IndexPrefetchBackend::~IndexPrefetchBackend() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  for (auto& t : threads_) t.join();
}

void IndexPrefetchBackend::Start(std::vector<Kind> kinds) {
  const int readers = std::max(static_cast<int>(kinds.size()), inner_->Connections());
  {
    MutexLock lock(mu_);
    listing_ = kinds.size();
  }
  try {
    // One thread per kind lists it, then reads with the others.
    for (Kind& k : kinds)
      threads_.emplace_back([this, k = std::move(k)] {
        ListKind(k);
        Work();
      });
    for (int i = static_cast<int>(kinds.size()); i < readers; ++i) threads_.emplace_back([this] { Work(); });
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

void IndexPrefetchBackend::ListKind(const Kind& kind) {
  std::vector<FileInfo> files;
  bool listed = false;
  try {
    inner_->List(kind.type, [&](const FileInfo& f) { files.push_back(f); });
    listed = true;
  } catch (...) {
    files.clear();  // the load lists again and reports its own error
  }
  if (listed) {
    MutexLock lock(mu_);
    listings_[kind.type] = files;
  }
  // (the cache is asked outside mu_: it stats files)
  if (kind.skip) std::erase_if(files, [&](const FileInfo& f) { return kind.skip(f.name); });
  {
    MutexLock lock(mu_);
    for (const FileInfo& f : files) {
      if (held_ + f.size > budget_) continue;
      held_ += f.size;
      Key key{kind.type, f.name};
      entries_.try_emplace(key);
      queue_.push_back(std::move(key));
    }
    listed_.push_back(kind.type);
    --listing_;
  }
  cv_.NotifyAll();
}

void IndexPrefetchBackend::Work() {
  for (;;) {
    Key key;
    {
      MutexLock lock(mu_);
      while (!stop_ && next_ >= queue_.size() && listing_ > 0) cv_.Wait(mu_);
      if (stop_ || next_ >= queue_.size()) return;
      key = queue_[next_++];
      auto it = entries_.find(key);
      if (it == entries_.end() || it->second.state != State::kQueued) continue;  // taken
      it->second.state = State::kLoading;
    }
    Bytes bytes;
    bool ok = false;
    try {
      bytes = inner_->Load({key.first, key.second});
      ok = true;
    } catch (...) {
      // left to the load, which reads the file again and names any error
    }
    {
      MutexLock lock(mu_);
      Entry& e = entries_[key];
      e.state = State::kDone;
      e.ok = ok;
      e.bytes = std::move(bytes);
    }
    cv_.NotifyAll();
  }
}

std::optional<std::vector<FileInfo>> IndexPrefetchBackend::EarlierListing(FileType t) {
  if (!Prefetched(t)) return inner_->EarlierListing(t);
  MutexLock lock(mu_);
  while (!stop_ && std::find(listed_.begin(), listed_.end(), t) == listed_.end()) cv_.Wait(mu_);
  auto it = listings_.find(t);
  if (it == listings_.end()) return std::nullopt;
  return it->second;
}

bool IndexPrefetchBackend::Prefetched(FileType t) const {
  return std::find(types_.begin(), types_.end(), t) != types_.end();
}

std::optional<Bytes> IndexPrefetchBackend::Take(const Handle& h) {
  MutexLock lock(mu_);
  // (a listing may be retrying: read the file now)
  if (std::find(listed_.begin(), listed_.end(), h.type) == listed_.end()) return std::nullopt;
  const Key key{h.type, h.name};
  for (;;) {
    auto it = entries_.find(key);  // (again after each wait: another Take may have erased it)
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
  if (Prefetched(h.type) && offset == 0 && length == 0)
    if (std::optional<Bytes> b = Take(h)) return std::move(*b);
  return inner_->Load(h, offset, length);
}

void IndexPrefetchBackend::LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) {
  if (Prefetched(h.type) && offset == 0) {
    std::optional<Bytes> b = Take(h);
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
