#include "repo/repository.h"

#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "chunker/polynomial.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "core/timings.h"
#include "crypto/random.h"
#include "crypto/seal.h"
#include "repo/compress.h"
#include "repo/key_file.h"
#include "repo/node.h"

namespace haven {

namespace {
constexpr size_t kMaxUnpackedSize = size_t(4) << 30;

}  // namespace

void Repository::Init(Backend& be, std::string_view password, int version,
                      const crypto::ScryptParams& params, int threads,
                      std::optional<uint64_t> chunker_polynomial) {
  if (version != 1 && version != 2)
    Fail(ErrorCode::kInvalidArgument,
         "unsupported repository version " + std::to_string(version) + " (want 1 or 2)");
  if (be.Exists())
    Fail(ErrorCode::kFatal, "repository " + be.Location() + " already exists (config found)");
  crypto::CryptoKey master = crypto::CryptoKey::Random();
  RepoConfig cfg = RepoConfig::New(version);
  if (chunker_polynomial) {
    if (!chunker::IsIrreducible(*chunker_polynomial))
      Fail(ErrorCode::kInvalidArgument, "chunker polynomial is not irreducible");
    cfg.chunker_polynomial = *chunker_polynomial;
  }
  be.Create();
  KeyFile kf = KeyFile::Create(master, password, params, threads);
  std::string kjson = kf.ToJson();
  RawId kid = Sha256(AsBytes(kjson));
  be.Save({FileType::kKey, kid.Hex()}, AsBytes(kjson));
  std::string cjson = cfg.ToJson();
  be.Save({FileType::kConfig, "config"}, crypto::Seal(master, AsBytes(cjson)));
}

std::unique_ptr<Repository> Repository::Open(std::shared_ptr<Backend> be,
                                             std::string_view password, int threads,
                                             std::string_view key_hint) {
  if (!be->Exists())
    Fail(ErrorCode::kNoRepository,
         "repository " + be->Location() + " does not exist (no config file found)");
  std::unique_ptr<Repository> repo(new Repository());
  repo->backend_ = be;
  repo->threads_ = std::max(1, threads);
  repo->upload_pool_ = std::make_unique<ThreadPool>(kMaxUploads, 1);
  std::vector<FileInfo> keys;
  be->List(FileType::kKey, [&](const FileInfo& fi) { keys.push_back(fi); });
  std::sort(keys.begin(), keys.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.name < b.name; });
  if (keys.empty())
    Fail(ErrorCode::kWrongPassword, "repository " + be->Location() + " has no key files");
  // The hinted key (a full id or a unique prefix) is tried first and does not count
  // against the limit, as restic's --key-hint.
  if (!key_hint.empty()) {
    auto hinted = std::find_if(keys.begin(), keys.end(), [&](const FileInfo& fi) {
      return fi.name.compare(0, key_hint.size(), key_hint) == 0;
    });
    if (hinted != keys.end()) std::rotate(keys.begin(), hinted, hinted + 1);
  }
  int tried = 0;
  bool opened = false;
  for (const FileInfo& fi : keys) {
    if (tried++ >= kMaxKeysTried + (key_hint.empty() ? 0 : 1)) break;
    if (fi.size > 64 * 1024) {
      std::fprintf(stderr, "warning: skipping key %s: file is too large (%llu bytes)\n",
                   fi.name.c_str(), static_cast<unsigned long long>(fi.size));
      continue;
    }
    Bytes raw = be->Load({FileType::kKey, fi.name});
    KeyFile kf;
    try {
      kf = KeyFile::Parse(AsChars(raw), fi.name);
    } catch (const Error& e) {
      // A damaged or hostile key file (e.g. absurd scrypt parameters) is refused before
      // any derivation; the other keys may still open the repository.
      std::fprintf(stderr, "warning: skipping %s\n", e.what());
      continue;
    }
    if (auto mk = kf.Open(password, fi.name, repo->threads_)) {
      repo->key_ = *mk;
      repo->key_id_ = *FileId::FromHex(fi.name);
      opened = true;
      break;
    }
  }
  if (!opened)
    Fail(ErrorCode::kWrongPassword,
         "wrong password or no key found for repository " + be->Location() +
             (keys.size() > size_t{kMaxKeysTried}
                  ? " (tried " + std::to_string(kMaxKeysTried) + " of its " +
                        std::to_string(keys.size()) + " key files; --key-hint names the key)"
                  : ""));
  Bytes cfg_raw = be->Load({FileType::kConfig, "config"});
  auto cfg_plain = crypto::Open(repo->key_, cfg_raw);
  if (!cfg_plain) Fail(ErrorCode::kCorrupt, "config: ciphertext verification failed");
  repo->config_ = RepoConfig::Parse(AsChars(*cfg_plain));
  repo->tables_ = std::make_unique<chunker::Tables>(repo->config_.chunker_polynomial);
  return repo;
}

