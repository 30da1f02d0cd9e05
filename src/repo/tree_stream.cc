#include "repo/tree_stream.h"

#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <exception>
#include <unordered_map>

#include "core/mutex.h"
#include "core/sha256.h"
#include "core/thread_pool.h"
#include "crypto/seal.h"

namespace haven {

namespace {

// A reusable buffer that is never zero-filled, with room for kTreePadding zero bytes.
class PaddedBuffer {
 public:
  uint8_t* Reserve(size_t n) {
    if (cap_ < n + kTreePadding) {
      cap_ = std::max(n + kTreePadding, cap_ * 2);
      buf_.reset(new uint8_t[cap_]);
    }
    return buf_.get();
  }
  // Marks the first n bytes as the content: zeroes the padding after them.
  void Seal(size_t n) { std::memset(buf_.get() + n, 0, kTreePadding); }
  size_t capacity() const { return cap_; }

 private:
  std::unique_ptr<uint8_t[]> buf_;
  size_t cap_ = 0;
};

// Decodes tree blobs into a padded buffer with as little copying and allocation as
// possible: decryption into a reused buffer, zstd straight into the padded buffer, SHA-256
// check. A damaged copy, a tree with no usable location or a failed read goes through
// IndexedRepository::LoadBlob, which tries every location and produces the error message.
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

// Loaders wait on storage more than they compute: by default at least as many as the
// backend serves requests in parallel (restic's connections; 2 for a local disk, 5 for S3),
// so a remote walk keeps every connection busy while the CPUs decode. A count the caller
// gives is taken as it is (tests ask for one worker to fix the order).
int ResolveThreads(const IndexedRepository& repo, int threads) {
  if (threads > 0) return threads;
  return std::max({1, repo.threads(), repo.backend().Connections()});
}

// ---- unordered ------------------------------------------------------------------------------

// A tree waiting to be loaded, with the location it will be read from.
struct Item {
  TreeRef ref;
  bool located = false;
  BlobLocation loc;
};

// Trees are loaded in batches of one pack: a worker takes up to kBatch waiting trees of a
// pack and reads each run of them that lies close together with a single request.
constexpr size_t kBatch = 256;
constexpr uint64_t kMaxGap = 64 * 1024;          // read over gaps up to this size
constexpr uint64_t kMaxRange = 8 * 1024 * 1024;  // but no more than this at once

// What one worker reuses from batch to batch.
struct WorkerState {
  unsigned no = 0;
  TreeDecoder decoder;
  Bytes buf;  // one run of trees read from a pack
  TreeChildren children;
  std::vector<Item> batch, fresh;
};

class UnorderedWalk {
 public:
  UnorderedWalk(IndexedRepository& repo, const StreamTreesOptions& opts)
      : repo_(repo), index_(repo.index()), opts_(opts), threads_(ResolveThreads(repo, opts.threads)) {}

  void Run(std::vector<TreeRef> roots) {
    {
      MutexLock lock(mu_);
      for (size_t i = 0; i < roots.size(); ++i) {
        roots[i].root = static_cast<uint32_t>(i);
        Item it;
        if (Reach(std::move(roots[i]), &it)) Enqueue(std::move(it));
      }
    }
    if (threads_ == 1) {
      Worker(0);
      return;
    }
    ThreadPool pool(threads_, static_cast<size_t>(threads_));
    std::vector<std::future<void>> done;
    for (int w = 0; w < threads_; ++w) done.push_back(pool.Submit([this, w] { Worker(w); }));
    for (auto& f : done) f.get();
  }

 private:
  // The visit predicate and the tree's location; true (and the item in *out) to load it.
  bool Reach(TreeRef&& ref, Item* out) {
    const size_t pos = index_.Find(BlobType::kTree, ref.id);
    if (opts_.visit && !opts_.visit(ref, pos)) return false;
    out->ref = std::move(ref);
    out->located = pos != Index::npos;
    if (out->located) {
      uint32_t pack_no = 0;
      PackedBlob b = index_.EntryAt(BlobType::kTree, pos, &pack_no);
      out->loc = {index_.PackAt(pack_no), b.offset, b.length, b.uncompressed_length};
    }
    return true;
  }

  void Enqueue(Item&& it) REQUIRES(mu_) {
    if (!it.located) {
      unlocated_.push_back(std::move(it));
      return;
    }
    auto& v = waiting_[it.loc.pack];
    if (v.empty()) ready_.push_back(it.loc.pack);
    v.push_back(std::move(it));
  }

