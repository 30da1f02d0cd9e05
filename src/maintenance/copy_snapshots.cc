#include "maintenance/copy_snapshots.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "core/error.h"
#include "maintenance/rechunk_tree.h"
#include "maintenance/used_blobs.h"

namespace haven {

namespace {

bool SameInstant(const gojson::Timestamp& a, const gojson::Timestamp& b) {
  return a.sec == b.sec && a.nsec == b.nsec;
}

// restic's HasPaths / HasTags: every entry of `want` is in `have`.
bool HasAll(const std::vector<std::string>& have, const std::vector<std::string>& want) {
  return std::all_of(want.begin(), want.end(), [&](const std::string& w) {
    return std::find(have.begin(), have.end(), w) != have.end();
  });
}

struct Wanted {
  BlobType type;
  BlobId id;
  BlobLocation loc;
};

// Copies the blobs one pack at a time: the pack is read once (its whole extent of wanted
// blobs), each blob decoded with the source key and saved through the destination session.
void CopyBlobs(IndexedRepository& src, WriteSession& dst, std::vector<Wanted> wanted,
               CopySnapshotsResult& res) {
  std::sort(wanted.begin(), wanted.end(), [](const Wanted& a, const Wanted& b) {
    return a.loc.pack != b.loc.pack ? a.loc.pack < b.loc.pack : a.loc.offset < b.loc.offset;
  });
  for (size_t i = 0; i < wanted.size();) {
    size_t j = i;
    while (j < wanted.size() && wanted[j].loc.pack == wanted[i].loc.pack) ++j;
    const uint64_t start = wanted[i].loc.offset;
    const uint64_t end = uint64_t{wanted[j - 1].loc.offset} + wanted[j - 1].loc.length;
    const std::string pack = wanted[i].loc.pack.Hex();
    Bytes span;
    bool span_ok = true;
    try {
      span = src.backend().Load({FileType::kPack, pack}, start, end - start);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kIo) throw;
      span_ok = false;  // every blob through LoadBlob (all its locations)
    }
    for (size_t k = i; k < j; ++k) {
      const Wanted& w = wanted[k];
      Bytes plain;
      try {
        if (!span_ok) throw Error(ErrorCode::kCorrupt, "pack " + pack + " unreadable");
        ByteView sealed(span.data() + (w.loc.offset - start), w.loc.length);
        plain = src.DecodeBlob(w.id, sealed, w.loc.uncompressed_length, pack);
      } catch (const Error& e) {
        if (e.code() == ErrorCode::kIo) throw;
        plain = src.LoadBlob(w.type, w.id);  // another copy, or the error naming the blob
      }
      dst.SaveBlob(w.type, w.id, plain);
      res.blobs++;
      res.bytes += plain.size();
    }
    i = j;
  }
}

// The blobs `root` references that the destination lacks, with a source location each.
std::vector<Wanted> MissingBlobs(IndexedRepository& src, WriteSession& dst, const BlobId& root,
                                 int threads) {
  UsedBlobsOptions uo;
  uo.threads = threads;
  const UsedBlobs used = FindUsedBlobs(src, {{FileId{}, root}}, uo);
  std::vector<Wanted> out;
  for (BlobType t : {BlobType::kTree, BlobType::kData}) {
    if (!used.Missing(t).empty())
      Fail(ErrorCode::kCorrupt, std::string("the source repository lacks ") + BlobTypeName(t) +
                                    " blob " + used.Missing(t).front().Hex());
    for (const BlobId& id : used.Ids(t)) {
      if (dst.HasBlob(t, id)) continue;
      out.push_back({t, id, src.index().Lookup(t, id).front()});
    }
  }
  return out;
}

}  // namespace

bool SimilarSnapshots(const Snapshot& a, const Snapshot& b) {
  return a.tree == b.tree && SimilarExceptTree(a, b);
}

bool SimilarExceptTree(const Snapshot& a, const Snapshot& b) {
  return SameInstant(a.time, b.time) && a.hostname == b.hostname &&
         a.username == b.username && a.uid == b.uid && a.gid == b.gid &&
         a.paths.size() == b.paths.size() && a.excludes == b.excludes &&
         a.tags.size() == b.tags.size() && HasAll(a.paths, b.paths) && HasAll(a.tags, b.tags);
}

CopySnapshotsResult CopySnapshots(IndexedRepository& src, WriteSession& dst,
                                  const SnapshotList& sources, const SnapshotList& existing,
                                  const CopySnapshotsOptions& opts) {
  auto say = [&](const std::string& s) {
    if (opts.progress) opts.progress(s);
  };
  // restic's dstSnapshotByOriginal: by `original` and by own id.
  std::unordered_map<FileId, std::vector<const std::pair<FileId, Snapshot>*>, IdHash> by_original;
  for (const auto& e : existing) {
    if (e.second.original && !e.second.original->IsZero()) by_original[*e.second.original].push_back(&e);
    by_original[e.first].push_back(&e);
  }
  CopySnapshotsResult res;
  res.rechunk = opts.rechunk &&
                src.config().chunker_polynomial != dst.repo().config().chunker_polynomial;
  std::optional<Rechunker> rechunker;
  if (res.rechunk) {
    rechunker.emplace(src, dst);
    say("the chunker parameters of the two repositories differ: files are re-chunked for the "
        "destination (--no-rechunk copies blobs as they are, as restic does)");
  }
  for (const auto& [id, snap] : sources) {
    if (opts.begin) opts.begin(id, snap);
    const FileId original = snap.original ? *snap.original : id;
    const std::pair<FileId, Snapshot>* copy = nullptr;
    if (auto it = by_original.find(original); it != by_original.end())
      for (const auto* e : it->second)
        if (res.rechunk ? SimilarExceptTree(e->second, snap) : SimilarSnapshots(e->second, snap)) {
          copy = e;
          break;
        }
    if (copy) {
      say("skipping source snapshot " + id.Short() + ", was already copied to snapshot " +
          copy->first.Short());
      res.skipped++;
      continue;
    }
    say("  copy started, this may take a while...");
    Snapshot fresh = snap;
    if (rechunker) {
      fresh.tree = rechunker->Tree("/", snap.tree);
      res.blobs = rechunker->chunks();
      res.bytes = rechunker->bytes();
    } else {
      CopyBlobs(src, dst, MissingBlobs(src, dst, snap.tree, opts.threads), res);
    }
    dst.Flush();  // blobs and index before the snapshot that needs them
    fresh.parent.reset();
    if (!fresh.original) fresh.original = id;
    dst.repo().CheckLock();
    const FileId nid = dst.repo().SaveJson(FileType::kSnapshot, fresh.ToJson());
    res.written.push_back(nid);
    res.copied++;
    say("snapshot " + nid.Short() + " saved");
  }
  return res;
}

}  // namespace haven
