#include "repo/test_repository.h"
#include "repo/repository.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/fault_backend.h"
#include "cli/snapshot_filter.h"
#include "backend/mem_backend.h"
#include "core/error.h"
#include "core/id.h"
#include "crypto/random.h"
#include "crypto/seal.h"
#include "repo/compress.h"
#include "repo/key_file.h"

namespace haven {
namespace {

const crypto::ScryptParams kFastScrypt{1024, 8, 1};

std::shared_ptr<MemBackend> NewRepo(int version, std::string_view password = "secret") {
  auto be = std::make_shared<MemBackend>();
  Repository::Init(*be, password, version, kFastScrypt, 1);
  return be;
}

ErrorCode CodeOf(const std::function<void()>& fn, std::string* what = nullptr) {
  try {
    fn();
  } catch (const Error& e) {
    if (what) *what = e.what();
    return e.code();
  }
  ADD_FAILURE() << "no error thrown";
  return ErrorCode::kFatal;
}

Bytes RandomBytes(size_t n) {
  Bytes b(n);
  if (n) crypto::RandomBytes(b.data(), n);
  return b;
}

Bytes TextBytes(size_t n, int seed) {
  std::string s;
  while (s.size() < n) s += "text " + std::to_string(seed) + " line " + std::to_string(s.size()) + "\n";
  s.resize(n);
  return Bytes(s.begin(), s.end());
}

// Replaces an object in the backend (objects are immutable, so remove first).
void Overwrite(Backend& be, const Handle& h, ByteView data) {
  be.Remove(h);
  be.Save(h, data);
}

void FlipByte(Backend& be, const Handle& h, size_t pos) {
  Bytes b = be.Load(h);
  ASSERT_LT(pos, b.size());
  b[pos] ^= 0x40;
  Overwrite(be, h, b);
}

std::vector<std::string> Names(Backend& be, FileType t) {
  std::vector<std::string> out;
  be.List(t, [&](const FileInfo& fi) { out.push_back(fi.name); });
  return out;
}

// ---- Init / Open ----

TEST(Repository, InitAndOpenBothVersions) {
  for (int version : {1, 2}) {
    auto be = NewRepo(version);
    EXPECT_TRUE(be->Exists());
    EXPECT_EQ(Names(*be, FileType::kKey).size(), 1u);
    auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
    EXPECT_EQ(repo->config().version, version);
    EXPECT_EQ(repo->config().id.size(), 64u);
    EXPECT_TRUE(repo->key().Valid());
    EXPECT_EQ(repo->key_id().Hex(), Names(*be, FileType::kKey)[0]);
    // The key file's name is the hash of its bytes; it is plain JSON.
    Bytes k = be->Load({FileType::kKey, Names(*be, FileType::kKey)[0]});
    EXPECT_EQ(Sha256(k).Hex(), Names(*be, FileType::kKey)[0]);
    EXPECT_EQ(k[0], '{');
    // Config is sealed, never compressed or prefixed, even in v2.
    Bytes cfg = be->Load({FileType::kConfig, "config"});
    auto plain = crypto::Open(repo->key(), cfg);
    ASSERT_TRUE(plain.has_value());
    EXPECT_EQ(AsChars(*plain), repo->config().ToJson());
    // Init refuses an existing repository.
    EXPECT_EQ(CodeOf([&] { Repository::Init(*be, "x", version, kFastScrypt, 1); }),
              ErrorCode::kFatal);
  }
}

TEST(Repository, InitRejectsBadVersion) {
  MemBackend be;
  EXPECT_EQ(CodeOf([&] { Repository::Init(be, "x", 3, kFastScrypt, 1); }),
            ErrorCode::kInvalidArgument);
  EXPECT_FALSE(be.Exists());
}

TEST(Repository, WrongPassword) {
  auto be = NewRepo(2);
  EXPECT_EQ(CodeOf([&] { haven::testing::TestRepository::Open(be, "Secret", 1); }), ErrorCode::kWrongPassword);
  EXPECT_EQ(CodeOf([&] { haven::testing::TestRepository::Open(be, "", 1); }), ErrorCode::kWrongPassword);
}

TEST(Repository, NoConfigIsNoRepository) {
  auto empty = std::make_shared<MemBackend>();
  EXPECT_EQ(CodeOf([&] { haven::testing::TestRepository::Open(empty, "secret", 1); }), ErrorCode::kNoRepository);
  // Keys without a config: still "no repository".
  auto be = NewRepo(2);
  be->Remove({FileType::kConfig, "config"});
  EXPECT_EQ(CodeOf([&] { haven::testing::TestRepository::Open(be, "secret", 1); }), ErrorCode::kNoRepository);
}

TEST(Repository, NoKeysIsWrongPassword) {
  auto be = NewRepo(2);
  for (const auto& k : Names(*be, FileType::kKey)) be->Remove({FileType::kKey, k});
  EXPECT_EQ(CodeOf([&] { haven::testing::TestRepository::Open(be, "secret", 1); }), ErrorCode::kWrongPassword);
}

// Issue 16: opening costs no existence check (a HEAD of config on S3) and reads the config
// while the key files are listed, so remote storage sees one round trip for both.
// On storage with round trips (here: said to have them) the config's load overlaps the key
// listing; on a local disk or a box (no round trips) the config is read after it, on the
// calling thread (a second thread only cost there).
class SaysRoundTrips : public FaultBackend {
 public:
  using FaultBackend::FaultBackend;
  bool RoundTrips() const override { return true; }
};

TEST(Repository, OpenReadsTheConfigWhileListingKeysWithoutAnExistenceCheck) {
  auto mem = NewRepo(2);
  auto fault = std::make_shared<SaysRoundTrips>(mem);
  std::mutex mu;
  std::condition_variable cv;
  bool config_started = false, overlapped = false;
  fault->SetHook([&](FaultBackend::Op op, uint64_t) {
    std::unique_lock<std::mutex> lock(mu);
    if (op == FaultBackend::Op::kLoad && !config_started) {
      config_started = true;  // the first load is the config's
      cv.notify_all();
    }
    if (op == FaultBackend::Op::kList)  // the key listing waits for the config's load
      overlapped = cv.wait_for(lock, std::chrono::seconds(5), [&] { return config_started; });
  });
  // Repository::Open itself: TestRepository::Open opens the repository twice.
  auto repo = Repository::Open(fault, "secret", 1);
  EXPECT_TRUE(overlapped) << "the config was read only after the key listing";
  EXPECT_EQ(fault->Count(FaultBackend::Op::kExists), 0u);
  EXPECT_EQ(fault->Count(FaultBackend::Op::kStat), 0u);
  EXPECT_EQ(fault->loads(), 2u);  // the config and one key
}

TEST(Repository, WithoutRoundTripsTheConfigIsReadAfterTheKeyListing) {
  auto mem = NewRepo(2);
  auto fault = std::make_shared<FaultBackend>(mem);
  ASSERT_FALSE(fault->RoundTrips());
  std::vector<FaultBackend::Op> ops;
  std::mutex mu;
  fault->SetHook([&](FaultBackend::Op op, uint64_t) {
    std::lock_guard<std::mutex> lock(mu);
    ops.push_back(op);
  });
  auto repo = Repository::Open(fault, "secret", 1);
  ASSERT_GE(ops.size(), 2u);
  EXPECT_EQ(ops[0], FaultBackend::Op::kList);
  EXPECT_EQ(ops[1], FaultBackend::Op::kLoad);  // the config, then the key
  EXPECT_EQ(fault->loads(), 2u);
  EXPECT_EQ(fault->Count(FaultBackend::Op::kExists), 0u);
}

TEST(Repository, ConfigVersion3IsUnsupported) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
  RepoConfig cfg = repo->config();
  cfg.version = 3;
  const std::string json = cfg.ToJson();
  ASSERT_NE(json.find("\"version\":3"), std::string::npos);
  Overwrite(*be, {FileType::kConfig, "config"}, crypto::Seal(repo->key(), AsBytes(json)));
  std::string what;
  EXPECT_EQ(CodeOf([&] { haven::testing::TestRepository::Open(be, "secret", 1); }, &what), ErrorCode::kUnsupported);
  EXPECT_NE(what.find("version 3"), std::string::npos) << what;
  // Version 1 written the same way opens.
  cfg.version = 1;
  Overwrite(*be, {FileType::kConfig, "config"}, crypto::Seal(repo->key(), AsBytes(cfg.ToJson())));
  EXPECT_EQ(haven::testing::TestRepository::Open(be, "secret", 1)->config().version, 1);
}

TEST(Repository, DamagedConfigIsCorrupt) {
  auto be = NewRepo(2);
  FlipByte(*be, {FileType::kConfig, "config"}, 20);
  std::string what;
  EXPECT_EQ(CodeOf([&] { haven::testing::TestRepository::Open(be, "secret", 1); }, &what), ErrorCode::kCorrupt);
  EXPECT_NE(what.find("config"), std::string::npos) << what;
  // A reducible chunker polynomial is refused too.
  auto be2 = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be2, "secret", 1);
  RepoConfig cfg = repo->config();
  cfg.chunker_polynomial = 0x3DA3358B4DC173ull ^ 0x2;  // flips one coefficient
  Overwrite(*be2, {FileType::kConfig, "config"},
            crypto::Seal(repo->key(), AsBytes(cfg.ToJson())));
  EXPECT_EQ(CodeOf([&] { haven::testing::TestRepository::Open(be2, "secret", 1); }), ErrorCode::kCorrupt);
}