  // Waits for work: a tree the index lacks, or up to kBatch trees of one pack. False when
  // the walk is over (nothing waiting and no worker busy) or stopped.
  bool NextBatch(std::vector<Item>& batch) REQUIRES(mu_) {
    while (!stop_ && ready_.empty() && unlocated_.empty() && active_ > 0) cv_.Wait(mu_);
    if (stop_ || (ready_.empty() && unlocated_.empty())) return false;
    batch.clear();
    if (!unlocated_.empty()) {
      batch.push_back(std::move(unlocated_.back()));
      unlocated_.pop_back();
      return true;
    }
    auto& v = waiting_[ready_.front()];
    // With a single pack waiting, share it among the workers.
    const size_t take = std::min(
        kBatch, ready_.size() > 1 ? v.size() : (v.size() + threads_ - 1) / threads_);
    batch.assign(std::make_move_iterator(v.end() - take), std::make_move_iterator(v.end()));
    v.resize(v.size() - take);
    if (v.empty()) {
      waiting_.erase(ready_.front());
      ready_.pop_front();
    }
    return true;
  }

  void Worker(int no) {
    WorkerState ws;
    ws.no = static_cast<unsigned>(no);
    MutexLock lock(mu_);
    while (NextBatch(ws.batch)) {
      ++active_;
      lock.Unlock();
      ws.fresh.clear();
      LoadBatch(ws);
      lock.Lock();
      --active_;
      for (Item& it : ws.fresh) Enqueue(std::move(it));
      if (!ws.fresh.empty() || active_ == 0 || stop_) cv_.NotifyAll();
    }
    cv_.NotifyAll();
  }

  // Loads the batch (one pack, or one unindexed tree) and hands each tree over.
  void LoadBatch(WorkerState& ws) {
    std::vector<Item>& batch = ws.batch;
    if (!batch[0].located) {
      Deliver(ws, batch[0], nullptr);
      return;
    }
    std::sort(batch.begin(), batch.end(),
              [](const Item& a, const Item& b) { return a.loc.offset < b.loc.offset; });
    const std::string pack = batch[0].loc.pack.Hex();
    for (size_t first = 0; first < batch.size() && !cancel_.load(std::memory_order_relaxed);) {
      // One run of trees close to each other.
      uint64_t lo = batch[first].loc.offset;
      uint64_t hi = lo + batch[first].loc.length;
      size_t last = first + 1;
      for (; last < batch.size(); ++last) {
        uint64_t off = batch[last].loc.offset, end = off + batch[last].loc.length;
        if (off > hi + kMaxGap || std::max(hi, end) - lo > kMaxRange) break;
        hi = std::max(hi, end);
      }
      bool have = false;
      try {
        ws.buf.resize(hi - lo);  // reused: grows only
        repo_.backend().LoadInto({FileType::kPack, pack}, lo, ws.buf);
        have = true;
      } catch (const Error&) {
        // each tree of the run goes through LoadSlow, which reports the problem
      }
      for (size_t i = first; i < last; ++i)
        Deliver(ws, batch[i], have ? ws.buf.data() + (batch[i].loc.offset - lo) : nullptr);
      first = last;
    }
  }

  // Decodes one tree (`sealed`: its bytes in the run read, or null to load it through
  // IndexedRepository::LoadBlob), runs the callback and reaches its children. Failures go to
  // the error callback.
  void Deliver(WorkerState& ws, const Item& it, const uint8_t* sealed) {
    if (cancel_.load(std::memory_order_relaxed)) return;
    try {
      const uint8_t* tree = nullptr;
      size_t len = 0;
      if (!sealed || !ws.decoder.Decode(repo_.key(), it.ref.id, ByteView(sealed, it.loc.length),
                                        it.loc.uncompressed_length, &tree, &len))
        tree = ws.decoder.LoadSlow(repo_, it.ref.id, &len);
      ws.children.items().clear();
      if (opts_.tree)
        opts_.tree(StreamedTree{it.ref, tree, len, ws.decoder.capacity(), ws.no}, ws.children);
    } catch (const std::exception& e) {
      Report(it, e);
      return;
    }
    for (TreeRef& c : ws.children.items()) {
      c.root = it.ref.root;
      Item next;
      if (Reach(std::move(c), &next)) ws.fresh.push_back(std::move(next));
    }
  }

