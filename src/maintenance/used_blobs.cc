#include "maintenance/used_blobs.h"

#include <simdjson.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <array>
#include <condition_variable>
#include <deque>
#include <unordered_map>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "core/error.h"
#include "crypto/seal.h"

namespace haven {

namespace {

// Lexicographic (memcmp) order, a word at a time.
inline bool IdLess(const BlobId& a, const BlobId& b) {
  for (int i = 0; i < 32; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a.bytes.data() + i, 8);
    std::memcpy(&y, b.bytes.data() + i, 8);
    if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y);
  }
  return false;
}
inline bool IdEq(const BlobId& a, const BlobId& b) {
  uint64_t x[4], y[4];
  std::memcpy(x, a.bytes.data(), 32);
  std::memcpy(y, b.bytes.data(), 32);
  return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3])) == 0;
}
uint32_t Prefix16(const BlobId& id) { return uint32_t(id.bytes[0]) << 8 | id.bytes[1]; }

// As function objects, so that the algorithms inline them.
constexpr auto kLess = [](const BlobId& a, const BlobId& b) { return IdLess(a, b); };
constexpr auto kEq = [](const BlobId& a, const BlobId& b) { return IdEq(a, b); };

void SortUnique(std::vector<BlobId>& v) {
  std::sort(v.begin(), v.end(), kLess);
  v.erase(std::unique(v.begin(), v.end(), kEq), v.end());
}


// `p` points at the first character of a JSON string's content (after the quote), with
// at least 65 readable bytes. True when it holds exactly 64 hex characters.
bool ParseHexId(const uint8_t* p, BlobId* out) {
  return p[64] == '"' &&
         HexDecodeInto(std::string_view(reinterpret_cast<const char*>(p), 64), out->bytes.data(), 32);
}

// A reusable buffer that is never zero-filled, with room for simdjson's padding.
class PaddedBuffer {
 public:
  uint8_t* Reserve(size_t n) {
    if (cap_ < n + simdjson::SIMDJSON_PADDING) {
      cap_ = std::max(n + simdjson::SIMDJSON_PADDING, cap_ * 2);
      buf_.reset(new uint8_t[cap_]);
    }
    return buf_.get();
  }
  // Marks the first n bytes as the content: zeroes the padding after them.
  void Seal(size_t n) { std::memset(buf_.get() + n, 0, simdjson::SIMDJSON_PADDING); }
  const uint8_t* data() const { return buf_.get(); }
  size_t capacity() const { return cap_; }

 private:
  std::unique_ptr<uint8_t[]> buf_;
  size_t cap_ = 0;
};

// Decodes tree blobs into a padded buffer with as little copying and allocation as
// possible: decryption into a reused buffer, zstd straight into the padded buffer, SHA-256
// check. A damaged copy, a tree with no usable location or a failed read goes through
// Repository::LoadBlob, which tries every location and produces the error message.
class TreeDecoder {
 public:
  TreeDecoder() : dctx_(ZSTD_createDCtx()) {}
  ~TreeDecoder() { ZSTD_freeDCtx(dctx_); }
  TreeDecoder(const TreeDecoder&) = delete;
  TreeDecoder& operator=(const TreeDecoder&) = delete;

  // Decodes one sealed copy; false when it is damaged. The bytes stay valid until the next
  // call.
  bool Decode(const crypto::CryptoKey& key, const BlobId& id, ByteView sealed,
              uint32_t uncompressed_length, const uint8_t** out, size_t* len) {
    if (sealed.size() < crypto::kOverhead) return false;
    const size_t plen = sealed.size() - crypto::kOverhead;
    uint8_t* dst;
    size_t n;
    if (uncompressed_length == 0) {
      dst = padded_.Reserve(plen);
      if (!crypto::OpenInto(key, sealed, dst)) return false;
      n = plen;
    } else {
      uint8_t* tmp = scratch_.Reserve(plen);
      if (!crypto::OpenInto(key, sealed, tmp)) return false;
      dst = padded_.Reserve(uncompressed_length);
      n = ZSTD_decompressDCtx(dctx_, dst, uncompressed_length, tmp, plen);
      if (ZSTD_isError(n) || n != uncompressed_length) return false;
    }
    if (Sha256(ByteView(dst, n)) != static_cast<const RawId&>(id)) return false;
    padded_.Seal(n);
    *out = dst;
    *len = n;
    return true;
  }