// Saves a key file for `json` (plain bytes) and returns its name.
std::string SaveKeyJson(Backend& be, const std::string& json) {
  const std::string name = Sha256(AsBytes(json)).Hex();
  be.Save({FileType::kKey, name}, AsBytes(json));
  return name;
}

// KeyFile::Parse refuses hostile parameters with kCorrupt naming the key, before any
// derivation. Repository::Open skips such a key file (with a warning) and goes on with the
// others, so a repository whose only key is hostile is refused quickly as kWrongPassword,
// and a good key next to a hostile one still opens it.
void ExpectKeyRefused(const std::shared_ptr<MemBackend>& be, const std::string& json) {
  const std::string name = SaveKeyJson(*be, json);
  auto start = std::chrono::steady_clock::now();
  std::string what;
  EXPECT_EQ(CodeOf([&] { KeyFile::Parse(json, name); }, &what), ErrorCode::kCorrupt);
  EXPECT_NE(what.find("key " + name), std::string::npos) << what;
  EXPECT_EQ(CodeOf([&] { haven::testing::TestRepository::Open(be, "secret", 1); }), ErrorCode::kWrongPassword);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - start)
                .count();
  EXPECT_LT(ms, 200);
}

TEST(Repository, HostileKeyFilesRefusedQuickly) {
  struct Case {
    const char* what;
    std::function<void(KeyFile&)> edit;
  };
  const std::vector<Case> cases = {
      {"N=2^31", [](KeyFile& k) { k.params.n = uint64_t{1} << 31; }},
      {"N=2^62", [](KeyFile& k) { k.params.n = uint64_t{1} << 62; }},
      {"r*p=2^30", [](KeyFile& k) { k.params.r = 1u << 15, k.params.p = 1u << 15; }},
      {"r*p>2^30", [](KeyFile& k) { k.params.r = 1u << 16, k.params.p = 1u << 16; }},
      {"N not a power of two", [](KeyFile& k) { k.params.n = 1000; }},
      {"N=1", [](KeyFile& k) { k.params.n = 1; }},
      {"r=0", [](KeyFile& k) { k.params.r = 0; }},
      {"32-byte salt", [](KeyFile& k) { k.salt.resize(32); }},
      {"65-byte salt", [](KeyFile& k) { k.salt.resize(65); }},
      {"kdf argon2", [](KeyFile& k) { k.kdf = "argon2"; }},
      {"short data", [](KeyFile& k) { k.data.resize(31); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto be = NewRepo(2);
    const std::string good = Names(*be, FileType::kKey)[0];
    const Bytes good_json = be->Load({FileType::kKey, good});
    KeyFile kf = KeyFile::Parse(AsChars(good_json), good);
    be->Remove({FileType::kKey, good});
    c.edit(kf);
    ExpectKeyRefused(be, kf.ToJson());
    // Next to the hostile key, the good one still opens the repository, without delay.
    be->Save({FileType::kKey, good}, good_json);
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(haven::testing::TestRepository::Open(be, "secret", 1)->key_id().Hex(), good);
    // (a hostile N would take minutes; 2 s leaves room for a sanitizer build on a busy machine)
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2000));
  }
}

