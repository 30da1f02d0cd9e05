#include "maintenance/used_blobs.h"

#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <array>
#include <cstring>
#include <exception>
#include <unordered_set>

#include "core/error.h"
#include "core/mutex.h"
#include "repo/tree_stream.h"

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

static_assert(simdjson::SIMDJSON_PADDING <= kTreePadding);

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

namespace {

// The walk's state shared by the workers: the bitmaps over index positions, the used ids
// the index lacks, the first error.
class UsedBlobWalk {
 public:
  UsedBlobWalk(IndexedRepository& repo, const std::vector<UsedBlobsRoot>& roots,
               const UsedBlobsOptions& opts)
      : index_(repo.index()), roots_(roots), opts_(opts),
        threads_(StreamTreesThreads(repo, opts.threads)), workers_(threads_) {
    bits_[0].resize((index_.Positions(BlobType::kData) + 63) / 64);
    bits_[1].resize((index_.Positions(BlobType::kTree) + 63) / 64);
  }

  UsedBlobs Run(IndexedRepository& repo) {
    std::vector<TreeRef> refs(roots_.size());
    for (size_t i = 0; i < roots_.size(); ++i) refs[i].id = roots_[i].tree;
    StreamTreesOptions so;
    so.threads = threads_;
    so.visit = [this](const TreeRef& t, size_t pos) { return Visit(t, pos); };
    so.tree = [this](const StreamedTree& t, TreeChildren& c) { Scan(t, c); };
    so.error = [this](const TreeStreamError& e) { return Failed(e); };
    StreamTrees(repo, std::move(refs), so);
    if (err_) std::rethrow_exception(err_);
    if (opts_.progress) opts_.progress(scanned_.load());
    std::vector<BlobId> missing[2];
    for (auto& w : workers_) missing[0].insert(missing[0].end(), w.missing.begin(), w.missing.end());
    {
      MutexLock lock(mu_);
      missing[1].assign(unindexed_trees_.begin(), unindexed_trees_.end());
    }
    return UsedBlobs(index_, bits_, missing);
  }

 private:
  // What one worker reuses from tree to tree.
  struct Worker {
    TreeScanner scanner;
    std::vector<BlobId> data, subs;
    std::vector<size_t> positions;  // of data in the index
    std::vector<BlobId> missing;    // used data blobs the index lacks
  };

  // Marks a tree as used; true the first time (a tree the index lacks is remembered and
  // still loaded: LoadBlob then names the problem).
  bool Visit(const TreeRef& t, size_t pos) {
    if (pos == Index::npos) {
      MutexLock lock(mu_);
      return unindexed_trees_.insert(t.id).second;
    }
    return SetBit(bits_[1].data(), pos);
  }

  void Scan(const StreamedTree& t, TreeChildren& children) {
    static const std::string no_context;  // Failed names snapshot and tree
    Worker& w = workers_[t.worker];
    w.subs.clear();
    w.data.clear();
    w.scanner.ScanPadded(t.data, t.size, t.capacity, &w.data, &w.subs, no_context);
    w.positions.resize(w.data.size());
    index_.FindMany(BlobType::kData, w.data.data(), w.data.size(), w.positions.data());
    for (size_t i = 0; i < w.data.size(); ++i) {
      if (w.positions[i] == Index::npos) {
        w.missing.push_back(w.data[i]);
      } else {
        SetBit(bits_[0].data(), w.positions[i]);
      }
    }
    for (const BlobId& sub : w.subs) children.Add(sub);
    uint64_t n = scanned_.fetch_add(1) + 1;
    if (opts_.progress && n % 4096 == 0) opts_.progress(n);
  }

  // The first failure stops the walk: transport errors stay what they are (retryable),
  // everything else is damage.
  bool Failed(const TreeStreamError& e) {
    const bool io = e.code == ErrorCode::kIo || e.code == ErrorCode::kInterrupted;
    err_ = std::make_exception_ptr(
        Error(io ? e.code : ErrorCode::kCorrupt,
              "snapshot " + roots_[e.ref.root].snapshot.Short() + ": tree " + e.ref.id.Hex() +
                  " cannot be loaded: " + e.message,
              io && e.retryable));
    return false;
  }

  const Index& index_;
  const std::vector<UsedBlobsRoot>& roots_;
  const UsedBlobsOptions& opts_;
  const int threads_;
  std::vector<uint64_t> bits_[2];  // data, tree: one bit per index position
  std::vector<Worker> workers_;
  std::atomic<uint64_t> scanned_{0};
  std::exception_ptr err_;  // set by Failed (called one at a time, then the walk stops)
  Mutex mu_;
  std::unordered_set<BlobId, IdHash> unindexed_trees_ GUARDED_BY(mu_);  // used, not indexed
};

}  // namespace

UsedBlobs FindUsedBlobs(IndexedRepository& repo, const std::vector<UsedBlobsRoot>& roots,
                        const UsedBlobsOptions& opts) {
  repo.CompactIndex();
  UsedBlobWalk walk(repo, roots, opts);
  return walk.Run(repo);
}

}  // namespace haven
