// IndexPrefetchBackend: index files read ahead are handed out once, equal to the stored
// ones, without a second read; skipped, over-budget, unlisted and failed files are read
// as usual; the destructor joins reads in flight.
#include "backend/index_prefetch_backend.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "backend/forwarding_backend.h"
#include "backend/mem_backend.h"
#include "backend/retry_backend.h"
#include "core/error.h"
#include "core/id.h"

namespace haven {
namespace {

// Remote-like storage over a MemBackend: counts whole-file loads of index files; the
// first load of `fail_once` throws; every load can be slowed.
class CountingBackend : public ForwardingBackend {
 public:
  explicit CountingBackend(std::shared_ptr<Backend> inner) : ForwardingBackend(std::move(inner)) {}
  bool RoundTrips() const override { return true; }
  int Connections() const override { return 3; }
  Bytes Load(const Handle& h, uint64_t offset, uint64_t length) override {
    Count(h);
    return inner_->Load(h, offset, length);
  }
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override {
    Count(h);
    inner_->LoadInto(h, offset, out);
  }
  std::atomic<int> loads{0};
  std::string fail_once;  // set before the prefetch starts; read under mu_ after
  std::chrono::milliseconds delay{0};

 private:
  void Count(const Handle& h) {
    if (h.type != FileType::kIndex) return;
    ++loads;
    std::this_thread::sleep_for(delay);
    bool fail = false;
    {
      // The prefetch reads on several threads: the first to meet `fail_once` clears it.
      std::lock_guard lock(mu_);
      fail = !fail_once.empty() && h.name == fail_once;
      if (fail) fail_once.clear();
    }
    if (fail) throw Error(ErrorCode::kIo, "load " + h.ToString() + ": connection reset", true);
  }
  std::mutex mu_;
};

class IndexPrefetchTest : public ::testing::Test {
 protected:
  // Index files of 1000, 2000, ... bytes, named by their hash.
  std::string Add(size_t n, uint8_t fill) {
    Bytes b(n, fill);
    std::string name = Sha256(b).Hex();
    mem_->Save({FileType::kIndex, name}, b);
    files_[name] = b;
    return name;
  }
  bool WaitForLoads(int n) {
    for (int i = 0; i < 500 && counting_->loads < n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return counting_->loads == n;
  }
  std::shared_ptr<MemBackend> mem_ = std::make_shared<MemBackend>();
  std::shared_ptr<CountingBackend> counting_ = std::make_shared<CountingBackend>(mem_);
  std::map<std::string, Bytes> files_;
};

TEST_F(IndexPrefetchTest, FilesAreReadAheadAndHandedOutOnce) {
  std::vector<std::string> names;
  for (uint8_t i = 1; i <= 5; ++i) names.push_back(Add(1000 * i, i));
  mem_->Save({FileType::kPack, std::string(64, 'a')}, Bytes(10, 1));
  IndexPrefetchBackend pre(counting_);
  ASSERT_TRUE(WaitForLoads(5));  // all five read before anyone asked
  for (const std::string& n : names) {
    Bytes got(files_[n].size());
    if (n == names[0]) {
      got = pre.Load({FileType::kIndex, n});
    } else {
      pre.LoadInto({FileType::kIndex, n}, 0, got);
    }
    EXPECT_EQ(got, files_[n]);
  }
  EXPECT_EQ(counting_->loads, 5);  // no second read
  EXPECT_EQ(pre.served(), 5u);
  EXPECT_EQ(pre.Load({FileType::kIndex, names[1]}), files_[names[1]]);  // handed out once
  EXPECT_EQ(counting_->loads, 6);
  EXPECT_EQ(pre.Load({FileType::kIndex, names[2]}, 10, 5), Bytes(5, 3));  // ranges: not ahead
}

TEST_F(IndexPrefetchTest, SkippedFailedAndUnlistedFilesAreReadAsUsual) {
  const std::string a = Add(4000, 1), b = Add(3000, 2), c = Add(5000, 3);
  counting_->fail_once = b;
  IndexPrefetchBackend pre(counting_, [&](const std::string& n) { return n == a; });
  ASSERT_TRUE(WaitForLoads(2));  // b (failed) and c; a is in the cache
  const std::string late = Add(100, 9);  // listed after the prefetch's listing
  for (const std::string& n : {a, b, c, late})
    EXPECT_EQ(pre.Load({FileType::kIndex, n}), files_[n]);
  EXPECT_EQ(pre.served(), 1u);  // c
  EXPECT_EQ(counting_->loads, 5);  // b twice, a and late once now
}

TEST_F(IndexPrefetchTest, FilesBeyondTheBudgetAreLeftToTheLoad) {
  const std::string b = Add(3000, 2), c = Add(5000, 3);
  IndexPrefetchBackend pre(counting_, nullptr, 3500);
  ASSERT_TRUE(WaitForLoads(1));
  EXPECT_EQ(pre.Load({FileType::kIndex, c}), files_[c]);
  EXPECT_EQ(pre.Load({FileType::kIndex, b}), files_[b]);
  EXPECT_EQ(pre.served(), 1u);  // b only
  EXPECT_EQ(counting_->loads, 2);
}

// Writes pass through untouched: over remote storage a backup still streams its packs
// through RetryBackend's spool (not built whole in memory) and commits them with SaveFrom.
TEST_F(IndexPrefetchTest, PackStreamsAndSaveFromReachTheStorage) {
  auto retry = std::make_shared<RetryBackend>(counting_);
  IndexPrefetchBackend pre(retry);
  std::unique_ptr<PackStream> stream = pre.NewPackStream();
  ASSERT_NE(stream, nullptr);
  const Bytes body(3000, 7);
  const std::string name = Sha256(body).Hex();
  SaveSource src{.size = body.size(), .read = [&](uint64_t off, std::span<uint8_t> out) {
                   std::memcpy(out.data(), body.data() + off, out.size());
                 }};
  pre.SaveFrom({FileType::kPack, name}, src);
  EXPECT_EQ(mem_->Load({FileType::kPack, name}), body);
}

TEST_F(IndexPrefetchTest, DestructorJoinsReadsInFlight) {
  for (uint8_t i = 1; i <= 6; ++i) Add(100 * i, i);
  counting_->delay = std::chrono::milliseconds(100);
  const auto start = std::chrono::steady_clock::now();
  {
    IndexPrefetchBackend pre(counting_);
    for (int i = 0; i < 200 && counting_->loads == 0; ++i)  // reads in flight
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_GT(counting_->loads, 0);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  const int loads = counting_->loads;
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(counting_->loads, loads);  // nothing runs after the destructor
}

}  // namespace
}  // namespace haven