TEST(Repository, HostileKeyJsonShapes) {
  const std::string salt = std::string(86, 'A') + "==";  // 64 zero bytes
  const std::string data = std::string(64, 'A');         // 48 bytes
  const std::vector<std::string> bad = {
      "",
      "not json",
      "[]",
      R"({"kdf":"scrypt","N":1024,"r":8,"p":1,"salt":")" + salt + R"("})",
      R"({"kdf":"scrypt","N":1024,"r":8,"salt":")" + salt + R"(","data":")" + data + R"("})",
      R"({"kdf":"scrypt","N":-1024,"r":8,"p":1,"salt":")" + salt + R"(","data":")" + data + R"("})",
      R"({"kdf":"scrypt","N":"1024","r":8,"p":1,"salt":")" + salt + R"(","data":")" + data + R"("})",
      R"({"kdf":"scrypt","N":1e300,"r":8,"p":1,"salt":")" + salt + R"(","data":")" + data + R"("})",
      R"({"kdf":"scrypt","N":18446744073709551615,"r":8,"p":1,"salt":")" + salt +
          R"(","data":")" + data + R"("})",
      R"({"kdf":"scrypt","N":1024,"r":8,"p":1,"salt":"!!","data":")" + data + R"("})",
      R"({"N":1024,"r":8,"p":1,"salt":")" + salt + R"(","data":")" + data + R"("})",
  };
  for (const std::string& json : bad) {
    SCOPED_TRACE(json);
    auto be = NewRepo(2);
    be->Remove({FileType::kKey, Names(*be, FileType::kKey)[0]});
    ExpectKeyRefused(be, json);
  }
  // A sane key file whose data is not sealed with this password: just a wrong password.
  auto be = NewRepo(2);
  be->Remove({FileType::kKey, Names(*be, FileType::kKey)[0]});
  const std::string json =
      R"({"kdf":"scrypt","N":1024,"r":8,"p":1,"salt":")" + salt + R"(","data":")" + data + R"("})";
  EXPECT_NO_THROW(KeyFile::Parse(json, "k"));
  SaveKeyJson(*be, json);
  EXPECT_EQ(CodeOf([&] { haven::testing::TestRepository::Open(be, "secret", 1); }), ErrorCode::kWrongPassword);
}

TEST(Repository, KeyFileJsonRoundTrip) {
  auto be = NewRepo(2);
  const std::string name = Names(*be, FileType::kKey)[0];
  const Bytes raw = be->Load({FileType::kKey, name});
  KeyFile kf = KeyFile::Parse(AsChars(raw), name);
  EXPECT_EQ(kf.kdf, "scrypt");
  EXPECT_EQ(kf.params, kFastScrypt);
  EXPECT_EQ(kf.salt.size(), 64u);
  EXPECT_EQ(kf.data.size(), 160u);  // restic's compact master-key JSON is 128 bytes
  EXPECT_EQ(kf.ToJson(), AsChars(raw));
  EXPECT_EQ(raw.back(), '}');  // no trailing newline
}

