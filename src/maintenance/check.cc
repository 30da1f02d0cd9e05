#include "maintenance/check.h"

#include <algorithm>
#include <cstring>
#include <chrono>
#include <cstdlib>
#include <atomic>
#include <future>
#include <map>
#include <random>
#include <set>
#include <span>
#include <tuple>
#include <unordered_set>

#include "core/error.h"
#include "core/mutex.h"
#include "core/sha256.h"
#include "core/thread_pool.h"
#include "core/timings.h"
#include "maintenance/check_head_start.h"
#include "maintenance/prune.h"
#include "repo/gojson.h"
#include "repo/indexed_repository.h"
#include "repo/node.h"
#include "repo/tree_stream.h"

namespace haven {

namespace {

// The entries of one pack's index, by offset (then length).
std::vector<const PackedBlob*> ByOffset(const std::vector<PackedBlob>& indexed) {
  std::vector<const PackedBlob*> order;
  order.reserve(indexed.size());
  for (const PackedBlob& b : indexed) order.push_back(&b);
  std::sort(order.begin(), order.end(), [](const PackedBlob* a, const PackedBlob* b) {
    return std::tie(a->offset, a->length) < std::tie(b->offset, b->length);
  });
  return order;
}

// CheckPackData's problems, in their order: the pack hash, the header, the header against
// the index, then each blob's.
std::vector<std::string> PackProblems(const std::string& name, bool hash_ok,
                                      std::vector<std::string> header_errs,
                                      const std::vector<PackedBlob>& header,
                                      const std::vector<PackedBlob>& indexed,
                                      std::vector<std::string> blob_errs) {
  std::vector<std::string> errs;
  if (!hash_ok) errs.push_back("pack " + name + ": content does not match its id (pack hash mismatch)");
  for (auto& e : header_errs) errs.push_back(std::move(e));
  auto key = [](const PackedBlob& b) {
    return std::make_tuple(static_cast<int>(b.type), b.id, b.offset, b.length,
                           b.uncompressed_length);
  };
  if (!header.empty()) {
    std::set<decltype(key(header[0]))> hs, is;
    for (const auto& b : header) hs.insert(key(b));
    for (const auto& b : indexed) is.insert(key(b));
    if (hs != is) errs.push_back("pack " + name + ": header entries do not match the index");
  }
  for (auto& e : blob_errs) errs.push_back(std::move(e));
  return errs;
}

}  // namespace

std::vector<std::string> CheckPackData(Repository& repo, const PackId& pack, uint64_t size,
                                       const std::vector<PackedBlob>& indexed,
                                       PackCheckBuffers& bufs, uint64_t segment, bool stream) {
  const std::string name = pack.Hex();
  const Handle h{FileType::kPack, name};
  segment = std::max<uint64_t>(segment, 1);
  Backend& be = repo.backend();
  const std::vector<const PackedBlob*> order = ByOffset(indexed);

  std::vector<std::string> header_errs, blob_errs;
  std::vector<PackedBlob> header;
  // The header sits at the end of the file: parsed from the last segment before any blob
  // in it is opened in place, or read on its own after the pass when it is longer than
  // that segment. Blobs overlapping one opened in place are read on their own after the
  // pass too: nothing else is loaded while a stream holds a connection (the load could
  // wait for a connection that every stream holds).
  uint64_t header_later = 0;
  std::vector<const PackedBlob*> overlapped_later;
  auto parse_header = [&](ByteView tail) {
    try {
      header = ParsePackHeader(repo.key(), tail, size, name, &header_later);
    } catch (const Error& e) {
      header_errs.push_back(e.what());
    }
  };
  auto decode = [&](const PackedBlob& b, std::span<uint8_t> sealed) {
    try {
      repo.DecodeBlobInPlace(b.id, sealed, b.uncompressed_length, name,
                             bufs.out.First(b.uncompressed_length));
    } catch (const Error& e) {
      blob_errs.push_back(e.what());
    }
  };

  // One pass over the file in segments of about `segment` bytes, each holding whole
  // blobs: every byte is read once, hashed for the pack id, and each blob is opened,
  // decompressed and hashed while its bytes are still in the CPU cache.
  Sha256Stream hash;
  uint64_t pos = 0;          // file bytes read and hashed so far
  uint64_t opened_end = 0;   // end of the furthest blob opened in place
  size_t next = 0;           // next blob of `order`
  // The end of the segment that starts at pos.
  auto segment_end = [&] {
    uint64_t end = size - pos <= 2 * segment ? size : pos + segment;
    for (size_t j = next; j < order.size() && order[j]->offset < end; ++j)
      end = std::max(end, std::min(size, uint64_t(order[j]->offset) + order[j]->length));
    return end;
  };
  // Checks the segment [pos, end) whose bytes are in seg, and moves pos to its end.
  auto check_segment = [&](uint64_t end, std::span<uint8_t> seg) {
    {
      ScopedTimer timer(Stage::kHash);
      hash.Update(seg);
    }
    if (end == size) parse_header(seg);
    ScopedTimer timer(Stage::kDecode);
    for (; next < order.size() && order[next]->offset < end; ++next) {
      const PackedBlob& b = *order[next];
      const uint64_t blob_end = uint64_t(b.offset) + b.length;
      if (blob_end > size) {
        blob_errs.push_back("pack " + name + ": blob " + b.id.Hex() +
                            " lies beyond the end of the pack");
        continue;
      }
      if (b.offset >= opened_end) {
        decode(b, seg.subspan(b.offset - pos, b.length));
      } else {
        overlapped_later.push_back(&b);  // a damaged index: read its own copy later
      }
      opened_end = std::max(opened_end, blob_end);
    }
    pos = end;
  };
  try {
    if (stream && size > 0) {
      // One request for the whole pack, its bytes gathered into the same segments as they
      // arrive: no round trip per segment, and a worker still holds one segment.
      uint64_t end = segment_end(), have = 0;  // bytes of [pos, end) arrived
      const auto started = std::chrono::steady_clock::now();
      std::chrono::steady_clock::duration checking{};
      be.LoadStream(h, 0, size, [&](ByteView piece) {
        while (!piece.empty()) {
          std::span<uint8_t> seg = bufs.window.First(end - pos);
          const size_t take = static_cast<size_t>(std::min<uint64_t>(piece.size(), seg.size() - have));
          std::memcpy(seg.data() + have, piece.data(), take);
          piece = piece.subspan(take);
          have += take;
          if (have < seg.size()) return;
          const auto t0 = std::chrono::steady_clock::now();
          check_segment(end, seg);
          checking += std::chrono::steady_clock::now() - t0;
          have = 0;
          if (pos < size) end = segment_end();
        }
      });
      if (Timings::Enabled())
        Timings::Add(Stage::kLoad, std::chrono::steady_clock::now() - started - checking);
    }
    while (pos < size) {
      const uint64_t end = segment_end();
      std::span<uint8_t> seg = bufs.window.First(end - pos);
      {
        ScopedTimer timer(Stage::kLoad);
        be.LoadInto(h, pos, seg);
      }
      check_segment(end, seg);
    }
    if (header_later > 0) {
      try {
        std::span<uint8_t> t = bufs.scratch.First(header_later);
        {
          ScopedTimer timer(Stage::kLoad);
          be.LoadInto(h, size - header_later, t);
        }
        header = ParsePackHeader(repo.key(), t, size, name, &header_later);
      } catch (const Error& e) {
        header_errs.push_back(e.what());
      }
    }
    for (const PackedBlob* b : overlapped_later) {
      std::span<uint8_t> own = bufs.scratch.First(b->length);
      be.LoadInto(h, b->offset, own);
      decode(*b, own);
    }
  } catch (const Error& e) {
    blob_errs.push_back("pack " + name + ": " + e.what());
    return blob_errs;
  }
  if (size == 0) parse_header({});
  for (; next < order.size(); ++next)  // blobs that start at or after the end of the file
    blob_errs.push_back("pack " + name + ": blob " + order[next]->id.Hex() +
                        " lies beyond the end of the pack");

  return PackProblems(name, hash.Finish() == static_cast<const RawId&>(pack), std::move(header_errs),
                      header, indexed, std::move(blob_errs));
}

std::vector<std::string> TreeNameErrors(const std::vector<Node>& nodes) {
  std::vector<std::string> errs;
  std::set<std::string_view> seen, repeated;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string& name = nodes[i].name;
    if (!SafeNodeName(name))
      errs.push_back("unsafe name \"" + gojson::QuoteName(name) +
                     "\" (empty, \".\", \"..\" or holding '/' or NUL)");
    if (!seen.insert(name).second && repeated.insert(name).second)
      errs.push_back("repeated name \"" + gojson::QuoteName(name) + "\"");
  }
  return errs;
}

