#include "maintenance/index_writer.h"

#include <tuple>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "core/mutex.h"

namespace haven {

void PackTable::Add(const PackId& pack, const std::vector<PackedBlob>& blobs) {
  auto [it, added] = pos_.try_emplace(pack, ids_.size());
  if (added) {
    ids_.push_back(pack);
    blobs_.emplace_back();
  }
  auto& v = blobs_[it->second];
  v.insert(v.end(), blobs.begin(), blobs.end());
}

void PackTable::Add(const PackId& pack, const PackedBlob& blob) {
  auto [it, added] = pos_.try_emplace(pack, ids_.size());
  if (added) {
    ids_.push_back(pack);
    blobs_.emplace_back();
  }
  blobs_[it->second].push_back(blob);
}

void PackTable::Finish() {
  auto key = [](const PackedBlob& b) {
    return std::make_tuple(b.offset, b.length, static_cast<int>(b.type), b.id,
                           b.uncompressed_length);
  };
  for (auto& v : blobs_) {
    std::sort(v.begin(), v.end(),
              [&](const PackedBlob& a, const PackedBlob& b) { return key(a) < key(b); });
    size_t n = v.size();
    v.erase(std::unique(v.begin(), v.end(),
                        [&](const PackedBlob& a, const PackedBlob& b) { return key(a) == key(b); }),
            v.end());
    if (v.size() != n) had_duplicates_ = true;
  }
}

PackTable PackTable::FromIndex(const Index& index) {
  PackTable t;
  // Index::ForEach visits a pack's entries together; remember the last pack's slot.
  const PackId* last = nullptr;
  size_t slot = 0;
  index.ForEach([&](const PackId& p, const PackedBlob& b) {
    if (!last || *last != p) {
      auto [it, added] = t.pos_.try_emplace(p, t.ids_.size());
      if (added) {
        t.ids_.push_back(p);
        t.blobs_.emplace_back();
      }
      slot = it->second;
      last = &t.ids_[slot];
    }
    t.blobs_[slot].push_back(b);
  });
  t.Finish();
  return t;
}

IndexPackView::IndexPackView(const Index& index) : index_(index) {
  if (index.Positions(BlobType::kData) >= kTreeBit || index.Positions(BlobType::kTree) >= kTreeBit)
    Fail(ErrorCode::kFatal, "index too large for the pack view");
  // Pack numbers of the same pack (listed by several index files) share one slot.
  std::vector<uint32_t> slot_of(index.PackCount());
  for (uint32_t no = 0; no < index.PackCount(); ++no) {
    auto [it, added] = pos_.try_emplace(index.PackAt(no), ids_.size());
    if (added) ids_.push_back(index.PackAt(no));
    slot_of[no] = static_cast<uint32_t>(it->second);
  }
  // Counting sort of the positions by slot.
  start_.assign(ids_.size() + 1, 0);
  index.ForEachPosition([&](BlobType, size_t, size_t, uint32_t no, const PackedBlob&) {
    ++start_[slot_of[no] + 1];
  });
  for (size_t i = 0; i < ids_.size(); ++i) start_[i + 1] += start_[i];
  entries_.resize(start_.back());
  std::vector<uint32_t> fill(start_.begin(), start_.end() - 1);
  index.ForEachPosition([&](BlobType t, size_t pos, size_t, uint32_t no, const PackedBlob&) {
    entries_[fill[slot_of[no]]++] =
        static_cast<uint32_t>(pos) | (t == BlobType::kTree ? kTreeBit : 0);
  });
  // Each pack by offset, exact duplicates (one pack in several index files) dropped. The
  // sort keys are 8 bytes (offset, entry); only entries at equal offsets are compared whole.
  auto entry = [&](uint32_t e) {
    return index.EntryAt(e & kTreeBit ? BlobType::kTree : BlobType::kData, e & ~kTreeBit, nullptr);
  };
  auto key = [](const PackedBlob& b) {
    return std::make_tuple(b.offset, b.length, static_cast<int>(b.type), b.id, b.uncompressed_length);
  };
  std::vector<std::pair<uint32_t, uint32_t>> tmp;  // (offset, entry)
  size_t out = 0;
  std::vector<uint32_t> new_start(ids_.size() + 1, 0);
  for (size_t i = 0; i < ids_.size(); ++i) {
    tmp.clear();
    for (uint32_t k = start_[i]; k < start_[i + 1]; ++k)
      tmp.push_back({entry(entries_[k]).offset, entries_[k]});
    std::sort(tmp.begin(), tmp.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      return key(entry(a.second)) < key(entry(b.second));
    });
    new_start[i] = static_cast<uint32_t>(out);
    for (size_t k = 0; k < tmp.size(); ++k) {
      if (k > 0 && tmp[k].first == tmp[k - 1].first &&
          key(entry(tmp[k].second)) == key(entry(tmp[k - 1].second))) {
        had_duplicates_ = true;
        continue;
      }
      entries_[out++] = tmp[k].second;
    }
  }
  new_start[ids_.size()] = static_cast<uint32_t>(out);
  entries_.resize(out);
  entries_.shrink_to_fit();
  start_ = std::move(new_start);
}

