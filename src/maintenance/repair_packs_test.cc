#include "maintenance/repair_packs.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "backend/mem_backend.h"
#include "maintenance/check.h"
#include "repo/test_repository.h"

namespace haven {
namespace {

constexpr const char* kPassword = "repair-packs-test";

TEST(RepairPacks, SalvagesIntactBlobsAndDropsTheDamagedPack) {
  auto mem = std::make_shared<MemBackend>();
  Repository::Init(*mem, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
  std::vector<BlobId> ids;
  {
    auto w = testing::TestRepository::Open(mem, kPassword, 2);
    w->LoadIndex();
    for (int i = 0; i < 3; i++) {
      const std::string data = "blob number " + std::to_string(i);
      ids.emplace_back(Sha256(AsBytes(data)));
      w->session().SaveBlob(BlobType::kData, ids.back(), AsBytes(data));
    }
    w->Flush();
  }
  auto r = testing::TestRepository::Open(mem, kPassword, 2);
  r->LoadIndex();
  const auto loc = r->indexed().index().Lookup(BlobType::kData, ids[1]).at(0);
  // Flip a byte inside blob 1's ciphertext.
  Bytes pack = mem->Load({FileType::kPack, loc.pack.Hex()});
  pack[loc.offset + 20] ^= 0x40;
  mem->Remove({FileType::kPack, loc.pack.Hex()});
  mem->Save({FileType::kPack, loc.pack.Hex()}, pack);

  const auto dir = std::filesystem::temp_directory_path() /
                   ("repair-packs-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> warnings;
  RepairPacksOptions o;
  o.backup_dir = dir.string();
  o.warn = [&](const std::string& s) { warnings.push_back(s); };
  const auto res = RepairPacks(r->indexed(), r->session(), {loc.pack}, o);
  EXPECT_EQ(res.salvaged, 2u);
  EXPECT_EQ(res.lost, 1u);
  EXPECT_TRUE(std::filesystem::exists(dir / ("pack-" + loc.pack.Hex())));
  EXPECT_EQ(std::filesystem::file_size(dir / ("pack-" + loc.pack.Hex())), pack.size());
  std::filesystem::remove_all(dir);
  bool lost_named = false;
  for (const auto& w : warnings) lost_named |= w.find("failed to load blob " + ids[1].Hex()) == 0;
  EXPECT_TRUE(lost_named);

  EXPECT_FALSE(mem->Stat({FileType::kPack, loc.pack.Hex()}));
  auto again = testing::TestRepository::Open(mem, kPassword, 2);
  again->LoadIndex();
  EXPECT_EQ(again->indexed().LoadBlob(BlobType::kData, ids[0]),
            Bytes(AsBytes("blob number 0").begin(), AsBytes("blob number 0").end()));
  EXPECT_TRUE(again->indexed().HasBlob(BlobType::kData, ids[2]));
  EXPECT_FALSE(again->indexed().HasBlob(BlobType::kData, ids[1]));
  // The repository's structure is sound (no snapshot uses the lost blob).
  CheckOptions co;
  co.read_data = true;
  EXPECT_TRUE(RunCheck(again->opened(), co).ok());
}

}  // namespace
}  // namespace haven