  // Every location in turn (throws the reason when none works).
  const uint8_t* LoadSlow(IndexedRepository& repo, const BlobId& id, size_t* len) {
    Bytes b = repo.LoadBlob(BlobType::kTree, id);
    uint8_t* dst = padded_.Reserve(b.size());
    if (!b.empty()) std::memcpy(dst, b.data(), b.size());
    padded_.Seal(b.size());
    *len = b.size();
    return dst;
  }
  size_t capacity() const { return padded_.capacity(); }

 private:
  ZSTD_DCtx* dctx_;
  PaddedBuffer padded_, scratch_;
};

// Sets bit `pos`; true when it was clear before. Reads first, so that bits already set
// (most of them in a repository with many snapshots) cost no atomic write.
inline bool SetBit(uint64_t* words, size_t pos) {
  std::atomic_ref<uint64_t> w(words[pos >> 6]);
  const uint64_t m = uint64_t{1} << (pos & 63);
  if (w.load(std::memory_order_relaxed) & m) return false;
  return !(w.fetch_or(m, std::memory_order_relaxed) & m);
}

}  // namespace

// ---- SortedBlobSet -----------------------------------------------------------------------

SortedBlobSet::SortedBlobSet(std::vector<BlobId> ids) : ids_(std::move(ids)) {
  if (!std::is_sorted(ids_.begin(), ids_.end(), kLess)) std::sort(ids_.begin(), ids_.end(), kLess);
  ids_.erase(std::unique(ids_.begin(), ids_.end(), kEq), ids_.end());
  BuildBuckets();
}

void SortedBlobSet::BuildBuckets() {
  bucket_.assign(65537, 0);
  size_t pos = 0;
  for (uint32_t p = 0; p < 65536; ++p) {
    bucket_[p] = static_cast<uint32_t>(pos);
    while (pos < ids_.size() && Prefix16(ids_[pos]) == p) ++pos;
  }
  bucket_[65536] = static_cast<uint32_t>(ids_.size());
}

size_t SortedBlobSet::Find(const BlobId& id) const {
  uint32_t p = Prefix16(id);
  auto first = ids_.begin() + bucket_[p], last = ids_.begin() + bucket_[p + 1];
  auto it = std::lower_bound(first, last, id, kLess);
  if (it != last && kEq(*it, id)) return static_cast<size_t>(it - ids_.begin());
  return npos;
}

// ---- UsedBlobs ------------------------------------------------------------------------------

UsedBlobs::UsedBlobs(const Index& index, std::vector<uint64_t> bits[2],
                     std::vector<BlobId> missing[2])
    : index_(&index) {
  for (int t = 0; t < 2; ++t) {
    bits_[t] = std::move(bits[t]);
    missing_[t] = std::move(missing[t]);
    SortUnique(missing_[t]);
  }
}

size_t UsedBlobs::Find(BlobType t, const BlobId& id) const {
  if (!index_) return npos;
  size_t pos = index_->Find(t, id);
  return pos != npos && UsedAt(t, pos) ? pos : npos;
}

bool UsedBlobs::Has(BlobType t, const BlobId& id) const {
  if (Find(t, id) != npos) return true;
  const auto& m = missing_[static_cast<int>(t)];
  return std::binary_search(m.begin(), m.end(), id, kLess);
}

size_t UsedBlobs::Count(BlobType t) const {
  size_t n = missing_[static_cast<int>(t)].size();
  for (uint64_t w : bits_[static_cast<int>(t)]) n += static_cast<size_t>(__builtin_popcountll(w));
  return n;
}

std::vector<BlobId> UsedBlobs::Ids(BlobType t) const {
  std::vector<BlobId> out = missing_[static_cast<int>(t)];
  const auto& b = bits_[static_cast<int>(t)];
  for (size_t w = 0; w < b.size(); ++w)
    for (uint64_t x = b[w]; x; x &= x - 1)
      out.push_back(index_->EntryAt(t, w * 64 + static_cast<size_t>(__builtin_ctzll(x)), nullptr).id);
  SortUnique(out);
  return out;
}

