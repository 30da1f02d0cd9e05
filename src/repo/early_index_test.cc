#include "repo/early_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/index_prefetch_backend.h"
#include "backend/mem_backend.h"
#include "repo/test_repository.h"

namespace haven {
namespace {

constexpr const char* kPassword = "early-index-test";

class EarlyIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = std::make_shared<MemBackend>();
    Repository::Init(*mem_, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
    first_ = Save("first blob");
  }

  // Saves a data blob in a pack and index file of its own.
  BlobId Save(const std::string& text) {
    auto w = haven::testing::TestRepository::Open(mem_, kPassword, 1);
    w->LoadIndex();
    BlobId id(Sha256(AsBytes(text)));
    w->SaveBlob(BlobType::kData, id, AsBytes(text));
    w->Flush();
    return id;
  }

  // A repository opened as a remote one is: its index files listed (and read) at open.
  std::unique_ptr<haven::testing::TestRepository> OpenWithPrefetch() {
    prefetch_ = std::make_shared<IndexPrefetchBackend>(mem_);
    EXPECT_TRUE(prefetch_->EarlierListing(FileType::kIndex).has_value());
    return haven::testing::TestRepository::Open(prefetch_, kPassword, 2);
  }

  std::shared_ptr<MemBackend> mem_;
  std::shared_ptr<IndexPrefetchBackend> prefetch_;
  BlobId first_;
};

TEST_F(EarlyIndexTest, TheSameIndexFilesUnderTheLockTakeTheEarlyIndex) {
  auto repo = OpenWithPrefetch();
  EarlyIndex early(*repo);
  IndexedRepository* loaded = early.Wait();
  ASSERT_NE(loaded, nullptr);
  auto index = EarlyIndex::LoadWith(&early, *repo);
  EXPECT_EQ(index.get(), loaded);
  EXPECT_TRUE(index->index().Has(BlobType::kData, first_));
  EXPECT_EQ(early.TakeIf(IndexedRepository::ListIndexFiles(*mem_)), nullptr);  // once
}

// An index file written between the open's listing and the lock (a backup that finished
// meanwhile): the index is loaded again from the listing made under the lock.
TEST_F(EarlyIndexTest, AnIndexFileAddedMeanwhileIsLoadedFromTheNewListing) {
  auto repo = OpenWithPrefetch();
  const BlobId second = Save("second blob");
  EarlyIndex early(*repo);
  IndexedRepository* loaded = early.Wait();
  ASSERT_NE(loaded, nullptr);
  EXPECT_FALSE(loaded->index().Has(BlobType::kData, second));
  auto index = EarlyIndex::LoadWith(&early, *repo);
  EXPECT_NE(index.get(), loaded);
  EXPECT_TRUE(index->index().Has(BlobType::kData, first_));
  EXPECT_TRUE(index->index().Has(BlobType::kData, second));
}

// An index file removed meanwhile (a prune that finished): the same.
TEST_F(EarlyIndexTest, AnIndexFileRemovedMeanwhileIsNotUsed) {
  Save("second blob");
  auto repo = OpenWithPrefetch();
  std::vector<FileInfo> files;
  mem_->List(FileType::kIndex, [&](const FileInfo& fi) { files.push_back(fi); });
  ASSERT_EQ(files.size(), 2u);
  mem_->Remove({FileType::kIndex, files[0].name});
  EarlyIndex early(*repo);
  IndexedRepository* loaded = early.Wait();
  auto index = EarlyIndex::LoadWith(&early, *repo);
  EXPECT_NE(index.get(), loaded);
  EXPECT_EQ(index->index_files().size(), 1u);
}

// Without an earlier listing (a local disk, a box) nothing is loaded early.
TEST_F(EarlyIndexTest, NoEarlierListingNoEarlyIndex) {
  auto repo = haven::testing::TestRepository::Open(mem_, kPassword, 2);
  EarlyIndex early(*repo);
  EXPECT_EQ(early.Wait(), nullptr);
  auto index = EarlyIndex::LoadWith(&early, *repo);
  ASSERT_NE(index, nullptr);
  EXPECT_TRUE(index->index().Has(BlobType::kData, first_));
}

}  // namespace
}  // namespace haven