  void Report(const Item& it, const std::exception& e) {
    auto* he = dynamic_cast<const Error*>(&e);
    TreeStreamError err{it.ref, he ? he->code() : ErrorCode::kCorrupt, e.what(),
                        he && he->retryable()};
    MutexLock lock(report_mu_);
    if (cancel_.load()) return;
    if (!opts_.error || !opts_.error(err)) {
      cancel_.store(true);
      MutexLock l(mu_);
      stop_ = true;
      cv_.NotifyAll();
    }
  }

  IndexedRepository& repo_;
  const Index& index_;
  const StreamTreesOptions& opts_;
  const int threads_;
  std::atomic<bool> cancel_{false};
  Mutex report_mu_ ACQUIRED_BEFORE(mu_);  // one error callback at a time
  Mutex mu_;
  CondVar cv_;
  std::unordered_map<PackId, std::vector<Item>, IdHash> waiting_ GUARDED_BY(mu_);  // by pack
  std::deque<PackId> ready_ GUARDED_BY(mu_);      // packs with waiting trees, each once
  std::vector<Item> unlocated_ GUARDED_BY(mu_);   // not in the index: LoadSlow reports it
  size_t active_ GUARDED_BY(mu_) = 0;             // workers loading a batch
  bool stop_ GUARDED_BY(mu_) = false;
};

}  // namespace

void StreamTrees(IndexedRepository& repo, std::vector<TreeRef> roots, const StreamTreesOptions& opts) {
  UnorderedWalk walk(repo, opts);
  walk.Run(std::move(roots));
}

int StreamTreesThreads(const IndexedRepository& repo, int threads) { return ResolveThreads(repo, threads); }

// ---- ordered ---------------------------------------------------------------------------------

namespace {

// Loads and decodes one tree: the first indexed copy read into a reused buffer and
// decoded in the reused decoder; anything wrong goes through IndexedRepository::LoadTree, which
// tries every copy and throws its usual error.
class OneTreeLoader {
 public:
  std::vector<Node> Load(IndexedRepository& repo, const BlobId& id) {
    std::vector<BlobLocation> locs = repo.index().Lookup(BlobType::kTree, id);
    if (!locs.empty()) {
      const BlobLocation& l = locs[0];
      const uint8_t* tree = nullptr;
      size_t len = 0;
      bool ok = false;
      try {
        buf_.resize(l.length);
        repo.backend().LoadInto({FileType::kPack, l.pack.Hex()}, l.offset, buf_);
        ok = decoder_.Decode(repo.key(), id, buf_, l.uncompressed_length, &tree, &len);
      } catch (const Error&) {
      }
      if (ok)
        return DecodeTree(std::string_view(reinterpret_cast<const char*>(tree), len), id.Hex(),
                          decoder_.capacity());
    }
    return repo.LoadTree(id);
  }

 private:
  TreeDecoder decoder_;
  Bytes buf_;
};

struct Slot {
  BlobId id;
  bool claimed = false;  // taken by a worker (or by the caller) to load
  bool done = false;     // loaded (or failed)
  bool dropped = false;  // skipped by the caller
  std::vector<Node> nodes;
  std::exception_ptr err;
};

}  // namespace

// The announced trees form a stack (pre-order: the next expected on top). Each job on the
// pool loads the topmost tree no worker has claimed yet, so the trees needed soonest are
// loaded first whatever was announced meanwhile.
struct OrderedTreeStream::Impl {
  Impl(IndexedRepository& r, int threads, size_t w)
      : repo(r), window(w ? w : 8 * static_cast<size_t>(ResolveThreads(r, threads))),
        pool(ResolveThreads(r, threads), window + 1) {}

  ~Impl() {
    closing.store(true);
    MutexLock lock(mu);
    for (auto& s : stack) s->dropped = true;
    stack.clear();
  }

  // Starts jobs for unclaimed trees while fewer than `window` are loading or loaded.
  void Refill() REQUIRES(mu) {
    while (jobs < unclaimed && outstanding + jobs < window) {
      ++jobs;
      pool.Submit([this] { Work(); });
    }
  }

  // The topmost unclaimed tree, claimed; null when there is none.
  std::shared_ptr<Slot> Claim() REQUIRES(mu) {
    for (size_t i = stack.size(); i-- > 0;) {
      if (stack[i]->claimed) continue;
      stack[i]->claimed = true;
      --unclaimed;
      ++outstanding;
      peak = std::max(peak, outstanding);
      return stack[i];
    }
    return nullptr;
  }