FileId Repository::SaveJson(FileType t, std::string_view json) {
  if (t == FileType::kSnapshot) CheckLock();  // a command that lost its lock commits nothing
  Bytes sealed = EncodeJson(json);
  FileId id(Sha256(sealed));
  backend_->Save({t, id.Hex()}, sealed);
  return id;
}

Bytes Repository::EncodeJson(std::string_view json) {
  Bytes plain;
  if (config_.version >= 2) {
    Bytes z = ZstdCompress(AsBytes(json), 3);
    plain.reserve(z.size() + 1);
    plain.push_back(2);
    plain.insert(plain.end(), z.begin(), z.end());
  } else {
    plain.assign(json.begin(), json.end());
  }
  return crypto::Seal(key_, plain);
}

std::string Repository::DecodeUnpacked(ByteView stored, const std::string& what) {
  auto plain = crypto::Open(key_, stored);
  if (!plain) Fail(ErrorCode::kCorrupt, what + ": ciphertext verification failed");
  if (config_.version >= 2 && !plain->empty()) {
    uint8_t b = (*plain)[0];
    if (b == 2) return ZstdDecompressToString(ByteView(*plain).subspan(1), kMaxUnpackedSize, what);
    if (b != '{' && b != '[')
      Fail(ErrorCode::kCorrupt, what + ": unsupported encoding format " + std::to_string(b));
  }
  return std::string(plain->begin(), plain->end());
}

std::string Repository::LoadJson(FileType t, const FileId& id) {
  const std::string what = std::string(FileTypeName(t)) + " " + id.Hex();
  Bytes raw = backend_->Load({t, id.Hex()});
  if (Sha256(raw) != static_cast<const RawId&>(id))
    Fail(ErrorCode::kCorrupt, what + ": content does not match its id (invalid data returned)");
  return DecodeUnpacked(raw, what);
}

std::vector<FileId> Repository::ListIds(FileType t) {
  std::vector<FileId> out;
  backend_->List(t, [&](const FileInfo& fi) {
    if (auto id = FileId::FromHex(fi.name)) out.push_back(*id);
  });
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<FileId, Snapshot>> Repository::LoadSnapshots(
    std::vector<SnapshotFailure>* failures) {
  std::vector<FileId> ids = ListIds(FileType::kSnapshot);
  std::vector<std::pair<FileId, Snapshot>> loaded(ids.size());
  std::vector<std::optional<SnapshotFailure>> failed(ids.size());
  ParallelFor(ids.size(), std::max(threads_, 4), [&](size_t i) {
    try {
      loaded[i] = {ids[i], Snapshot::Parse(LoadJson(FileType::kSnapshot, ids[i]), ids[i].Hex())};
    } catch (const Error& e) {
      failed[i] = SnapshotFailure{ids[i], e.what(),
                                  e.code() == ErrorCode::kIo || e.code() == ErrorCode::kNotFound};
    }
  });
  std::vector<std::pair<FileId, Snapshot>> out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!failed[i]) {
      out.push_back(std::move(loaded[i]));
    } else if (failures) {
      failures->push_back(std::move(*failed[i]));
    } else if (warn_) {
      warn_("Ignoring snapshot " + ids[i].Short() + ": could not load it: " + failed[i]->error);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.second.time.sec != b.second.time.sec) return a.second.time.sec < b.second.time.sec;
    return a.second.time.nsec < b.second.time.nsec;
  });
  return out;
}

