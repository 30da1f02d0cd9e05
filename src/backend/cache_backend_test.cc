// CacheBackend: layout (see cache_backend.h), what is cached and served from the cache,
// cleanup after listings, damaged cache files, concurrency.
#include "backend/cache_backend.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/fault_backend.h"
#include "backend/mem_backend.h"
#include "core/error.h"
#include "core/id.h"

namespace haven {
namespace {

namespace fs = std::filesystem;

const std::string kRepoId(64, 'a');

Bytes TestBytes(size_t n, uint32_t seed) {
  Bytes b(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& c : b) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<uint8_t>(x);
  }
  return b;
}

// Looks like a pack: any body, then a 4-byte little-endian header length that fits.
Bytes FakePack(size_t n, uint32_t seed) {
  Bytes b = TestBytes(n, seed);
  uint32_t h = 64;
  for (int i = 0; i < 4; ++i) b[n - 4 + i] = static_cast<uint8_t>(h >> (8 * i));
  return b;
}

std::string NameOf(ByteView b) { return Sha256(b).Hex(); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

std::string AsString(ByteView b) { return std::string(AsChars(b)); }

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "haven_cache_XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Counts inner loads per handle (and the ranges asked for).
class CountingBackend : public Backend {
 public:
  explicit CountingBackend(std::shared_ptr<Backend> inner) : inner_(std::move(inner)) {}
  std::string Location() const override { return inner_->Location(); }
  bool Exists() override { return inner_->Exists(); }
  void Create() override { inner_->Create(); }
  void Save(const Handle& h, ByteView data) override { inner_->Save(h, data); }
  Bytes Load(const Handle& h, uint64_t offset, uint64_t length) override {
    {
      std::lock_guard lock(mu_);
      loads_[h.ToString()]++;
      total_loads_++;
    }
    return inner_->Load(h, offset, length);
  }
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override {
    {
      std::lock_guard lock(mu_);
      load_intos_[h.ToString()]++;
    }
    inner_->LoadInto(h, offset, out);
  }
  std::optional<uint64_t> Stat(const Handle& h) override { return inner_->Stat(h); }
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override {
    inner_->List(t, fn);
  }
  void Remove(const Handle& h) override { inner_->Remove(h); }

  int Loads(const Handle& h) {
    std::lock_guard lock(mu_);
    auto it = loads_.find(h.ToString());
    return it == loads_.end() ? 0 : it->second;
  }
  int LoadIntos(const Handle& h) {
    std::lock_guard lock(mu_);
    auto it = load_intos_.find(h.ToString());
    return it == load_intos_.end() ? 0 : it->second;
  }
  int TotalLoads() {
    std::lock_guard lock(mu_);
    return total_loads_;
  }

 private:
  std::shared_ptr<Backend> inner_;
  std::mutex mu_;
  std::map<std::string, int> loads_, load_intos_;
  int total_loads_ = 0;
};

class CacheBackendTest : public ::testing::Test {
 protected:
  CacheBackendTest()
      : mem_(std::make_shared<MemBackend>()),
        counting_(std::make_shared<CountingBackend>(mem_)),
        base_(dir_.path() + "/cache/base"),
        cache_(std::make_shared<CacheBackend>(counting_, base_)) {
    cache_->SetWarningHandler([this](const std::string& w) {
      std::lock_guard lock(warn_mu_);
      warnings_.push_back(w);
    });
  }

  std::string RepoDir() const { return base_ + "/" + kRepoId; }
  std::string PathOf(FileType t, const std::string& name) const {
    return RepoDir() + "/" + FileTypeDir(t) + "/" + name.substr(0, 2) + "/" + name;
  }
  // Stores an object directly in the inner backend; returns its name.
  std::string Put(FileType t, const Bytes& data) {
    std::string name = NameOf(data);
    mem_->Save({t, name}, data);
    return name;
  }
  size_t Warnings() {
    std::lock_guard lock(warn_mu_);
    return warnings_.size();
  }

  TempDir dir_;
  std::shared_ptr<MemBackend> mem_;
  std::shared_ptr<CountingBackend> counting_;
  std::string base_;
  std::shared_ptr<CacheBackend> cache_;
  std::mutex warn_mu_;
  std::vector<std::string> warnings_;
};

// HeldUnder: a file cached for any repository under the base counts (index names are
// content hashes); other types, other names and odd names do not.
TEST_F(CacheBackendTest, HeldUnderFindsAFileInAnyRepositorysFolder) {
  cache_->SetRepositoryId(kRepoId);
  const Bytes one(100, 1), two(100, 2);
  const std::string name = Put(FileType::kIndex, one);
  const std::string other = Put(FileType::kIndex, two);
  EXPECT_EQ(cache_->Load({FileType::kIndex, name}), one);  // now cached
  ASSERT_TRUE(fs::exists(PathOf(FileType::kIndex, name)));
  auto held = CacheBackend::HeldUnder(base_, FileType::kIndex);
  EXPECT_TRUE(held(name));
  EXPECT_FALSE(held(other));
  EXPECT_FALSE(held("../" + name));
  EXPECT_FALSE(held(""));
  EXPECT_FALSE(CacheBackend::HeldUnder(base_, FileType::kSnapshot)(name));
  EXPECT_FALSE(CacheBackend::HeldUnder(dir_.path() + "/missing", FileType::kIndex)(name));
}

TEST_F(CacheBackendTest, CreatesTagVersionAndLayoutExactly) {
  cache_->SetRepositoryId(kRepoId);
  EXPECT_EQ(cache_->RepoDir(), RepoDir());
  EXPECT_EQ(ReadFile(base_ + "/CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n");
  EXPECT_EQ(ReadFile(RepoDir() + "/version"), "1");
  struct stat st;
  ASSERT_EQ(::stat(base_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((RepoDir() + "/version").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  for (const char* sub : {"snapshots", "index", "data"}) {
    ASSERT_EQ(::stat((RepoDir() + "/" + sub).c_str(), &st), 0) << sub;
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0700u);
  }
  // Opening again keeps everything as it is.
  CacheBackend again(counting_, base_);
  again.SetRepositoryId(kRepoId);
  EXPECT_EQ(ReadFile(RepoDir() + "/version"), "1");
  EXPECT_EQ(ReadFile(base_ + "/CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n");
}

TEST_F(CacheBackendTest, RefusesNewerCacheVersionAndStaysPassThrough) {
  fs::create_directories(RepoDir());
  WriteFile(RepoDir() + "/version", "2");
  try {
    cache_->SetRepositoryId(kRepoId);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  }
  EXPECT_EQ(cache_->RepoDir(), "");
  EXPECT_EQ(ReadFile(RepoDir() + "/version"), "2");
  std::string snap = Put(FileType::kSnapshot, TestBytes(100, 1));
  cache_->Load({FileType::kSnapshot, snap});
  cache_->Load({FileType::kSnapshot, snap});
  EXPECT_EQ(counting_->Loads({FileType::kSnapshot, snap}), 2);
  EXPECT_FALSE(fs::exists(PathOf(FileType::kSnapshot, snap)));
}

TEST_F(CacheBackendTest, UpgradesOlderVersionAndRejectsGarbage) {
  fs::create_directories(RepoDir());
  WriteFile(RepoDir() + "/version", "0");
  cache_->SetRepositoryId(kRepoId);
  EXPECT_EQ(ReadFile(RepoDir() + "/version"), "1");

  const std::string other(64, 'b');
  fs::create_directories(base_ + "/" + other);
  WriteFile(base_ + "/" + other + "/version", "x1");
  CacheBackend c(counting_, base_);
  EXPECT_THROW(c.SetRepositoryId(other), Error);
  EXPECT_THROW(c.SetRepositoryId("../etc"), Error);
  EXPECT_THROW(c.SetRepositoryId(std::string(64, 'A')), Error);
}

TEST_F(CacheBackendTest, PassThroughBeforeRepositoryId) {
  std::string snap = Put(FileType::kSnapshot, TestBytes(100, 1));
  EXPECT_EQ(cache_->Load({FileType::kSnapshot, snap}), TestBytes(100, 1));
  EXPECT_EQ(cache_->Load({FileType::kSnapshot, snap}), TestBytes(100, 1));
  EXPECT_EQ(counting_->Loads({FileType::kSnapshot, snap}), 2);
  EXPECT_FALSE(fs::exists(base_));
}

TEST_F(CacheBackendTest, SnapshotAndIndexCachedAfterFirstLoadAndServedFromCache) {
  cache_->SetRepositoryId(kRepoId);
  Bytes sdata = TestBytes(300, 1), idata = TestBytes(5000, 2);
  std::string snap = Put(FileType::kSnapshot, sdata);
  std::string idx = Put(FileType::kIndex, idata);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(cache_->Load({FileType::kSnapshot, snap}), sdata);
    EXPECT_EQ(cache_->Load({FileType::kIndex, idx}), idata);
  }
  EXPECT_EQ(counting_->Loads({FileType::kSnapshot, snap}), 1);
  EXPECT_EQ(counting_->Loads({FileType::kIndex, idx}), 1);
  EXPECT_EQ(ReadFile(PathOf(FileType::kSnapshot, snap)), AsString(sdata));
  EXPECT_EQ(ReadFile(PathOf(FileType::kIndex, idx)), AsString(idata));
  EXPECT_EQ(cache_->CachePath({FileType::kIndex, idx}), PathOf(FileType::kIndex, idx));
  // Ranges come from the cached copy too.
  Bytes part = cache_->Load({FileType::kIndex, idx}, 100, 50);
  EXPECT_EQ(part, Bytes(idata.begin() + 100, idata.begin() + 150));
  EXPECT_EQ(counting_->Loads({FileType::kIndex, idx}), 1);
  // A fresh decorator (a second process) finds the cached copies.
  CacheBackend second(counting_, base_);
  second.SetRepositoryId(kRepoId);
  EXPECT_EQ(second.Load({FileType::kSnapshot, snap}), sdata);
  EXPECT_EQ(counting_->Loads({FileType::kSnapshot, snap}), 1);
  // A range past the end is a short read, as from the backend.
  try {
    cache_->Load({FileType::kSnapshot, snap}, 290, 20);
    FAIL() << "expected a short read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  }
  EXPECT_EQ(Warnings(), 0u);
}

TEST_F(CacheBackendTest, OtherTypesAreNeverCached) {
  cache_->SetRepositoryId(kRepoId);
  std::string key = Put(FileType::kKey, TestBytes(100, 1));
  std::string lock = Put(FileType::kLock, TestBytes(100, 2));
  mem_->Save({FileType::kConfig, "config"}, TestBytes(50, 3));
  for (int i = 0; i < 2; ++i) {
    cache_->Load({FileType::kKey, key});
    cache_->Load({FileType::kLock, lock});
    cache_->Load({FileType::kConfig, "config"});
  }
  EXPECT_EQ(counting_->TotalLoads(), 6);
  EXPECT_FALSE(fs::exists(RepoDir() + "/keys"));
  EXPECT_FALSE(fs::exists(RepoDir() + "/locks"));
}

TEST_F(CacheBackendTest, SaveWritesThroughAndCaches) {
  cache_->SetRepositoryId(kRepoId);
  Bytes sdata = TestBytes(200, 7);
  std::string snap = NameOf(sdata);
  cache_->Save({FileType::kSnapshot, snap}, sdata);
  EXPECT_EQ(mem_->Load({FileType::kSnapshot, snap}), sdata);
  EXPECT_EQ(ReadFile(PathOf(FileType::kSnapshot, snap)), AsString(sdata));
  EXPECT_EQ(cache_->Load({FileType::kSnapshot, snap}), sdata);
  EXPECT_EQ(counting_->Loads({FileType::kSnapshot, snap}), 0);
  // A save the backend rejects does not reach the cache.
  auto fault = std::make_shared<FaultBackend>(mem_);
  CacheBackend failing(fault, base_);
  failing.SetRepositoryId(kRepoId);
  Bytes other = TestBytes(200, 8);
  fault->FailNext(FaultBackend::Op::kSave, 1, false);
  EXPECT_THROW(failing.Save({FileType::kIndex, NameOf(other)}, other), Error);
  EXPECT_FALSE(fs::exists(PathOf(FileType::kIndex, NameOf(other))));
}

TEST_F(CacheBackendTest, StaleEntriesRemovedAfterListing) {
  cache_->SetRepositoryId(kRepoId);
  std::string s1 = Put(FileType::kSnapshot, TestBytes(100, 1));
  std::string s2 = Put(FileType::kSnapshot, TestBytes(100, 2));
  std::string i1 = Put(FileType::kIndex, TestBytes(100, 3));
  std::string i2 = Put(FileType::kIndex, TestBytes(100, 4));
  for (const auto& n : {s1, s2}) cache_->Load({FileType::kSnapshot, n});
  for (const auto& n : {i1, i2}) cache_->Load({FileType::kIndex, n});
  // Removed behind the cache's back (e.g. by another host's forget/prune).
  mem_->Remove({FileType::kSnapshot, s2});
  mem_->Remove({FileType::kIndex, i1});
  // A listing that fails part-way must not clean anything.
  auto fault = std::make_shared<FaultBackend>(mem_);
  CacheBackend flaky(fault, base_);
  flaky.SetRepositoryId(kRepoId);
  fault->FailNext(FaultBackend::Op::kList, 1, false);
  EXPECT_THROW(flaky.List(FileType::kSnapshot, [](const FileInfo&) {}), Error);
  EXPECT_TRUE(fs::exists(PathOf(FileType::kSnapshot, s2)));

  std::vector<std::string> listed;
  cache_->List(FileType::kSnapshot, [&](const FileInfo& fi) { listed.push_back(fi.name); });
  EXPECT_EQ(listed, std::vector<std::string>{s1});
  EXPECT_TRUE(fs::exists(PathOf(FileType::kSnapshot, s1)));
  EXPECT_FALSE(fs::exists(PathOf(FileType::kSnapshot, s2)));
  EXPECT_TRUE(fs::exists(PathOf(FileType::kIndex, i1)));  // index not listed yet
  cache_->List(FileType::kIndex, [](const FileInfo&) {});
  EXPECT_FALSE(fs::exists(PathOf(FileType::kIndex, i1)));
  EXPECT_TRUE(fs::exists(PathOf(FileType::kIndex, i2)));
}

TEST_F(CacheBackendTest, TreePacksCachedWholeAndRangesServedFromCache) {
  cache_->SetRepositoryId(kRepoId);
  Bytes pack = FakePack(100000, 9);
  std::string name = Put(FileType::kPack, pack);
  cache_->SetTreePackPredicate([&](const std::string& n) { return n == name; });
  Handle h{FileType::kPack, name};
  struct Range {
    uint64_t off, len;
  };
  for (Range r : {Range{1000, 500}, Range{0, 32}, Range{99000, 1000}, Range{5000, 0},
                  Range{0, 0}, Range{1000, 500}}) {
    Bytes got = cache_->Load(h, r.off, r.len);
    uint64_t len = r.len ? r.len : pack.size() - r.off;
    ASSERT_EQ(got, Bytes(pack.begin() + r.off, pack.begin() + r.off + len))
        << r.off << "+" << r.len;
  }
  EXPECT_EQ(counting_->Loads(h), 1);
  EXPECT_EQ(ReadFile(PathOf(FileType::kPack, name)), AsString(pack));
  EXPECT_EQ(Warnings(), 0u);
  // A range past the end might mean a truncated copy: the backend decides (short read),
  // and the cache ends up holding the whole pack again.
  try {
    cache_->Load(h, 99999, 2);
    FAIL() << "expected a short read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  }
  EXPECT_EQ(counting_->Loads(h), 2);
  EXPECT_EQ(ReadFile(PathOf(FileType::kPack, name)), AsString(pack));
}

// A tree walk reads many small ranges of a few cached packs: each pack file is opened
// once and kept open, not opened and closed per range (issue 16).
TEST_F(CacheBackendTest, CachedPackIsOpenedOnceForManyRanges) {
  cache_->SetRepositoryId(kRepoId);
  cache_->SetTreePackPredicate([](const std::string&) { return true; });
  std::vector<Bytes> packs;
  std::vector<std::string> names;
  for (uint32_t i = 0; i < 3; ++i) {
    packs.push_back(FakePack(64 << 10, 40 + i));
    names.push_back(Put(FileType::kPack, packs.back()));
  }
  for (size_t p = 0; p < packs.size(); ++p) cache_->Load({FileType::kPack, names[p]}, 0, 10);
  const uint64_t opened = cache_->files_opened();
  for (int i = 0; i < 300; ++i) {
    const size_t p = static_cast<size_t>(i) % packs.size();
    const uint64_t off = static_cast<uint64_t>(i) * 97 % (packs[p].size() - 100);
    ASSERT_EQ(cache_->Load({FileType::kPack, names[p]}, off, 100),
              Bytes(packs[p].begin() + off, packs[p].begin() + off + 100));
  }
  EXPECT_LE(cache_->files_opened() - opened, packs.size());
  EXPECT_EQ(cache_->packs_kept_open(), packs.size());
  EXPECT_EQ(counting_->TotalLoads(), 3);
  // The open descriptor serves the pack even when its file is renamed away meanwhile.
  const std::string path = PathOf(FileType::kPack, names[0]);
  fs::rename(path, path + ".moved");
  EXPECT_EQ(cache_->Load({FileType::kPack, names[0]}, 5, 10),
            Bytes(packs[0].begin() + 5, packs[0].begin() + 15));
  EXPECT_EQ(counting_->TotalLoads(), 3);
  // Forget and Remove close it: the next load finds no file and fetches the pack again.
  cache_->Forget({FileType::kPack, names[0]});
  EXPECT_EQ(cache_->packs_kept_open(), packs.size() - 1);
  EXPECT_EQ(cache_->Load({FileType::kPack, names[0]}, 5, 10),
            Bytes(packs[0].begin() + 5, packs[0].begin() + 15));
  EXPECT_EQ(counting_->TotalLoads(), 4);
  cache_->Remove({FileType::kPack, names[1]});
  EXPECT_THROW(cache_->Load({FileType::kPack, names[1]}, 5, 10), Error);
}

// A kept descriptor of a pack whose file was damaged in place is not trusted: the damage
// is found as before (a short file, a whole read that does not match its name).
TEST_F(CacheBackendTest, KeptOpenPackDamagedInPlaceIsRepaired) {
  cache_->SetRepositoryId(kRepoId);
  cache_->SetTreePackPredicate([](const std::string&) { return true; });
  Bytes pack = FakePack(50000, 44);
  const std::string name = Put(FileType::kPack, pack);
  Handle h{FileType::kPack, name};
  cache_->Load(h, 0, 10);
  cache_->Load(h, 0, 10);  // now kept open
  ASSERT_EQ(cache_->packs_kept_open(), 1u);
  const std::string path = PathOf(FileType::kPack, name);
  fs::resize_file(path, 30000);
  EXPECT_EQ(cache_->Load(h, 40000, 100), Bytes(pack.begin() + 40000, pack.begin() + 40100));
  EXPECT_EQ(counting_->Loads(h), 2);
  EXPECT_EQ(ReadFile(path), AsString(pack));
  cache_->Load(h, 0, 10);
  std::string bad = AsString(pack);
  bad[100] ^= 1;
  WriteFile(path, bad);  // same file, same size
  EXPECT_EQ(cache_->Load(h), pack);
  EXPECT_EQ(counting_->Loads(h), 3);
  EXPECT_EQ(ReadFile(path), AsString(pack));
}

TEST_F(CacheBackendTest, DataPacksAreNeverCached) {
  cache_->SetRepositoryId(kRepoId);
  Bytes pack = FakePack(10000, 10);
  std::string name = Put(FileType::kPack, pack);
  cache_->SetTreePackPredicate([](const std::string&) { return false; });
  Handle h{FileType::kPack, name};
  EXPECT_EQ(cache_->Load(h, 10, 20), Bytes(pack.begin() + 10, pack.begin() + 30));
  EXPECT_EQ(cache_->Load(h, 10, 20), Bytes(pack.begin() + 10, pack.begin() + 30));
  EXPECT_EQ(cache_->Load(h), pack);
  EXPECT_EQ(counting_->Loads(h), 3);
  // Without a predicate, packs are not cached either; nor on save.
  CacheBackend plain(counting_, base_);
  plain.SetRepositoryId(kRepoId);
  plain.Load(h, 0, 10);
  Bytes pack2 = FakePack(10000, 11);
  cache_->Save({FileType::kPack, NameOf(pack2)}, pack2);
  EXPECT_EQ(counting_->Loads(h), 4);
  EXPECT_TRUE(fs::is_empty(RepoDir() + "/data"));
}

// A range of a data pack goes to storage's LoadInto (straight into the caller's buffer);
// a range of a tree pack is served by the cache, which fetches the pack whole once.
TEST_F(CacheBackendTest, LoadIntoReadsDataPacksInPlaceAndTreePacksThroughTheCache) {
  cache_->SetRepositoryId(kRepoId);
  Bytes data = FakePack(10000, 12), tree = FakePack(10000, 13);
  const Handle dh{FileType::kPack, Put(FileType::kPack, data)};
  const Handle th{FileType::kPack, Put(FileType::kPack, tree)};
  cache_->SetTreePackPredicate([&](const std::string& name) { return name == th.name; });
  Bytes out(20);
  for (int i = 0; i < 2; ++i) {
    cache_->LoadInto(dh, 10, out);
    EXPECT_EQ(out, Bytes(data.begin() + 10, data.begin() + 30));
    cache_->LoadInto(th, 30, out);
    EXPECT_EQ(out, Bytes(tree.begin() + 30, tree.begin() + 50));
  }
  EXPECT_EQ(counting_->LoadIntos(dh), 2);
  EXPECT_EQ(counting_->Loads(dh), 0);
  EXPECT_EQ(counting_->LoadIntos(th), 0);
  EXPECT_EQ(counting_->Loads(th), 1);  // fetched whole once, then read from the cache file
  EXPECT_TRUE(fs::exists(PathOf(FileType::kPack, th.name)));
  out.resize(data.size() + 1);
  EXPECT_THROW(cache_->LoadInto(dh, 0, out), Error);  // past the end: a short read
}

TEST_F(CacheBackendTest, NotedTreePackIsCachedOnSave) {
  cache_->SetRepositoryId(kRepoId);
  Bytes tree = FakePack(20000, 12), data = FakePack(20000, 13);
  std::string tn = NameOf(tree), dn = NameOf(data);
  cache_->NoteTreePack(tn);
  cache_->Save({FileType::kPack, tn}, tree);
  cache_->Save({FileType::kPack, dn}, data);
  EXPECT_EQ(mem_->Load({FileType::kPack, tn}), tree);
  EXPECT_EQ(ReadFile(PathOf(FileType::kPack, tn)), AsString(tree));
  EXPECT_FALSE(fs::exists(PathOf(FileType::kPack, dn)));
  // Once the index knows it, loads are served from the copy written on save.
  cache_->SetTreePackPredicate([&](const std::string& n) { return n == tn; });
  EXPECT_EQ(cache_->Load({FileType::kPack, tn}, 100, 100),
            Bytes(tree.begin() + 100, tree.begin() + 200));
  EXPECT_EQ(counting_->TotalLoads(), 0);
}

TEST_F(CacheBackendTest, WrongSizeCachedPackFallsBackAndIsRepaired) {
  cache_->SetRepositoryId(kRepoId);
  Bytes pack = FakePack(50000, 14);
  std::string name = Put(FileType::kPack, pack);
  cache_->SetTreePackPredicate([](const std::string&) { return true; });
  Handle h{FileType::kPack, name};
  cache_->Load(h, 0, 10);
  ASSERT_EQ(counting_->Loads(h), 1);
  const std::string path = PathOf(FileType::kPack, name);
  fs::resize_file(path, 30000);  // truncated copy
  EXPECT_EQ(cache_->Load(h, 40000, 100), Bytes(pack.begin() + 40000, pack.begin() + 40100));
  EXPECT_EQ(counting_->Loads(h), 2);
  EXPECT_EQ(ReadFile(path), AsString(pack));
  EXPECT_GE(Warnings(), 1u);
  // An empty cached file, too.
  fs::resize_file(path, 0);
  EXPECT_EQ(cache_->Load(h, 0, 100), Bytes(pack.begin(), pack.begin() + 100));
  EXPECT_EQ(counting_->Loads(h), 3);
  EXPECT_EQ(fs::file_size(path), pack.size());
  // A whole-pack read verifies the content.
  std::string bad = AsString(pack);
  bad[100] ^= 1;
  WriteFile(path, bad);
  EXPECT_EQ(cache_->Load(h), pack);
  EXPECT_EQ(counting_->Loads(h), 4);
  EXPECT_EQ(ReadFile(path), AsString(pack));
}

TEST_F(CacheBackendTest, DamagedCachedSnapshotFallsBackAndIsRepaired) {
  cache_->SetRepositoryId(kRepoId);
  Bytes sdata = TestBytes(400, 15);
  std::string snap = Put(FileType::kSnapshot, sdata);
  Handle h{FileType::kSnapshot, snap};
  cache_->Load(h);
  const std::string path = PathOf(FileType::kSnapshot, snap);
  fs::resize_file(path, 100);
  EXPECT_EQ(cache_->Load(h), sdata);
  EXPECT_EQ(ReadFile(path), AsString(sdata));
  std::string flipped = AsString(sdata);
  flipped[0] ^= 0x80;
  WriteFile(path, flipped);
  EXPECT_EQ(cache_->Load(h), sdata);
  EXPECT_EQ(ReadFile(path), AsString(sdata));
  EXPECT_EQ(counting_->Loads(h), 3);
  // A folder where the file should be is not served either.
  fs::remove(path);
  fs::create_directory(path);
  EXPECT_EQ(cache_->Load(h), sdata);
}

TEST_F(CacheBackendTest, ContentNotMatchingItsNameIsNotCached) {
  cache_->SetRepositoryId(kRepoId);
  auto fault = std::make_shared<FaultBackend>(mem_);
  CacheBackend c(fault, base_);
  c.SetRepositoryId(kRepoId);
  c.SetWarningHandler([](const std::string&) {});
  Bytes sdata = TestBytes(100, 16);
  std::string snap = Put(FileType::kSnapshot, sdata);
  fault->FlipLoadedByte(0, 1);
  Bytes got = c.Load({FileType::kSnapshot, snap});
  EXPECT_NE(got, sdata);  // passed on: the repository reports it
  EXPECT_FALSE(fs::exists(PathOf(FileType::kSnapshot, snap)));
  EXPECT_EQ(c.Load({FileType::kSnapshot, snap}), sdata);
  EXPECT_TRUE(fs::exists(PathOf(FileType::kSnapshot, snap)));
}

TEST_F(CacheBackendTest, RemoveDeletesFromBackendAndCache) {
  cache_->SetRepositoryId(kRepoId);
  std::string snap = Put(FileType::kSnapshot, TestBytes(100, 17));
  Bytes pack = FakePack(1000, 18);
  std::string pname = Put(FileType::kPack, pack);
  cache_->SetTreePackPredicate([](const std::string&) { return true; });
  cache_->Load({FileType::kSnapshot, snap});
  cache_->Load({FileType::kPack, pname}, 0, 10);
  ASSERT_TRUE(fs::exists(PathOf(FileType::kPack, pname)));
  cache_->Remove({FileType::kSnapshot, snap});
  cache_->Remove({FileType::kPack, pname});
  EXPECT_FALSE(mem_->Stat({FileType::kSnapshot, snap}));
  EXPECT_FALSE(mem_->Stat({FileType::kPack, pname}));
  EXPECT_FALSE(fs::exists(PathOf(FileType::kSnapshot, snap)));
  EXPECT_FALSE(fs::exists(PathOf(FileType::kPack, pname)));
  EXPECT_THROW(cache_->Remove({FileType::kSnapshot, snap}), Error);
  EXPECT_THROW(cache_->Load({FileType::kSnapshot, snap}), Error);
  EXPECT_THROW(cache_->Remove({FileType::kSnapshot, "../../x"}), Error);
}

TEST_F(CacheBackendTest, ConcurrentLoadsOfTheSamePack) {
  cache_->SetRepositoryId(kRepoId);
  Bytes pack = FakePack(4 << 20, 19);
  std::string name = Put(FileType::kPack, pack);
  cache_->SetTreePackPredicate([](const std::string&) { return true; });
  Handle h{FileType::kPack, name};
  constexpr int kThreads = 8;
  std::barrier start(kThreads);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < 50; ++i) {
        uint64_t off = (uint64_t(t) * 7919 + uint64_t(i) * 104729) % (pack.size() - 4096);
        Bytes got = cache_->Load(h, off, 4096);
        if (got != Bytes(pack.begin() + off, pack.begin() + off + 4096)) bad++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(counting_->Loads(h), 1);
  EXPECT_EQ(ReadFile(PathOf(FileType::kPack, name)), AsString(pack));
  for (const auto& e : fs::recursive_directory_iterator(base_))
    EXPECT_EQ(e.path().string().find("-tmp-"), std::string::npos) << e.path();
  EXPECT_EQ(Warnings(), 0u);
}

TEST_F(CacheBackendTest, ConcurrentDecoratorsShareOneCacheFolder) {
  // Two processes' worth of decorators: no in-process dedup between them, only renames.
  cache_->SetRepositoryId(kRepoId);
  std::vector<std::shared_ptr<CacheBackend>> caches;
  for (int i = 0; i < 8; ++i) {
    caches.push_back(std::make_shared<CacheBackend>(counting_, base_));
    caches.back()->SetRepositoryId(kRepoId);
    caches.back()->SetTreePackPredicate([](const std::string&) { return true; });
  }
  Bytes pack = FakePack(1 << 20, 20);
  std::string name = Put(FileType::kPack, pack);
  std::barrier start(8);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < 20; ++i) {
        uint64_t off = uint64_t(t * 1000 + i * 31);
        if (caches[t]->Load({FileType::kPack, name}, off, 1000) !=
            Bytes(pack.begin() + off, pack.begin() + off + 1000))
          bad++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(ReadFile(PathOf(FileType::kPack, name)), AsString(pack));
}

TEST_F(CacheBackendTest, UnwritableCacheStillServesFromBackend) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores folder permissions";
  cache_->SetRepositoryId(kRepoId);
  fs::permissions(RepoDir() + "/snapshots", fs::perms::owner_read | fs::perms::owner_exec);
  Bytes sdata = TestBytes(100, 21);
  std::string snap = Put(FileType::kSnapshot, sdata);
  EXPECT_EQ(cache_->Load({FileType::kSnapshot, snap}), sdata);
  EXPECT_GE(Warnings(), 1u);
  fs::permissions(RepoDir() + "/snapshots", fs::perms::owner_all);
}

TEST_F(CacheBackendTest, UnusableBaseFolderThrowsAndStaysPassThrough) {
  fs::create_directories(dir_.path() + "/cache");
  WriteFile(base_, "a file, not a folder");
  EXPECT_THROW(cache_->SetRepositoryId(kRepoId), Error);
  EXPECT_EQ(cache_->RepoDir(), "");
  std::string snap = Put(FileType::kSnapshot, TestBytes(100, 22));
  EXPECT_EQ(cache_->Load({FileType::kSnapshot, snap}), TestBytes(100, 22));
}

TEST(CacheBackendDefaults, DefaultBaseDirIsHavensOwn) {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  std::string saved = old_xdg ? old_xdg : "";
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(CacheBackend::DefaultBaseDir(), "/x/cache/haven");
  ::unsetenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (home && *home) {
    EXPECT_EQ(CacheBackend::DefaultBaseDir(), std::string(home) + "/.cache/haven");
  }
  if (old_xdg) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}

}  // namespace
}  // namespace haven