TEST(Repository, AtMostTwentyKeysAreTried) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
  const crypto::CryptoKey master = repo->key();
  be->Remove({FileType::kKey, Names(*be, FileType::kKey)[0]});

  // The right key must sort after 20 wrong ones (keys are tried in name order).
  std::string good_json, good_name;
  for (int i = 0; i < 200 && good_name < "e"; ++i) {
    good_json = KeyFile::Create(master, "secret", kFastScrypt, 1).ToJson();
    good_name = Sha256(AsBytes(good_json)).Hex();
  }
  ASSERT_GE(good_name, "e");
  std::vector<std::string> wrong;
  while (wrong.size() < 20) {
    std::string j = KeyFile::Create(crypto::CryptoKey::Random(), "other", kFastScrypt, 1).ToJson();
    if (Sha256(AsBytes(j)).Hex() < good_name) wrong.push_back(SaveKeyJson(*be, j));
  }
  SaveKeyJson(*be, good_json);
  ASSERT_EQ(Names(*be, FileType::kKey).size(), 21u);
  EXPECT_EQ(CodeOf([&] { haven::testing::TestRepository::Open(be, "secret", 1); }), ErrorCode::kWrongPassword);
  // Any other password: 20 failures, then give up.
  EXPECT_EQ(CodeOf([&] { haven::testing::TestRepository::Open(be, "nope", 1); }), ErrorCode::kWrongPassword);
  // With one wrong key fewer the right key is the 20th and opens.
  be->Remove({FileType::kKey, wrong.back()});
  auto r = haven::testing::TestRepository::Open(be, "secret", 1);
  EXPECT_EQ(r->key(), master);
  EXPECT_EQ(r->key_id().Hex(), good_name);
}

TEST(Repository, SecondPasswordOpensSameMaster) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
  SaveKeyJson(*be, KeyFile::Create(repo->key(), "second", kFastScrypt, 1).ToJson());
  auto r2 = haven::testing::TestRepository::Open(be, "second", 1);
  EXPECT_EQ(r2->key(), repo->key());
  EXPECT_NE(r2->key_id(), repo->key_id());
}

// ---- Unpacked files ----

TEST(Repository, SaveLoadJsonBothVersions) {
  for (int version : {1, 2}) {
    auto be = NewRepo(version);
    auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
    const std::string json = R"({"time":"2026-11-30T00:15:17Z","tree":")" + std::string(64, 'a') +
                             R"(","paths":["/x"]})";
    FileId id = repo->SaveJson(FileType::kSnapshot, json);
    Bytes stored = be->Load({FileType::kSnapshot, id.Hex()});
    EXPECT_EQ(Sha256(stored), static_cast<const RawId&>(id));
    auto plain = crypto::Open(repo->key(), stored);
    ASSERT_TRUE(plain.has_value());
    ASSERT_FALSE(plain->empty());
    if (version == 2) {
      EXPECT_EQ((*plain)[0], 0x02);
    } else {
      EXPECT_EQ(AsChars(*plain), json);
    }
    EXPECT_EQ(repo->LoadJson(FileType::kSnapshot, id), json);
    EXPECT_EQ(repo->ListIds(FileType::kSnapshot), std::vector<FileId>{id});
  }
}

TEST(Repository, V2AcceptsRawJsonAndRejectsUnknownEncoding) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
  auto save_plain = [&](std::string_view plain) {
    Bytes sealed = crypto::Seal(repo->key(), AsBytes(plain));
    FileId id(Sha256(sealed));
    be->Save({FileType::kIndex, id.Hex()}, sealed);
    return id;
  };
  EXPECT_EQ(repo->LoadJson(FileType::kIndex, save_plain(R"({"packs":[]})")), R"({"packs":[]})");
  EXPECT_EQ(repo->LoadJson(FileType::kIndex, save_plain("[]")), "[]");
  EXPECT_EQ(repo->LoadJson(FileType::kIndex, save_plain("")), "");
  std::string what;
  FileId bad = save_plain("\x03{}");
  EXPECT_EQ(CodeOf([&] { repo->LoadJson(FileType::kIndex, bad); }, &what), ErrorCode::kCorrupt);
  EXPECT_NE(what.find("unsupported encoding format"), std::string::npos) << what;
  EXPECT_NE(what.find(bad.Hex()), std::string::npos) << what;
  // 0x02 followed by garbage instead of a zstd frame.
  FileId z = save_plain("\x02not zstd");
  EXPECT_EQ(CodeOf([&] { repo->LoadJson(FileType::kIndex, z); }), ErrorCode::kCorrupt);
  // The decoder agrees with the encoder.
  EXPECT_EQ(repo->DecodeUnpacked(repo->EncodeJson("{\"a\":1}"), "x"), "{\"a\":1}");
}

