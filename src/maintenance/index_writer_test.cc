// WriteIndexFiles: the files it writes describe exactly the kept packs, and over storage
// with round trips they are saved as many at once as the storage has connections.
#include "maintenance/index_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "backend/forwarding_backend.h"
#include "backend/mem_backend.h"
#include "repo/test_repository.h"

namespace haven {
namespace {

// Storage with `connections` connections, with round trips or not; each index file's save is held
// until no other has started for `quiet` (so saves issued together are all in flight at
// once however late their threads run, and serial saves show a peak of 1).
class SlowIndexSaves : public ForwardingBackend {
 public:
  SlowIndexSaves(std::shared_ptr<Backend> inner, int connections, bool round_trips)
      : ForwardingBackend(std::move(inner)), connections_(connections), round_trips_(round_trips) {}
  bool RoundTrips() const override { return round_trips_; }
  int Connections() const override { return connections_; }
  void Save(const Handle& h, ByteView data) override {
    if (h.type == FileType::kIndex && hold_) {
      std::unique_lock<std::mutex> lock(mu_);
      peak_ = std::max(peak_, ++in_flight_);
      last_start_ = std::chrono::steady_clock::now();
      cv_.notify_all();
      while (std::chrono::steady_clock::now() - last_start_ < kQuiet)
        cv_.wait_until(lock, last_start_ + kQuiet);
      --in_flight_;
    }
    ForwardingBackend::Save(h, data);
  }
  void Hold(bool on) { hold_ = on; }
  int peak() {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_;
  }

 private:
  static constexpr std::chrono::milliseconds kQuiet{500};
  const int connections_;
  const bool round_trips_;
  bool hold_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  int in_flight_ = 0, peak_ = 0;
  std::chrono::steady_clock::time_point last_start_;
};

// `packs` packs of 30,000 data blobs each (no two fit one index file of at most 50,000
// blobs), pack p named by the hash of {p}.
Index PacksOf30000Blobs(uint8_t packs) {
  Index index;
  for (uint8_t p = 0; p < packs; ++p) {
    std::vector<PackedBlob> blobs(30000);
    for (uint32_t i = 0; i < blobs.size(); ++i) {
      Bytes seed = {p, static_cast<uint8_t>(i), static_cast<uint8_t>(i >> 8),
                    static_cast<uint8_t>(i >> 16)};
      blobs[i] = PackedBlob{BlobType::kData, BlobId(Sha256(seed)), i * 100, 100, 0};
    }
    index.AddPack(PackId(Sha256(Bytes{p})), blobs);
  }
  return index;
}

// A repository on SlowIndexSaves (4 connections, round trips or not) over memory.
struct SlowRepo {
  explicit SlowRepo(bool round_trips)
      : slow(std::make_shared<SlowIndexSaves>(std::make_shared<MemBackend>(), 4, round_trips)) {
    Repository::Init(*slow, "pw", 2, crypto::ScryptParams{1024, 8, 1}, 1);
    repo = haven::testing::TestRepository::Open(slow, "pw", 2);
  }
  std::shared_ptr<SlowIndexSaves> slow;
  std::unique_ptr<haven::testing::TestRepository> repo;
};

TEST(WriteIndexFiles, OverRoundTripsAsManyAtOnceAsConnections) {
  SlowRepo r(true);
  auto& slow = r.slow;
  auto& repo = r.repo;
  // Five packs, one file each; the fourth pack is not kept.
  Index index = PacksOf30000Blobs(5);
  PackTable table = PackTable::FromIndex(index);
  slow->Hold(true);
  const PackId dropped(Sha256(Bytes{3}));
  std::vector<FileId> ids =
      WriteIndexFiles(*repo, table, [&](size_t i) { return table.id(i) != dropped; }, 1);
  slow->Hold(false);
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(slow->peak(), 4);  // --jobs 1, but four connections: one round
  // The files list exactly the kept packs' blobs.
  repo->LoadIndex();
  EXPECT_EQ(repo->index().BlobCount(), 4u * 30000);
  EXPECT_FALSE(repo->index().HasPack(PackId(Sha256(Bytes{3}))));
  for (uint8_t p : {0, 1, 2, 4}) EXPECT_TRUE(repo->index().HasPack(PackId(Sha256(Bytes{p}))));
}

// A local disk: the files are written on the given threads (CPU work), not more.
TEST(WriteIndexFiles, WithoutRoundTripsTheGivenThreads) {
  SlowRepo r(false);
  auto& slow = r.slow;
  auto& repo = r.repo;
  Index index = PacksOf30000Blobs(3);
  PackTable table = PackTable::FromIndex(index);
  slow->Hold(true);
  EXPECT_EQ(WriteIndexFiles(*repo, table, [](size_t) { return true; }, 2).size(), 3u);
  slow->Hold(false);
  EXPECT_EQ(slow->peak(), 2);
  repo->LoadIndex();
  EXPECT_EQ(repo->index().BlobCount(), 3u * 30000);
}

}  // namespace
}  // namespace haven
