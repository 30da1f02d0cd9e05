// WritebackPacer: a file being written is written back by the kernel before any fsync (its
// dirty pages drain, seen through cachestat(2) where the kernel has it); a file created
// after the pacer started is paced too, a missing one is no error; the destructor stops
// the thread at once, not after its period.
#include "backend/writeback_pacer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/fd.h"

namespace haven {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A folder on the disk the tests run on (the build folder: /tmp may be a tmpfs, whose
// pages are never written back).
class PacerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::current_path() / "pacer-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(t.data()), nullptr) << strerror(errno);
    dir_ = t;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

void WriteMiB(int fd, int mib) {
  std::vector<char> buf(1 << 20, 'x');
  for (int i = 0; i < mib; ++i) ASSERT_EQ(write(fd, buf.data(), buf.size()), ssize_t(buf.size()));
}

// Dirty pages of the file (cachestat, Linux >= 6.5); nullopt without the syscall.
std::optional<uint64_t> DirtyPages(int fd) {
#ifdef SYS_cachestat
  const long nr = SYS_cachestat;
#else
  const long nr = 451;  // x86_64, arm64 and most others since Linux 6.5
#endif
  struct {
    uint64_t off, len;
  } range{0, 0};
  struct {
    uint64_t cache, dirty, writeback, evicted, recently_evicted;
  } cs{};
  if (syscall(nr, fd, &range, &cs, 0) != 0) return std::nullopt;
  return cs.dirty + cs.writeback;
}

TEST_F(PacerTest, APacedFileIsWrittenBackBeforeAnyFsync) {
  const std::string path = (dir_ / "wal").string();
  Fd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(fd.valid());
  WritebackPacer pacer({path}, milliseconds(10));
  WriteMiB(fd.get(), 16);
  for (int i = 0; i < 500 && pacer.requests() < 3; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_GE(pacer.requests(), 3u);
  struct statfs sf {};
  ASSERT_EQ(fstatfs(fd.get(), &sf), 0);
  std::optional<uint64_t> dirty = DirtyPages(fd.get());
  if (!dirty || sf.f_type == 0x01021994 /* tmpfs */) {
    std::printf("note: cachestat(2) or a disk-backed folder missing: write-back not observed\n");
    return;
  }
  // The kernel by itself writes a dirty page back after 30 s (dirty_expire_centisecs) or
  // under memory pressure: within 5 s only the pacer empties the file's dirty pages.
  for (int i = 0; i < 500 && (dirty = DirtyPages(fd.get())) && *dirty > 0; ++i)
    std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(dirty.value_or(0), 0u);
}

TEST_F(PacerTest, FilesMadeLaterArePacedAndMissingOnesAreNoError) {
  const std::string later = (dir_ / "later").string();
  WritebackPacer pacer({(dir_ / "never").string(), later}, milliseconds(5));
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_EQ(pacer.requests(), 0u);  // neither file exists
  Fd fd(open(later.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(fd.valid());
  WriteMiB(fd.get(), 1);
  for (int i = 0; i < 500 && pacer.requests() == 0; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_GT(pacer.requests(), 0u);
}

TEST_F(PacerTest, DestructorDoesNotWaitForThePeriod) {
  const auto start = std::chrono::steady_clock::now();
  {
    WritebackPacer pacer({(dir_ / "f").string()}, std::chrono::hours(1));
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace haven