// JSON given in pieces (index files): compressed as it comes in v2 (a frame without a
// content size), stored as is in v1; either way it loads back as the concatenated text,
// through the whole-frame and the streaming decoder alike.
TEST(Repository, JsonInPiecesLoadsAsTheWholeText) {
  std::mt19937_64 rng(7);
  std::vector<std::string> pieces;
  std::string whole;
  for (int i = 0; i < 300; ++i) {  // ~3 MB: several zstd output blocks
    std::string p = "{\"n\":" + std::to_string(i) + ",\"r\":\"";
    for (int k = 0; k < 5000 + static_cast<int>(rng() % 10000); ++k)
      p += static_cast<char>('a' + rng() % 16);
    p += "\"},";
    whole += p;
    pieces.push_back(std::move(p));
  }
  pieces.push_back("");  // an empty piece is harmless
  for (int version : {1, 2}) {
    auto be = NewRepo(version);
    auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
    FileId id = repo->SaveJsonPieces(FileType::kIndex, [&](const auto& put) {
      for (const std::string& p : pieces) put(p);
    });
    EXPECT_EQ(repo->LoadJson(FileType::kIndex, id), whole) << "v" << version;
    Bytes stored = be->Load({FileType::kIndex, id.Hex()});
    EXPECT_EQ(FileId(Sha256(stored)), id);
    if (version == 2) {
      auto plain = crypto::Open(repo->key(), stored);
      ASSERT_TRUE(plain);
      ASSERT_EQ((*plain)[0], 2);
      EXPECT_LT(plain->size(), whole.size() * 3 / 4);  // compressed
      ZstdStreamReader r(ByteView(*plain).subspan(1), whole.size(), "x");
      std::string streamed(whole.size() + 1, '\0');
      size_t got = 0, n;
      while ((n = r.Read(reinterpret_cast<uint8_t*>(streamed.data()) + got,
                         streamed.size() - got)) > 0)
        got += n;
      streamed.resize(got);
      EXPECT_EQ(streamed, whole);
      EXPECT_TRUE(r.clean());
    }
    // Nothing at all: an empty file's text.
    FileId empty = repo->SaveJsonPieces(FileType::kIndex, [](const auto&) {});
    EXPECT_EQ(repo->LoadJson(FileType::kIndex, empty), "");
    // The one-piece encoder (sealed in place) agrees with the decoder too.
    EXPECT_EQ(repo->DecodeUnpacked(repo->EncodeJson(whole), "x"), whole) << "v" << version;
  }
}

TEST(Repository, LoadJsonChecksContentHash) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
  FileId id = repo->SaveJson(FileType::kSnapshot, "{}");
  Bytes stored = be->Load({FileType::kSnapshot, id.Hex()});
  FileId other = *FileId::FromHex(std::string(64, 'a'));
  be->Save({FileType::kSnapshot, other.Hex()}, stored);
  std::string what;
  EXPECT_EQ(CodeOf([&] { repo->LoadJson(FileType::kSnapshot, other); }, &what),
            ErrorCode::kCorrupt);
  EXPECT_NE(what.find("does not match its id"), std::string::npos) << what;
  // A damaged file under its own (old) name: also caught, before decryption.
  FlipByte(*be, {FileType::kSnapshot, id.Hex()}, 17);
  EXPECT_EQ(CodeOf([&] { repo->LoadJson(FileType::kSnapshot, id); }), ErrorCode::kCorrupt);
  // Missing -> kNotFound.
  FileId missing = *FileId::FromHex(std::string(64, 'b'));
  EXPECT_EQ(CodeOf([&] { repo->LoadJson(FileType::kSnapshot, missing); }), ErrorCode::kNotFound);
}

// ---- Blobs ----

