#include "maintenance/repair_index.h"

#include <algorithm>
#include <optional>

#include "core/error.h"
#include "core/mutex.h"
#include "maintenance/index_writer.h"

namespace haven {

std::vector<PackedBlob> ReadPackHeader(Repository& repo, const PackId& pack, uint64_t size) {
  const std::string name = pack.Hex();
  // restic reads 15 entries' worth speculatively; a little more costs nothing locally.
  constexpr uint64_t kSpeculative = 4096;
  uint64_t first = std::min(size, kSpeculative);
  uint64_t need = 0;
  if (first < 4) return ParsePackHeader(repo.key(), {}, size, name, &need);  // throws
  Bytes tail = repo.backend().Load({FileType::kPack, name}, size - first, first);
  auto blobs = ParsePackHeader(repo.key(), tail, size, name, &need);
  if (need == 0) return blobs;
  tail = repo.backend().Load({FileType::kPack, name}, size - need, need);
  blobs = ParsePackHeader(repo.key(), tail, size, name, &need);
  if (need != 0) Fail(ErrorCode::kCorrupt, "pack " + name + ": header could not be read");
  return blobs;
}

RepairIndexResult RepairIndex(Repository& repo, const RepairIndexOptions& opts) {
  RepairIndexResult res;
  const int threads = std::max(1, opts.jobs > 0 ? opts.jobs : repo.threads());
  auto progress = [&](const std::string& s) {
    if (opts.progress) opts.progress(s);
  };
  auto warn = [&](const std::string& s) {
    if (opts.warn) opts.warn(s);
  };
  Mutex warn_mu;  // one warning at a time

  std::vector<FileId> old_ids = repo.ListIds(FileType::kIndex);
  PackTable old;
  if (!opts.read_all_packs) {
    progress("loading indexes...");
    std::vector<std::optional<IndexFile>> files(old_ids.size());
    ParallelForEach(old_ids.size(), std::max(threads, 4), [&](size_t i) {
      try {
        files[i] = IndexFile::Parse(repo.LoadJson(FileType::kIndex, old_ids[i]),
                                    old_ids[i].Hex());
      } catch (const Error& e) {
        // Only damage makes an index obsolete; a transport error aborts the repair.
        if (e.code() != ErrorCode::kCorrupt) throw;
        MutexLock lock(warn_mu);
        warn("removing invalid index " + old_ids[i].Hex() + ": " + e.what());
      }
    });
    for (const auto& f : files) {
      if (!f) {
        res.invalid_index_files++;
        continue;
      }
      for (const auto& p : f->packs) old.Add(p.id, p.blobs);
    }
    old.Finish();
  }

  progress("getting pack files to read...");
  std::vector<std::pair<PackId, uint64_t>> listed;
  repo.backend().List(FileType::kPack, [&](const FileInfo& fi) {
    if (auto id = PackId::FromHex(fi.name)) listed.emplace_back(*id, fi.size);
  });
  std::sort(listed.begin(), listed.end());
  listed.erase(std::unique(listed.begin(), listed.end(),
                           [](const auto& a, const auto& b) { return a.first == b.first; }),
               listed.end());
  std::vector<char> trusted(old.size(), 0), on_storage(old.size(), 0);
  std::vector<std::pair<PackId, uint64_t>> to_read;
  for (const auto& [id, size] : listed) {
    long i = old.Find(id);
    if (i >= 0) on_storage[i] = 1;
    if (i >= 0 && old.ExpectedSize(i) == size) {
      trusted[i] = 1;
      continue;
    }
    to_read.emplace_back(id, size);
    if (opts.read_all_packs) continue;
    if (i < 0) {
      warn("adding pack file to index " + id.Hex());
    } else {
      warn("reindexing pack file " + id.Hex() + " with unexpected size " +
           std::to_string(size) + " instead of " + std::to_string(old.ExpectedSize(i)));
    }
  }
  for (size_t i = 0; i < old.size(); ++i) {
    if (on_storage[i]) continue;
    res.packs_forgotten++;
    warn("removing not found pack file " + old.id(i).Hex());
  }

  std::vector<std::optional<std::vector<PackedBlob>>> headers(to_read.size());
  if (!to_read.empty()) {
    progress("reading pack files");
    ParallelForEach(to_read.size(), threads, [&](size_t k) {
      const auto& [id, size] = to_read[k];
      try {
        headers[k] = ReadPackHeader(repo, id, size);
      } catch (const Error& e) {
        // A damaged pack is left out; a pack that vanished meanwhile too. Any other error
        // (I/O) aborts: writing an index without the pack would lose it.
        if (e.code() != ErrorCode::kCorrupt && e.code() != ErrorCode::kNotFound) throw;
        MutexLock lock(warn_mu);
        warn("skipped incomplete pack file: " + id.Hex() + ": " + e.what());
      }
    });
  }

  PackTable fresh;
  for (size_t i = 0; i < old.size(); ++i) {
    if (!trusted[i]) continue;
    fresh.Add(old.id(i), old.blobs(i));
    res.packs_trusted++;
  }
  for (size_t k = 0; k < to_read.size(); ++k) {
    if (!headers[k]) {
      res.packs_invalid++;
      continue;
    }
    fresh.Add(to_read[k].first, *headers[k]);
    res.packs_read++;
  }
  fresh.Finish();

  progress("saving new index files");
  std::vector<FileId> written = WriteIndexFiles(repo, fresh, [](size_t) { return true; }, threads);
  res.index_files_written = written.size();
  progress("deleting obsolete index files");
  std::vector<RawId> obsolete(old_ids.begin(), old_ids.end());
  RemoveFiles(repo, FileType::kIndex, obsolete, threads, false, warn);
  res.index_files_removed = obsolete.size();
  progress("done");
  return res;
}

}  // namespace haven
