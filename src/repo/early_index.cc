#include "repo/early_index.h"

#include <exception>

namespace haven {

EarlyIndex::EarlyIndex(Repository& opened, std::function<void(IndexedRepository&)> then) {
  thread_ = std::thread([this, &opened, then = std::move(then)] {
    try {
      auto listed = opened.backend().EarlierListing(FileType::kIndex);
      if (!listed) return;
      files_ = IndexedRepository::IndexFilesOf(*listed);
      index_ = IndexedRepository::Load(opened, files_);
    } catch (const std::exception&) {
      index_.reset();  // the caller loads the index itself and reports what fails
      return;
    }
    if (then) {
      try {
        then(*index_);
      } catch (const std::exception&) {
        // only a head start: the command does the same reads itself and reports
      }
    }
  });
}

EarlyIndex::~EarlyIndex() {
  if (thread_.joinable()) thread_.join();
}

IndexedRepository* EarlyIndex::Wait() {
  if (thread_.joinable()) thread_.join();
  return index_.get();
}

bool EarlyIndex::Matches(const std::vector<std::pair<FileId, uint64_t>>& files) {
  return Wait() && files == files_;
}

std::unique_ptr<IndexedRepository> EarlyIndex::TakeIf(
    const std::vector<std::pair<FileId, uint64_t>>& files) {
  if (!Matches(files)) return nullptr;
  return std::move(index_);
}

std::unique_ptr<IndexedRepository> EarlyIndex::LoadWith(EarlyIndex* early, Repository& opened) {
  if (!early) return IndexedRepository::Load(opened);
  auto files = IndexedRepository::ListIndexFiles(opened.backend());
  if (auto index = early->TakeIf(files)) return index;
  return IndexedRepository::Load(opened, std::move(files));
}

}  // namespace haven