TEST(Repository, SaveFlushLoadDataAndTree) {
  for (int version : {1, 2}) {
    SCOPED_TRACE(version);
    auto be = NewRepo(version);
    auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
    const Bytes data = TextBytes(10000, 1);
    const Bytes tree = TextBytes(300, 2);
    const Bytes random = RandomBytes(50000);
    const BlobId did(Sha256(data)), tid(Sha256(tree)), rid(Sha256(random));
    const BlobId empty_id(Sha256({}));
    EXPECT_TRUE(repo->SaveBlob(BlobType::kData, did, data));
    EXPECT_TRUE(repo->SaveBlob(BlobType::kTree, tid, tree));
    EXPECT_TRUE(repo->SaveBlob(BlobType::kData, rid, random));
    EXPECT_TRUE(repo->SaveBlob(BlobType::kData, empty_id, {}));
    // Dedup before the flush (in flight) ...
    EXPECT_FALSE(repo->SaveBlob(BlobType::kData, did, data));
    EXPECT_TRUE(repo->HasBlob(BlobType::kData, did));
    // ... while the same id as a tree blob is a different blob.
    EXPECT_TRUE(repo->SaveBlob(BlobType::kTree, did, data));
    repo->Flush();
    // ... and after it (indexed).
    EXPECT_FALSE(repo->SaveBlob(BlobType::kData, did, data));
    EXPECT_FALSE(repo->SaveBlob(BlobType::kTree, tid, tree));
    EXPECT_EQ(repo->stats().data_blobs.load(), 3u);
    EXPECT_EQ(repo->stats().tree_blobs.load(), 2u);

    EXPECT_EQ(repo->LoadBlob(BlobType::kData, did), data);
    EXPECT_EQ(repo->LoadBlob(BlobType::kTree, tid), tree);
    EXPECT_EQ(repo->LoadBlob(BlobType::kData, rid), random);
    EXPECT_TRUE(repo->LoadBlob(BlobType::kData, empty_id).empty());
    EXPECT_EQ(CodeOf([&] { repo->LoadBlob(BlobType::kTree, rid); }), ErrorCode::kNotFound);

    // Data and tree blobs never share a pack; one index file was written.
    EXPECT_EQ(Names(*be, FileType::kPack).size(), 2u);
    EXPECT_EQ(Names(*be, FileType::kIndex).size(), 1u);
    for (const auto& p : Names(*be, FileType::kPack)) {
      Bytes pack = be->Load({FileType::kPack, p});
      EXPECT_EQ(Sha256(pack).Hex(), p);
      uint64_t need = 0;
      auto blobs = ParsePackHeader(repo->key(), pack, pack.size(), p, &need);
      ASSERT_EQ(need, 0u);
      for (const auto& b : blobs) EXPECT_EQ(b.type, blobs[0].type);
    }

    // Compression policy: v1 never; v2 compresses trees and compressible data only.
    auto ulen = [&](BlobType t, const BlobId& id) {
      auto l = repo->index().Lookup(t, id);
      EXPECT_EQ(l.size(), 1u);
      return l.empty() ? 0u : l[0].uncompressed_length;
    };
    if (version == 1) {
      EXPECT_EQ(ulen(BlobType::kTree, tid), 0u);
      EXPECT_EQ(ulen(BlobType::kData, did), 0u);
    } else {
      EXPECT_EQ(ulen(BlobType::kTree, tid), tree.size());
      EXPECT_EQ(ulen(BlobType::kData, did), data.size());
      EXPECT_EQ(ulen(BlobType::kData, rid), 0u);  // incompressible: stored raw
    }
    EXPECT_EQ(ulen(BlobType::kData, empty_id), 0u);

    // A fresh open sees the same through the index files.
    auto r2 = haven::testing::TestRepository::Open(be, "secret", 1);
    r2->LoadIndex();
    EXPECT_EQ(r2->index().BlobCount(), 5u);
    EXPECT_EQ(r2->index_files().size(), 1u);
    EXPECT_EQ(r2->LoadBlob(BlobType::kData, did), data);
    EXPECT_EQ(r2->LoadBlob(BlobType::kTree, did), data);
    EXPECT_EQ(r2->LoadBlob(BlobType::kTree, tid), tree);
    EXPECT_FALSE(r2->SaveBlob(BlobType::kData, rid, random));
  }
}

TEST(Repository, ManyBlobsSeveralPacksAndIndexFiles) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 2);
  std::map<BlobId, Bytes> blobs;
  size_t total = 0;
  auto add = [&](BlobType t, Bytes b) {
    BlobId id(Sha256(b));
    total += b.size();
    EXPECT_TRUE(repo->SaveBlob(t, id, b));
    blobs.emplace(id, std::move(b));
  };
  for (int i = 0; i < 20; ++i) add(BlobType::kData, RandomBytes(1 << 20));
  repo->Flush();
  for (int i = 0; i < 20; ++i) add(BlobType::kData, RandomBytes((1 << 20) + i));
  repo->Flush();
  std::map<BlobId, Bytes> trees;
  for (int i = 0; i < 100; ++i) {
    Bytes t = TextBytes(2000 + i, 100 + i);
    BlobId id(Sha256(t));
    EXPECT_TRUE(repo->SaveBlob(BlobType::kTree, id, t));
    trees.emplace(id, std::move(t));
  }
  repo->Flush();
  repo->Flush();  // nothing pending: no empty index file
  ASSERT_GT(total, size_t{32} << 20);

  const auto packs = Names(*be, FileType::kPack);
  EXPECT_GE(packs.size(), 5u);  // 2 full data packs, 2 partial ones, 1 tree pack
  for (const auto& p : packs) {
    auto size = be->Stat({FileType::kPack, p});
    ASSERT_TRUE(size.has_value());
    EXPECT_LT(*size, WriteOptions::kPackSize + (2u << 20));
  }
  EXPECT_EQ(Names(*be, FileType::kIndex).size(), 3u);
  EXPECT_EQ(repo->index_files().size(), 3u);

  auto r2 = haven::testing::TestRepository::Open(be, "secret", 2);
  r2->LoadIndex();
  EXPECT_EQ(r2->index().BlobCount(), blobs.size() + trees.size());
  EXPECT_EQ(r2->index().PackCount(), packs.size());
  EXPECT_EQ(r2->index_files().size(), 3u);
  for (const auto& [id, b] : blobs) ASSERT_EQ(r2->LoadBlob(BlobType::kData, id), b);
  for (const auto& [id, t] : trees) ASSERT_EQ(r2->LoadBlob(BlobType::kTree, id), t);
}

