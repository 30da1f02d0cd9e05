#include "repo/indexed_repository.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>

#include "core/error.h"
#include "core/huge_buffer.h"
#include "crypto/seal.h"
#include "repo/compress.h"
#include "repo/read_concurrency.h"

namespace haven {

namespace {

// Index files of at least this many bytes in all (as listed: encrypted, compressed) leave
// enough freed parser memory behind to be worth a malloc_trim after the load.
constexpr uint64_t kTrimAfterIndexBytes = uint64_t{4} << 20;

// Reads index files ahead of their parsers: up to `readers` loads in flight, in file
// order, at most kFetchBudget bytes read and not yet parsed (a single larger file is read
// alone). The parsers are the --jobs threads (decoding is CPU-bound); the reads are round
// trips on remote storage, so they overlap many at once (read_concurrency.h). Buffers are
// reused: each grows only, so a load does not fault in a fresh buffer per file.
class IndexFetcher {
 public:
  static constexpr size_t kFetchBudget = size_t{32} << 20;

  IndexFetcher(Backend& be, const std::vector<std::pair<FileId, uint64_t>>& files, int readers)
      : be_(be), files_(files), slots_(files.size()) {
    for (int r = 0; r < readers; ++r) threads_.emplace_back([this] { Run(); });
  }
  ~IndexFetcher() {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    cv_.NotifyAll();
    for (auto& t : threads_) t.join();
  }
  IndexFetcher(const IndexFetcher&) = delete;
  IndexFetcher& operator=(const IndexFetcher&) = delete;

  // File i's bytes, once read (rethrows its read error).
  std::unique_ptr<Bytes> Take(size_t i) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    while (!slots_[i].done) cv_.Wait(mu_);
    if (slots_[i].error) std::rethrow_exception(slots_[i].error);
    return std::move(slots_[i].bytes);
  }
  // Hands file i's buffer back once parsed: its bytes leave the budget.
  void Done(size_t i, std::unique_ptr<Bytes> buf) EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      used_ -= files_[i].second;
      free_.push_back(std::move(buf));
    }
    cv_.NotifyAll();
  }

 private:
  struct Slot {
    bool done = false;
    std::unique_ptr<Bytes> bytes;
    std::exception_ptr error;
  };
  void Run() EXCLUDES(mu_) {
    for (;;) {
      size_t i;
      std::unique_ptr<Bytes> buf;
      {
        MutexLock lock(mu_);
        // In file order, so the parsers (which take files in order too) never wait for a
        // file that the budget keeps out behind later ones.
        while (!stop_ && next_ < files_.size() && used_ != 0 &&
               used_ + files_[next_].second > kFetchBudget)
          cv_.Wait(mu_);
        if (stop_ || next_ >= files_.size()) return;
        i = next_++;
        used_ += files_[i].second;
        if (!free_.empty()) {
          buf = std::move(free_.back());
          free_.pop_back();
        }
      }
      if (!buf) buf = std::make_unique<Bytes>();
      std::exception_ptr error;
      try {
        buf->resize(files_[i].second);  // grows only
        be_.LoadInto({FileType::kIndex, files_[i].first.Hex()}, 0, *buf);
      } catch (...) {
        error = std::current_exception();
      }
      {
        MutexLock lock(mu_);
        slots_[i].done = true;
        slots_[i].bytes = std::move(buf);
        slots_[i].error = error;
      }
      cv_.NotifyAll();
    }
  }

  Backend& be_;
  const std::vector<std::pair<FileId, uint64_t>>& files_;
  Mutex mu_;
  CondVar cv_;
  std::vector<Slot> slots_ GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Bytes>> free_ GUARDED_BY(mu_);
  size_t next_ GUARDED_BY(mu_) = 0;
  size_t used_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