  void Work() {
    std::shared_ptr<Slot> s;
    std::unique_ptr<OneTreeLoader> loader;
    {
      MutexLock lock(mu);
      --jobs;
      if (closing.load() || !(s = Claim())) return;
      if (!loaders.empty()) {
        loader = std::move(loaders.back());
        loaders.pop_back();
      }
    }
    if (!loader) loader = std::make_unique<OneTreeLoader>();
    std::vector<Node> nodes;
    std::exception_ptr err;
    try {
      nodes = loader->Load(repo, s->id);
    } catch (...) {
      err = std::current_exception();
    }
    MutexLock lock(mu);
    loaders.push_back(std::move(loader));
    s->done = true;
    if (s->dropped) {
      --outstanding;  // the caller's next Take or Expect starts more
    } else {
      s->nodes = std::move(nodes);
      s->err = err;
    }
    done_cv.NotifyAll();
    // This worker's references to the slot and the error go while mu is held, so the taker
    // (who reads the error's message) holds the last ones and frees the exception on its
    // own thread. Freed here after the taker had read it, the only order between the two
    // would be libstdc++'s exception reference count, which ThreadSanitizer does not see
    // (a data race reported in FindTest.AnUnloadableTreeIsReportedWithItsParent).
    err = nullptr;
    s.reset();
  }

  // Removes the entry `id` nearest the top and every entry above it (skipped by the
  // caller); null when `id` was not announced.
  std::shared_ptr<Slot> Pop(const BlobId& id) REQUIRES(mu) {
    for (size_t i = stack.size(); i-- > 0;) {
      if (stack[i]->id != id) continue;
      std::shared_ptr<Slot> s = std::move(stack[i]);
      for (size_t j = i + 1; j < stack.size(); ++j) Drop(*stack[j]);
      stack.resize(i);
      return s;
    }
    return nullptr;
  }

  void Drop(Slot& s) REQUIRES(mu) {
    s.dropped = true;
    if (!s.claimed) {
      --unclaimed;
    } else if (s.done) {
      --outstanding;
    }  // else the worker counts it when done
  }

  IndexedRepository& repo;
  const size_t window;
  std::atomic<bool> closing{false};
  Mutex mu;
  CondVar done_cv;
  std::vector<std::shared_ptr<Slot>> stack GUARDED_BY(mu);  // back: the next expected
  size_t unclaimed GUARDED_BY(mu) = 0;    // in the stack, not claimed
  size_t jobs GUARDED_BY(mu) = 0;         // submitted, not started
  size_t outstanding GUARDED_BY(mu) = 0;  // claimed by a worker and not taken
  size_t peak GUARDED_BY(mu) = 0;
  std::vector<std::unique_ptr<OneTreeLoader>> loaders GUARDED_BY(mu);  // idle, reused
  OneTreeLoader own;  // the calling thread's, for trees no worker claimed
  ThreadPool pool;    // last: joined first, while the rest still lives
};

OrderedTreeStream::OrderedTreeStream(IndexedRepository& repo, int threads, size_t window)
    : impl_(std::make_unique<Impl>(repo, threads, window)) {}

OrderedTreeStream::~OrderedTreeStream() = default;

void OrderedTreeStream::Expect(std::span<const BlobId> ids) {
  MutexLock lock(impl_->mu);
  for (size_t i = ids.size(); i-- > 0;) {
    auto s = std::make_shared<Slot>();
    s->id = ids[i];
    impl_->stack.push_back(std::move(s));
    ++impl_->unclaimed;
  }
  impl_->Refill();
}

std::vector<Node> OrderedTreeStream::Take(const BlobId& id) {
  Impl& m = *impl_;
  MutexLock lock(m.mu);
  std::shared_ptr<Slot> s = m.Pop(id);
  if (!s || !s->claimed) {  // not announced, or no worker got to it yet: load it here
    if (s) --m.unclaimed;
    m.Refill();
    lock.Unlock();
    return m.own.Load(m.repo, id);
  }
  while (!s->done) m.done_cv.Wait(m.mu);
  --m.outstanding;
  m.Refill();
  lock.Unlock();
  if (s->err) std::rethrow_exception(s->err);
  return std::move(s->nodes);
}

size_t OrderedTreeStream::peak_in_window() const {
  MutexLock lock(impl_->mu);
  return impl_->peak;
}

}  // namespace haven