// Full packs are saved on the upload thread: a failed pack save surfaces in a later
// SaveBlob or in Flush, and the index never lists a pack that was not saved.
TEST(Repository, FailedPackUploadFailsFlushAndIndexesNothing) {
  auto mem = NewRepo(2);
  auto fault = std::make_shared<FaultBackend>(mem);
  auto repo = haven::testing::TestRepository::Open(fault, "secret", 2);
  fault->FailNext(FaultBackend::Op::kSave, FaultBackend::kAlways, /*retryable=*/false,
                  ErrorCode::kIo, FileType::kPack);
  bool failed = false;
  try {
    for (int i = 0; i < 40; ++i) {
      Bytes b = RandomBytes(1 << 20);
      repo->SaveBlob(BlobType::kData, BlobId(Sha256(b)), b);
    }
    repo->Flush();
  } catch (const Error& e) {
    failed = true;
    EXPECT_NE(std::string(e.what()).find("injected fault"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(failed);
  EXPECT_TRUE(Names(*mem, FileType::kPack).empty());
  EXPECT_TRUE(Names(*mem, FileType::kIndex).empty());
}

// Several threads fill packs while the upload thread saves them: every blob is stored
// once and the index written by Flush lists exactly the saved packs.
TEST(Repository, ConcurrentSaversWithBackgroundUploads) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 3);
  std::vector<Bytes> data;
  for (int i = 0; i < 60; ++i) data.push_back(RandomBytes((1 << 20) + 7 * i));
  std::atomic<int> added{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      for (const Bytes& b : data)  // every thread offers every blob: dedup in flight
        if (repo->SaveBlob(BlobType::kData, BlobId(Sha256(b)), b)) added++;
    });
  }
  for (auto& t : threads) t.join();
  repo->Flush();
  EXPECT_EQ(added.load(), 60);
  auto r2 = haven::testing::TestRepository::Open(be, "secret", 2);
  r2->LoadIndex();
  EXPECT_EQ(r2->index().BlobCount(), 60u);
  EXPECT_EQ(r2->index().PackCount(), Names(*be, FileType::kPack).size());
  for (const Bytes& b : data) ASSERT_EQ(r2->LoadBlob(BlobType::kData, BlobId(Sha256(b))), b);
}

TEST(Repository, FlippedPackByteIsCorruptNamingPack) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
  const Bytes data = TextBytes(5000, 7);
  const BlobId id(Sha256(data));
  repo->SaveBlob(BlobType::kData, id, data);
  repo->Flush();
  auto locs = repo->index().Lookup(BlobType::kData, id);
  ASSERT_EQ(locs.size(), 1u);
  FlipByte(*be, {FileType::kPack, locs[0].pack.Hex()}, locs[0].offset + locs[0].length / 2);
  std::string what;
  EXPECT_EQ(CodeOf([&] { repo->LoadBlob(BlobType::kData, id); }, &what), ErrorCode::kCorrupt);
  EXPECT_NE(what.find(locs[0].pack.Hex()), std::string::npos) << what;
  EXPECT_NE(what.find(id.Hex()), std::string::npos) << what;
}

TEST(Repository, TruncatedOrMissingPackIsReported) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
  const Bytes data = TextBytes(5000, 8);
  const BlobId id(Sha256(data));
  repo->SaveBlob(BlobType::kData, id, data);
  repo->Flush();
  auto loc = repo->index().Lookup(BlobType::kData, id).at(0);
  const Handle h{FileType::kPack, loc.pack.Hex()};
  Bytes pack = be->Load(h);
  pack.resize(loc.offset + loc.length - 1);
  Overwrite(*be, h, pack);
  std::string what;
  EXPECT_EQ(CodeOf([&] { repo->LoadBlob(BlobType::kData, id); }, &what), ErrorCode::kCorrupt);
  EXPECT_NE(what.find(loc.pack.Hex()), std::string::npos) << what;
  be->Remove(h);
  EXPECT_EQ(CodeOf([&] { repo->LoadBlob(BlobType::kData, id); }), ErrorCode::kCorrupt);
}

TEST(Repository, FallsBackToDuplicateCopy) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
  const Bytes data = TextBytes(20000, 9);
  const BlobId id(Sha256(data));
  ASSERT_TRUE(repo->SaveBlob(BlobType::kData, id, data));
  repo->Flush();

  // A second pack holding the same blob (uncompressed this time), with its own index file.
  PackWriter w(BlobType::kData);
  w.Add(id, crypto::Seal(repo->key(), data), 0);
  std::vector<PackedBlob> entries;
  Bytes pack = w.Finish(repo->key(), &entries);
  PackId pid(Sha256(pack));
  be->Save({FileType::kPack, pid.Hex()}, pack);
  IndexFile f;
  f.packs.push_back({pid, entries});
  repo->SaveJson(FileType::kIndex, f.ToJson());

  auto r2 = haven::testing::TestRepository::Open(be, "secret", 1);
  r2->LoadIndex();
  auto locs = r2->index().Lookup(BlobType::kData, id);
  ASSERT_EQ(locs.size(), 2u);
  ASSERT_NE(locs[0].pack, locs[1].pack);
  EXPECT_EQ(r2->LoadBlob(BlobType::kData, id), data);

  // Damage the copy tried first: the other one is used.
  FlipByte(*be, {FileType::kPack, locs[0].pack.Hex()}, locs[0].offset + 20);
  EXPECT_EQ(r2->LoadBlob(BlobType::kData, id), data);
  // Damage both: kCorrupt naming both packs.
  FlipByte(*be, {FileType::kPack, locs[1].pack.Hex()}, locs[1].offset + 20);
  std::string what;
  EXPECT_EQ(CodeOf([&] { r2->LoadBlob(BlobType::kData, id); }, &what), ErrorCode::kCorrupt);
  EXPECT_NE(what.find(locs[0].pack.Hex()), std::string::npos) << what;
  EXPECT_NE(what.find(locs[1].pack.Hex()), std::string::npos) << what;
}

