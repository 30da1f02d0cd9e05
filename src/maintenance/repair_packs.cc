// restic 0.16's repair packs, rewritten (see repair_packs.h).
#include "maintenance/repair_packs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_set>

#include "core/error.h"
#include "maintenance/index_writer.h"

namespace haven {

namespace {

void Say(const std::function<void(const std::string&)>& fn, const std::string& s) {
  if (fn) fn(s);
}

void WriteBackup(const std::string& path, ByteView data) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) Fail(ErrorCode::kIo, "open " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      const int err = errno;
      close(fd);
      Fail(ErrorCode::kIo, "write " + path + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0)
    Fail(ErrorCode::kIo, "write " + path + ": " + std::strerror(errno));
}

// Saves the blobs of one damaged pack again (counted in `res`).
void Salvage(IndexedRepository& repo, WriteSession& session, const PackId& pack,
             const Bytes& bytes, const std::vector<PackedBlob>& blobs,
             const RepairPacksOptions& opts, RepairPacksResult& res) {
  for (const PackedBlob& b : blobs) {
    Bytes plain;
    bool ok = false;
    if (uint64_t(b.offset) + b.length <= bytes.size()) {
      try {
        plain = repo.DecodeBlob(b.id, ByteView(bytes).subspan(b.offset, b.length),
                                b.uncompressed_length, pack.Hex());
        ok = true;
      } catch (const Error&) {
      }
    }
    if (!ok) {
      try {  // restic's fallback: any other copy the index knows
        plain = repo.LoadBlob(b.type, b.id);
      } catch (const Error& e) {
        Say(opts.warn, "failed to load blob " + b.id.Hex() + ": " + e.what());
        res.lost++;
        continue;
      }
    }
    session.SaveBlobCopy(b.type, b.id, plain, {}, 0);
    res.salvaged++;
  }
}

}  // namespace

RepairPacksResult RepairPacks(IndexedRepository& repo, WriteSession& session,
                              const std::vector<PackId>& packs, const RepairPacksOptions& opts) {
  RepairPacksResult res;
  Say(opts.warn, "saving backup copies of pack files in current folder");
  std::vector<Bytes> bytes;
  for (const PackId& id : packs) {
    bytes.push_back(repo.backend().Load({FileType::kPack, id.Hex()}));
    WriteBackup(opts.backup_dir + "/pack-" + id.Hex(), bytes.back());
  }
  Say(opts.warn, "salvaging intact data from specified pack files");
  PackTable table = PackTable::FromIndex(repo.index());
  for (size_t i = 0; i < packs.size(); i++) {
    const long pos = table.Find(packs[i]);
    if (pos < 0 || table.blobs(pos).empty()) {
      Say(opts.warn, "no blobs found for pack " + packs[i].Hex());
      continue;
    }
    Salvage(repo, session, packs[i], bytes[i], table.blobs(pos), opts, res);
  }
  session.Flush();
  // The index without the salvaged packs (restic's rebuildIndexFiles).
  repo.CompactIndex();
  const std::unordered_set<PackId, IdHash> gone(packs.begin(), packs.end());
  PackTable all = PackTable::FromIndex(repo.index());
  const std::vector<FileId> fresh = WriteIndexFiles(
      repo, all, [&](size_t i) { return !gone.contains(all.id(i)); }, opts.threads);
  const std::unordered_set<FileId, IdHash> fresh_set(fresh.begin(), fresh.end());
  std::vector<RawId> old;
  for (const FileId& f : repo.index_files())
    if (!fresh_set.contains(f)) old.push_back(f);
  RemoveFiles(repo, FileType::kIndex, old, opts.threads, false, opts.warn);
  res.index_files_written = fresh.size();
  res.index_files_removed = old.size();
  Say(opts.warn, "removing salvaged pack files");
  std::vector<RawId> doomed(packs.begin(), packs.end());
  RemoveFiles(repo, FileType::kPack, doomed, opts.threads, true, opts.warn);
  return res;
}

}  // namespace haven
