#include "maintenance/check_head_start.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backend/index_prefetch_backend.h"
#include "backend/mem_backend.h"
#include "maintenance/check.h"
#include "repo/test_repository.h"

namespace haven {
namespace {

constexpr const char* kPassword = "head-start-test";

Bytes Blob(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng() % 7);  // compressible
  return b;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

// A repository of four packs (three data, one tree). Each test changes it after the
// listing a check's open makes (IndexPrefetchBackend's), as a concurrent writer or damage
// would before the lock's listings, and compares the check with a head start to one
// without: the same problems, in the same order.
class CheckHeadStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = std::make_shared<MemBackend>();
    Repository::Init(*mem_, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
    auto repo = haven::testing::TestRepository::Open(mem_, kPassword, 1);
    repo->LoadIndex();
    for (int p = 0; p < 3; ++p) {
      for (int i = 0; i < 5; ++i) Save(*repo, 10 * p + i);
      repo->Flush();
    }
    std::string tree = R"({"nodes":[]})" "\n";
    repo->SaveBlob(BlobType::kTree, BlobId(Sha256(AsBytes(tree))), AsBytes(tree));
    repo->Flush();
  }

  static void Save(WriteSession& repo, uint64_t seed) {
    Bytes b = Blob(seed, 20000 + 1000 * seed);
    repo.SaveBlob(BlobType::kData, BlobId(Sha256(b)), b);
  }

  // `change` runs after the early listing, `wait` says whether the early reads finish
  // before the check begins (else they race with it).
  CheckResult WithHeadStart(const std::function<void()>& change, bool wait, size_t* kept) {
    auto prefetch = std::make_shared<IndexPrefetchBackend>(
        mem_, std::vector<IndexPrefetchBackend::Kind>{{FileType::kIndex, nullptr},
                                                      {FileType::kSnapshot, nullptr}});
    EXPECT_TRUE(prefetch->EarlierListing(FileType::kIndex).has_value());
    change();
    auto repo = haven::testing::TestRepository::Open(prefetch, kPassword, 2);
    CheckHeadStart head_start(*repo, true, 2);
    if (wait) head_start.WaitForEarlyReadsForTesting();
    CheckOptions co;
    co.read_data = true;
    co.jobs = 2;
    co.locked_exclusively = true;
    co.head_start = &head_start;
    CheckResult r = RunCheck(*repo, co);
    *kept = head_start.kept();
    return r;
  }

  CheckResult Plain() {
    auto repo = haven::testing::TestRepository::Open(mem_, kPassword, 2);
    CheckOptions co;
    co.read_data = true;
    co.jobs = 2;
    co.locked_exclusively = true;
    return RunCheck(*repo, co);
  }

  void ExpectSame(const CheckResult& a, const CheckResult& b) {
    EXPECT_EQ(a.errors, b.errors) << "with:\n" << Join(a.errors) << "without:\n" << Join(b.errors);
    EXPECT_EQ(a.hints, b.hints);
    EXPECT_EQ(a.packs_read, b.packs_read);
  }

  std::vector<FileInfo> Listed(FileType t) {
    std::vector<FileInfo> out;
    mem_->List(t, [&](const FileInfo& fi) { out.push_back(fi); });
    return out;
  }

  std::shared_ptr<MemBackend> mem_;
};

TEST_F(CheckHeadStartTest, UnchangedRepositoryKeepsEveryEarlyRead) {
  for (bool wait : {true, false}) {
    size_t kept = 0;
    CheckResult r = WithHeadStart([] {}, wait, &kept);
    EXPECT_TRUE(r.ok()) << Join(r.errors);
    EXPECT_EQ(r.packs_read, 4u);
    if (wait) {
      EXPECT_EQ(kept, 4u);
    }
    ExpectSame(r, Plain());
  }
}

// A backup finished between the open's listing and the lock: a new pack and index file.
// The early index is not the index: everything is done again from the new listings.
TEST_F(CheckHeadStartTest, AnIndexFileAddedMeanwhileDropsTheHeadStart) {
  size_t kept = 9;
  CheckResult r = WithHeadStart(
      [&] {
        auto w = haven::testing::TestRepository::Open(mem_, kPassword, 1);
        w->LoadIndex();
        Save(*w, 99);
        w->Flush();
      },
      true, &kept);
  EXPECT_TRUE(r.ok()) << Join(r.errors);
  EXPECT_EQ(r.packs_read, 5u);
  EXPECT_EQ(kept, 0u);
  ExpectSame(r, Plain());
}

// A pack cut short or removed after the open's listing (the index unchanged): the early
// read of the first was made at the size the index implies and is read again at the
// listed one; the second is not read at all. Same problems as without a head start.
TEST_F(CheckHeadStartTest, PacksCutOrRemovedMeanwhileAreCheckedAsListedNow) {
  std::vector<FileInfo> packs = Listed(FileType::kPack);
  ASSERT_EQ(packs.size(), 4u);
  for (bool wait : {true, false}) {
    SetUp();
    packs = Listed(FileType::kPack);
    size_t kept = 0;
    CheckResult r = WithHeadStart(
        [&] {
          Handle cut{FileType::kPack, packs[0].name};
          Bytes b = mem_->Load(cut);
          b.resize(b.size() - 10);
          mem_->Remove(cut);
          mem_->Save(cut, b);
          mem_->Remove({FileType::kPack, packs[1].name});
        },
        wait, &kept);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.packs_read, 3u);
    if (wait) {
      EXPECT_EQ(kept, 2u);  // the two packs left as they were
    }
    ExpectSame(r, Plain());
  }
}

}  // namespace
}  // namespace haven
