#include "repo/index.h"

#include <simdjson.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/error.h"
#include "core/mutex.h"
#include "core/thread_pool.h"
#include "repo/index_scanner.h"

namespace haven {

namespace {

constexpr size_t kShards = 512;  // (type, first id byte)

// One index entry without its first id byte (the shard says it) and type.
struct Rec {
  uint8_t id[31];  // id bytes 1..31
  uint8_t pack[4], offset[4], length[4], ulen[4];
};
static_assert(sizeof(Rec) == 47 && alignof(Rec) == 1);

inline uint32_t Get32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void Put32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
inline uint64_t Key64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}
// memcmp order of two 31-byte id tails, eight bytes at a time first.
inline int CmpId(const uint8_t* a, const uint8_t* b) {
  uint64_t x = Key64(a), y = Key64(b);
  if (x != y) return x < y ? -1 : 1;
  return std::memcmp(a + 8, b + 8, 23);
}
inline bool RecLess(const Rec& a, const Rec& b) {
  int c = CmpId(a.id, b.id);
  return c ? c < 0 : Get32(a.pack) < Get32(b.pack);
}
inline size_t ShardNo(BlobType t, const BlobId& id) {
  return static_cast<size_t>(t) * 256 + id.bytes[0];
}
Rec MakeRec(const PackedBlob& b, uint32_t pack) {
  Rec r;
  std::memcpy(r.id, b.id.bytes.data() + 1, 31);
  Put32(r.pack, pack);
  Put32(r.offset, b.offset);
  Put32(r.length, b.length);
  Put32(r.ulen, b.uncompressed_length);
  return r;
}

}  // namespace

// Records in one allocation that grows by a quarter (little slack at any time): a sorted
// run [0, sorted) with a table over the second id byte, then an unsorted tail.
struct Index::Shard {
  Rec* recs = nullptr;
  size_t size = 0, cap = 0, sorted = 0;
  std::unique_ptr<uint32_t[]> sub;  // 257 positions in the sorted run, by id byte 1

  bool in_arena = false;  // recs lies in the index's arena (not malloc'ed)

