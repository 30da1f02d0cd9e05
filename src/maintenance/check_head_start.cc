#include "maintenance/check_head_start.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <set>
#include <system_error>

#include "maintenance/check.h"
#include "repo/pack.h"

namespace haven {

CheckHeadStart::CheckHeadStart(Repository& opened, bool read_packs, int loaders)
    : opened_(opened),
      loaders_(std::max(1, loaders)),
      early_(opened, read_packs ? std::function<void(IndexedRepository&)>(
                                      [this](IndexedRepository& index) { StartReaders(index); })
                                : nullptr) {}

CheckHeadStart::~CheckHeadStart() {
  StopReaders();
  early_.Wait();  // no reader is added after this
  for (std::thread& t : readers_)
    if (t.joinable()) t.join();
}

void CheckHeadStart::StartReaders(IndexedRepository& index) {
  guessed_ = PacksOfIndex(index, nullptr);
  std::vector<Item> items;
  for (const auto& [pid, blobs] : guessed_) {
    uint64_t size = PackHeaderSize(blobs);
    for (const PackedBlob& b : blobs) size += b.length;
    items.push_back({pid, size, &blobs});
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.size > b.size; });
  MutexLock lock(mu_);
  if (stop_) return;
  queue_ = std::move(items);
  for (int i = 0; i < loaders_; ++i) {
    try {
      readers_.emplace_back([this, &index] { Reader(index); });
    } catch (const std::system_error&) {
      break;  // fewer readers; ReadAll starts its own if none runs
    }
  }
}

void CheckHeadStart::Reader(IndexedRepository& index) {
  PackCheckBuffers bufs;  // reused for all this reader's packs
  const bool stream = opened_.backend().RoundTrips();
  for (;;) {
    Item it;
    {
      MutexLock lock(mu_);
      while (!stop_ && !final_ && next_ >= queue_.size()) cv_.Wait(mu_);
      if (stop_ || next_ >= queue_.size()) return;
      it = queue_[next_++];
      if (final_) {
        auto w = wanted_.find(it.id);
        if (w == wanted_.end() || w->second != it.size) continue;  // not read, or not so
        if (done_.count({it.id, it.size})) continue;                 // read already
      }
    }
    std::vector<std::string> errs;
    try {
      errs = CheckPackData(index, it.id, it.size, *it.blobs, bufs, kCheckSegment, stream);
    } catch (const std::exception& e) {
      errs.push_back("pack " + it.id.Hex() + ": " + e.what());
    }
    {
      MutexLock lock(mu_);
      done_[{it.id, it.size}] = std::move(errs);
    }
    cv_.NotifyAll();  // (WaitForEarlyReadsForTesting)
  }
}

void CheckHeadStart::WaitForEarlyReadsForTesting() {
  early_.Wait();
  MutexLock lock(mu_);
  while (!stop_ && done_.size() < queue_.size()) cv_.Wait(mu_);
}

void CheckHeadStart::StopReaders() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
}

IndexedRepository* CheckHeadStart::IndexFor(const std::vector<std::pair<FileId, uint64_t>>& files) {
  if (early_.Matches(files)) return early_.Wait();
  StopReaders();
  for (std::thread& t : readers_) t.join();
  readers_.clear();
  return nullptr;
}

std::vector<std::vector<std::string>> CheckHeadStart::ReadAll(
    const std::vector<PackId>& ids, const std::map<PackId, uint64_t>& on_disk,
    const std::map<PackId, std::vector<PackedBlob>>& packs) {
  std::set<Read> early;  // reads begun before this call
  {
    MutexLock lock(mu_);
    std::set<Read> queued;
    for (size_t i = 0; i < queue_.size(); ++i) {
      queued.insert({queue_[i].id, queue_[i].size});
      if (i < next_) early.insert({queue_[i].id, queue_[i].size});
    }
    std::vector<Item> more;
    for (const PackId& pid : ids) {
      const uint64_t size = on_disk.at(pid);
      wanted_[pid] = size;
      if (!queued.count({pid, size})) more.push_back({pid, size, &packs.at(pid)});
    }
    std::stable_sort(more.begin(), more.end(),
                     [](const Item& a, const Item& b) { return a.size > b.size; });
    for (Item& it : more) queue_.push_back(it);
    final_ = true;
  }
  cv_.NotifyAll();
  if (readers_.empty())  // no early reads (index only, or no thread could start)
    for (int i = 0; i < loaders_; ++i)
      readers_.emplace_back([this, index = early_.Wait()] { Reader(*index); });
  for (std::thread& t : readers_) t.join();
  readers_.clear();

  std::vector<std::vector<std::string>> out(ids.size());
  MutexLock lock(mu_);
  for (size_t i = 0; i < ids.size(); ++i) {
    const Read want{ids[i], on_disk.at(ids[i])};
    kept_ += early.count(want);
    auto it = done_.find(want);
    if (it == done_.end()) {  // cannot happen: every wanted pack was queued at its size
      out[i].push_back("pack " + ids[i].Hex() + ": not read");
      continue;
    }
    out[i] = std::move(it->second);
  }
  return out;
}

}  // namespace haven
