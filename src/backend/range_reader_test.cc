// CoalesceExtents (holes read through up to a limit, where ranges split) and RangeReader
// (ranges of one object loaded in parallel, handed over in order, errors to the consumer),
// StreamExtents (extents handed over as their bytes stream in) and ForEachRange.
#include "backend/range_reader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <memory>
#include <stdexcept>
#include <vector>

#include "backend/forwarding_backend.h"
#include "backend/mem_backend.h"
#include "backend/test_load_trace.h"

namespace haven {
namespace {

std::vector<ByteRange> Coalesce(const std::vector<std::pair<uint64_t, uint64_t>>& ext,
                                uint64_t hole, uint64_t span) {
  return CoalesceExtents(
      ext.size(), [&](size_t i) { return ByteRange{ext[i].first, ext[i].second}; }, hole, span);
}

TEST(CoalesceExtents, HolesUpToTheLimitAreReadThrough) {
  // 0+10, hole 5, 15+10, hole 6, 31+5, then inside it and repeated
  auto r = Coalesce({{0, 10}, {15, 10}, {31, 5}, {32, 1}, {32, 1}}, 5, 1000);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].offset, 0u);
  EXPECT_EQ(r[0].length, 25u);
  EXPECT_EQ(r[0].first, 0u);
  EXPECT_EQ(r[0].last, 2u);
  EXPECT_EQ(r[1].offset, 31u);
  EXPECT_EQ(r[1].length, 5u);
  EXPECT_EQ(r[1].first, 2u);
  EXPECT_EQ(r[1].last, 5u);
  EXPECT_TRUE(Coalesce({}, 5, 1000).empty());
}

TEST(CoalesceExtents, AnExtentStartingPastTheSpanStartsANewRange) {
  // span 100: the extent at 90 still joins (the range grows to 130), the one at 130 not.
  auto r = Coalesce({{0, 50}, {50, 40}, {90, 40}, {130, 10}}, 0, 100);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].length, 130u);
  EXPECT_EQ(r[0].last, 3u);
  EXPECT_EQ(r[1].offset, 130u);
  // The default limits: a 16 MiB pack whose last blob crosses 16 MiB is one range; 4 MiB
  // holes are read through, larger ones are not.
  auto d = CoalesceExtents(3, [](size_t i) {
    const uint64_t mib = 1 << 20;
    return std::vector<ByteRange>{{0, 15 * mib}, {15 * mib, 2 * mib}, {21 * mib + 1, 10}}[i];
  });
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].length, uint64_t{17} << 20);
}

Bytes Pattern(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; i++) b[i] = static_cast<uint8_t>(i * 7 + i / 251);
  return b;
}

TEST(RangeReader, RangesOfOneObjectLoadInParallelAndArriveInOrder) {
  auto mem = std::make_shared<MemBackend>();
  const Bytes data = Pattern(1 << 20);
  const Handle h{FileType::kPack, std::string(64, 'a')};
  mem->Save(h, data);
  auto traced = std::make_shared<testing::LoadTraceBackend>(mem, std::chrono::milliseconds(50), 4);
  traced->HoldUntilQuiet(FileType::kPack, std::chrono::milliseconds(300));
  RangeReader reader(*traced, 4, 1 << 20);
  std::vector<ByteRange> ranges;
  for (uint64_t i = 0; i < 8; i++) ranges.push_back({i * 100000, 5000 + i, 0, 0});
  std::vector<size_t> order;
  reader.Read(h, ranges, [&](size_t i, std::span<uint8_t> bytes, const Error* e) {
    ASSERT_EQ(e, nullptr);
    order.push_back(i);
    EXPECT_EQ(Bytes(bytes.begin(), bytes.end()),
              Bytes(data.begin() + ranges[i].offset, data.begin() + ranges[i].end()));
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(traced->Loads(FileType::kPack).size(), 8u);
  EXPECT_EQ(traced->PeakFor(h.name), 4);  // its I/O threads, all busy
  // A window of one range's bytes: one load at a time.
  traced->Reset();
  traced->HoldUntilQuiet(FileType::kPack, std::chrono::milliseconds(0));  // an upper bound
  RangeReader narrow(*traced, 4, 5000);
  narrow.Read(h, ranges, [&](size_t, std::span<uint8_t>, const Error*) {});
  EXPECT_EQ(traced->PeakFor(h.name), 1);
}

TEST(RangeReader, LoadErrorsGoToTheConsumerAndItsExceptionsWaitForTheLoads) {
  auto mem = std::make_shared<MemBackend>();
  const Bytes data = Pattern(10000);
  const Handle h{FileType::kPack, std::string(64, 'b')};
  mem->Save(h, data);
  RangeReader reader(*mem, 3);
  // The second range runs past the end: a short read, reported for that range only.
  std::vector<ByteRange> ranges{{0, 100, 0, 0}, {9990, 100, 0, 0}, {200, 100, 0, 0}};
  std::vector<std::string> seen;
  reader.Read(h, ranges, [&](size_t i, std::span<uint8_t> bytes, const Error* e) {
    seen.push_back(std::to_string(i) + (e ? " error" : " ok " + std::to_string(bytes.size())));
    if (e) {
      EXPECT_EQ(e->code(), ErrorCode::kCorrupt);
    }
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"0 ok 100", "1 error", "2 ok 100"}));
  // A consumer that throws: rethrown once the other loads ended (nothing writes into
  // freed buffers; ASan would see it).
  EXPECT_THROW(reader.Read(h, ranges,
                           [&](size_t, std::span<uint8_t>, const Error*) {
                             throw std::runtime_error("consumer failed");
                           }),
               std::runtime_error);
  // One range: loaded on the caller's thread, same contract.
  reader.Read(h, std::vector<ByteRange>{{10, 20, 0, 0}},
              [&](size_t i, std::span<uint8_t> bytes, const Error* e) {
                EXPECT_EQ(i, 0u);
                EXPECT_EQ(e, nullptr);
                EXPECT_EQ(Bytes(bytes.begin(), bytes.end()), Bytes(data.begin() + 10, data.begin() + 30));
              });
}

using Trickle = testing::TrickleBackend;

TEST(StreamExtents, HandsOverEachExtentWithItsBytesAsTheyArrive) {
  auto mem = std::make_shared<MemBackend>();
  const Bytes data = Pattern(5000);
  const Handle h{FileType::kPack, std::string(64, 'c')};
  mem->Save(h, data);
  // Sorted by offset: a hole before the first, repeats (same offset and length: one
  // hand-over), the same offset with another length, overlaps, a hole, an empty extent.
  const std::vector<std::pair<uint64_t, uint64_t>> ext{
      {100, 50}, {100, 50}, {100, 70}, {160, 300}, {400, 100}, {1500, 1000}, {2500, 0}, {2500, 7}};
  for (size_t piece : {1, 3, 64, 4096}) {
    Trickle t(mem, piece);
    const ByteRange r{50, 2600, 0, ext.size()};
    std::vector<std::string> seen;
    StreamExtents(
        t, h, r, [&](size_t i) { return ByteRange{ext[i].first, ext[i].second}; },
        [&](size_t first, size_t last, std::span<uint8_t> bytes) {
          seen.push_back(std::to_string(first) + "-" + std::to_string(last));
          const auto [off, len] = ext[first];
          EXPECT_EQ(bytes.size(), len);
          EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), data.begin() + static_cast<long>(off)))
              << "extent " << first << " with pieces of " << piece;
        });
    EXPECT_EQ(seen, (std::vector<std::string>{"0-2", "2-3", "3-4", "4-5", "5-6", "6-7", "7-8"}))
        << "pieces of " << piece;
  }
}