std::vector<PackedBlob> IndexPackView::blobs(size_t i, std::vector<size_t>* first) const {
  std::vector<PackedBlob> out;
  out.reserve(start_[i + 1] - start_[i]);
  if (first) first->clear();
  for (uint32_t k = start_[i]; k < start_[i + 1]; ++k) {
    uint32_t e = entries_[k];
    size_t f = 0;
    out.push_back(index_.EntryAt(e & kTreeBit ? BlobType::kTree : BlobType::kData,
                                 e & ~kTreeBit, nullptr, first ? &f : nullptr));
    if (first) first->push_back(f);
  }
  return out;
}

long IndexPackView::Find(const PackId& pack) const {
  auto it = pos_.find(pack);
  return it == pos_.end() ? -1 : static_cast<long>(it->second);
}

long PackTable::Find(const PackId& pack) const {
  auto it = pos_.find(pack);
  return it == pos_.end() ? -1 : static_cast<long>(it->second);
}

uint64_t PackTable::ExpectedSize(size_t i) const {
  uint64_t n = PackHeaderSize(blobs_[i]);
  for (const auto& b : blobs_[i]) n += b.length;
  return n;
}

uint64_t PackTable::BlobCount() const {
  uint64_t n = 0;
  for (const auto& v : blobs_) n += v.size();
  return n;
}

std::vector<FileId> WriteIndexFiles(Repository& repo, const PackTable& packs,
                                    const std::function<bool(size_t)>& keep, int threads) {
  // Files as runs of the kept packs' slots; each file's JSON is made from the table in
  // pieces while it is compressed (no copy of the blob lists, no whole text).
  std::vector<size_t> kept;
  std::vector<size_t> starts;  // index into `kept` where each file begins
  size_t cur_blobs = 0;
  for (size_t i = 0; i < packs.size(); ++i) {
    if (!keep(i)) continue;
    const size_t n = packs.blobs(i).size();
    if (starts.empty() || (cur_blobs > 0 && cur_blobs + n > WriteSession::kIndexFlushBlobs)) {
      starts.push_back(kept.size());
      cur_blobs = 0;
    }
    kept.push_back(i);
    cur_blobs += n;
  }
  std::vector<FileId> ids(starts.size());
  // Over round trips a file's save is mostly waiting (a HEAD and a PUT or POST): as many
  // at once as the storage's connections, so a rewrite of a few files takes one round; at
  // most kMaxIndexWriters beyond --jobs (each file in progress is held in memory, a few MiB).
  constexpr int kMaxIndexWriters = 8;
  const int writers =
      repo.backend().RoundTrips()
          ? std::max(threads, std::min(repo.backend().Connections(), kMaxIndexWriters))
          : threads;
  ParallelForEach(starts.size(), writers, [&](size_t f) {
    const size_t begin = starts[f];
    const size_t end = f + 1 < starts.size() ? starts[f + 1] : kept.size();
    ids[f] = repo.SaveJsonPieces(FileType::kIndex, [&](const auto& put) {
      EmitIndexJson(
          end - begin,
          [&](std::string& out, size_t k) {
            const size_t slot = kept[begin + k];
            IndexFile::AppendPackJson(out, packs.id(slot), packs.blobs(slot));
          },
          put);
    });
  });
  return ids;
}

size_t RemoveFiles(Repository& repo, FileType t, const std::vector<RawId>& ids, int threads,
                   bool ignore_errors, const std::function<void(const std::string&)>& warn,
                   const RemoveReportFn& report) {
  if (!ids.empty()) repo.CheckLock();  // a command that lost its lock deletes nothing
  std::atomic<size_t> failed{0};
  Mutex report_mu;
  ParallelForEach(ids.size(), threads, [&](size_t i) {
    Handle h{t, ids[i].Hex()};
    try {
      repo.backend().Remove(h);
    } catch (const Error& e) {
      if (report) {
        MutexLock lock(report_mu);
        report(h, &e);
      }
      if (!ignore_errors) throw;
      ++failed;
      if (warn) {
        MutexLock lock(report_mu);
        warn("unable to remove " + h.ToString() + ": " + e.what());
      }
      return;
    }
    if (report) {
      MutexLock lock(report_mu);
      report(h, nullptr);
    }
  });
  return failed.load();
}

}  // namespace haven
