#include "maintenance/upgrade_repo_v2.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "backend/fault_backend.h"
#include "backend/mem_backend.h"
#include "core/error.h"

namespace haven {
namespace {

constexpr const char* kPassword = "upgrade-test";

class UpgradeRepoV2Test : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = std::make_shared<MemBackend>();
    fault_ = std::make_shared<FaultBackend>(mem_);
    Repository::Init(*mem_, kPassword, 1, crypto::ScryptParams{1024, 8, 1}, 1);
    tmp_ = std::filesystem::temp_directory_path() /
           ("upgrade-v2-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(tmp_);
  }
  void TearDown() override { std::filesystem::remove_all(tmp_); }
  size_t TmpEntries() {
    size_t n = 0;
    for (auto& e : std::filesystem::recursive_directory_iterator(tmp_)) n += e.is_regular_file();
    return n;
  }

  std::shared_ptr<MemBackend> mem_;
  std::shared_ptr<FaultBackend> fault_;
  std::filesystem::path tmp_;
};

TEST_F(UpgradeRepoV2Test, RewritesConfigKeepingIdAndPolynomial) {
  auto repo = Repository::Open(fault_, kPassword, 1);
  const RepoConfig before = repo->config();
  ASSERT_EQ(before.version, 1);
  EXPECT_TRUE(UpgradeRepoV2Applicable(*repo));
  UpgradeRepoV2(*repo, tmp_.string());
  auto again = Repository::Open(mem_, kPassword, 1);
  EXPECT_EQ(again->config().version, 2);
  EXPECT_EQ(again->config().id, before.id);
  EXPECT_EQ(again->config().chunker_polynomial, before.chunker_polynomial);
  EXPECT_FALSE(UpgradeRepoV2Applicable(*again));
  EXPECT_EQ(TmpEntries(), 0u);  // the backup copy is gone
  EXPECT_TRUE(std::filesystem::is_empty(tmp_));
}

TEST_F(UpgradeRepoV2Test, FailedSavePutsTheOldConfigBackAndKeepsACopy) {
  auto repo = Repository::Open(fault_, kPassword, 1);
  const Bytes old = mem_->Load({FileType::kConfig, "config"});
  fault_->FailNext(FaultBackend::Op::kSave, 1, false);
  try {
    UpgradeRepoV2(*repo, tmp_.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("error uploading config (save new config file failed"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("re-uploaded old config was successful, there is a backup of the config "
                       "file in " + tmp_.string()),
              std::string::npos)
        << msg;
  }
  EXPECT_EQ(mem_->Load({FileType::kConfig, "config"}), old);
  EXPECT_EQ(Repository::Open(mem_, kPassword, 1)->config().version, 1);
  EXPECT_EQ(TmpEntries(), 1u);
}

TEST_F(UpgradeRepoV2Test, BothUploadsFailing) {
  auto repo = Repository::Open(fault_, kPassword, 1);
  fault_->FailNext(FaultBackend::Op::kSave, 2, false);
  try {
    UpgradeRepoV2(*repo, tmp_.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("re-uploading old config filed failed as well"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(TmpEntries(), 1u);
}

}  // namespace
}  // namespace haven