// ---- TreeScanner -------------------------------------------------------------------------

struct TreeScanner::Impl {
  simdjson::ondemand::parser parser;
  std::vector<uint8_t> buf;  // the tree bytes followed by simdjson::SIMDJSON_PADDING zero bytes
};

TreeScanner::TreeScanner() : impl_(std::make_unique<Impl>()) {}
TreeScanner::~TreeScanner() = default;

void TreeScanner::Scan(std::string_view json, std::vector<BlobId>* data,
                       std::vector<BlobId>* subtrees, const std::string& what) {
  auto& buf = impl_->buf;
  buf.resize(json.size() + simdjson::SIMDJSON_PADDING);
  std::memcpy(buf.data(), json.data(), json.size());
  std::memset(buf.data() + json.size(), 0, simdjson::SIMDJSON_PADDING);
  ScanPadded(buf.data(), json.size(), buf.size(), data, subtrees, what);
}

void TreeScanner::ScanPadded(const uint8_t* json, size_t len, size_t capacity,
                             std::vector<BlobId>* data, std::vector<BlobId>* subtrees,
                             const std::string& what) {
  using namespace simdjson;
  auto bad = [&](const char* why) {
    Fail(ErrorCode::kCorrupt, what.empty() ? std::string(why) : what + ": " + why);
  };
  ondemand::document doc;
  if (impl_->parser.iterate(json, len, capacity).get(doc)) bad("invalid tree JSON");
  ondemand::object root;
  if (doc.get_object().get(root)) bad("tree is not a JSON object");
  for (auto fr : root) {
    ondemand::field field;
    if (std::move(fr).get(field)) bad("invalid tree JSON");
    if (field.key() != "nodes") continue;  // other values are skipped unread
    ondemand::value nodes_v = field.value();
    ondemand::json_type jt;
    if (nodes_v.type().get(jt)) bad("invalid tree JSON");
    if (jt == ondemand::json_type::null) continue;
    ondemand::array nodes;
    if (nodes_v.get_array().get(nodes)) bad("\"nodes\" is not an array");
    for (auto nr : nodes) {
      ondemand::object node;
      if (nr.get_object().get(node)) bad("node is not an object");
      const size_t mark = data->size();
      enum { kUnknown, kFile, kDir, kOther } type = kUnknown;
      bool has_subtree = false;
      BlobId subtree;
      for (auto nfr : node) {
        ondemand::field nf;
        if (std::move(nfr).get(nf)) bad("invalid node JSON");
        ondemand::raw_json_string key = nf.key();
        if (key == "type") {
          std::string_view t;
          if (nf.value().get_string().get(t)) bad("node type is not a string");
          type = t == "file" ? kFile : t == "dir" ? kDir : kOther;
        } else if (key == "content") {
          ondemand::value cv = nf.value();
          if (cv.type().get(jt)) bad("invalid node JSON");
          if (jt == ondemand::json_type::null) continue;
          ondemand::array content;
          if (cv.get_array().get(content)) bad("node content is not an array");
          for (auto er : content) {
            ondemand::raw_json_string s;
            BlobId id;
            if (er.get_raw_json_string().get(s) ||
                !ParseHexId(reinterpret_cast<const uint8_t*>(s.raw()), &id))
              bad("invalid content id");
            data->push_back(id);
          }
        } else if (key == "subtree") {
          ondemand::value sv = nf.value();
          if (sv.type().get(jt)) bad("invalid node JSON");
          if (jt == ondemand::json_type::null) continue;
          ondemand::raw_json_string s;
          if (sv.get_raw_json_string().get(s) ||
              !ParseHexId(reinterpret_cast<const uint8_t*>(s.raw()), &subtree))
            bad("invalid subtree id");
          has_subtree = true;
        }
      }
      // restic: only file nodes own data blobs, only dir nodes have subtrees.
      if (type != kFile) data->resize(mark);
      if (type == kDir && has_subtree) subtrees->push_back(subtree);
    }
  }
}

// ---- the walk ------------------------------------------------------------------------------