void Repository::LoadIndex() {
  // Ids and listed sizes: each file is read into a buffer of its listed size.
  std::vector<std::pair<FileId, uint64_t>> files;
  backend_->List(FileType::kIndex, [&](const FileInfo& fi) {
    if (auto id = FileId::FromHex(fi.name)) files.emplace_back(*id, fi.size);
  });
  std::sort(files.begin(), files.end());
  // Each file is decoded, parsed and added by one thread; the shards are sorted in
  // parallel at the end. Only the files in progress are held in memory at once (a decoded
  // file and its parser take several times the file's JSON), so the loaders are the
  // --jobs threads, not more: decoding is CPU-bound.
  // Each file is read into a reused buffer, checked, decrypted in place and streamed
  // through zstd into the index's scanner: no buffer of a whole decompressed file.
  std::mutex pool_mu;
  std::vector<std::unique_ptr<Bytes>> pool;  // one read buffer per loader thread
  Index fresh;
  fresh.LoadParallel(files.size(), threads_, [&](size_t i, const Index::ParseFn& parse) {
    std::unique_ptr<Bytes> buf;
    {
      std::lock_guard lock(pool_mu);
      if (!pool.empty()) {
        buf = std::move(pool.back());
        pool.pop_back();
      }
    }
    if (!buf) buf = std::make_unique<Bytes>();
    const auto& [file_id, file_size] = files[i];
    const std::string hex = file_id.Hex();
    const std::string what = "index " + hex;
    Bytes& raw = *buf;
    raw.resize(file_size);  // the buffer is reused across files: grows only
    backend_->LoadInto({FileType::kIndex, hex}, 0, raw);
    if (Sha256(raw) != static_cast<const RawId&>(file_id))
      Fail(ErrorCode::kCorrupt, what + ": content does not match its id (invalid data returned)");
    if (raw.size() < crypto::kOverhead || !crypto::OpenInto(key_, raw, raw.data() + crypto::kIvSize))
      Fail(ErrorCode::kCorrupt, what + ": ciphertext verification failed");
    const ByteView plain(raw.data() + crypto::kIvSize, raw.size() - crypto::kOverhead);
    Index::FileText text;
    text.name = hex;
    std::optional<ZstdStreamReader> zr;
    size_t pos = 0;
    if (config_.version >= 2 && !plain.empty() && plain[0] == 2) {
      const ByteView frame = plain.subspan(1);
      zr.emplace(frame, kMaxUnpackedSize, what);
      text.read = [&](char* dst, size_t cap) {
        return zr->Read(reinterpret_cast<uint8_t*>(dst), cap);
      };
      // Bytes after the frame: ZstdDecompressToString decides what they mean.
      text.complete = [&] { return zr->clean(); };
      text.whole = [&] { return ZstdDecompressToString(frame, kMaxUnpackedSize, what); };
    } else {
      if (config_.version >= 2 && !plain.empty() && plain[0] != '{' && plain[0] != '[')
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
    std::lock_guard lock(pool_mu);
    pool.push_back(std::move(buf));
  });
  {
    std::unique_lock lock(index_mu_);
    index_ = std::move(fresh);
    index_files_.clear();
    for (const auto& f : files) index_files_.push_back(f.first);
  }
  // Parsing left freed buffers (decoded JSON, parser tapes) in the allocator's arenas;
  // hand them back so that resident memory is the index itself.
  malloc_trim(0);
}

void Repository::CompactIndex() {
  std::unique_lock lock(index_mu_);
  index_.Compact();
}

Bytes Repository::DecodeBlob(const BlobId& id, ByteView sealed, uint32_t uncompressed_length,
                             const std::string& pack) {
  auto what = [&] { return "blob " + id.Hex() + " in pack " + pack; };
  auto plain = crypto::Open(key_, sealed);
  if (!plain) Fail(ErrorCode::kCorrupt, what() + ": ciphertext verification failed");
  Bytes out;
  if (uncompressed_length) {
    out = ZstdDecompress(*plain, uncompressed_length, uncompressed_length, what());
  } else {
    out = std::move(*plain);
  }
  if (Sha256(out) != static_cast<const RawId&>(id))
    Fail(ErrorCode::kCorrupt, what() + ": content does not match the blob id");
  return out;
}

ByteView Repository::DecodeBlobInPlace(const BlobId& id, std::span<uint8_t> sealed,
                                       uint32_t uncompressed_length, const std::string& pack,
                                       std::span<uint8_t> out) {
  auto what = [&] { return "blob " + id.Hex() + " in pack " + pack; };
  if (sealed.size() < crypto::kOverhead ||
      !crypto::OpenInto(key_, sealed, sealed.data() + crypto::kIvSize))
    Fail(ErrorCode::kCorrupt, what() + ": ciphertext verification failed");
  ByteView plain(sealed.data() + crypto::kIvSize, sealed.size() - crypto::kOverhead);
  if (uncompressed_length) {
    if (out.size() < uncompressed_length)
      Fail(ErrorCode::kFatal, what() + ": decode buffer too small");
    ZstdDecompressInto(plain, out.first(uncompressed_length), what());
    plain = out.first(uncompressed_length);
  }
  if (Sha256(plain) != static_cast<const RawId&>(id))
    Fail(ErrorCode::kCorrupt, what() + ": content does not match the blob id");
  return plain;
}

Bytes Repository::LoadBlob(BlobType t, const BlobId& id) {
  std::vector<BlobLocation> locs;
  {
    std::shared_lock lock(index_mu_);
    locs = index_.Lookup(t, id);
  }
  if (locs.empty())
    Fail(ErrorCode::kNotFound,
         std::string(BlobTypeName(t)) + " blob " + id.Hex() + " is not in the index");
  std::string errors;
  for (const BlobLocation& l : locs) {
    try {
      Bytes sealed = backend_->Load({FileType::kPack, l.pack.Hex()}, l.offset, l.length);
      return DecodeBlob(id, sealed, l.uncompressed_length, l.pack.Hex());
    } catch (const Error& e) {
      if (!errors.empty()) errors += "; ";
      errors += e.what();
    }
  }
  Fail(ErrorCode::kCorrupt, errors);
}

std::vector<Node> Repository::LoadTree(const BlobId& id) {
  Bytes b = LoadBlob(BlobType::kTree, id);
  return DecodeTree(AsChars(b), id.Hex());
}

bool Repository::HasBlob(BlobType t, const BlobId& id) {
  {
    std::shared_lock lock(index_mu_);
    if (index_.Has(t, id)) return true;
  }
  std::lock_guard lock(save_mu_);
  return in_flight_[static_cast<int>(t)].count(id) > 0;
}

bool Repository::IsTreePack(const PackId& pack) const {
  std::shared_lock lock(index_mu_);
  return index_.IsTreePack(pack);
}

bool Repository::SaveBlob(BlobType t, const BlobId& id, ByteView plain) {
  int ti = static_cast<int>(t);
  {
    std::shared_lock lock(index_mu_);
    if (index_.Has(t, id)) return false;
  }
  {
    std::lock_guard lock(save_mu_);
    if (!in_flight_[ti].insert(id).second) return false;
  }
  uint32_t ulen = 0;
  ByteView sealed = SealBlob(t, plain, /*skip_incompressible=*/true, &ulen);
  AppendSealed(t, id, sealed, ulen, plain.size());
  return true;
}

bool Repository::SaveBlobCopy(BlobType t, const BlobId& id, ByteView plain, ByteView sealed,
                              uint32_t uncompressed_length) {
  int ti = static_cast<int>(t);
  {
    std::lock_guard lock(save_mu_);
    if (!in_flight_[ti].insert(id).second) return false;
  }
  bool compress_now = config_.version >= 2 && uncompressed_length == 0 && !plain.empty() &&
                      (t == BlobType::kTree || compression_ != Compression::kOff);
  if (sealed.empty() || compress_now) {
    sealed = SealBlob(t, plain, /*skip_incompressible=*/false, &uncompressed_length);
  }
  AppendSealed(t, id, sealed, uncompressed_length, plain.size());
  return true;
}

ByteView Repository::SealBlob(BlobType t, ByteView plain, bool skip_incompressible,
                           uint32_t* uncompressed_length) {
  // v2 compresses trees always and data unless compression is off (or, for new data,
  // the sample says it will not shrink); compression and sealing run in the caller.
  bool compress = config_.version >= 2 && !plain.empty() &&
                  (t == BlobType::kTree ||
                   (compression_ != Compression::kOff &&
                    !(skip_incompressible && LooksIncompressible(plain))));
  // Per-thread buffers that only grow: no allocation or zero-fill per blob.
  thread_local Bytes payload, sealed;
  *uncompressed_length = 0;
  ByteView body = plain;
  if (compress) {
    int level = t == BlobType::kTree ? std::max(3, ZstdLevel(compression_))
                                     : ZstdLevel(compression_);
    ScopedTimer timer(Stage::kCompress);
    const size_t n = ZstdCompressInto(plain, level, payload);  // may reallocate payload
    body = ByteView(payload).first(n);
    *uncompressed_length = static_cast<uint32_t>(plain.size());
  }
  const size_t n = body.size() + crypto::kOverhead;
  if (sealed.size() < n) sealed.resize(n);
  ScopedTimer timer(Stage::kSeal);
  crypto::SealInto(key_, body, sealed.data());
  return ByteView(sealed).first(n);
}

void Repository::AppendSealed(BlobType t, const BlobId& id, ByteView sealed,
                              uint32_t uncompressed_length, size_t plain_size) {
  if (t == BlobType::kData) {
    stats_.data_blobs++;
  } else {
    stats_.tree_blobs++;
  }
  stats_.data_added += plain_size;
  stats_.data_added_packed += sealed.size();
  Bytes full;
  std::vector<PackedBlob> blobs;
  {
    std::lock_guard lock(save_mu_);
    auto& pw = packers_[static_cast<int>(t)];
    // A pack closes once it reaches pack_size_, so it ends below pack_size_ + one blob.
    if (!pw) {
      Bytes buffer;
      {
        std::lock_guard ul(upload_mu_);
        if (!free_packs_.empty()) {
          buffer = std::move(free_packs_.back());
          free_packs_.pop_back();
        }
      }
      pw = std::make_unique<PackWriter>(t, pack_size_ + chunker::kMaxSize + 4096, std::move(buffer));
    }
    pw->Add(id, sealed, uncompressed_length);
    if (pw->Size() >= pack_size_ || pw->Count() >= kMaxPackBlobs) {
      full = pw->Finish(key_, &blobs);
      pw.reset();  // the next writer takes a recycled buffer
    }
  }
  if (!blobs.empty()) UploadPack(std::move(full), std::move(blobs));
}

Repository::~Repository() = default;

void Repository::UploadPack(Bytes pack, std::vector<PackedBlob> blobs) {
  {
    std::unique_lock lock(upload_mu_);
    uploads_done_.wait(lock, [&] { return uploads_pending_ < static_cast<size_t>(kMaxUploads) || upload_error_; });
    if (upload_error_) std::rethrow_exception(upload_error_);
    uploads_pending_++;
  }
  auto job = [this, pack = std::move(pack), blobs = std::move(blobs)]() mutable {
    std::exception_ptr err;
    try {
      SavePack(std::move(pack), std::move(blobs));
    } catch (...) {
      err = std::current_exception();
    }
    std::lock_guard lock(upload_mu_);
    if (err && !upload_error_) upload_error_ = err;
    --uploads_pending_;
    uploads_done_.notify_all();
  };
  upload_pool_->Submit(std::move(job));
}

void Repository::WaitUploads() {
  std::unique_lock lock(upload_mu_);
  uploads_done_.wait(lock, [&] { return uploads_pending_ == 0; });
  if (upload_error_) std::rethrow_exception(upload_error_);
}

void Repository::SavePack(Bytes pack, std::vector<PackedBlob> blobs) {
  PackId pid(Sha256(pack));
  if (on_tree_pack_ && !blobs.empty() && blobs.front().type == BlobType::kTree)
    on_tree_pack_(pid.Hex());
  {
    ScopedTimer t(Stage::kWrite);
    backend_->Save({FileType::kPack, pid.Hex()}, pack);
  }
  {
    std::unique_lock lock(index_mu_);
    index_.AddPack(pid, blobs);
  }
  {
    std::unique_lock lock(save_mu_);
    for (const PackedBlob& b : blobs) in_flight_[static_cast<int>(b.type)].erase(b.id);
    pending_index_blobs_ += blobs.size();
    pending_index_.packs.push_back({pid, std::move(blobs)});
    if (pending_index_blobs_ >= kIndexFlushBlobs) WriteIndexLocked(lock);
  }
  pack.clear();
  std::lock_guard lock(upload_mu_);
  if (free_packs_.size() < 2) free_packs_.push_back(std::move(pack));
}

void Repository::WriteIndexLocked(std::unique_lock<std::mutex>& lock) {
  if (pending_index_.packs.empty()) return;
  IndexFile f = std::move(pending_index_);
  pending_index_ = IndexFile();
  pending_index_blobs_ = 0;
  lock.unlock();
  FileId id;
  {
    ScopedTimer t(Stage::kIndex);
    id = SaveJson(FileType::kIndex, f.ToJson());
  }
  {
    std::unique_lock il(index_mu_);
    index_files_.push_back(id);
  }
  lock.lock();
}

void Repository::Flush() {
  for (int ti = 0; ti < 2; ++ti) {
    Bytes full;
    std::vector<PackedBlob> blobs;
    {
      std::lock_guard lock(save_mu_);
      if (packers_[ti] && packers_[ti]->Count() > 0) full = packers_[ti]->Finish(key_, &blobs);
    }
    if (!blobs.empty()) UploadPack(std::move(full), std::move(blobs));
  }
  WaitUploads();  // the index lists only packs that are saved
  std::unique_lock lock(save_mu_);
  WriteIndexLocked(lock);
}

}  // namespace haven
