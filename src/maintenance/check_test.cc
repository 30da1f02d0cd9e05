#include "maintenance/check.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <chrono>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "backend/forwarding_backend.h"
#include "backend/mem_backend.h"
#include "backend/test_load_trace.h"
#include "core/error.h"
#include "repo/test_repository.h"
#include "repo/repository.h"

namespace haven {
namespace {

constexpr const char* kPassword = "check-test";

Bytes Random(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

Bytes Text(uint64_t seed, size_t n) {
  std::string s;
  while (s.size() < n) s += "text " + std::to_string(seed) + " line " + std::to_string(s.size()) + "\n";
  s.resize(n);
  return Bytes(s.begin(), s.end());
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

bool Has(const std::vector<std::string>& errs, const std::string& a, const std::string& b = "") {
  for (const auto& e : errs)
    if (e.find(a) != std::string::npos && e.find(b) != std::string::npos) return true;
  return false;
}

// A v2 repository with one data pack of blobs of many sizes (compressed text, stored
// random bytes, blobs far larger than a test segment) and one tree pack.
class CheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = std::make_shared<MemBackend>();
    Repository::Init(*mem_, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
    auto repo = Open();
    repo->LoadIndex();
    for (int i = 0; i < 40; ++i) {
      size_t n = i % 7 == 0 ? 300000 + 1000 * i : 10 + 997 * i;
      Bytes b = i % 2 ? Random(i, n) : Text(i, n);
      BlobId id(Sha256(b));
      repo->SaveBlob(BlobType::kData, id, b);
      blobs_.push_back(id);
    }
    std::string tree = R"({"nodes":[]})" "\n";
    repo->SaveBlob(BlobType::kTree, BlobId(Sha256(AsBytes(tree))), AsBytes(tree));
    repo->Flush();
  }

  std::unique_ptr<haven::testing::TestRepository> Open() { return haven::testing::TestRepository::Open(mem_, kPassword, 2); }

  // pack -> its index entries, and pack -> stored size.
  void Packs(haven::testing::TestRepository& repo, std::map<PackId, std::vector<PackedBlob>>* packs,
             std::map<PackId, uint64_t>* sizes) {
    repo.index().ForEach([&](const PackId& p, const PackedBlob& b) { (*packs)[p].push_back(b); });
    mem_->List(FileType::kPack, [&](const FileInfo& fi) { (*sizes)[*PackId::FromHex(fi.name)] = fi.size; });
  }

  // The data pack (the one with most blobs).
  PackId DataPack(const std::map<PackId, std::vector<PackedBlob>>& packs) {
    PackId best;
    size_t most = 0;
    for (const auto& [p, b] : packs)
      if (b.size() > most) most = b.size(), best = p;
    return best;
  }

  void Replace(const PackId& p, Bytes content) {
    Handle h{FileType::kPack, p.Hex()};
    mem_->Remove(h);
    mem_->Save(h, content);
  }

  CheckResult Check(const std::string& subset = "") {
    auto repo = Open();
    CheckOptions co;
    co.read_data = subset.empty();
    co.read_data_subset = subset;
    co.jobs = 2;
    return RunCheck(*repo, co);
  }

  std::shared_ptr<MemBackend> mem_;
  std::vector<BlobId> blobs_;
};

TEST_F(CheckTest, HealthyRepositoryWithAnySegmentSize) {
  CheckResult r = Check();
  EXPECT_TRUE(r.ok()) << Join(r.errors);
  EXPECT_EQ(r.packs_read, 2u);
  auto repo = Open();
  repo->LoadIndex();
  std::map<PackId, std::vector<PackedBlob>> packs;
  std::map<PackId, uint64_t> sizes;
  Packs(*repo, &packs, &sizes);
  PackCheckBuffers bufs;  // reused across packs and segment sizes
  for (uint64_t seg : {uint64_t{0}, uint64_t{1}, uint64_t{100}, uint64_t{4096}, uint64_t{300000},
                       kCheckSegment, uint64_t{1} << 30}) {
    for (const auto& [p, blobs] : packs) {
      auto errs = CheckPackData(*repo, p, sizes.at(p), blobs, bufs, seg);
      EXPECT_TRUE(errs.empty()) << "segment " << seg << "\n" << Join(errs);
    }
    // The same, each pack streamed in pieces that do not line up with the segments.
    for (size_t piece : {size_t{1} << 20, size_t{4093}, size_t{777}}) {
      if (seg < 100 && piece < 4000) continue;  // byte-sized segments: slow, covered above
      auto trickle = std::make_shared<haven::testing::TrickleBackend>(mem_, piece);
      auto streamed = haven::testing::TestRepository::Open(trickle, kPassword, 2);
      for (const auto& [p, blobs] : packs) {
        auto errs = CheckPackData(*streamed, p, sizes.at(p), blobs, bufs, seg, /*stream=*/true);
        EXPECT_TRUE(errs.empty()) << "segment " << seg << ", pieces of " << piece << "\n" << Join(errs);
      }
    }
  }
}

// Over storage where each request is a round trip, --read-data reads each pack in one
// streamed request; from a disk, in segments of kCheckSegment.
TEST_F(CheckTest, OneReadPerPackWhenRequestsAreRoundTrips) {
  std::map<PackId, std::vector<PackedBlob>> packs;
  std::map<PackId, uint64_t> sizes;
  {
    auto repo = Open();
    repo->LoadIndex();
    for (int i = 0; i < 4; ++i) {  // a pack of 4 MiB (stored: random bytes)
      Bytes b = Random(100 + i, 1 << 20);
      repo->SaveBlob(BlobType::kData, BlobId(Sha256(b)), b);
    }
    repo->Flush();
    repo->LoadIndex();
    Packs(*repo, &packs, &sizes);
  }
  PackId data = sizes.begin()->first;
  for (const auto& [p, n] : sizes)
    if (n > sizes.at(data)) data = p;
  ASSERT_GT(sizes.at(data), 2 * kCheckSegment);
  for (auto delay : {std::chrono::milliseconds(1), std::chrono::milliseconds(0)}) {
    auto trace = std::make_shared<haven::testing::LoadTraceBackend>(mem_, delay, 5);
    auto repo = haven::testing::TestRepository::Open(trace, kPassword, 2);
    CheckOptions co;
    co.read_data = true;
    co.jobs = 2;
    trace->Reset();
    CheckResult r = RunCheck(*repo, co);
    EXPECT_TRUE(r.ok()) << Join(r.errors);
    size_t reads = 0;
    for (const auto& l : trace->Loads(FileType::kPack))
      if (l.h.name == data.Hex()) ++reads;
    if (delay.count() > 0) {
      EXPECT_EQ(reads, 1u);
    } else {
      EXPECT_GE(reads, sizes.at(data) / (2 * kCheckSegment) + 1);
    }
  }
}

// The snapshot listing waits (up to 2 s) for the index listing to start, and notes
// whether it did meanwhile.
class ListingOrder : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override {
    if (t == FileType::kIndex) {
      std::lock_guard lock(mu_);
      index_started_ = true;
      cv_.notify_all();
    }
    if (t == FileType::kSnapshot) {
      std::unique_lock lock(mu_);
      overlapped_ = cv_.wait_for(lock, std::chrono::seconds(2), [&] { return index_started_; });
    }
    inner_->List(t, fn);
  }
  bool overlapped() {
    std::lock_guard lock(mu_);
    return overlapped_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool index_started_ = false, overlapped_ = false;
};

// Snapshots are listed before the index loads (a backup writes its index, then its
// snapshot) unless the repository is locked exclusively: then both at once.
TEST_F(CheckTest, IndexLoadsBesideTheSnapshotListingOnlyUnderAnExclusiveLock) {
  for (bool exclusive : {false, true}) {
    auto order = std::make_shared<ListingOrder>(mem_);
    auto repo = haven::testing::TestRepository::Open(order, kPassword, 2);
    CheckOptions co;
    co.jobs = 2;
    co.locked_exclusively = exclusive;
    CheckResult r = RunCheck(*repo, co);
    EXPECT_TRUE(r.ok()) << r.errors[0];
    EXPECT_EQ(order->overlapped(), exclusive);
  }
}

TEST_F(CheckTest, FlippedByteNamesThePackAndTheBlob) {
  auto repo = Open();
  repo->LoadIndex();
  std::map<PackId, std::vector<PackedBlob>> packs;
  std::map<PackId, uint64_t> sizes;
  Packs(*repo, &packs, &sizes);
  PackId p = DataPack(packs);
  // Damage the middle of one blob of each kind: a big one, then a small one.
  Bytes content = mem_->Load({FileType::kPack, p.Hex()});
  std::vector<BlobId> damaged;
  for (const PackedBlob& b : packs[p]) {
    if ((b.length > 300000 && damaged.empty()) || (b.length < 5000 && damaged.size() == 1)) {
      content[b.offset + b.length / 2] ^= 0x40;
      damaged.push_back(b.id);
    }
  }
  ASSERT_EQ(damaged.size(), 2u);
  Replace(p, content);
  auto trickle = std::make_shared<haven::testing::TrickleBackend>(mem_, 4093);
  auto streamed = haven::testing::TestRepository::Open(trickle, kPassword, 2);
  for (auto [seg, stream] : std::vector<std::pair<uint64_t, bool>>{
           {1, false}, {4096, false}, {kCheckSegment, false}, {4096, true}, {kCheckSegment, true}}) {
    PackCheckBuffers bufs;
    auto errs = CheckPackData(stream ? *streamed : *repo, p, sizes.at(p), packs[p], bufs, seg, stream);
    EXPECT_EQ(errs.size(), 3u) << Join(errs);
    EXPECT_TRUE(Has(errs, "pack " + p.Hex() + ": content does not match its id")) << Join(errs);
    for (const BlobId& id : damaged)
      EXPECT_TRUE(Has(errs, "blob " + id.Hex() + " in pack " + p.Hex(),
                      "ciphertext verification failed"))
          << Join(errs);
  }
  CheckResult r = Check();
  EXPECT_EQ(r.errors.size(), 3u) << Join(r.errors);
  EXPECT_TRUE(Has(r.errors, "pack " + p.Hex() + ": content does not match its id"));
}

TEST_F(CheckTest, AStreamThatBreaksIsAnErrorNamingThePack) {
  auto repo = Open();
  repo->LoadIndex();
  std::map<PackId, std::vector<PackedBlob>> packs;
  std::map<PackId, uint64_t> sizes;
  Packs(*repo, &packs, &sizes);
  PackId p = DataPack(packs);
  auto trickle = std::make_shared<haven::testing::TrickleBackend>(mem_, 4093, 5000);
  auto streamed = haven::testing::TestRepository::Open(trickle, kPassword, 2);
  PackCheckBuffers bufs;
  auto errs = CheckPackData(*streamed, p, sizes.at(p), packs[p], bufs, kCheckSegment, true);
  ASSERT_EQ(errs.size(), 1u) << Join(errs);
  EXPECT_TRUE(Has(errs, "pack " + p.Hex() + ": connection reset")) << Join(errs);
}

TEST_F(CheckTest, TruncatedAndMissingPacks) {
  auto repo = Open();
  repo->LoadIndex();
  std::map<PackId, std::vector<PackedBlob>> packs;
  std::map<PackId, uint64_t> sizes;
  Packs(*repo, &packs, &sizes);
  PackId data = DataPack(packs);
  PackId tree;
  for (const auto& [p, b] : packs)
    if (p != data) tree = p;
  Bytes content = mem_->Load({FileType::kPack, data.Hex()});
  content.resize(content.size() - 100);
  Replace(data, content);
  mem_->Remove({FileType::kPack, tree.Hex()});
  CheckResult r = Check();
  EXPECT_TRUE(Has(r.errors, "pack " + tree.Hex() + ": does not exist")) << Join(r.errors);
  EXPECT_TRUE(Has(r.errors, "pack " + data.Hex() + ": size is " +
                                std::to_string(content.size()) + " bytes but the index describes"))
      << Join(r.errors);
  // Reading the truncated pack: its hash and its header are wrong.
  EXPECT_TRUE(Has(r.errors, "pack " + data.Hex() + ": content does not match its id"))
      << Join(r.errors);
  EXPECT_TRUE(Has(r.errors, "pack " + data.Hex() + ": header")) << Join(r.errors);
  EXPECT_EQ(r.packs_read, 1u);
}

TEST_F(CheckTest, OverlappingAndOutOfRangeIndexEntries) {
  auto repo = Open();
  repo->LoadIndex();
  std::map<PackId, std::vector<PackedBlob>> packs;
  std::map<PackId, uint64_t> sizes;
  Packs(*repo, &packs, &sizes);
  PackId p = DataPack(packs);
  std::vector<PackedBlob> indexed = packs[p];
  // An entry claiming another blob's bytes (opened from its own copy: the real blob,
  // opened in place, still verifies), one past the end of the file, one running over it.
  PackedBlob copy = indexed[3];
  copy.id = BlobId(Sha256(AsBytes("not this blob")));
  PackedBlob past = indexed[0];
  past.id = BlobId(Sha256(AsBytes("past")));
  past.offset = static_cast<uint32_t>(sizes.at(p) + 10);
  PackedBlob over = indexed[0];
  over.id = BlobId(Sha256(AsBytes("over")));
  over.offset = static_cast<uint32_t>(sizes.at(p) - 5);
  indexed.insert(indexed.begin(), {copy, past, over});
  auto trickle = std::make_shared<haven::testing::TrickleBackend>(mem_, 4093);
  auto streamed = haven::testing::TestRepository::Open(trickle, kPassword, 2);
  for (auto [seg, stream] : std::vector<std::pair<uint64_t, bool>>{
           {1, false}, {4096, false}, {kCheckSegment, false}, {4096, true}, {kCheckSegment, true}}) {
    PackCheckBuffers bufs;
    auto errs = CheckPackData(stream ? *streamed : *repo, p, sizes.at(p), indexed, bufs, seg, stream);
    EXPECT_EQ(errs.size(), 4u) << Join(errs);
    EXPECT_TRUE(Has(errs, "pack " + p.Hex() + ": header entries do not match the index"));
    EXPECT_TRUE(Has(errs, "blob " + copy.id.Hex() + " in pack " + p.Hex(),
                    "content does not match the blob id"))
        << Join(errs);
    EXPECT_TRUE(Has(errs, "blob " + past.id.Hex(), "lies beyond the end of the pack"));
    EXPECT_TRUE(Has(errs, "blob " + over.id.Hex(), "lies beyond the end of the pack"));
  }
}

TEST_F(CheckTest, ReadDataSubset) {
  CheckResult all = Check("1/1");
  EXPECT_TRUE(all.ok()) << Join(all.errors);
  EXPECT_EQ(all.packs_read, 2u);
  CheckResult pct = Check("100%");
  EXPECT_EQ(pct.packs_read, 2u);
  uint64_t sum = 0;
  for (int g = 1; g <= 3; ++g) sum += Check(std::to_string(g) + "/3").packs_read;
  EXPECT_EQ(sum, 2u);
  auto repo = Open();
  CheckOptions co;
  co.read_data_subset = "0/3";
  EXPECT_THROW(RunCheck(*repo, co), Error);
}

TEST(TreeNameErrors, RepeatedAndUnsafeNamesAreReported) {
  auto node = [](std::string name) {
    Node n;
    n.name = std::move(name);
    return n;
  };
  EXPECT_TRUE(TreeNameErrors({node("a"), node("b")}).empty());
  auto errs = TreeNameErrors({node("a"), node("a"), node("a"), node("b")});
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_NE(errs[0].find("repeated name \"a\""), std::string::npos) << errs[0];
  EXPECT_EQ(TreeNameErrors({node(".."), node("x/y"), node("")}).size(), 3u);
}

}  // namespace
}  // namespace haven
