#include "backend/mem_backend.h"

#include <ctime>
#include <vector>

#include "core/error.h"

namespace haven {

MemBackend::Key MemBackend::KeyOf(const Handle& h) {
  CheckHandle(h);
  return {h.type, h.type == FileType::kConfig ? std::string("config") : h.name};
}

bool MemBackend::Exists() {
  MutexLock lock(mu_);
  return objects_.contains(Key{FileType::kConfig, "config"});
}

void MemBackend::Create() {
  MutexLock lock(mu_);
  if (objects_.contains(Key{FileType::kConfig, "config"})) {
    Fail(ErrorCode::kFatal, location_ + ": config already exists");
  }
}

void MemBackend::Save(const Handle& h, ByteView data) {
  Key key = KeyOf(h);
  MutexLock lock(mu_);
  auto it = objects_.find(key);
  if (it != objects_.end()) {
    if (it->second.size() == data.size()) return;  // a retried save of the same object
    Fail(ErrorCode::kFatal, location_ + ": " + h.ToString() + " already exists with size " +
                                std::to_string(it->second.size()) + ", refusing to store " +
                                std::to_string(data.size()) + " bytes under that name");
  }
  mtimes_[key] = clock_ ? clock_() : static_cast<int64_t>(std::time(nullptr));
  objects_.emplace(std::move(key), Bytes(data.begin(), data.end()));
}

std::optional<int64_t> MemBackend::ModTime(const Handle& h) {
  Key key = KeyOf(h);
  MutexLock lock(mu_);
  if (!objects_.count(key)) return std::nullopt;
  return mtimes_[key];
}

void MemBackend::set_clock(std::function<int64_t()> clock) {
  MutexLock lock(mu_);
  clock_ = std::move(clock);
}

Bytes MemBackend::Load(const Handle& h, uint64_t offset, uint64_t length) {
  Key key = KeyOf(h);
  MutexLock lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) {
    Fail(ErrorCode::kNotFound, location_ + ": " + h.ToString() + " does not exist");
  }
  const Bytes& obj = it->second;
  const uint64_t size = obj.size();
  const uint64_t want = length == 0 && offset <= size ? size - offset : length;
  if (offset > size || want > size - offset) {
    std::string wanted = want == 0 ? std::string("data") : std::to_string(want) + " bytes";
    Fail(ErrorCode::kCorrupt, location_ + ": short read of " + h.ToString() + ": expected " +
                                  wanted + " at offset " + std::to_string(offset) +
                                  ", object has " + std::to_string(size) + " bytes");
  }
  return Bytes(obj.begin() + static_cast<ptrdiff_t>(offset),
               obj.begin() + static_cast<ptrdiff_t>(offset + want));
}

std::optional<uint64_t> MemBackend::Stat(const Handle& h) {
  Key key = KeyOf(h);
  MutexLock lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return std::nullopt;
  return it->second.size();
}

void MemBackend::List(FileType t, const std::function<void(const FileInfo&)>& fn) {
  std::vector<FileInfo> found;
  {
    MutexLock lock(mu_);
    for (auto it = objects_.lower_bound(Key{t, ""}); it != objects_.end() && it->first.first == t;
         ++it) {
      found.push_back(FileInfo{it->first.second, it->second.size()});
    }
  }
  for (const FileInfo& fi : found) fn(fi);
}

void MemBackend::Remove(const Handle& h) {
  Key key = KeyOf(h);
  MutexLock lock(mu_);
  if (objects_.erase(key) == 0) {
    Fail(ErrorCode::kNotFound, location_ + ": " + h.ToString() + " does not exist");
  }
}

size_t MemBackend::Size() const {
  MutexLock lock(mu_);
  return objects_.size();
}

}  // namespace haven