TEST(Repository, DecodeBlobChecksHashAndSize) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
  const Bytes data = TextBytes(3000, 10);
  const BlobId id(Sha256(data));
  Bytes z = ZstdCompress(data, 3);
  Bytes sealed = crypto::Seal(repo->key(), z);
  EXPECT_EQ(repo->DecodeBlob(id, sealed, static_cast<uint32_t>(data.size()), "p"), data);
  // Wrong declared size, wrong id, wrong key: all kCorrupt.
  EXPECT_EQ(CodeOf([&] { repo->DecodeBlob(id, sealed, 2999, "p"); }), ErrorCode::kCorrupt);
  EXPECT_EQ(CodeOf([&] { repo->DecodeBlob(id, sealed, 3001, "p"); }), ErrorCode::kCorrupt);
  EXPECT_EQ(CodeOf([&] { repo->DecodeBlob(BlobId(Sha256(z)), sealed, 3000, "p"); }),
            ErrorCode::kCorrupt);
  EXPECT_EQ(CodeOf([&] {
              repo->DecodeBlob(id, crypto::Seal(crypto::CryptoKey::Random(), z), 3000, "p");
            }),
            ErrorCode::kCorrupt);
  // Compressed bytes read as uncompressed: hash mismatch.
  EXPECT_EQ(CodeOf([&] { repo->DecodeBlob(id, sealed, 0, "p"); }), ErrorCode::kCorrupt);
}

TEST(Repository, LoadTreeDecodes) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
  Node n;
  n.name = "f";
  n.type = NodeType::kFile;
  const std::string tree = EncodeTree({n});
  const BlobId id(Sha256(AsBytes(tree)));
  repo->SaveBlob(BlobType::kTree, id, AsBytes(tree));
  repo->Flush();
  auto nodes = repo->LoadTree(id);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].name, "f");
}

TEST(Repository, SnapshotsSortedAndResolved) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
  std::vector<FileId> ids;
  for (int i = 0; i < 3; ++i) {
    Snapshot s;
    s.time = {1700000000 - i * 100, 0, 0};  // saved newest first
    s.tree = BlobId(Sha256(AsBytes(std::to_string(i))));
    s.paths = {"/x"};
    ids.push_back(repo->SaveJson(FileType::kSnapshot, s.ToJson()));
  }
  auto snaps = repo->LoadSnapshots();
  ASSERT_EQ(snaps.size(), 3u);
  EXPECT_EQ(snaps[0].first, ids[2]);
  EXPECT_EQ(snaps[2].first, ids[0]);
  EXPECT_EQ(cli::ResolveSnapshot("latest", snaps), ids[0]);
  EXPECT_EQ(cli::ResolveSnapshot(ids[1].Hex(), snaps), ids[1]);
  EXPECT_EQ(cli::ResolveSnapshot(ids[1].Hex().substr(0, 8), snaps), ids[1]);
  EXPECT_EQ(CodeOf([&] { cli::ResolveSnapshot("zz", snaps); }), ErrorCode::kNotFound);
}

// One damaged snapshot file never hides the others: LoadSnapshots leaves it out and
// names it (in the list it is given, or through the warning sink).
TEST(Repository, DamagedSnapshotIsLeftOutAndNamed) {
  auto be = NewRepo(2);
  auto repo = haven::testing::TestRepository::Open(be, "secret", 1);
  std::vector<FileId> ids;
  for (int i = 0; i < 3; ++i) {
    Snapshot s;
    s.time = gojson::Timestamp{1700000000 + i, 0, 0};
    s.hostname = "h";
    s.paths = {"/p" + std::to_string(i)};
    ids.push_back(repo->SaveJson(FileType::kSnapshot, s.ToJson()));
  }
  FlipByte(*be, {FileType::kSnapshot, ids[1].Hex()}, 20);
  std::vector<Repository::SnapshotFailure> failed;
  auto snaps = repo->LoadSnapshots(&failed);
  ASSERT_EQ(snaps.size(), 2u);
  EXPECT_EQ(snaps[0].first, ids[0]);
  EXPECT_EQ(snaps[1].first, ids[2]);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].id, ids[1]);
  EXPECT_FALSE(failed[0].io);
  std::vector<std::string> warnings;
  repo->set_warn([&](const std::string& w) { warnings.push_back(w); });
  EXPECT_EQ(repo->LoadSnapshots().size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(ids[1].Short()), std::string::npos) << warnings[0];
  // Undecodable JSON inside an intact file is the same.
  be->Save({FileType::kSnapshot, std::string(64, 'a')}, RandomBytes(10));
  failed.clear();
  EXPECT_EQ(repo->LoadSnapshots(&failed).size(), 2u);
  EXPECT_EQ(failed.size(), 2u);
}

}  // namespace
}  // namespace haven