TEST(StreamExtents, ALoadErrorComesAfterTheExtentsThatArrived) {
  auto mem = std::make_shared<MemBackend>();
  const Bytes data = Pattern(3000);
  const Handle h{FileType::kPack, std::string(64, 'd')};
  mem->Save(h, data);
  const std::vector<std::pair<uint64_t, uint64_t>> ext{{0, 100}, {100, 100}, {200, 1000}, {1200, 10}};
  Trickle t(mem, 50, 500);  // fails after 500 bytes: inside the third extent
  std::vector<size_t> seen;
  size_t handed = 99;
  Error e(ErrorCode::kFatal, "none");
  try {
    StreamExtents(
        t, h, ByteRange{0, 1210, 0, ext.size()}, [&](size_t i) { return ByteRange{ext[i].first, ext[i].second}; },
        [&](size_t first, size_t, std::span<uint8_t>) { seen.push_back(first); }, &handed);
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    e = err;
  }
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(handed, 2u);
  // What the consumer throws ends the read, unchanged.
  Trickle ok(mem, 50);
  EXPECT_THROW(StreamExtents(
                   ok, h, ByteRange{0, 1210, 0, ext.size()},
                   [&](size_t i) { return ByteRange{ext[i].first, ext[i].second}; },
                   [&](size_t, size_t, std::span<uint8_t>) { throw std::runtime_error("stop"); }),
               std::runtime_error);
  // A backend that ends the stream early (against LoadStream's contract) is an error, not
  // extents silently missing.
  class Short : public ForwardingBackend {
   public:
    using ForwardingBackend::ForwardingBackend;
    void LoadStream(const Handle& hh, uint64_t offset, uint64_t, const std::function<void(ByteView)>& sink) override {
      sink(inner_->Load(hh, offset, 150));
    }
  } short_be(mem);
  seen.clear();
  Error e2 = [&] {
    try {
      StreamExtents(
          short_be, h, ByteRange{0, 1210, 0, ext.size()},
          [&](size_t i) { return ByteRange{ext[i].first, ext[i].second}; },
          [&](size_t first, size_t, std::span<uint8_t>) { seen.push_back(first); });
    } catch (const Error& err) {
      return err;
    }
    return Error(ErrorCode::kFatal, "none");
  }();
  EXPECT_EQ(e2.code(), ErrorCode::kCorrupt);
  EXPECT_EQ(seen, (std::vector<size_t>{0}));
}

TEST(RangeReader, ForEachRangeRunsTheRangesAtOnceAndWaitsForAll) {
  auto mem = std::make_shared<MemBackend>();
  RangeReader reader(*mem, 3);
  std::atomic<int> running{0}, peak{0};
  std::vector<int> done(4, 0);
  reader.ForEachRange(4, [&](size_t i) {
    int now = ++running;
    for (int p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    done[i] = 1;
    --running;
  });
  EXPECT_EQ(done, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(peak.load(), 4);  // the caller's thread and the three I/O threads
  // The first exception comes out after every range ended.
  std::atomic<int> ended{0};
  EXPECT_THROW(reader.ForEachRange(3,
                                   [&](size_t i) {
                                     if (i == 0) throw std::runtime_error("first");
                                     std::this_thread::sleep_for(std::chrono::milliseconds(50));
                                     ++ended;
                                   }),
               std::runtime_error);
  EXPECT_EQ(ended.load(), 2);
}

}  // namespace
}  // namespace haven