  ~Shard() {
    if (!in_arena) std::free(recs);
  }
  void Reserve(size_t n) {
    if (n <= cap) return;
    if (in_arena) {  // grows out of the arena into its own allocation
      void* p = std::malloc(n * sizeof(Rec));
      if (!p) throw std::bad_alloc();
      if (size) std::memcpy(p, recs, size * sizeof(Rec));
      recs = static_cast<Rec*>(p);
      in_arena = false;
    } else {
      void* p = std::realloc(recs, n * sizeof(Rec));
      if (!p) throw std::bad_alloc();
      recs = static_cast<Rec*>(p);
    }
    cap = n;
  }
  void Append(const Rec* r, size_t n) {
    if (size + n > cap) Reserve(std::max(size + n, cap + cap / 4 + 16));
    std::memcpy(recs + size, r, n * sizeof(Rec));
    size += n;
  }
  void Shrink() {
    if (cap == size || in_arena) return;
    if (size == 0) {
      std::free(recs);
      recs = nullptr;
      cap = 0;
      return;
    }
    if (void* p = std::realloc(recs, size * sizeof(Rec))) {
      recs = static_cast<Rec*>(p);
      cap = size;
    }
  }
  void BuildSub() {
    if (!sub) sub.reset(new uint32_t[257]);
    size_t pos = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      sub[b] = static_cast<uint32_t>(pos);
      while (pos < sorted && recs[pos].id[0] == b) ++pos;
    }
    sub[256] = static_cast<uint32_t>(sorted);
  }
  // Sorts the tail into the run.
  void Merge() {
    if (sorted == size) return;
    std::sort(recs + sorted, recs + size, RecLess);
    std::inplace_merge(recs, recs + sorted, recs + size, RecLess);
    sorted = size;
    BuildSub();
  }
  // Where in the sorted run a tail is expected: ids are SHA-256, so within the run's
  // bucket for tail[0] the next eight bytes are uniform and the position is about
  // proportional to them (interpolation; off by ~sqrt(bucket size)/2 records on average).
  const Rec* Guess(const uint8_t* tail) const {
    const uint32_t a = sub[tail[0]], n = sub[tail[0] + 1] - a;
    const uint64_t k = Key64(tail + 1);
    return recs + a + static_cast<uint32_t>((static_cast<unsigned __int128>(k) * n) >> 64);
  }
  // The first record of the sorted run whose id tail is >= tail: from the interpolated
  // guess, gallop towards the target, then a binary search in the bracket. A few
  // neighbouring records for random ids (one or two cache misses), never worse than
  // O(log n) compares whatever the ids are.
  const Rec* LowerBound(const uint8_t* tail) const {
    const Rec* lo = recs + sub[tail[0]];
    const Rec* hi = recs + sub[tail[0] + 1];
    if (lo == hi) return lo;
    const Rec* g = Guess(tail);  // in [lo, hi)
    if (CmpId(g->id, tail) < 0) {  // the answer is after g: (g, hi]
      size_t step = 1;
      for (lo = g + 1; static_cast<size_t>(hi - lo) > step; step *= 2) {
        const Rec* q = lo + step - 1;
        if (CmpId(q->id, tail) >= 0) {
          hi = q;
          break;
        }
        lo = q + 1;
      }
    } else {  // the answer is at or before g: [lo, g]
      size_t step = 1;
      for (hi = g; static_cast<size_t>(hi - lo) > step; step *= 2) {
        const Rec* q = hi - step;
        if (CmpId(q->id, tail) < 0) {
          lo = q + 1;
          break;
        }
        hi = q;
      }
    }
    while (lo < hi) {
      const Rec* mid = lo + (hi - lo) / 2;
      if (CmpId(mid->id, tail) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
  // Calls fn for every record with this id tail: the run's in pack-number order, then the
  // tail's.
  template <typename Fn>
  void Find(const uint8_t* tail, Fn fn) const {
    if (sorted) {
      for (const Rec* lo = LowerBound(tail), *end = recs + sorted;
           lo < end && CmpId(lo->id, tail) == 0; ++lo)
        fn(*lo);
    }
    const uint64_t k = Key64(tail);
    for (size_t i = sorted; i < size; ++i)
      if (Key64(recs[i].id) == k && CmpId(recs[i].id, tail) == 0) fn(recs[i]);
  }
};

Index::Index() : shards_(new Shard[kShards]) {}
Index::~Index() = default;
Index::Index(Index&&) noexcept = default;
Index& Index::operator=(Index&&) noexcept = default;

Index::Shard& Index::ShardOf(BlobType type, const BlobId& id) const {
  return shards_[ShardNo(type, id)];
}

uint32_t Index::RegisterPack(const PackId& pack, bool tree_pack) {
  if (packs_.size() >= 0xffffffffu) Fail(ErrorCode::kFatal, "index: too many packs");
  uint32_t p = static_cast<uint32_t>(packs_.size());
  packs_.push_back(pack);
  pack_pos_.try_emplace(pack, p);
  if (tree_pack) tree_packs_.insert(pack);
  return p;
}

void Index::AddPack(const PackId& pack, const std::vector<PackedBlob>& blobs) {
  const uint32_t p =
      RegisterPack(pack, !blobs.empty() && blobs.front().type == BlobType::kTree);
  for (const PackedBlob& b : blobs) {
    Shard& s = ShardOf(b.type, b.id);
    Rec r = MakeRec(b, p);
    s.Append(&r, 1);
    // A short tail keeps lookups fast; merging costs O(shard) every ~1.5% growth.
    if (s.size - s.sorted > 16 + s.sorted / 64) s.Merge();
  }
  count_ += blobs.size();
}

namespace {

// One index file parsed by LoadParallel: its records grouped by shard, pack numbers final.
struct FileRecs {
  Rec* recs = nullptr;           // malloc'ed, exact size
  std::vector<uint32_t> start;   // kShards + 1 offsets into recs
  ~FileRecs() { std::free(recs); }
};

// A loader thread's reusable state: the records of the file being parsed (pack numbers
// local to the file until its packs are registered), their shards, and its packs.
struct LoadScratch {
  struct LocalPack {
    PackId id;
    int first_type = -1;  // of the pack's first blob
  };
  std::vector<Rec> recs;
  std::vector<uint16_t> shard;
  std::vector<LocalPack> packs;
  void Clear() {
    recs.clear();
    shard.clear();
    packs.clear();
  }
  // IndexScanner's visitor.
  void Pack(const PackId& id) { packs.push_back({id, -1}); }
  void Blob(const PackedBlob& b) {
    if (packs.back().first_type < 0) packs.back().first_type = static_cast<int>(b.type);
    recs.push_back(MakeRec(b, static_cast<uint32_t>(packs.size() - 1)));
    shard.push_back(static_cast<uint16_t>(ShardNo(b.type, b.id)));
  }
  void Supersedes(const RawId&) {}
};

}  // namespace

void Index::LoadParallel(size_t files, int threads,
                         const std::function<void(size_t, const ParseFn&)>& open) {
  std::vector<FileRecs> parsed(files);
  {
    struct {
      Mutex mu;  // also serialises pack registration (packs_)
      std::vector<std::unique_ptr<LoadScratch>> pool GUARDED_BY(mu);
    } scratch;
    ParallelFor(files, threads, [&](size_t i) {
      std::unique_ptr<LoadScratch> sc;
      {
        MutexLock lock(scratch.mu);
        if (!scratch.pool.empty()) {
          sc = std::move(scratch.pool.back());
          scratch.pool.pop_back();
        }
      }
      if (!sc) sc = std::make_unique<LoadScratch>();
      bool done = false;
      open(i, [&](FileText& text) {
        if (done) Fail(ErrorCode::kFatal, "index: file " + text.name + " parsed twice");
        done = true;
        sc->Clear();
        if (!IndexScanner(text.read).Run(*sc) || (text.complete && !text.complete())) {
          // Not the compact layout (or damaged): the general parser decides.
          sc->Clear();
          IndexFile f = IndexFile::Parse(text.whole(), text.name);
          for (const IndexFile::Pack& p : f.packs) {
            sc->Pack(p.id);
            for (const PackedBlob& b : p.blobs) sc->Blob(b);
          }
        }
      });
      if (!done) Fail(ErrorCode::kFatal, "index: file " + std::to_string(i) + " not parsed");
      uint32_t first;
      {
        MutexLock lock(scratch.mu);
        first = static_cast<uint32_t>(packs_.size());
        for (const auto& p : sc->packs)
          RegisterPack(p.id, p.first_type == static_cast<int>(BlobType::kTree));
      }
      // Group by shard (counting sort) into the file's exact-size array.
      FileRecs& out = parsed[i];
      out.start.assign(kShards + 1, 0);
      for (uint16_t sh : sc->shard) ++out.start[sh + 1];
      for (size_t k = 0; k < kShards; ++k) out.start[k + 1] += out.start[k];
      const size_t n = sc->recs.size();
      if (n) {
        out.recs = static_cast<Rec*>(std::malloc(n * sizeof(Rec)));
        if (!out.recs) throw std::bad_alloc();
        std::vector<uint32_t> fill(out.start.begin(), out.start.end() - 1);
        for (size_t k = 0; k < n; ++k) {
          Rec& r = out.recs[fill[sc->shard[k]]++];
          r = sc->recs[k];
          Put32(r.pack, Get32(r.pack) + first);
        }
      }
      MutexLock lock(scratch.mu);
      scratch.pool.push_back(std::move(sc));
    });
  }  // the scratch pool is freed here, before the shards are filled
  size_t add[kShards] = {};
  for (const FileRecs& f : parsed)
    for (size_t sh = 0; sh < kShards; ++sh) add[sh] += f.start.empty() ? 0 : f.start[sh + 1] - f.start[sh];
  bool fresh = true;
  size_t total = 0;
  for (size_t sh = 0; sh < kShards; ++sh) {
    fresh = fresh && shards_[sh].size == 0 && !shards_[sh].in_arena;
    total += add[sh];
  }
  if (fresh && total > 0) {
    // One arena for all shards, mapped directly. Transparent huge pages were asked for
    // here (lookups jump around hundreds of MB: a TLB miss on nearly every one with 4 KiB
    // pages), but on the VMs measured a fresh huge page costs more than the misses save:
    // `debug used-blobs` of 5.2 M blobs 5.09-5.50 s with them, 3.84-4.62 s without.
    arena_ = std::make_unique<HugeBuffer>(total * sizeof(Rec));
    auto* p = reinterpret_cast<Rec*>(arena_->data());
    for (size_t sh = 0; sh < kShards; ++sh) {
      Shard& s = shards_[sh];
      if (!add[sh]) continue;
      std::free(s.recs);
      s.recs = p;
      s.cap = add[sh];
      s.in_arena = true;
      p += add[sh];
    }
  } else {
    for (size_t sh = 0; sh < kShards; ++sh)
      if (add[sh]) shards_[sh].Reserve(shards_[sh].size + add[sh]);
  }
  // Shard by shard, so that the arena fills from its start. Every file's array is grouped
  // by shard, so the part already copied is a prefix: its pages go back to the kernel as
  // we go, and the load never holds much more than one copy of the records.
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  std::vector<uintptr_t> released(parsed.size());  // per file: freed up to this address
  for (size_t sh = 0; sh < kShards; ++sh) {
    Shard& s = shards_[sh];
    for (FileRecs& f : parsed) {
      if (f.start.empty()) continue;
      const size_t n = f.start[sh + 1] - f.start[sh];
      if (!n) continue;
      std::memcpy(s.recs + s.size, f.recs + f.start[sh], n * sizeof(Rec));
      s.size += n;
    }
    if (sh % 16 != 15) continue;
    for (size_t i = 0; i < parsed.size(); ++i) {
      FileRecs& f = parsed[i];
      if (f.start.empty() || !f.recs) continue;
      const auto lo = std::max(released[i], (reinterpret_cast<uintptr_t>(f.recs) + page - 1) & ~(page - 1));
      const auto hi = reinterpret_cast<uintptr_t>(f.recs + f.start[sh + 1]) & ~(page - 1);
      if (hi > lo) {
        ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
        released[i] = hi;
      }
    }
  }
  parsed.clear();
  ParallelFor(kShards, threads, [&](size_t sh) {
    Shard& s = shards_[sh];
    std::sort(s.recs + s.sorted, s.recs + s.size, RecLess);
    if (s.sorted) std::inplace_merge(s.recs, s.recs + s.sorted, s.recs + s.size, RecLess);
    s.sorted = s.size;
    s.Shrink();
    if (s.size) s.BuildSub();
  });
  count_ = 0;
  for (size_t sh = 0; sh < kShards; ++sh) count_ += shards_[sh].size;
  Compact();
}

void Index::Compact() {
  size_t pos = 0;
  for (size_t sh = 0; sh < kShards; ++sh) {
    Shard& s = shards_[sh];
    s.Merge();
    if (s.size && !s.sub) s.BuildSub();
    if (sh == 256) {  // positions count per type
      positions_[0] = pos;
      pos = 0;
    }
    base_[sh] = pos;
    pos += s.size;
  }
  positions_[1] = pos;
}

size_t Index::Find(BlobType type, const BlobId& id) const {
  const size_t sh = ShardNo(type, id);
  const Shard& s = shards_[sh];
  if (!s.sorted) return npos;
  const uint8_t* tail = id.bytes.data() + 1;
  const Rec* lo = s.LowerBound(tail);
  if (lo == s.recs + s.sorted || CmpId(lo->id, tail) != 0) return npos;
  return base_[sh] + static_cast<size_t>(lo - s.recs);
}

void Index::FindMany(BlobType type, const BlobId* ids, size_t n, size_t* out) const {
  // Prefetch the guessed records of a group of ids, then look them up: the cache misses
  // of the group overlap instead of coming one after another.
  constexpr size_t kGroup = 16;
  for (size_t g = 0; g < n; g += kGroup) {
    const size_t e = std::min(n, g + kGroup);
    for (size_t i = g; i < e; ++i) {
      const Shard& s = shards_[ShardNo(type, ids[i])];
      if (!s.sorted) continue;
      // the guess and its neighbours, where the search ends for most ids
      const char* r = reinterpret_cast<const char*>(s.Guess(ids[i].bytes.data() + 1));
      for (int k = -2; k <= 3; ++k) __builtin_prefetch(r + k * 64);
    }
    for (size_t i = g; i < e; ++i) out[i] = Find(type, ids[i]);
  }
}

PackedBlob Index::EntryAt(BlobType type, size_t pos, uint32_t* pack_no, size_t* first) const {
  const size_t type_shard = static_cast<size_t>(type) * 256;
  // the shard holding pos: last shard of the type whose base is <= pos
  size_t sh = static_cast<size_t>(
      std::upper_bound(base_.begin() + type_shard, base_.begin() + type_shard + 256, pos) -
      base_.begin() - 1);
  const Rec& r = shards_[sh].recs[pos - base_[sh]];
  PackedBlob b;
  b.type = type;
  b.id.bytes[0] = static_cast<uint8_t>(sh % 256);
  std::memcpy(b.id.bytes.data() + 1, r.id, 31);
  b.offset = Get32(r.offset);
  b.length = Get32(r.length);
  b.uncompressed_length = Get32(r.ulen);
  if (pack_no) *pack_no = Get32(r.pack);
  if (first) {
    const Rec* f = &r;
    while (f > shards_[sh].recs && CmpId((f - 1)->id, r.id) == 0) --f;
    *first = base_[sh] + static_cast<size_t>(f - shards_[sh].recs);
  }
  return b;
}

void Index::ForEachPosition(
    const std::function<void(BlobType, size_t, size_t, uint32_t, const PackedBlob&)>& fn) const {
  for (size_t sh = 0; sh < kShards; ++sh) {
    const Shard& s = shards_[sh];
    PackedBlob b;
    b.type = static_cast<BlobType>(sh / 256);
    b.id.bytes[0] = static_cast<uint8_t>(sh % 256);
    size_t first = 0;
    for (size_t i = 0; i < s.size; ++i) {
      const Rec& r = s.recs[i];
      if (i == 0 || CmpId(r.id, s.recs[i - 1].id) != 0) first = i;
      std::memcpy(b.id.bytes.data() + 1, r.id, 31);
      b.offset = Get32(r.offset);
      b.length = Get32(r.length);
      b.uncompressed_length = Get32(r.ulen);
      fn(b.type, base_[sh] + i, base_[sh] + first, Get32(r.pack), b);
    }
  }
}

bool Index::Has(BlobType type, const BlobId& id) const {
  bool found = false;
  ShardOf(type, id).Find(id.bytes.data() + 1, [&](const Rec&) { found = true; });
  return found;
}

std::vector<BlobLocation> Index::Lookup(BlobType type, const BlobId& id) const {
  std::vector<BlobLocation> out;
  ShardOf(type, id).Find(id.bytes.data() + 1, [&](const Rec& r) {
    out.push_back({packs_[Get32(r.pack)], Get32(r.offset), Get32(r.length), Get32(r.ulen)});
  });
  return out;
}

void Index::ForEach(const std::function<void(const PackId&, const PackedBlob&)>& fn) const {
  for (size_t sh = 0; sh < kShards; ++sh) {
    const Shard& s = shards_[sh];
    PackedBlob b;
    b.type = static_cast<BlobType>(sh / 256);
    b.id.bytes[0] = static_cast<uint8_t>(sh % 256);
    for (size_t i = 0; i < s.size; ++i) {
      const Rec& r = s.recs[i];
      std::memcpy(b.id.bytes.data() + 1, r.id, 31);
      b.offset = Get32(r.offset);
      b.length = Get32(r.length);
      b.uncompressed_length = Get32(r.ulen);
      fn(packs_[Get32(r.pack)], b);
    }
  }
}

size_t Index::MemoryUsage() const {
  size_t n = kShards * sizeof(Shard) + packs_.capacity() * sizeof(PackId) +
             pack_pos_.size() * (sizeof(PackId) + 16) + tree_packs_.size() * (sizeof(PackId) + 16);
  for (size_t sh = 0; sh < kShards; ++sh)
    n += shards_[sh].cap * sizeof(Rec) + (shards_[sh].sub ? 257 * sizeof(uint32_t) : 0);
  return n;
}

void IndexFile::AppendPackJson(std::string& out, const PackId& id,
                               const std::vector<PackedBlob>& blobs) {
  auto number = [&](uint64_t v) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, end);
  };
  out += "{\"id\":\"";
  AppendHex(out, id.bytes);
  out += "\",\"blobs\":[";
  bool first = true;
  for (const PackedBlob& b : blobs) {
    out += first ? "{\"id\":\"" : ",{\"id\":\"";
    first = false;
    AppendHex(out, b.id.bytes);
    out += "\",\"type\":\"";
    out += BlobTypeName(b.type);
    out += "\",\"offset\":";
    number(b.offset);
    out += ",\"length\":";
    number(b.length);
    if (b.uncompressed_length) {
      out += ",\"uncompressed_length\":";
      number(b.uncompressed_length);
    }
    out += '}';
  }
  out += "]}";
}

