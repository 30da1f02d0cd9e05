#include "repo/indexed_repository.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "core/error.h"
#include "crypto/seal.h"
#include "repo/compress.h"

namespace haven {

namespace {

// Read buffers for the index loaders, one per loader thread, reused across files (each
// grows only), so a load does not allocate and fault in a fresh buffer per file.
class ReadBuffers {
 public:
  std::unique_ptr<Bytes> Get() {
    MutexLock lock(mu_);
    if (free_.empty()) return std::make_unique<Bytes>();
    std::unique_ptr<Bytes> b = std::move(free_.back());
    free_.pop_back();
    return b;
  }
  void Put(std::unique_ptr<Bytes> b) {
    MutexLock lock(mu_);
    free_.push_back(std::move(b));
  }

 private:
  Mutex mu_;
  std::vector<std::unique_ptr<Bytes>> free_ GUARDED_BY(mu_);
};

// Every index file's id and listed size, sorted by id.
std::vector<std::pair<FileId, uint64_t>> ListIndexFiles(Backend& be) {
  std::vector<std::pair<FileId, uint64_t>> files;
  be.List(FileType::kIndex, [&](const FileInfo& fi) {
    if (auto id = FileId::FromHex(fi.name)) files.emplace_back(*id, fi.size);
  });
  std::sort(files.begin(), files.end());
  return files;
}

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

std::unique_ptr<IndexedRepository> IndexedRepository::Load(const Repository& opened) {
  std::unique_ptr<IndexedRepository> repo(new IndexedRepository(opened));
  repo->LoadIndexFiles();
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

void IndexedRepository::LoadIndexFiles() {
  // Ids and listed sizes: each file is read into a buffer of its listed size.
  const std::vector<std::pair<FileId, uint64_t>> files = ListIndexFiles(backend());
  // Each file is decoded, parsed and added by one thread; the shards are sorted in
  // parallel at the end. Only the files in progress are held in memory at once (a decoded
  // file and its parser take several times the file's JSON), so the loaders are the
  // --jobs threads, not more: decoding is CPU-bound.
  ReadBuffers buffers;
  Index fresh;
  fresh.LoadParallel(files.size(), threads(), [&](size_t i, const Index::ParseFn& parse) {
    std::unique_ptr<Bytes> buf = buffers.Get();
    const auto& [file_id, file_size] = files[i];
    const std::string hex = file_id.Hex();
    Bytes& raw = *buf;
    raw.resize(file_size);  // the buffer is reused across files: grows only
    backend().LoadInto({FileType::kIndex, hex}, 0, raw);
    if (Sha256(raw) != static_cast<const RawId&>(file_id))
      Fail(ErrorCode::kCorrupt,
           "index " + hex + ": content does not match its id (invalid data returned)");
    ParseIndexFile(*this, hex, raw, parse);
    buffers.Put(std::move(buf));
  });
  {
    WriterLock lock(index_mu_);
    index_ = std::move(fresh);
    index_files_.clear();
    for (const auto& f : files) index_files_.push_back(f.first);
  }
  // Parsing left freed buffers (decoded JSON, parser tapes) in the allocator's arenas;
  // hand them back so that resident memory is the index itself.
  malloc_trim(0);
}

void IndexedRepository::CompactIndex() {
  WriterLock lock(index_mu_);
  index_.Compact();
}

Bytes IndexedRepository::LoadBlob(BlobType t, const BlobId& id) {
  std::vector<BlobLocation> locs;
  {
    ReaderLock lock(index_mu_);
    locs = index_.Lookup(t, id);
  }
  if (locs.empty())
    Fail(ErrorCode::kNotFound,
         std::string(BlobTypeName(t)) + " blob " + id.Hex() + " is not in the index");
  std::string errors;
  for (const BlobLocation& l : locs) {
    try {
      Bytes sealed = backend().Load({FileType::kPack, l.pack.Hex()}, l.offset, l.length);
      return DecodeBlob(id, sealed, l.uncompressed_length, l.pack.Hex());
    } catch (const Error& e) {
      if (!errors.empty()) errors += "; ";
      errors += e.what();
    }
  }
  Fail(ErrorCode::kCorrupt, errors);
}

std::vector<Node> IndexedRepository::LoadTree(const BlobId& id) {
  Bytes b = LoadBlob(BlobType::kTree, id);
  return DecodeTree(AsChars(b), id.Hex());
}

bool IndexedRepository::HasBlob(BlobType t, const BlobId& id) const {
  ReaderLock lock(index_mu_);
  return index_.Has(t, id);
}

bool IndexedRepository::IsTreePack(const PackId& pack) const {
  ReaderLock lock(index_mu_);
  return index_.IsTreePack(pack);
}

void IndexedRepository::AddPack(const PackId& pack, const std::vector<PackedBlob>& blobs) {
  WriterLock lock(index_mu_);
  index_.AddPack(pack, blobs);
}

void IndexedRepository::AddIndexFile(const FileId& id) {
  WriterLock lock(index_mu_);
  index_files_.push_back(id);
}

}  // namespace haven