// Checks and decrypts one index file read into `raw` (in place), and streams its JSON
// through zstd (v2) into `parse`: no buffer of the whole decompressed file.
void ParseIndexFile(const Repository& repo, const std::string& hex, Bytes& raw,
                    const Index::ParseFn& parse) {
  const std::string what = "index " + hex;
  if (raw.size() < crypto::kOverhead ||
      !crypto::OpenInto(repo.key(), raw, raw.data() + crypto::kIvSize))
    Fail(ErrorCode::kCorrupt, what + ": ciphertext verification failed");
  const ByteView plain(raw.data() + crypto::kIvSize, raw.size() - crypto::kOverhead);
  const int version = repo.config().version;
  const size_t limit = Repository::kMaxUnpackedSize;
  Index::FileText text;
  text.name = hex;
  std::optional<ZstdStreamReader> zr;
  size_t pos = 0;
  if (version >= 2 && !plain.empty() && plain[0] == 2) {
    const ByteView frame = plain.subspan(1);
    zr.emplace(frame, limit, what);
    text.read = [&](char* dst, size_t cap) {
      return zr->Read(reinterpret_cast<uint8_t*>(dst), cap);
    };
    // Bytes after the frame: ZstdDecompressToString decides what they mean.
    text.complete = [&] { return zr->clean(); };
    // `frame` by value: it goes out of scope before `parse` calls this.
    text.whole = [frame, limit, &what] { return ZstdDecompressToString(frame, limit, what); };
  } else {
    if (version >= 2 && !plain.empty() && plain[0] != '{' && plain[0] != '[')
      Fail(ErrorCode::kCorrupt, what + ": unsupported encoding format " + std::to_string(plain[0]));
    text.read = [&](char* dst, size_t cap) {
      size_t n = std::min(cap, plain.size() - pos);
      std::memcpy(dst, plain.data() + pos, n);
      pos += n;
      return n;
    };
    text.whole = [&] { return std::string(plain.begin(), plain.end()); };
  }
  parse(text);
}

}  // namespace