void EmitIndexJson(size_t packs, const std::function<void(std::string&, size_t)>& append_pack,
                   const std::function<void(std::string_view)>& put) {
  constexpr size_t kPiece = 64 << 10;
  std::string buf = "{\"packs\":[";
  buf.reserve(2 * kPiece);
  for (size_t k = 0; k < packs; ++k) {
    if (k) buf += ',';
    append_pack(buf, k);
    if (buf.size() >= kPiece) {
      put(buf);
      buf.clear();
    }
  }
  buf += "]}\n";
  put(buf);
}

void IndexFile::EmitJson(const std::function<void(std::string_view)>& put) const {
  EmitIndexJson(
      packs.size(),
      [&](std::string& out, size_t k) { AppendPackJson(out, packs[k].id, packs[k].blobs); },
      put);
}

std::string IndexFile::ToJson() const {
  std::string out;
  EmitJson([&](std::string_view piece) { out += piece; });
  return out;
}

namespace {

void ParsePacks(simdjson::dom::array packs, IndexFile& out, const std::string& where) {
  for (simdjson::dom::element pe : packs) {
    IndexFile::Pack pack;
    std::string_view pid;
    if (pe["id"].get(pid))
      Fail(ErrorCode::kCorrupt, where + ": pack without id");
    auto id = PackId::FromHex(pid);
    if (!id) Fail(ErrorCode::kCorrupt, where + ": invalid pack id \"" + std::string(pid) + "\"");
    pack.id = *id;
    simdjson::dom::array blobs;
    if (pe["blobs"].get(blobs)) Fail(ErrorCode::kCorrupt, where + ": pack without blobs");
    for (simdjson::dom::element be : blobs) {
      PackedBlob b;
      std::string_view bid, type;
      uint64_t offset, length, ulen = 0;
      if (be["id"].get(bid) || be["type"].get(type) || be["offset"].get(offset) ||
          be["length"].get(length))
        Fail(ErrorCode::kCorrupt, where + ": incomplete blob entry in pack " + pack.id.Hex());
      auto u = be["uncompressed_length"];
      if (u.error() == simdjson::SUCCESS && u.get(ulen))
        Fail(ErrorCode::kCorrupt, where + ": invalid uncompressed_length");
      auto id2 = BlobId::FromHex(bid);
      if (!id2) Fail(ErrorCode::kCorrupt, where + ": invalid blob id \"" + std::string(bid) + "\"");
      if (type == "data")
        b.type = BlobType::kData;
      else if (type == "tree")
        b.type = BlobType::kTree;
      else
        Fail(ErrorCode::kCorrupt, where + ": invalid blob type \"" + std::string(type) + "\"");
      if (offset > 0xffffffffull || length > 0xffffffffull || ulen > 0xffffffffull ||
          length < 32)
        Fail(ErrorCode::kCorrupt, where + ": blob " + std::string(bid) + " has invalid sizes");
      b.id = *id2;
      b.offset = static_cast<uint32_t>(offset);
      b.length = static_cast<uint32_t>(length);
      b.uncompressed_length = static_cast<uint32_t>(ulen);
      pack.blobs.push_back(b);
    }
    out.packs.push_back(std::move(pack));
  }
}

}  // namespace

