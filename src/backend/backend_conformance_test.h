// The conformance suite every Backend must pass (backend.h's contract), as a typed,
// parameterized gtest suite. A backend's test file defines an environment struct per
// backend (a `kName`, a `backend` member that is a fresh, Create()d, empty location) and
// instantiates the suite:
//
//   using Envs = ::testing::Types<LocalEnv, MemEnv>;
//   INSTANTIATE_TYPED_TEST_SUITE_P(Base, BackendConformanceTest, Envs, EnvNames);
//
// Remote backends (S3, REST, SFTP, box) instantiate it in their own test files against a
// server the test setup started; a missing server is a failure, never a skip.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "core/error.h"
#include "core/id.h"

namespace haven {
namespace conformance {

// ---------------------------------------------------------------------------------------
// Helpers

inline Bytes TestBytes(size_t n, uint32_t seed) {
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

// A valid object name; `prefix` (lowercase hex) replaces its first characters.
inline std::string TestName(int i, const std::string& prefix = "") {
  std::string hex = Sha256(AsBytes("name " + std::to_string(i))).Hex();
  return prefix + hex.substr(prefix.size());
}

// A content-addressed handle for data, as the repository layer would make it.
inline Handle HandleFor(FileType t, ByteView data) { return Handle{t, Sha256(data).Hex()}; }

// Runs f and returns the haven::Error it throws; records a failure if it throws none.
template <typename F>
Error CatchError(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a haven::Error";
  return Error(ErrorCode::kFatal, "<no error thrown>");
}

inline std::map<std::string, uint64_t> ListAll(Backend& be, FileType t) {
  std::map<std::string, uint64_t> out;
  be.List(t, [&](const FileInfo& fi) {
    EXPECT_TRUE(out.emplace(fi.name, fi.size).second) << "listed twice: " << fi.name;
  });
  return out;
}

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}


struct EnvNames {
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

template <typename Env>
class BackendConformanceTest : public ::testing::Test {
 protected:
  Backend& be() { return env_.backend; }
  Env env_;
};

TYPED_TEST_SUITE_P(BackendConformanceTest);

// Whether Remove of a missing object throws kNotFound: true unless the environment sets
// `static constexpr bool kRemoveOfMissingSucceeds = true` (S3, whose DELETE cannot tell).
template <typename Env>
constexpr bool RemoveReportsMissing() {
  if constexpr (requires { Env::kRemoveOfMissingSucceeds; }) return !Env::kRemoveOfMissingSucceeds;
  return true;
}


constexpr FileType kObjectTypes[] = {FileType::kKey, FileType::kLock, FileType::kSnapshot,
                                     FileType::kIndex, FileType::kPack};

TYPED_TEST_P(BackendConformanceTest, ExistsFollowsConfigAndCreateRefusesExisting) {
  Backend& be = this->be();
  EXPECT_FALSE(be.Exists());
  be.Save(Handle{FileType::kConfig, "config"}, AsBytes("cfg"));
  EXPECT_TRUE(be.Exists());
  EXPECT_EQ(CatchError([&] { be.Create(); }).code(), ErrorCode::kFatal);
  // "" and "config" name the same config object.
  EXPECT_EQ(AsChars(be.Load(Handle{FileType::kConfig, ""})), "cfg");
  EXPECT_EQ(be.Stat(Handle{FileType::kConfig, ""}), 3u);
}

TYPED_TEST_P(BackendConformanceTest, SaveLoadStatEveryType) {
  Backend& be = this->be();
  uint32_t seed = 1;
  for (FileType t : kObjectTypes) {
    Bytes data = TestBytes(1000 + seed, seed);
    Handle h = HandleFor(t, data);
    EXPECT_EQ(be.Stat(h), std::nullopt);
    be.Save(h, data);
    EXPECT_EQ(be.Load(h), data) << h.ToString();
    EXPECT_EQ(be.Stat(h), data.size());
    ++seed;
  }
}

TYPED_TEST_P(BackendConformanceTest, RangeLoads) {
  Backend& be = this->be();
  Bytes data = TestBytes(1000, 7);
  Handle h = HandleFor(FileType::kPack, data);
  be.Save(h, data);
  auto slice = [&](size_t off, size_t len) {
    return Bytes(data.begin() + off, data.begin() + off + len);
  };
  EXPECT_EQ(be.Load(h, 0, 0), data);
  EXPECT_EQ(be.Load(h, 10, 20), slice(10, 20));
  EXPECT_EQ(be.Load(h, 0, 1000), data);
  EXPECT_EQ(be.Load(h, 999, 1), slice(999, 1));
  EXPECT_EQ(be.Load(h, 990, 0), slice(990, 10));
  EXPECT_TRUE(be.Load(h, 1000, 0).empty());
}

TYPED_TEST_P(BackendConformanceTest, LoadPastEndIsCorruptAndNamesTheObject) {
  Backend& be = this->be();
  Bytes data = TestBytes(1000, 8);
  Handle h = HandleFor(FileType::kIndex, data);
  be.Save(h, data);
  for (auto [off, len] : std::vector<std::pair<uint64_t, uint64_t>>{
           {990, 20}, {0, 1001}, {1001, 0}, {1000, 1}, {UINT64_MAX, 2}, {2, UINT64_MAX}}) {
    Error e = CatchError([&] { be.Load(h, off, len); });
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << off << "+" << len;
    EXPECT_TRUE(Contains(e.what(), h.name)) << e.what();
  }
}

TYPED_TEST_P(BackendConformanceTest, LoadIntoFillsCallerMemoryWithTheRange) {
  Backend& be = this->be();
  Bytes data = TestBytes(1000, 9);
  Handle h = HandleFor(FileType::kPack, data);
  be.Save(h, data);
  Bytes buf(1200, 0xEE);
  for (auto [off, len] : std::vector<std::pair<uint64_t, size_t>>{
           {0, 1000}, {10, 20}, {999, 1}, {500, 500}, {1000, 0}}) {
    std::fill(buf.begin(), buf.end(), 0xEE);
    be.LoadInto(h, off, std::span<uint8_t>(buf.data() + 7, len));
    EXPECT_TRUE(std::equal(buf.begin() + 7, buf.begin() + 7 + static_cast<long>(len),
                           data.begin() + static_cast<long>(off)))
        << off << "+" << len;
    // Nothing outside the span is written.
    EXPECT_TRUE(std::all_of(buf.begin(), buf.begin() + 7, [](uint8_t b) { return b == 0xEE; }));
    EXPECT_TRUE(std::all_of(buf.begin() + 7 + static_cast<long>(len), buf.end(),
                            [](uint8_t b) { return b == 0xEE; }));
  }
  for (auto [off, len] : std::vector<std::pair<uint64_t, size_t>>{
           {990, 20}, {0, 1001}, {1001, 1}, {UINT64_MAX, 2}}) {
    Error e = CatchError([&] { be.LoadInto(h, off, std::span<uint8_t>(buf.data(), len)); });
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << off << "+" << len;
    EXPECT_TRUE(Contains(e.what(), h.name)) << e.what();
  }
  Handle missing{FileType::kPack, TestName(4)};
  Error e = CatchError([&] { be.LoadInto(missing, 0, std::span<uint8_t>(buf.data(), 10)); });
  EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  EXPECT_TRUE(Contains(e.what(), missing.name)) << e.what();
}

TYPED_TEST_P(BackendConformanceTest, LoadStreamDeliversTheRangeInOrder) {
  Backend& be = this->be();
  Bytes data = TestBytes(3 << 20, 11);  // larger than one piece of a streamed reply
  Handle h = HandleFor(FileType::kPack, data);
  be.Save(h, data);
  for (auto [off, len] : std::vector<std::pair<uint64_t, uint64_t>>{
           {0, data.size()}, {10, 20}, {data.size() - 1, 1}, {1 << 20, 2 << 20}}) {
    Bytes got;
    be.LoadStream(h, off, len, [&](ByteView p) { got.insert(got.end(), p.begin(), p.end()); });
    EXPECT_TRUE(got == Bytes(data.begin() + static_cast<long>(off),
                             data.begin() + static_cast<long>(off + len)))
        << off << "+" << len << ": got " << got.size() << " bytes";
  }
  // Past the end: kCorrupt naming the object, after at most the bytes that exist.
  for (auto [off, len] : std::vector<std::pair<uint64_t, uint64_t>>{
           {data.size() - 10, 20}, {0, data.size() + 1}, {data.size() + 1, 1}, {UINT64_MAX, 2}}) {
    Bytes got;
    Error e = CatchError([&] {
      be.LoadStream(h, off, len, [&](ByteView p) { got.insert(got.end(), p.begin(), p.end()); });
    });
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << off << "+" << len;
    EXPECT_TRUE(Contains(e.what(), h.name)) << e.what();
    EXPECT_LT(got.size(), len);
    for (size_t i = 0; i < got.size() && off < data.size() && i < data.size() - off; i++)
      ASSERT_EQ(got[i], data[off + i]) << "byte " << i << " of " << off << "+" << len;
  }
  // What the sink throws comes out unchanged.
  struct Stop {};
  EXPECT_THROW(be.LoadStream(h, 0, data.size(), [](ByteView) { throw Stop{}; }), Stop);
  Handle missing{FileType::kPack, TestName(5)};
  Error e = CatchError([&] { be.LoadStream(missing, 0, 10, [](ByteView) {}); });
  EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  EXPECT_TRUE(Contains(e.what(), missing.name)) << e.what();
}

TYPED_TEST_P(BackendConformanceTest, MissingObjects) {
  Backend& be = this->be();
  Handle h{FileType::kSnapshot, TestName(1)};
  EXPECT_EQ(CatchError([&] { be.Load(h); }).code(), ErrorCode::kNotFound);
  EXPECT_EQ(be.Stat(h), std::nullopt);
  if constexpr (RemoveReportsMissing<TypeParam>()) {
    EXPECT_EQ(CatchError([&] { be.Remove(h); }).code(), ErrorCode::kNotFound);
  } else {
    be.Remove(h);  // succeeds, and creates nothing
    EXPECT_EQ(be.Stat(h), std::nullopt);
  }
  Error e = CatchError([&] { be.Load(Handle{FileType::kPack, TestName(2)}); });
  EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  EXPECT_TRUE(Contains(e.what(), TestName(2))) << e.what();
}

TYPED_TEST_P(BackendConformanceTest, EmptyObject) {
  Backend& be = this->be();
  Handle h{FileType::kLock, TestName(3)};
  be.Save(h, {});
  EXPECT_EQ(be.Stat(h), 0u);
  EXPECT_TRUE(be.Load(h).empty());
  EXPECT_EQ(ListAll(be, FileType::kLock), (std::map<std::string, uint64_t>{{h.name, 0}}));
}

TYPED_TEST_P(BackendConformanceTest, ListReturnsEachTypeSeparately) {
  Backend& be = this->be();
  std::map<FileType, std::map<std::string, uint64_t>> want;
  uint32_t seed = 100;
  for (FileType t : kObjectTypes) {
    int n = t == FileType::kPack ? 20 : t == FileType::kLock ? 0 : 3;
    for (int i = 0; i < n; ++i) {
      Bytes data = TestBytes(seed % 50, seed);
      Handle h = HandleFor(t, data);
      be.Save(h, data);
      want[t][h.name] = data.size();
      ++seed;
    }
  }
  for (FileType t : kObjectTypes) EXPECT_EQ(ListAll(be, t), want[t]) << FileTypeName(t);
}

TYPED_TEST_P(BackendConformanceTest, RemoveDeletes) {
  Backend& be = this->be();
  Bytes data = TestBytes(10, 9);
  Handle h = HandleFor(FileType::kPack, data);
  be.Save(h, data);
  be.Remove(h);
  EXPECT_EQ(be.Stat(h), std::nullopt);
  EXPECT_EQ(CatchError([&] { be.Load(h); }).code(), ErrorCode::kNotFound);
  EXPECT_TRUE(ListAll(be, FileType::kPack).empty());
  be.Save(h, data);  // the name can be used again after removal
  EXPECT_EQ(be.Load(h), data);
}

TYPED_TEST_P(BackendConformanceTest, ResaveWithSameSizeIsAcceptedDifferentSizeRejected) {
  Backend& be = this->be();
  Bytes data = TestBytes(100, 10);
  Handle h = HandleFor(FileType::kPack, data);
  be.Save(h, data);
  be.Save(h, data);                // a retried upload
  be.Save(h, TestBytes(100, 11));  // same size: accepted, first content kept
  EXPECT_EQ(be.Load(h), data);

  Error e = CatchError([&] { be.Save(h, TestBytes(101, 10)); });
  EXPECT_EQ(e.code(), ErrorCode::kFatal);
  EXPECT_FALSE(e.retryable());
  EXPECT_TRUE(Contains(e.what(), h.name)) << e.what();
  EXPECT_EQ(be.Load(h), data);
  EXPECT_EQ(ListAll(be, FileType::kPack).size(), 1u);
}

// SaveFrom (a pack spooled to a temp file): the bytes read from the source are stored with
// Save's guarantees; the source is never asked for bytes outside [0, size); a read that
// fails part way fails the save with that very error and stores nothing.
TYPED_TEST_P(BackendConformanceTest, SaveFromStoresTheSourceAndKeepsSavesGuarantees) {
  Backend& be = this->be();
  const Bytes data = TestBytes(3 << 20, 12);
  const Handle h = HandleFor(FileType::kPack, data);
  std::atomic<bool> out_of_range{false};
  SaveSource src{.size = data.size(), .read = [&](uint64_t offset, std::span<uint8_t> out) {
                   if (offset > data.size() || out.size() > data.size() - offset) {
                     out_of_range = true;
                     throw Error(ErrorCode::kFatal, "read out of range");
                   }
                   std::copy_n(data.begin() + static_cast<ptrdiff_t>(offset), out.size(), out.begin());
                 }};
  be.SaveFrom(h, src);
  EXPECT_FALSE(out_of_range);
  EXPECT_EQ(be.Stat(h), data.size());
  EXPECT_EQ(be.Load(h), data);
  be.SaveFrom(h, src);  // a retried upload
  SaveSource longer{.size = data.size() + 1, .read = [](uint64_t, std::span<uint8_t> out) {
                      std::fill(out.begin(), out.end(), uint8_t{1});
                    }};
  // (S3 signs a pack's name as its payload hash, so there the server may refuse these
  // bytes before it looks at the name: either way an error that is not retried.)
  Error e = CatchError([&] { be.SaveFrom(h, longer); });
  EXPECT_FALSE(e.retryable()) << e.what();
  EXPECT_TRUE(Contains(e.what(), h.name)) << e.what();
  EXPECT_EQ(be.Load(h), data);

  const Bytes other = TestBytes(1 << 20, 13);
  const Handle broken = HandleFor(FileType::kPack, other);
  SaveSource failing{.size = other.size(), .read = [&](uint64_t offset, std::span<uint8_t> out) {
                       if (offset + out.size() > other.size() / 2)
                         throw Error(ErrorCode::kCorrupt, "the spool file went bad");
                       std::copy_n(other.begin() + static_cast<ptrdiff_t>(offset), out.size(), out.begin());
                     }};
  e = CatchError([&] { be.SaveFrom(broken, failing); });
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_TRUE(Contains(e.what(), "the spool file went bad")) << e.what();
  EXPECT_EQ(be.Stat(broken), std::nullopt);
  EXPECT_EQ(ListAll(be, FileType::kPack).size(), 1u);
}

TYPED_TEST_P(BackendConformanceTest, InvalidNamesAreRejected) {
  Backend& be = this->be();
  const std::string valid = TestName(4);
  std::string upper = valid;
  upper[0] = 'A';
  upper[1] = 'B';
  for (const std::string& bad :
       {std::string("../../etc/passwd"), std::string(""), upper, valid.substr(1), valid + "0",
        std::string("config"), valid.substr(0, 60) + "-tmp"}) {
    Handle h{FileType::kSnapshot, bad};
    EXPECT_EQ(CatchError([&] { be.Save(h, AsBytes("x")); }).code(), ErrorCode::kInvalidArgument)
        << bad;
    EXPECT_EQ(CatchError([&] { be.Load(h); }).code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_EQ(CatchError([&] { be.Stat(h); }).code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_EQ(CatchError([&] { be.Remove(h); }).code(), ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(CatchError([&] {
              be.Save(Handle{FileType::kConfig, valid}, AsBytes("x"));
            }).code(),
            ErrorCode::kInvalidArgument);
}

TYPED_TEST_P(BackendConformanceTest, ListCallbackMayRemoveAndMayThrow) {
  Backend& be = this->be();
  for (int i = 0; i < 10; ++i) be.Save(Handle{FileType::kPack, TestName(i)}, TestBytes(5, i));
  int calls = 0;
  EXPECT_THROW(be.List(FileType::kPack,
                       [&](const FileInfo&) {
                         ++calls;
                         throw std::runtime_error("stop");
                       }),
               std::runtime_error);
  EXPECT_EQ(calls, 1);
  be.List(FileType::kPack, [&](const FileInfo& fi) {
    be.Remove(Handle{FileType::kPack, fi.name});
  });
  EXPECT_TRUE(ListAll(be, FileType::kPack).empty());
}

TYPED_TEST_P(BackendConformanceTest, ConcurrentSavesAndLoads) {
  Backend& be = this->be();
  constexpr int kThreads = 8;
  constexpr int kObjects = 200;
  constexpr int kShared = 10;  // saved by every thread at once: same name, same bytes
  std::vector<Bytes> data(kObjects + kShared);
  std::vector<Handle> handles;
  for (int i = 0; i < kObjects + kShared; ++i) {
    data[i] = TestBytes(1000 + 37 * i, 1000 + i);
    handles.push_back(HandleFor(i % 2 ? FileType::kPack : FileType::kIndex, data[i]));
  }
  std::atomic<int> failures{0};
  std::mutex mu;
  std::string first_failure;
  auto worker = [&](int tid) {
    try {
      for (int i = tid; i < kObjects; i += kThreads) {
        be.Save(handles[i], data[i]);
        if (be.Load(handles[i]) != data[i]) throw std::runtime_error("own object differs");
      }
      for (int i = kObjects; i < kObjects + kShared; ++i) be.Save(handles[i], data[i]);
      for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < kObjects; ++i) {
          int k = (i + tid * 25) % kObjects;
          auto size = be.Stat(handles[k]);
          if (!size) continue;  // not saved yet by its thread
          if (*size != data[k].size()) throw std::runtime_error("stat size differs");
          if (be.Load(handles[k], 5, 100) != Bytes(data[k].begin() + 5, data[k].begin() + 105)) {
            throw std::runtime_error("range differs");
          }
        }
      }
    } catch (const std::exception& e) {
      std::lock_guard lock(mu);
      if (failures.fetch_add(1) == 0) first_failure = e.what();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();
  ASSERT_EQ(failures.load(), 0) << first_failure;
  auto packs = ListAll(be, FileType::kPack);
  auto indexes = ListAll(be, FileType::kIndex);
  EXPECT_EQ(packs.size() + indexes.size(), size_t{kObjects + kShared});
  for (int i = 0; i < kObjects + kShared; ++i) EXPECT_EQ(be.Load(handles[i]), data[i]);
}

REGISTER_TYPED_TEST_SUITE_P(BackendConformanceTest,
                            ExistsFollowsConfigAndCreateRefusesExisting,
                            SaveLoadStatEveryType,
                            RangeLoads,
                            LoadPastEndIsCorruptAndNamesTheObject,
                            LoadIntoFillsCallerMemoryWithTheRange,
                            LoadStreamDeliversTheRangeInOrder,
                            MissingObjects,
                            EmptyObject,
                            ListReturnsEachTypeSeparately,
                            RemoveDeletes,
                            ResaveWithSameSizeIsAcceptedDifferentSizeRejected,
                            SaveFromStoresTheSourceAndKeepsSavesGuarantees,
                            InvalidNamesAreRejected,
                            ListCallbackMayRemoveAndMayThrow,
                            ConcurrentSavesAndLoads);

}  // namespace conformance
}  // namespace haven
