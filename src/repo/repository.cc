#include "repo/repository.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <future>
#include <optional>

#include "chunker/polynomial.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "crypto/random.h"
#include "crypto/seal.h"
#include "repo/compress.h"
#include "repo/key_file.h"
#include "repo/node.h"
#include "repo/read_concurrency.h"

namespace haven {

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
  // On storage with round trips the config is read while the key files are listed: one
  // round trip for both, and no separate existence check (a missing config is "no
  // repository"). On a local disk or in a box both take microseconds and a second thread
  // only costs: a box opened a second SQLite connection for it (3-4 ms of a 50 ms
  // `box cat`).
  std::future<Bytes> config_load;
  if (be->RoundTrips())
    config_load = std::async(std::launch::async, [&be] {
      return be->Load({FileType::kConfig, "config"});
    });
  std::vector<FileInfo> keys;
  std::exception_ptr list_error;
  try {
    be->List(FileType::kKey, [&](const FileInfo& fi) { keys.push_back(fi); });
  } catch (...) {
    list_error = std::current_exception();
  }
  Bytes cfg_raw;
  try {
    cfg_raw = config_load.valid() ? config_load.get() : be->Load({FileType::kConfig, "config"});
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kNotFound)
      Fail(ErrorCode::kNoRepository,
           "repository " + be->Location() + " does not exist: unable to open config file");
    throw Error(e.code(), "repository " + be->Location() + ": " + e.what(), e.retryable());
  }
  if (list_error) std::rethrow_exception(list_error);
  std::unique_ptr<Repository> repo(new Repository());
  repo->backend_ = be;
  repo->threads_ = std::max(1, threads);
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
  auto cfg_plain = crypto::Open(repo->key_, cfg_raw);
  if (!cfg_plain) Fail(ErrorCode::kCorrupt, "config: ciphertext verification failed");
  repo->config_ = RepoConfig::Parse(AsChars(*cfg_plain));
  repo->tables_ = std::make_shared<const chunker::Tables>(repo->config_.chunker_polynomial);
  return repo;
}

Repository::~Repository() = default;

FileId Repository::SaveJson(FileType t, std::string_view json) {
  return SaveEncoded(t, EncodeJson(json));
}

FileId Repository::SaveJsonPieces(FileType t, const JsonPieces& emit) {
  return SaveEncoded(t, EncodeJsonPieces(emit));
}

FileId Repository::SaveEncoded(FileType t, const Bytes& sealed) {
  if (t == FileType::kSnapshot) CheckLock();  // a command that lost its lock commits nothing
  FileId id(Sha256(sealed));
  backend_->Save({t, id.Hex()}, sealed);
  return id;
}

// Both encoders build the plaintext at out + kIvSize and seal it in place (SealTail): no
// copy of the compressed text, none of the sealed file.
namespace {
Bytes SealTail(const crypto::CryptoKey& key, Bytes out) {
  const size_t plain = out.size() - crypto::kIvSize;
  out.resize(out.size() + crypto::kTagSize);
  crypto::SealInto(key, ByteView(out.data() + crypto::kIvSize, plain), out.data());
  return out;
}
}  // namespace

Bytes Repository::EncodeJson(std::string_view json) {
  using crypto::kIvSize;
  Bytes out;
  if (config_.version >= 2) {
    const size_t n =
        ZstdCompressInto(AsBytes(json), kJsonLevel, out, kIvSize + 1, crypto::kTagSize);
    out[kIvSize] = 2;
    out.resize(kIvSize + 1 + n);
  } else {
    out.reserve(kIvSize + json.size() + crypto::kTagSize);
    out.resize(kIvSize);
    out.insert(out.end(), json.begin(), json.end());
  }
  return SealTail(key_, std::move(out));
}

Bytes Repository::EncodeJsonPieces(const JsonPieces& emit) {
  using crypto::kIvSize;
  Bytes out;
  out.reserve(size_t{64} << 10);
  out.resize(kIvSize + (config_.version >= 2 ? 1 : 0));
  if (config_.version >= 2) {
    out[kIvSize] = 2;  // the encoding byte, then the frame
    ZstdStreamWriter z(kJsonLevel, out);
    emit([&](std::string_view piece) { z.Write(AsBytes(piece)); });
    z.End();
  } else {
    emit([&](std::string_view piece) { out.insert(out.end(), piece.begin(), piece.end()); });
  }
  return SealTail(key_, std::move(out));
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
  return LoadSnapshots(ListIds(FileType::kSnapshot), failures);
}

std::vector<std::pair<FileId, Snapshot>> Repository::LoadSnapshots(
    const std::vector<FileId>& ids, std::vector<SnapshotFailure>* failures) {
  std::vector<std::pair<FileId, Snapshot>> loaded(ids.size());
  std::vector<std::optional<SnapshotFailure>> failed(ids.size());
  // Snapshot files are small: the time is the round trips, so many at once when they come
  // from remote storage (read_concurrency.h).
  const int readers = std::max(threads_, ReadConcurrency(*this, FileType::kSnapshot, ids));
  ParallelFor(ids.size(), readers, [&](size_t i) {
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
      warn_(IgnoredSnapshotMessage(*failed[i]));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.second.time.sec != b.second.time.sec) return a.second.time.sec < b.second.time.sec;
    return a.second.time.nsec < b.second.time.nsec;
  });
  return out;
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

}  // namespace haven