UsedBlobs FindUsedBlobs(IndexedRepository& repo, const std::vector<UsedBlobsRoot>& roots,
                        const UsedBlobsOptions& opts) {
  const int threads = std::max(1, opts.threads > 0 ? opts.threads : repo.threads());
  // A tree waiting to be loaded, with the location it will be read from.
  struct Item {
    BlobId tree;
    uint32_t root;  // the snapshot that reached the tree first, for messages
    bool located;
    BlobLocation loc;
  };
  // Trees are loaded in batches of one pack: a worker takes up to kBatch waiting trees of
  // a pack and reads each run of them that lies close together with a single request.
  constexpr size_t kBatch = 256;
  constexpr uint64_t kMaxGap = 64 * 1024;        // read over gaps up to this size
  constexpr uint64_t kMaxRange = 8 * 1024 * 1024;  // but no more than this at once
  repo.CompactIndex();
  const Index& index = repo.index();
  std::vector<uint64_t> bits[2] = {
      std::vector<uint64_t>((index.Positions(BlobType::kData) + 63) / 64),
      std::vector<uint64_t>((index.Positions(BlobType::kTree) + 63) / 64)};
  uint64_t* const data_bits = bits[0].data();
  uint64_t* const tree_bits = bits[1].data();
  std::mutex unindexed_mu;
  std::unordered_set<BlobId, IdHash> unindexed_trees;  // used trees the index lacks
  // Marks a tree as visited; returns true (and the item to load in *out) the first time.
  auto visit = [&](const BlobId& tree, uint32_t root, Item* out) {
    size_t pos = index.Find(BlobType::kTree, tree);
    if (pos == Index::npos) {
      std::lock_guard lock(unindexed_mu);
      if (!unindexed_trees.insert(tree).second) return false;
      *out = Item{tree, root, false, {}};
      return true;
    }
    if (!SetBit(tree_bits, pos)) return false;
    uint32_t pack_no = 0;
    PackedBlob b = index.EntryAt(BlobType::kTree, pos, &pack_no);
    *out = Item{tree, root, true,
                {index.PackAt(pack_no), b.offset, b.length, b.uncompressed_length}};
    return true;
  };

  std::mutex mu;
  std::condition_variable cv;
  // guarded by mu:
  std::unordered_map<PackId, std::vector<Item>, IdHash> waiting;  // by pack
  std::deque<PackId> ready;      // packs with waiting trees, each once
  std::vector<Item> unlocated;   // not in the index: LoadSlow reports it
  size_t active = 0;
  bool stop = false;
  std::exception_ptr err;
  auto enqueue = [&](Item&& it) {  // mu held
    if (!it.located) {
      unlocated.push_back(std::move(it));
      return;
    }
    auto& v = waiting[it.loc.pack];
    if (v.empty()) ready.push_back(it.loc.pack);
    v.push_back(std::move(it));
  };
  for (size_t i = 0; i < roots.size(); ++i) {
    Item it;
    if (visit(roots[i].tree, static_cast<uint32_t>(i), &it)) enqueue(std::move(it));
  }

  std::atomic<uint64_t> scanned{0};
  std::vector<std::vector<BlobId>> missing_data(threads);  // used, not indexed

  auto worker = [&](int w) {
    TreeScanner scanner;
    TreeDecoder decoder;
    const std::string no_context;  // the catch below names snapshot and tree
    std::vector<BlobId>& missing = missing_data[w];
    std::vector<BlobId> data, subs;
    std::vector<size_t> positions;  // of data in the index
    Bytes buf;                      // one run of trees read from a pack, reused
    std::vector<Item> batch, fresh;
    std::unique_lock lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return stop || !ready.empty() || !unlocated.empty() || active == 0; });
      if (stop || (ready.empty() && unlocated.empty())) break;
      batch.clear();
      if (!unlocated.empty()) {
        batch.push_back(std::move(unlocated.back()));
        unlocated.pop_back();
      } else {
        auto& v = waiting[ready.front()];
        // With a single pack waiting, share it among the workers.
        size_t take = std::min(kBatch, ready.size() > 1 ? v.size()
                                                        : (v.size() + threads - 1) / threads);
        batch.assign(std::make_move_iterator(v.end() - take), std::make_move_iterator(v.end()));
        v.resize(v.size() - take);
        if (v.empty()) {
          waiting.erase(ready.front());
          ready.pop_front();
        }
      }
      ++active;
      lock.unlock();
      fresh.clear();
      const Item* current = nullptr;
      try {
        auto scan = [&](const Item& it, const uint8_t* tree, size_t len) {
          subs.clear();
          data.clear();
          scanner.ScanPadded(tree, len, decoder.capacity(), &data, &subs, no_context);
          positions.resize(data.size());
          index.FindMany(BlobType::kData, data.data(), data.size(), positions.data());
          for (size_t i = 0; i < data.size(); ++i) {
            if (positions[i] == Index::npos) {
              missing.push_back(data[i]);
            } else {
              SetBit(data_bits, positions[i]);
            }
          }
          Item next;
          for (const BlobId& sub : subs)
            if (visit(sub, it.root, &next)) fresh.push_back(std::move(next));
          uint64_t n = scanned.fetch_add(1) + 1;
          if (opts.progress && n % 4096 == 0) opts.progress(n);
        };
        if (!batch[0].located) {
          current = &batch[0];
          size_t len = 0;
          const uint8_t* tree = decoder.LoadSlow(repo, batch[0].tree, &len);
          scan(batch[0], tree, len);
        } else {
          std::sort(batch.begin(), batch.end(),
                    [](const Item& a, const Item& b) { return a.loc.offset < b.loc.offset; });
          const std::string pack = batch[0].loc.pack.Hex();
          for (size_t first = 0; first < batch.size();) {
            // One run of trees close to each other.
            uint64_t lo = batch[first].loc.offset;
            uint64_t hi = lo + batch[first].loc.length;
            size_t last = first + 1;
            while (last < batch.size()) {
              uint64_t off = batch[last].loc.offset, end = off + batch[last].loc.length;
              if (off > hi + kMaxGap || std::max(hi, end) - lo > kMaxRange) break;
              hi = std::max(hi, end);
              ++last;
            }
            bool have = false;
            try {
              buf.resize(hi - lo);  // reused: grows only
              repo.backend().LoadInto({FileType::kPack, pack}, lo, buf);
              have = true;
            } catch (const Error&) {
              // each tree of the run goes through LoadSlow, which reports the problem
            }
            for (size_t i = first; i < last; ++i) {
              const Item& it = batch[i];
              current = &it;
              const uint8_t* tree = nullptr;
              size_t len = 0;
              if (!have ||
                  !decoder.Decode(repo.key(), it.tree,
                                  ByteView(buf.data() + (it.loc.offset - lo), it.loc.length),
                                  it.loc.uncompressed_length, &tree, &len))
                tree = decoder.LoadSlow(repo, it.tree, &len);
              scan(it, tree, len);
            }
            first = last;
          }
        }
      } catch (const std::exception& e) {
        lock.lock();
        if (!err) {
          const Item& it = current ? *current : batch[0];
          // Transport errors stay what they are (retryable); everything else is damage.
          auto* he = dynamic_cast<const Error*>(&e);
          bool io = he && (he->code() == ErrorCode::kIo || he->code() == ErrorCode::kInterrupted);
          err = std::make_exception_ptr(
              Error(io ? he->code() : ErrorCode::kCorrupt,
                    "snapshot " + roots[it.root].snapshot.Short() + ": tree " + it.tree.Hex() +
                        " cannot be loaded: " + e.what(),
                    io && he->retryable()));
        }
        stop = true;
        --active;
        cv.notify_all();
        break;
      }
      lock.lock();
      --active;
      for (Item& it : fresh) enqueue(std::move(it));
      if (!fresh.empty() || active == 0) cv.notify_all();
    }
    lock.unlock();
    cv.notify_all();
  };

  if (threads == 1) {
    worker(0);
  } else {
    std::vector<std::thread> pool;
    for (int w = 0; w < threads; ++w) pool.emplace_back(worker, w);
    for (auto& t : pool) t.join();
  }
  if (err) std::rethrow_exception(err);
  if (opts.progress) opts.progress(scanned.load());

  std::vector<BlobId> missing[2];
  for (auto& v : missing_data) missing[0].insert(missing[0].end(), v.begin(), v.end());
  missing[1].assign(unindexed_trees.begin(), unindexed_trees.end());
  UsedBlobs out(index, bits, missing);
  return out;
}

}  // namespace haven
