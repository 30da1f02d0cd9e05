#include "repo/index.h"

#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "core/error.h"
#include "core/thread_pool.h"

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
  std::mutex mu;                    // LoadParallel only

  ~Shard() { std::free(recs); }
  void Reserve(size_t n) {
    if (n <= cap) return;
    void* p = std::realloc(recs, n * sizeof(Rec));
    if (!p) throw std::bad_alloc();
    recs = static_cast<Rec*>(p);
    cap = n;
  }
  void Append(const Rec* r, size_t n) {
    if (size + n > cap) Reserve(std::max(size + n, cap + cap / 4 + 16));
    std::memcpy(recs + size, r, n * sizeof(Rec));
    size += n;
  }
  void Shrink() {
    if (cap == size) return;
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
  // Calls fn for every record with this id tail: the run's in pack-number order, then the
  // tail's.
  template <typename Fn>
  void Find(const uint8_t* tail, Fn fn) const {
    if (sorted) {
      const Rec* lo = recs + sub[tail[0]];
      const Rec* hi = recs + sub[tail[0] + 1];
      while (lo < hi) {  // lower bound
        const Rec* mid = lo + (hi - lo) / 2;
        if (CmpId(mid->id, tail) < 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      for (const Rec* end = recs + sorted; lo < end && CmpId(lo->id, tail) == 0; ++lo) fn(*lo);
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

uint32_t Index::RegisterPack(const PackId& pack, const std::vector<PackedBlob>& blobs) {
  if (packs_.size() >= 0xffffffffu) Fail(ErrorCode::kFatal, "index: too many packs");
  uint32_t p = static_cast<uint32_t>(packs_.size());
  packs_.push_back(pack);
  pack_pos_.try_emplace(pack, p);
  if (!blobs.empty() && blobs.front().type == BlobType::kTree) tree_packs_.insert(pack);
  return p;
}

void Index::AddPack(const PackId& pack, const std::vector<PackedBlob>& blobs) {
  const uint32_t p = RegisterPack(pack, blobs);
  for (const PackedBlob& b : blobs) {
    Shard& s = ShardOf(b.type, b.id);
    Rec r = MakeRec(b, p);
    s.Append(&r, 1);
    // A short tail keeps lookups fast; merging costs O(shard) every ~1.5% growth.
    if (s.size - s.sorted > 16 + s.sorted / 64) s.Merge();
  }
  count_ += blobs.size();
}

void Index::LoadParallel(size_t files, int threads,
                         const std::function<void(size_t, const AddFn&)>& load) {
  std::mutex pack_mu;
  // Each worker collects one source's records, groups them by shard (counting sort) and
  // appends each group under that shard's lock.
  struct Local {
    std::vector<Rec> recs, grouped;
    std::vector<uint16_t> shard;
  };
  auto flush = [&](Local& l) {
    size_t start[kShards + 1] = {};
    for (uint16_t sh : l.shard) ++start[sh + 1];
    for (size_t i = 0; i < kShards; ++i) start[i + 1] += start[i];
    l.grouped.resize(l.recs.size());
    size_t fill[kShards];
    std::memcpy(fill, start, sizeof fill);
    for (size_t i = 0; i < l.recs.size(); ++i) l.grouped[fill[l.shard[i]]++] = l.recs[i];
    for (size_t sh = 0; sh < kShards; ++sh) {
      if (start[sh] == start[sh + 1]) continue;
      std::lock_guard lock(shards_[sh].mu);
      shards_[sh].Append(l.grouped.data() + start[sh], start[sh + 1] - start[sh]);
    }
    l.recs.clear();
    l.shard.clear();
  };
  ParallelFor(files, threads, [&](size_t i) {
    Local l;
    AddFn add = [&](const PackId& pack, const std::vector<PackedBlob>& blobs) {
      uint32_t p;
      {
        std::lock_guard lock(pack_mu);
        p = RegisterPack(pack, blobs);
      }
      for (const PackedBlob& b : blobs) {
        l.recs.push_back(MakeRec(b, p));
        l.shard.push_back(static_cast<uint16_t>(ShardNo(b.type, b.id)));
      }
    };
    load(i, add);
    flush(l);
  });
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
  const Rec* lo = s.recs + s.sub[tail[0]];
  const Rec* hi = s.recs + s.sub[tail[0] + 1];
  while (lo < hi) {
    const Rec* mid = lo + (hi - lo) / 2;
    if (CmpId(mid->id, tail) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == s.recs + s.sorted || CmpId(lo->id, tail) != 0) return npos;
  return base_[sh] + static_cast<size_t>(lo - s.recs);
}

PackedBlob Index::EntryAt(BlobType type, size_t pos, uint32_t* pack_no) const {
  const size_t first = static_cast<size_t>(type) * 256;
  // the shard holding pos: last shard of the type whose base is <= pos
  size_t sh = static_cast<size_t>(
      std::upper_bound(base_.begin() + first, base_.begin() + first + 256, pos) - base_.begin() - 1);
  const Rec& r = shards_[sh].recs[pos - base_[sh]];
  PackedBlob b;
  b.type = type;
  b.id.bytes[0] = static_cast<uint8_t>(sh % 256);
  std::memcpy(b.id.bytes.data() + 1, r.id, 31);
  b.offset = Get32(r.offset);
  b.length = Get32(r.length);
  b.uncompressed_length = Get32(r.ulen);
  if (pack_no) *pack_no = Get32(r.pack);
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

std::vector<PackedBlob> Index::PackBlobs(const PackId& pack) const {
  std::vector<PackedBlob> out;
  if (!HasPack(pack)) return out;
  ForEach([&](const PackId& p, const PackedBlob& b) {
    if (p == pack) out.push_back(b);
  });
  std::stable_sort(out.begin(), out.end(),
                   [](const PackedBlob& a, const PackedBlob& b) { return a.offset < b.offset; });
  return out;
}

size_t Index::MemoryUsage() const {
  size_t n = kShards * sizeof(Shard) + packs_.capacity() * sizeof(PackId) +
             pack_pos_.size() * (sizeof(PackId) + 16) + tree_packs_.size() * (sizeof(PackId) + 16);
  for (size_t sh = 0; sh < kShards; ++sh)
    n += shards_[sh].cap * sizeof(Rec) + (shards_[sh].sub ? 257 * sizeof(uint32_t) : 0);
  return n;
}

std::string IndexFile::ToJson() const {
  std::string out = "{\"packs\":[";
  bool first_pack = true;
  for (const Pack& p : packs) {
    if (!first_pack) out += ',';
    first_pack = false;
    out += "{\"id\":\"" + p.id.Hex() + "\",\"blobs\":[";
    bool first = true;
    for (const PackedBlob& b : p.blobs) {
      if (!first) out += ',';
      first = false;
      out += "{\"id\":\"" + b.id.Hex() + "\",\"type\":\"" + BlobTypeName(b.type) +
             "\",\"offset\":" + std::to_string(b.offset) +
             ",\"length\":" + std::to_string(b.length);
      if (b.uncompressed_length)
        out += ",\"uncompressed_length\":" + std::to_string(b.uncompressed_length);
      out += '}';
    }
    out += "]}";
  }
  out += "]}\n";
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

// The layout restic and haven write, without whitespace:
//   {"packs":[{"id":"<64 hex>","blobs":[{"id":"<64 hex>","type":"data|tree","offset":N,
//   "length":N[,"uncompressed_length":N]},...]},...][,"supersedes":[...]]}\n?
// read by a strict scanner that keeps no parse tree (a fraction of simdjson's DOM memory
// for a 20 MB index file, and faster). Anything else (other field order, spaces, escapes)
// returns false and goes to the general parser, which also produces the error messages.
class FastIndexScanner {
 public:
  explicit FastIndexScanner(std::string_view j) : p_(j.data()), end_(j.data() + j.size()) {}

  bool Run(IndexFile& out) {
    if (!Lit("{\"packs\":[")) return false;
    if (Lit("]")) return Tail(out);
    for (;;) {
      IndexFile::Pack pack;
      if (!Lit("{\"id\":") || !Id(pack.id) || !Lit(",\"blobs\":[")) return false;
      if (!Lit("]")) {
        for (;;) {
          PackedBlob b;
          uint64_t off, len, ulen = 0;
          if (!Lit("{\"id\":") || !Id(b.id) || !Lit(",\"type\":\"")) return false;
          if (Lit("data\"")) {
            b.type = BlobType::kData;
          } else if (Lit("tree\"")) {
            b.type = BlobType::kTree;
          } else {
            return false;
          }
          if (!Lit(",\"offset\":") || !Num(off) || !Lit(",\"length\":") || !Num(len)) return false;
          if (Lit(",\"uncompressed_length\":") && !Num(ulen)) return false;
          if (!Lit("}")) return false;
          if (off > 0xffffffffull || len > 0xffffffffull || ulen > 0xffffffffull || len < 32)
            return false;  // the general parser names the blob
          b.offset = static_cast<uint32_t>(off);
          b.length = static_cast<uint32_t>(len);
          b.uncompressed_length = static_cast<uint32_t>(ulen);
          pack.blobs.push_back(b);
          if (Lit("]")) break;
          if (!Lit(",")) return false;
        }
      }
      if (!Lit("}")) return false;
      out.packs.push_back(std::move(pack));
      if (Lit("]")) return Tail(out);
      if (!Lit(",")) return false;
    }
  }

 private:
  bool Tail(IndexFile& out) {
    if (Lit(",\"supersedes\":[") && !Lit("]")) {
      for (;;) {
        RawId id;
        if (!Id(id)) return false;
        out.supersedes.push_back(id);
        if (Lit("]")) break;
        if (!Lit(",")) return false;
      }
    }
    if (!Lit("}")) return false;
    if (p_ < end_ && *p_ == '\n') ++p_;
    return p_ == end_;
  }
  bool Lit(std::string_view s) {
    if (static_cast<size_t>(end_ - p_) < s.size() || std::memcmp(p_, s.data(), s.size()) != 0)
      return false;
    p_ += s.size();
    return true;
  }
  bool Num(uint64_t& v) {
    const char* start = p_;
    v = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9' && p_ - start < 19) v = v * 10 + uint64_t(*p_++ - '0');
    if (p_ == start || (p_ - start > 1 && *start == '0')) return false;
    return p_ == end_ || *p_ < '0' || *p_ > '9';
  }
  template <typename IdT>
  bool Id(IdT& id) {
    if (end_ - p_ < 66 || p_[0] != '"' || p_[65] != '"') return false;
    for (int i = 0; i < 32; ++i) {
      int hi = HexVal(p_[1 + 2 * i]), lo = HexVal(p_[2 + 2 * i]);
      if ((hi | lo) < 0) return false;
      id.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    p_ += 66;
    return true;
  }
  static int HexVal(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  const char* p_;
  const char* end_;
};

IndexFile IndexFile::Parse(std::string_view json, std::string_view name) {
  {
    IndexFile fast;
    if (FastIndexScanner(json).Run(fast)) return fast;
  }
  const std::string where = "index " + std::string(name);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc))
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
