// SftpBackend against OpenSSH's sftp-server started directly through the command option
// (no sshd): the conformance suite, the layout, temp files and missing folders, and what
// happens when the command fails, dies mid-session or sends garbage. Location parsing and
// the ssh command line.
#include "backend/sftp_backend.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include "backend/backend_conformance_test.h"
#include "backend/sftp_location.h"
#include "core/error.h"

namespace haven {
namespace {

namespace fs = std::filesystem;
using namespace conformance;  // NOLINT: the suite's helpers are used throughout

constexpr const char* kSftpServer = "/usr/lib/openssh/sftp-server";

std::string MakeTempDir() {
  std::string tmpl = ::testing::TempDir() + "haven_sftp_XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
  return tmpl;
}

SftpLocation LocalLocation(const std::string& path) {
  return ParseSftpLocation("sftp:localhost:" + path);
}

std::unique_ptr<SftpBackend> Open(const std::string& path, const std::string& command = kSftpServer) {
  return std::make_unique<SftpBackend>(LocalLocation(path), SftpOptions{.command = command});
}

struct SftpEnv {
  static constexpr const char* kName = "Sftp";
  SftpEnv() : dir(MakeTempDir()), owned(Open(dir + "/repo")), backend(*owned) { backend.Create(); }
  ~SftpEnv() {
    owned.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string dir;
  std::unique_ptr<SftpBackend> owned;
  SftpBackend& backend;
};

using Envs = ::testing::Types<SftpEnv>;
INSTANTIATE_TYPED_TEST_SUITE_P(Sftp, BackendConformanceTest, Envs, EnvNames);

std::vector<std::string> TempFiles(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().filename().string().find("-tmp-") != std::string::npos) out.push_back(e.path());
  }
  return out;
}

TEST(SftpBackend, WritesResticsLayoutWithoutTempLeftovers) {
  SftpEnv env;
  const std::string root = env.dir + "/repo";
  EXPECT_TRUE(fs::is_directory(root + "/data/00"));
  EXPECT_TRUE(fs::is_directory(root + "/data/ff"));
  for (const char* d : {"keys", "locks", "snapshots", "index"}) EXPECT_TRUE(fs::is_directory(root + "/" + d));
  Bytes big = TestBytes(3 * 1024 * 1024 + 17, 5);  // many pipelined WRITEs and READs
  Handle h = HandleFor(FileType::kPack, big);
  env.backend.Save(h, big);
  EXPECT_TRUE(fs::exists(root + "/data/" + h.name.substr(0, 2) + "/" + h.name));
  EXPECT_EQ(env.backend.Load(h), big);
  EXPECT_EQ(env.backend.Load(h, 1000000, 2000000), Bytes(big.begin() + 1000000, big.begin() + 3000000));
  env.backend.Save(Handle{FileType::kConfig, "config"}, AsBytes("c"));
  EXPECT_TRUE(fs::exists(root + "/config"));
  EXPECT_TRUE(TempFiles(root).empty());
}

TEST(SftpBackend, MissingDataSubfolderIsFineOtherMissingFoldersThrow) {
  SftpEnv env;
  const std::string root = env.dir + "/repo";
  Bytes data = TestBytes(100, 1);
  Handle h = HandleFor(FileType::kPack, data);
  fs::remove(root + "/data/" + h.name.substr(0, 2));
  EXPECT_TRUE(ListAll(env.backend, FileType::kPack).empty());
  env.backend.Save(h, data);  // recreates data/XX
  EXPECT_EQ(ListAll(env.backend, FileType::kPack).size(), 1u);
  fs::remove(root + "/locks");
  EXPECT_TRUE(ListAll(env.backend, FileType::kLock).empty());
  fs::remove(root + "/index");
  Error e = CatchError([&] { ListAll(env.backend, FileType::kIndex); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(Contains(e.what(), "index")) << e.what();
  // A missing index folder is damage: Save does not quietly recreate it.
  EXPECT_EQ(CatchError([&] { env.backend.Save(HandleFor(FileType::kIndex, data), data); }).code(), ErrorCode::kIo);
}

TEST(SftpBackend, RemovesOnlyStaleTempFiles) {
  SftpEnv env;
  const std::string root = env.dir + "/repo";
  const std::string old_tmp = root + "/data/ab/" + TestName(1, "ab") + "-tmp-0123456789abcdef";
  const std::string new_tmp = root + "/index/" + TestName(2) + "-tmp-0123456789abcdef";
  std::ofstream(old_tmp) << "x";
  std::ofstream(new_tmp) << "y";
  fs::last_write_time(old_tmp, fs::last_write_time(old_tmp) - std::chrono::hours(2));
  EXPECT_TRUE(ListAll(env.backend, FileType::kPack).empty());  // temp files are never listed
  EXPECT_EQ(env.backend.CountStaleTempFiles(3600), 1u);
  EXPECT_EQ(env.backend.CountStaleTempFiles(0), 2u);
  EXPECT_TRUE(fs::exists(old_tmp));
  EXPECT_EQ(env.backend.RemoveStaleTempFiles(3600), 1u);
  EXPECT_FALSE(fs::exists(old_tmp));
  EXPECT_TRUE(fs::exists(new_tmp));
}

TEST(SftpBackend, ModTimeIsTheServersMtime) {
  SftpEnv env;
  Bytes data = TestBytes(10, 4);
  Handle h = HandleFor(FileType::kLock, data);
  EXPECT_EQ(env.backend.ModTime(h), std::nullopt);
  env.backend.Save(h, data);
  const std::string path = env.dir + "/repo/locks/" + h.name;
  fs::last_write_time(path, fs::last_write_time(path) - std::chrono::hours(3));
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(env.backend.ModTime(h), static_cast<int64_t>(st.st_mtime));
  EXPECT_LT(*env.backend.ModTime(h), static_cast<int64_t>(std::time(nullptr)) - 3 * 3600 + 60);
}

TEST(SftpBackend, CommandThatFailsGivesItsStatusWithoutHanging) {
  auto start = std::chrono::steady_clock::now();
  Error e = CatchError([] {
    Open("/x", "sh -c 'echo \"ssh: connect to host 127.0.0.1 port 1: Connection refused\" >&2; exit 255'");
  });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(Contains(e.what(), "exited with status 255")) << e.what();
  e = CatchError([] { Open("/x", "/nonexistent/sftp-server"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(Contains(e.what(), "cannot run /nonexistent/sftp-server")) << e.what();
  // Something that is not an SFTP server (a login banner on stdout).
  e = CatchError([] { Open("/x", "sh -c 'echo Welcome to the server; cat >/dev/null'"); });
  EXPECT_TRUE(Contains(e.what(), "login banner")) << e.what();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(SftpBackend, ServerDyingMidSessionIsAClearErrorNotAHang) {
  std::string dir = MakeTempDir();
  // The server is killed after 1 s (timeout exits 124).
  auto be = Open(dir, std::string("timeout 1 ") + kSftpServer);
  be->Create();
  Bytes data = TestBytes(1000, 3);
  Handle h = HandleFor(FileType::kSnapshot, data);
  be->Save(h, data);
  ::usleep(1500 * 1000);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 2; ++i) {  // the first call sees the EOF or EPIPE, the second the dead session
    Error e = CatchError([&] { be->Load(h); });
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_FALSE(e.retryable());
    EXPECT_TRUE(Contains(e.what(), "exited with status 124")) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
  be.reset();
  fs::remove_all(dir);
}

TEST(SftpBackend, OversizedPacketFromTheServerIsRefused) {
  // A fake server: answers INIT with VERSION, then claims a 2 GiB packet.
  const char* script =
      "import sys,struct\n"
      "i=sys.stdin.buffer\n"
      "o=sys.stdout.buffer\n"
      "n=struct.unpack('>I',i.read(4))[0]; i.read(n)\n"
      "o.write(struct.pack('>IBI',5,2,3)); o.flush()\n"
      "n=struct.unpack('>I',i.read(4))[0]; i.read(n)\n"
      "o.write(struct.pack('>I',0x7fffffff)+b'x'*100); o.flush()\n"
      "i.read()\n";
  std::string dir = MakeTempDir();
  std::ofstream(dir + "/fake.py") << script;
  auto be = Open("/x", "python3 " + dir + "/fake.py");
  Error e = CatchError([&] { be->Stat(Handle{FileType::kKey, TestName(1)}); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(Contains(e.what(), "packet of 2147483647 bytes")) << e.what();
  be.reset();
  fs::remove_all(dir);
}

TEST(SftpBackend, AWholeLoadNeverAllocatesTheSizeTheServerClaims) {
  // A sparse 5 GiB file stands for a server whose STAT lies: a whole-object Load refuses it
  // before allocating; a ranged load of its first bytes still works.
  SftpEnv env;
  Handle h{FileType::kSnapshot, TestName(7)};
  const std::string path = env.dir + "/repo/snapshots/" + h.name;
  { std::ofstream create(path); }
  ASSERT_EQ(::truncate(path.c_str(), int64_t{5} << 30), 0);
  auto start = std::chrono::steady_clock::now();
  Error e = CatchError([&] { env.backend.Load(h); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(Contains(e.what(), "the server reports 5368709120 bytes")) << e.what();
  EXPECT_TRUE(Contains(e.what(), h.name)) << e.what();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(env.backend.Load(h, 0, 16), Bytes(16, 0));
}

TEST(SftpLocation, ParsesResticsForms) {
  SftpLocation a = ParseSftpLocation("sftp:alice@example.org:/srv/repo/");
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(a.host, "example.org");
  EXPECT_EQ(a.path, "/srv/repo");
  EXPECT_EQ(ParseSftpLocation("sftp:host:repo").path, "repo");
  EXPECT_EQ(ParseSftpLocation("sftp:host:").path, ".");
  EXPECT_EQ(ParseSftpLocation("sftp:a@b@host:x").user, "a@b");
  SftpLocation u = ParseSftpLocation("sftp://bob:secret@[::1]:2222/rel/p%20q");
  EXPECT_EQ(u.user, "bob");
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, "2222");
  EXPECT_EQ(u.path, "rel/p q");
  EXPECT_FALSE(Contains(u.display, "secret")) << u.display;
  EXPECT_EQ(ParseSftpLocation("sftp://host//abs/x").path, "/abs/x");
  for (const char* bad : {"sftp:hostonly", "sftp://host", "sftp:host:~/x", "sftp://h:port/x",
                          "sftp:-oProxyCommand=x:/p", "local:/x"}) {
    EXPECT_EQ(CatchError([&] { ParseSftpLocation(bad); }).code(), ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(SftpLocation, BuildsTheSshCommand) {
  auto loc = ParseSftpLocation("sftp://u@h:22/x");
  EXPECT_EQ(SftpCommand(loc, "", ""),
            (std::vector<std::string>{"ssh", "h", "-p", "22", "-l", "u", "-s", "sftp"}));
  EXPECT_EQ(SftpCommand(loc, "", "-i '/k ey' -o BatchMode=yes"),
            (std::vector<std::string>{"ssh", "h", "-p", "22", "-l", "u", "-i", "/k ey", "-o",
                                      "BatchMode=yes", "-s", "sftp"}));
  EXPECT_EQ(SftpCommand(loc, "sftp-server -e \"a b\" c\\ d", "ignored"),
            (std::vector<std::string>{"sftp-server", "-e", "a b", "c d"}));
  EXPECT_EQ(CatchError([] { SplitShellWords("a 'b"); }).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CatchError([] { SplitShellWords("  "); }).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CleanSftpPath("a/./b/../c//"), "a/c");
  EXPECT_EQ(CleanSftpPath("/../x"), "/x");
  EXPECT_EQ(CleanSftpPath("../x"), "../x");
}

}  // namespace
}  // namespace haven
