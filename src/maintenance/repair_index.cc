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

namespace {

void Progress(const RepairIndexOptions& o, const std::string& s) {
  if (o.progress) o.progress(s);
}
void Warn(const RepairIndexOptions& o, const std::string& s) {
  if (o.warn) o.warn(s);
}

// The old index files, each parsed; a damaged one is warned about and counted.
PackTable LoadOldIndex(Repository& repo, const std::vector<FileId>& old_ids, int threads,
                       const RepairIndexOptions& opts, RepairIndexResult& res) {
  PackTable old;
  if (opts.read_all_packs) return old;
  Progress(opts, "loading indexes...");
  Mutex warn_mu;
  std::vector<std::optional<IndexFile>> files(old_ids.size());
  ParallelForEach(old_ids.size(), std::max(threads, 4), [&](size_t i) {
    try {
      files[i] = IndexFile::Parse(repo.LoadJson(FileType::kIndex, old_ids[i]),
                                  old_ids[i].Hex());
    } catch (const Error& e) {
      // Only damage makes an index obsolete; a transport error aborts the repair.
      if (e.code() != ErrorCode::kCorrupt) throw;
      MutexLock lock(warn_mu);
      Warn(opts, "removing invalid index " + old_ids[i].Hex() + ": " + e.what());
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
  return old;
}

// Every pack file on storage once, sorted by id.
std::vector<std::pair<PackId, uint64_t>> ListPacks(Repository& repo) {
  std::vector<std::pair<PackId, uint64_t>> listed;
  repo.backend().List(FileType::kPack, [&](const FileInfo& fi) {
    if (auto id = PackId::FromHex(fi.name)) listed.emplace_back(*id, fi.size);
  });
  std::sort(listed.begin(), listed.end());
  listed.erase(std::unique(listed.begin(), listed.end(),
                           [](const auto& a, const auto& b) { return a.first == b.first; }),
               listed.end());
  return listed;
}

// Which packs the old index describes correctly (trusted) and which headers to read.
struct PackChoice {
  std::vector<char> trusted;  // per old pack
  std::vector<std::pair<PackId, uint64_t>> to_read;
};

PackChoice ChoosePacks(const PackTable& old, const std::vector<std::pair<PackId, uint64_t>>& listed,
                       const RepairIndexOptions& opts, RepairIndexResult& res) {
  PackChoice c;
  c.trusted.assign(old.size(), 0);
  std::vector<char> on_storage(old.size(), 0);
  for (const auto& [id, size] : listed) {
    long i = old.Find(id);
    if (i >= 0) on_storage[i] = 1;
    if (i >= 0 && old.ExpectedSize(i) == size) {
      c.trusted[i] = 1;
      continue;
    }
    c.to_read.emplace_back(id, size);
    if (opts.read_all_packs) continue;
    if (i < 0) {
      Warn(opts, "adding pack file to index " + id.Hex());
    } else {
      Warn(opts, "reindexing pack file " + id.Hex() + " with unexpected size " +
                     std::to_string(size) + " instead of " + std::to_string(old.ExpectedSize(i)));
    }
  }
  for (size_t i = 0; i < old.size(); ++i) {
    if (on_storage[i]) continue;
    res.packs_forgotten++;
    Warn(opts, "removing not found pack file " + old.id(i).Hex());
  }
  return c;
}

// The headers of the packs to read; nullopt for a damaged or vanished pack.
std::vector<std::optional<std::vector<PackedBlob>>> ReadHeaders(
    Repository& repo, const std::vector<std::pair<PackId, uint64_t>>& to_read, int threads,
    const RepairIndexOptions& opts) {
  std::vector<std::optional<std::vector<PackedBlob>>> headers(to_read.size());
  if (to_read.empty()) return headers;
  Progress(opts, "reading pack files");
  Mutex warn_mu;
  ParallelForEach(to_read.size(), threads, [&](size_t k) {
    const auto& [id, size] = to_read[k];
    try {
      headers[k] = ReadPackHeader(repo, id, size);
    } catch (const Error& e) {
      // A damaged pack is left out; a pack that vanished meanwhile too. Any other error
      // (I/O) aborts: writing an index without the pack would lose it.
      if (e.code() != ErrorCode::kCorrupt && e.code() != ErrorCode::kNotFound) throw;
      MutexLock lock(warn_mu);
      Warn(opts, "skipped incomplete pack file: " + id.Hex() + ": " + e.what());
    }
  });
  return headers;
}

// The new index: the trusted packs, then the packs whose header was read.
PackTable BuildIndex(const PackTable& old, const PackChoice& c,
                     const std::vector<std::optional<std::vector<PackedBlob>>>& headers,
                     RepairIndexResult& res) {
  PackTable fresh;
  for (size_t i = 0; i < old.size(); ++i) {
    if (!c.trusted[i]) continue;
    fresh.Add(old.id(i), old.blobs(i));
    res.packs_trusted++;
  }
  for (size_t k = 0; k < c.to_read.size(); ++k) {
    if (!headers[k]) {
      res.packs_invalid++;
      continue;
    }
    fresh.Add(c.to_read[k].first, *headers[k]);
    res.packs_read++;
  }
  fresh.Finish();
  return fresh;
}

}  // namespace

RepairIndexResult RepairIndex(Repository& repo, const RepairIndexOptions& opts) {
  RepairIndexResult res;
  const int threads = std::max(1, opts.jobs > 0 ? opts.jobs : repo.threads());
  const std::vector<FileId> old_ids = repo.ListIds(FileType::kIndex);
  const PackTable old = LoadOldIndex(repo, old_ids, threads, opts, res);
  Progress(opts, "getting pack files to read...");
  const PackChoice choice = ChoosePacks(old, ListPacks(repo), opts, res);
  const auto headers = ReadHeaders(repo, choice.to_read, threads, opts);
  const PackTable fresh = BuildIndex(old, choice, headers, res);

  Progress(opts, "saving new index files");
  std::vector<FileId> written = WriteIndexFiles(repo, fresh, [](size_t) { return true; }, threads);
  res.index_files_written = written.size();
  Progress(opts, "deleting obsolete index files");
  std::vector<RawId> obsolete(old_ids.begin(), old_ids.end());
  RemoveFiles(repo, FileType::kIndex, obsolete, threads, false,
              [&](const std::string& s) { Warn(opts, s); });
  res.index_files_removed = obsolete.size();
  Progress(opts, "done");
  return res;
}

}  // namespace haven