namespace {

// Builds an IndexFile from IndexScanner's calls.
struct IndexFileBuilder {
  IndexFile& out;
  void Pack(const PackId& id) { out.packs.push_back({id, {}}); }
  void Blob(const PackedBlob& b) { out.packs.back().blobs.push_back(b); }
  void Supersedes(const RawId& id) { out.supersedes.push_back(id); }
};

}  // namespace

IndexFile IndexFile::Parse(std::string_view json, std::string_view name) {
  {
    IndexFile fast;
    IndexFileBuilder b{fast};
    if (IndexScanner(json).Run(b)) return fast;
  }
  const std::string where = "index " + std::string(name);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (json.empty() || parser.parse(json.data(), json.size()).get(doc))
    Fail(ErrorCode::kCorrupt, where + ": invalid JSON");
  IndexFile out;
  simdjson::dom::array packs;
  if (doc.is_array()) {
    ParsePacks(doc.get_array().value_unsafe(), out, where);
    return out;
  }
  if (doc["packs"].get(packs)) {
    if (doc["packs"].is_null()) return out;
    Fail(ErrorCode::kCorrupt, where + ": missing \"packs\"");
  }
  ParsePacks(packs, out, where);
  simdjson::dom::array sup;
  if (!doc["supersedes"].get(sup)) {
    for (simdjson::dom::element s : sup) {
      std::string_view h;
      if (!s.get(h))
        if (auto id = RawId::FromHex(h)) out.supersedes.push_back(*id);
    }
  }
  return out;
}

}  // namespace haven