namespace {

// Packs to read for --read-data-subset. "n/m" takes the packs whose id's first byte is
// n-1 modulo m, as restic does, so the m groups cover the repository exactly once. A size
// ("50M", suffixes k/m/g/t as prune's sizes; a plain number is refused as restic 0.14 does)
// takes as many random packs as that size's share of all packs' bytes, at least one.
// `stage` receives restic's announcement for a size ("read N bytes of data packs").
std::vector<size_t> SelectSubset(const std::vector<PackId>& ids, const std::vector<uint64_t>& sizes,
                                 const std::string& spec, std::string& stage) {
  size_t n = ids.size();
  std::vector<size_t> out;
  if (spec.empty()) {
    for (size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  auto bad = [&] {
    Fail(ErrorCode::kInvalidArgument,
         "invalid --read-data-subset \"" + spec + "\" (want n/m or x%)");
  };
  if (spec.back() == '%') {
    char* end = nullptr;
    std::string num = spec.substr(0, spec.size() - 1);
    double pct = std::strtod(num.c_str(), &end);
    if (num.empty() || *end) bad();
    if (pct <= 0 || pct > 100)
      Fail(ErrorCode::kInvalidArgument, "invalid --read-data-subset " + spec);
    std::vector<size_t> all(n);
    for (size_t i = 0; i < n; ++i) all[i] = i;
    std::mt19937_64 rng(std::random_device{}());
    std::shuffle(all.begin(), all.end(), rng);
    size_t k = static_cast<size_t>(double(n) * pct / 100.0 + 0.999999);
    all.resize(std::min(k, n));
    std::sort(all.begin(), all.end());
    return all;
  }
  size_t slash = spec.find('/');
  if (slash == std::string::npos) {
    if (spec.find_first_not_of("0123456789") == std::string::npos)
      Fail(ErrorCode::kInvalidArgument,
           "invalid --read-data-subset \"" + spec +
               "\" (want n/m, x% or a size with a suffix k, m, g or t, such as 50M)");
    uint64_t want = ParsePruneSize(spec, "--read-data-subset");
    if (want == 0)
      Fail(ErrorCode::kInvalidArgument, "invalid --read-data-subset " + spec + ": the size must be above 0");
    uint64_t total = 0;
    for (uint64_t sz : sizes) total += sz;
    if (total == 0)
      Fail(ErrorCode::kInvalidArgument,
           "--read-data-subset " + spec + ": cannot read from a repository having size 0");
    want = std::min(want, total);
    stage = "read " + std::to_string(want) + " bytes of data packs";
    // restic 0.14: floor(packs * size / total bytes), at least one pack.
    size_t k = static_cast<size_t>(double(n) * (double(want) / double(total)));
    k = std::clamp<size_t>(k, 1, n);
    std::vector<size_t> all(n);
    for (size_t i = 0; i < n; ++i) all[i] = i;
    std::mt19937_64 rng(std::random_device{}());
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(k);
    std::sort(all.begin(), all.end());
    return all;
  }
  char* e1 = nullptr;
  char* e2 = nullptr;
  std::string gs = spec.substr(0, slash), ms = spec.substr(slash + 1);
  long g = std::strtol(gs.c_str(), &e1, 10), m = std::strtol(ms.c_str(), &e2, 10);
  if (gs.empty() || ms.empty() || *e1 || *e2) bad();
  if (m < 1 || g < 1 || g > m)
    Fail(ErrorCode::kInvalidArgument, "invalid --read-data-subset " + spec);
  for (size_t i = 0; i < n; ++i)
    if (static_cast<long>(ids[i].bytes[0] % m) == g - 1) out.push_back(i);
  return out;
}

}  // namespace

namespace {

// The packs as listed by the backend and as described by the index.
struct PackState {
  std::map<PackId, uint64_t> on_disk;                // name -> size
  std::map<PackId, std::vector<PackedBlob>> packs;   // indexed blobs, duplicates merged
};

}  // namespace

std::map<PackId, std::vector<PackedBlob>> PacksOfIndex(IndexedRepository& repo,
                                                       std::vector<std::string>* hints) {
  std::map<PackId, std::vector<PackedBlob>> packs;
  repo.index().ForEach([&](const PackId& p, const PackedBlob& b) { packs[p].push_back(b); });
  // A pack listed by several index files (an interrupted prune or repair wrote the new index
  // but had not deleted the old one yet) is still one pack: merge identical entries. restic
  // reports this as a non-critical hint.
  auto key = [](const PackedBlob& b) {
    return std::make_tuple(b.offset, b.length, static_cast<int>(b.type), b.id,
                           b.uncompressed_length);
  };
  for (auto& [pid, blobs] : packs) {
    size_t n = blobs.size();
    std::sort(blobs.begin(), blobs.end(),
              [&](const PackedBlob& a, const PackedBlob& b) { return key(a) < key(b); });
    blobs.erase(std::unique(blobs.begin(), blobs.end(),
                            [&](const PackedBlob& a, const PackedBlob& b) { return key(a) == key(b); }),
                blobs.end());
    if (blobs.size() != n && hints)
      hints->push_back("pack " + pid.Hex() + ": contained in several indexes");
  }
  return packs;
}

namespace {

// The pack files in storage: name -> size.
std::map<PackId, uint64_t> ListPacks(Backend& be) {
  std::map<PackId, uint64_t> on_disk;
  be.List(FileType::kPack, [&](const FileInfo& fi) {
    if (auto id = PackId::FromHex(fi.name)) on_disk[*id] = fi.size;
  });
  return on_disk;
}

// Compares the pack files (`on_disk`, ListPacks) with the index: missing packs and wrong
// sizes are errors; packs in several indexes, mixed packs and unreferenced files are hints.
PackState CheckPackFiles(IndexedRepository& repo, std::map<PackId, uint64_t> on_disk,
                         CheckResult& res) {
  PackState st;
  st.on_disk = std::move(on_disk);
  st.packs = PacksOfIndex(repo, &res.hints);
  for (auto& [pid, blobs] : st.packs) {
    auto it = st.on_disk.find(pid);
    if (it == st.on_disk.end()) {
      res.errors.push_back("pack " + pid.Hex() + ": does not exist");
      continue;
    }
    uint64_t expect = PackHeaderSize(blobs);
    for (const auto& b : blobs) expect += b.length;
    if (it->second != expect)
      res.errors.push_back("pack " + pid.Hex() + ": size is " + std::to_string(it->second) +
                           " bytes but the index describes " + std::to_string(expect));
    bool mixed = false;
    for (const auto& b : blobs) mixed |= b.type != blobs[0].type;
    if (mixed) res.hints.push_back("pack " + pid.Hex() + ": holds both data and tree blobs");
  }
  for (const auto& [pid, size] : st.on_disk)
    if (!st.packs.count(pid))
      res.hints.push_back("pack " + pid.Hex() + ": not referenced in any index");
  if (size_t n = repo.backend().CountStaleTempFiles(kStaleTempAge))
    res.hints.push_back(std::to_string(n) + " temp file" + (n == 1 ? "" : "s") +
                        " older than a day left by interrupted writers: `haven prune` "
                        "removes them");
  return st;
}

// The snapshots' trees, walked on StreamTrees: every tree loads and decodes with safe,
// unique names, every dir has a subtree, every tree and data blob is indexed. Each tree
// is checked once (a bitmap over index positions); each problem is reported once.
class TreeCheck {
 public:
  TreeCheck(IndexedRepository& repo, int threads) : repo_(repo), index_(repo.index()), threads_(threads) {}

  // Appends the problems to `errors`, ordered by snapshot (as listed), then path.
  void Run(const std::vector<FileId>& snap_ids, std::vector<std::string>& errors) {
    repo_.CompactIndex();
    tree_bits_.assign((index_.Positions(BlobType::kTree) + 63) / 64, 0);
    std::vector<TreeRef> roots;
    for (size_t i = 0; i < snap_ids.size(); ++i) {
      try {
        Snapshot snap = Snapshot::Parse(repo_.LoadJson(FileType::kSnapshot, snap_ids[i]), snap_ids[i].Hex());
        roots.push_back({snap.tree, 0, "/"});
        root_snap_.push_back(i);
      } catch (const Error& e) {
        MutexLock lock(mu_);
        found_.push_back({i, "", std::string(e.what()) +
                                     " (`haven repair snapshots --forget` can remove it)"});
      }
    }
    snap_ids_ = &snap_ids;
    StreamTreesOptions so;
    so.threads = threads_;
    so.visit = [this](const TreeRef& t, size_t pos) { return Visit(t, pos); };
    so.tree = [this](const StreamedTree& t, TreeChildren& c) { CheckTree(t, c); };
    so.error = [this](const TreeStreamError& e) {
      Add(e.ref, "tree " + e.ref.id.Hex() + " (" + e.ref.path + "): " + e.message);
      return true;
    };
    StreamTrees(repo_, std::move(roots), so);
    MutexLock lock(mu_);
    std::sort(found_.begin(), found_.end());
    for (auto& f : found_) errors.push_back(std::move(f.msg));
  }

 private:
  struct Found {
    size_t snap;  // position in snap_ids
    std::string path, msg;
    bool operator<(const Found& o) const { return std::tie(snap, path, msg) < std::tie(o.snap, o.path, o.msg); }
  };

  void Add(const TreeRef& at, const std::string& what) {
    const size_t snap = root_snap_[at.root];
    std::string msg = "snapshot " + (*snap_ids_)[snap].Short() + ": " + what;
    MutexLock lock(mu_);
    found_.push_back({snap, at.path, std::move(msg)});
  }

  bool Visit(const TreeRef& t, size_t pos) {
    if (pos != Index::npos) {
      std::atomic_ref<uint64_t> w(tree_bits_[pos >> 6]);
      const uint64_t m = uint64_t{1} << (pos & 63);
      return !(w.fetch_or(m, std::memory_order_relaxed) & m);
    }
    bool first;
    {
      MutexLock lock(mu_);
      first = unindexed_trees_.insert(t.id).second;
    }
    if (first) Add(t, "tree " + t.id.Hex() + " (" + t.path + ") is not in the index");
    return false;
  }

  void CheckTree(const StreamedTree& t, TreeChildren& children) {
    const TreeRef& at = t.ref;
    const std::vector<Node> nodes = DecodeTree(t.json(), at.id.Hex(), t.capacity);
    const std::string tree = "tree " + at.id.Hex();
    for (const std::string& e : TreeNameErrors(nodes)) Add(at, tree + " (" + at.path + "): " + e);
    for (const Node& n : nodes) {
      std::string child = at.path == "/" ? "/" + n.name : at.path + "/" + n.name;
      if (n.type == NodeType::kDir) {
        if (!n.subtree) {
          Add(at, tree + ": dir " + child + " has no subtree");
        } else {
          children.Add(*n.subtree, std::move(child));
        }
      } else if (n.type == NodeType::kFile) {
        for (const BlobId& b : n.content) {
          if (index_.Has(BlobType::kData, b)) continue;
          bool first;
          {
            MutexLock lock(mu_);
            first = missing_data_.insert(b).second;
          }
          if (first) Add(at, tree + ": file " + child + " blob " + b.Hex() + " is not in the index");
        }
      }
    }
  }

  IndexedRepository& repo_;
  const Index& index_;
  const int threads_;
  const std::vector<FileId>* snap_ids_ = nullptr;
  std::vector<size_t> root_snap_;     // root -> position in snap_ids
  std::vector<uint64_t> tree_bits_;   // trees visited, by index position
  Mutex mu_;
  std::vector<Found> found_ GUARDED_BY(mu_);
  std::unordered_set<BlobId, IdHash> unindexed_trees_ GUARDED_BY(mu_);
  std::unordered_set<BlobId, IdHash> missing_data_ GUARDED_BY(mu_);
};

// --read-data: the selected packs, largest first (so that no thread is left with a big
// one at the end), on `threads` threads; the problems in pack id order.
void ReadPacks(IndexedRepository& repo, const PackState& st, const std::vector<PackId>& ids,
               int threads, CheckHeadStart* head_start, CheckResult& res) {
  res.packs_read = ids.size();
  if (head_start) {  // the reads it began are kept where the listings agree
    for (auto& errs : head_start->ReadAll(ids, st.on_disk, st.packs))
      for (auto& e : errs) res.errors.push_back(std::move(e));
    return;
  }
  std::vector<size_t> todo(ids.size());
  for (size_t i = 0; i < todo.size(); ++i) todo[i] = i;
  std::stable_sort(todo.begin(), todo.end(), [&](size_t a, size_t b) {
    return st.on_disk.at(ids[a]) > st.on_disk.at(ids[b]);
  });
  std::vector<std::vector<std::string>> per_pack(ids.size());
  std::atomic<size_t> next{0};
  const size_t workers = std::min<size_t>(std::max(1, threads), std::max<size_t>(1, todo.size()));
  // Storage with round trips: each pack is one streamed request (see kCheckSegment).
  const bool stream = repo.backend().RoundTrips();
  ParallelFor(workers, static_cast<int>(workers), [&](size_t) {
    PackCheckBuffers bufs;  // per thread, reused for all its packs
    for (size_t k; (k = next.fetch_add(1)) < todo.size();) {
      const PackId& pid = ids[todo[k]];
      try {
        per_pack[todo[k]] = CheckPackData(repo, pid, st.on_disk.at(pid), st.packs.at(pid), bufs,
                                          kCheckSegment, stream);
      } catch (const std::exception& e) {
        per_pack[todo[k]].push_back("pack " + pid.Hex() + ": " + e.what());
      }
    }
  });
  for (auto& errs : per_pack)
    for (auto& e : errs) res.errors.push_back(std::move(e));
}

// The packs --read-data(-subset) reads (existing ones only), in pack id order.
std::vector<PackId> PacksToRead(const PackState& st, const CheckOptions& opts,
                                std::string& stage) {
  std::vector<PackId> ids;
  std::vector<uint64_t> sizes;
  for (const auto& [pid, blobs] : st.packs)
    if (auto it = st.on_disk.find(pid); it != st.on_disk.end()) {
      ids.push_back(pid);
      sizes.push_back(it->second);
    }
  std::vector<PackId> out;
  for (size_t i : SelectSubset(ids, sizes, opts.read_data_subset, stage)) out.push_back(ids[i]);
  return out;
}

}  // namespace

int CheckLoaders(const Backend& be, int jobs) {
  const int threads = std::max(1, ResolveJobs(jobs));
  // loads wait on storage: by default at least as many at once as it serves (S3: 5)
  return jobs > 0 ? threads : std::max(threads, be.Connections());
}

// The steps: index, pack files, snapshots and trees, then (with --read-data, read while the
// trees are checked) the packs' bytes. Problems are reported in that order.
CheckResult RunCheck(Repository& opened, const CheckOptions& opts) {
  CheckResult res;
  auto stage = [&](const std::string& s) {
    if (opts.progress) opts.progress(s);
  };
  // The packs are listed while the snapshots are listed and the index loads (independent
  // reads: round trips that overlap on remote storage); an error of the listing is
  // reported where the listing is used, as before.
  auto pack_listing = std::async(std::launch::async, [&opened] { return ListPacks(opened.backend()); });
  // Snapshots are listed before the index is loaded (a concurrent backup writes the
  // index before its snapshot), unless the repository is locked exclusively: no backup
  // can write then, and the index loads while the snapshots are listed.
  // Under the exclusive lock, the index loaded before the lock (CheckHeadStart) is the
  // index if the index files listed now are the same.
  CheckHeadStart* head_start = opts.locked_exclusively ? opts.head_start : nullptr;
  std::unique_ptr<IndexedRepository> owned;
  std::future<IndexedRepository*> index_load;
  auto load_index = [&opened, &owned, &head_start]() -> IndexedRepository* {
    ScopedTimer timer(Stage::kIndex);
    if (head_start) {
      auto files = IndexedRepository::ListIndexFiles(opened.backend());
      if (IndexedRepository* early = head_start->IndexFor(files)) return early;
      head_start = nullptr;  // (read by the caller only after this returns)
      owned = IndexedRepository::Load(opened, std::move(files));
    } else {
      owned = IndexedRepository::Load(opened);
    }
    return owned.get();
  };
  if (opts.locked_exclusively) index_load = std::async(std::launch::async, load_index);
  std::vector<FileId> snap_ids;
  try {
    snap_ids = opened.ListIds(FileType::kSnapshot);
    if (opts.confirm_lock) opts.confirm_lock();
  } catch (...) {
    if (index_load.valid()) index_load.wait();  // it reads through what the caller owns
    throw;
  }
  stage("load indexes");
  IndexedRepository* indexed = nullptr;
  try {
    indexed = index_load.valid() ? index_load.get() : load_index();
  } catch (const Error& e) {
    res.errors.push_back(std::string("error loading index: ") + e.what());
    return res;
  }
  IndexedRepository& repo = *indexed;

  stage("check all packs");
  PackState packs = CheckPackFiles(repo, pack_listing.get(), res);
  const bool read_data = opts.read_data || !opts.read_data_subset.empty();
  std::string read_stage = "read all data";
  std::vector<PackId> to_read;
  if (read_data) to_read = PacksToRead(packs, opts, read_stage);  // bad arguments fail early

  const int io = CheckLoaders(repo.backend(), opts.jobs);
  stage("check snapshots, trees and blobs");
  // With --read-data the packs are read while the trees are checked (on remote storage the
  // tree walk waits on round trips that the reads fill); the stages and their problems are
  // reported in the order above all the same.
  CheckResult read;
  std::future<void> reading;
  if (read_data)
    reading = std::async(std::launch::async,
                         [&] { ReadPacks(repo, packs, to_read, io, head_start, read); });
  try {
    ScopedTimer timer(Stage::kWalk);
    TreeCheck(repo, io).Run(snap_ids, res.errors);
  } catch (...) {
    if (reading.valid()) reading.wait();  // it reads through what the caller owns
    throw;
  }
  if (read_data) {
    stage(read_stage);
    reading.get();
    for (auto& e : read.errors) res.errors.push_back(std::move(e));
    res.packs_read = read.packs_read;
  }
  return res;
}

}  // namespace haven