std::vector<std::pair<FileId, uint64_t>> IndexedRepository::IndexFilesOf(
    const std::vector<FileInfo>& listed) {
  std::vector<std::pair<FileId, uint64_t>> files;
  for (const FileInfo& fi : listed)
    if (auto id = FileId::FromHex(fi.name)) files.emplace_back(*id, fi.size);
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::pair<FileId, uint64_t>> IndexedRepository::ListIndexFiles(Backend& be) {
  std::vector<FileInfo> listed;
  be.List(FileType::kIndex, [&](const FileInfo& fi) { listed.push_back(fi); });
  return IndexFilesOf(listed);
}

std::unique_ptr<IndexedRepository> IndexedRepository::Load(const Repository& opened,
                                                           IndexLoad when) {
  std::unique_ptr<IndexedRepository> repo(new IndexedRepository(opened));
  auto files = ListIndexFiles(repo->backend());
  return Loaded(std::move(repo), std::move(files), when);
}

std::unique_ptr<IndexedRepository> IndexedRepository::Load(
    const Repository& opened, std::vector<std::pair<FileId, uint64_t>> files, IndexLoad when) {
  return Loaded(std::unique_ptr<IndexedRepository>(new IndexedRepository(opened)),
                std::move(files), when);
}

std::unique_ptr<IndexedRepository> IndexedRepository::Loaded(
    std::unique_ptr<IndexedRepository> repo, std::vector<std::pair<FileId, uint64_t>> files,
    IndexLoad when) {
  {
    {
      WriterLock lock(repo->index_mu_);
      for (const auto& f : files) repo->index_files_.push_back(f.first);
    }
    MutexLock lock(repo->load_mu_);  // (load_mu_ before index_mu_, never the other way)
    repo->listed_ = std::move(files);
  }
  if (when == IndexLoad::kNow) repo->LoadIndex();
  if (const auto& cache = repo->cache()) {
    const IndexedRepository* r = repo.get();  // cleared again by the destructor
    cache->SetTreePackPredicate([r](const std::string& name) {
      auto id = PackId::FromHex(name);
      return id && r->IsTreePack(*id);
    });
  }
  return repo;
}

IndexedRepository::~IndexedRepository() {
  if (cache()) cache()->SetTreePackPredicate(nullptr);
}

void IndexedRepository::LoadIndex() const {
  if (loaded_.load(std::memory_order_acquire)) return;
  MutexLock lock(load_mu_);
  if (loaded_.load(std::memory_order_relaxed)) return;
  // (index_ and listed_ change only here, under load_mu_; a WriteSession adds to index_
  // only after its HasBlob calls came through here)
  const_cast<IndexedRepository*>(this)->LoadIndexFiles();  // throws: the next call tries again
  listed_.clear();
  listed_.shrink_to_fit();
  loaded_.store(true, std::memory_order_release);
}

void IndexedRepository::LoadIndexFiles() NO_THREAD_SAFETY_ANALYSIS {  // load_mu_ held
  // Ids and listed sizes: each file is read into a buffer of its listed size.
  const std::vector<std::pair<FileId, uint64_t>> files = listed_;  // (a copy: a few ids)
  // Each file is decoded, parsed and added by one thread; the shards are sorted in
  // parallel at the end. Only the files in progress are held in memory at once (a decoded
  // file and its parser take several times the file's JSON), so the parsers are the
  // --jobs threads, not more: decoding is CPU-bound. The reads run ahead of them, many at
  // once when the files come from remote storage (IndexFetcher).
  std::vector<FileId> ids;
  for (const auto& f : files) ids.push_back(f.first);
  Index fresh;
  {
    IndexFetcher fetcher(backend(), files, ReadConcurrency(*this, FileType::kIndex, ids));
    fresh.LoadParallel(files.size(), threads(), [&](size_t i, const Index::ParseFn& parse) {
      std::unique_ptr<Bytes> buf = fetcher.Take(i);
      const std::string hex = files[i].first.Hex();
      Bytes& raw = *buf;
      if (Sha256(raw) != static_cast<const RawId&>(files[i].first))
        Fail(ErrorCode::kCorrupt,
             "index " + hex + ": content does not match its id (invalid data returned)");
      ParseIndexFile(*this, hex, raw, parse);
      fetcher.Done(i, std::move(buf));
    });
  }
  {
    WriterLock lock(index_mu_);
    index_ = std::move(fresh);
  }
  // Parsing left freed buffers (decoded JSON, parser tapes) in the allocator's arenas;
  // hand them back so that resident memory is the index itself. Not for a small index:
  // malloc_trim walks and madvises every arena, which cost more than a small load itself
  // (a 2,000-blob index: a third of its load time, bench B9), for little memory.
  uint64_t listed_bytes = 0;
  for (const auto& f : files) listed_bytes += f.second;
  if (listed_bytes >= kTrimAfterIndexBytes) malloc_trim(0);
}

void IndexedRepository::CompactIndex() {
  LoadIndex();
  WriterLock lock(index_mu_);
  index_.Compact();
}

void IndexedRepository::AddKnownBlobs(const std::vector<KnownBlob>& blobs) {
  for (const KnownBlob& b : blobs) known_.emplace(b.id, b);
}

const KnownBlob* IndexedRepository::Known(BlobType t, const BlobId& id) const {
  if (known_.empty()) return nullptr;
  auto it = known_.find(id);
  return it == known_.end() || it->second.type != t ? nullptr : &it->second;
}

std::optional<BlobLocation> IndexedRepository::Locate(BlobType t, const BlobId& id) const {
  if (const KnownBlob* k = Known(t, id)) return k->where;
  LoadIndex();
  ReaderLock lock(index_mu_);
  std::vector<BlobLocation> locs = index_.Lookup(t, id);
  if (locs.empty()) return std::nullopt;
  return locs.front();
}

Bytes IndexedRepository::LoadCopy(const BlobId& id, const BlobLocation& l) {
  const std::string pack = l.pack.Hex();
  // A length beyond any chunk (an index made elsewhere may say 4 GiB) is read as the
  // storage's Load reads it: checked against the pack's size before any allocation; a
  // plaintext length beyond it is checked against the frame's own before one
  // (ZstdDecompress).
  if (l.length > kScratchMax || l.uncompressed_length > kScratchMax)
    return DecodeBlob(id, backend().Load({FileType::kPack, pack}, l.offset, l.length),
                      l.uncompressed_length, pack);
  // Otherwise the sealed bytes land in a scratch buffer of this thread, reused from call
  // to call (never zero-filled, no page faults once grown, at most kScratchMax), and are
  // opened in place: only the plaintext is allocated. In a perf profile of a 1 MiB
  // `box cat` the two fresh zero-filled buffers of Load and Open took 12 % of the samples.
  thread_local HugeBuffer scratch;
  std::span<uint8_t> sealed = scratch.First(l.length);
  backend().LoadInto({FileType::kPack, pack}, l.offset, sealed);
  if (l.uncompressed_length) {
    Bytes out(l.uncompressed_length);
    DecodeBlobInPlace(id, sealed, l.uncompressed_length, pack, out);
    return out;
  }
  ByteView plain = DecodeBlobInPlace(id, sealed, 0, pack, {});
  return Bytes(plain.begin(), plain.end());
}

ByteView IndexedRepository::LoadCopyInto(const BlobId& id, const BlobLocation& l,
                                         HugeBuffer& out) {
  const std::string pack = l.pack.Hex();
  // As LoadCopy: a sealed length beyond any chunk is range-checked by the storage's Load
  // first, and an uncompressed length beyond it (the index's word, untrusted) does not
  // grow the caller's buffer past kScratchMax before the blob decoded.
  if (l.length > kScratchMax || l.uncompressed_length > kScratchMax) {
    Bytes b = LoadCopy(id, l);
    std::memcpy(out.First(b.size()).data(), b.data(), b.size());
    return ByteView(out.data(), b.size());
  }
  if (l.uncompressed_length) {
    // Sealed bytes in this thread's scratch, the plaintext decompressed into `out`.
    thread_local HugeBuffer scratch;
    std::span<uint8_t> sealed = scratch.First(l.length);
    backend().LoadInto({FileType::kPack, pack}, l.offset, sealed);
    return DecodeBlobInPlace(id, sealed, l.uncompressed_length, pack,
                             out.First(l.uncompressed_length));
  }
  // Uncompressed: read into `out` and opened there.
  std::span<uint8_t> sealed = out.First(l.length);
  backend().LoadInto({FileType::kPack, pack}, l.offset, sealed);
  return DecodeBlobInPlace(id, sealed, 0, pack, {});
}

std::vector<BlobLocation> IndexedRepository::Locations(BlobType t, const BlobId& id) {
  LoadIndex();
  std::vector<BlobLocation> locs;
  {
    ReaderLock lock(index_mu_);
    locs = index_.Lookup(t, id);
  }
  if (locs.empty())
    Fail(ErrorCode::kNotFound,
         std::string(BlobTypeName(t)) + " blob " + id.Hex() + " is not in the index");
  return locs;
}

// The first intact copy of a blob, as load(location) returns it: a known blob's recorded
// copy first (while the index is not read), then every copy the index lists; kCorrupt
// with every copy's error when none is intact.
template <typename LoadFn>
auto IndexedRepository::FromAnyCopy(BlobType t, const BlobId& id, const LoadFn& load)
    -> decltype(load(BlobLocation{})) {
  if (const KnownBlob* k = index_loaded() ? nullptr : Known(t, id)) {
    try {
      return load(k->where);
    } catch (const Error&) {
      // (the record was wrong, or the copy is damaged: the index knows every copy)
    }
  }
  std::string errors;
  for (const BlobLocation& l : Locations(t, id)) {
    try {
      return load(l);
    } catch (const Error& e) {
      if (!errors.empty()) errors += "; ";
      errors += e.what();
    }
  }
  Fail(ErrorCode::kCorrupt, errors);
}

Bytes IndexedRepository::LoadBlob(BlobType t, const BlobId& id) {
  return FromAnyCopy(t, id, [&](const BlobLocation& l) { return LoadCopy(id, l); });
}

ByteView IndexedRepository::LoadBlobInto(BlobType t, const BlobId& id, HugeBuffer& out) {
  return FromAnyCopy(t, id, [&](const BlobLocation& l) { return LoadCopyInto(id, l, out); });
}

std::vector<Node> IndexedRepository::LoadTree(const BlobId& id) {
  Bytes b = LoadBlob(BlobType::kTree, id);
  return DecodeTree(AsChars(b), id.Hex());
}

bool IndexedRepository::HasBlob(BlobType t, const BlobId& id) const {
  if (!index_loaded() && Known(t, id)) return true;
  LoadIndex();
  ReaderLock lock(index_mu_);
  return index_.Has(t, id);
}

bool IndexedRepository::IsTreePack(const PackId& pack) const {
  if (!index_loaded())  // (packs hold one type of blob: a known tree's pack is a tree pack)
    for (const auto& [id, k] : known_)
      if (k.type == BlobType::kTree && k.where.pack == pack) return true;
  LoadIndex();
  ReaderLock lock(index_mu_);
  return index_.IsTreePack(pack);
}

void IndexedRepository::AddPack(const PackId& pack, const std::vector<PackedBlob>& blobs) {
  LoadIndex();
  WriterLock lock(index_mu_);
  index_.AddPack(pack, blobs);
}

void IndexedRepository::AddIndexFile(const FileId& id) {
  WriterLock lock(index_mu_);
  index_files_.push_back(id);
}

}  // namespace haven
