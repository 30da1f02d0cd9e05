// rclone: through a real `rclone serve restic --stdio` on a local path (HTTP/2 over the
// child's stdin/stdout): the conformance suite, the command line, and what happens when the
// program is missing, exits at once, or is given a remote it does not know. The child is
// always reaped.
#include "backend/rclone_backend.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "backend/backend_conformance_test.h"
#include "backend/rclone_test_server.h"
#include "core/error.h"

namespace haven {
namespace {

using namespace conformance;  // NOLINT: the suite's helpers are used throughout

// rclone without a config file of the user's (and without its notice about a missing one).
struct RcloneConfig {
  RcloneConfig() : dir(testing_rclone::MakeTempDir("rclone")) {
    std::ofstream(dir + "/rclone.conf") << "[mylocal]\ntype = local\n\n[mem]\ntype = memory\n";
    ::setenv("RCLONE_CONFIG", (dir + "/rclone.conf").c_str(), 1);
  }
  ~RcloneConfig() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string dir;
};

// No child of this process is left unreaped.
bool NoChildrenLeft() {
  int status;
  return ::waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD;
}

// rclone's in-memory remote (atomic writes; its local remote writes files in place, so a
// concurrent Stat may see a half-written object; RcloneBackend.FilesLandInResticsLayout...
// uses the local one).
struct RcloneEnv {
  static constexpr const char* kName = "Rclone";
  RcloneEnv() : owned(OpenRcloneBackend("mem:repo", {})), backend(*owned) {
    backend.Create();
  }
  RcloneConfig config;
  std::unique_ptr<Backend> owned;
  Backend& backend;
};

// One request at a time on the connection (-o rclone.connections=1: no multiplexing).
struct RcloneSerialEnv {
  static constexpr const char* kName = "RcloneSerial";
  RcloneSerialEnv()
      : owned(OpenRcloneBackend("mem:repo", {.connections = 1})), backend(*owned) {
    backend.Create();
  }
  RcloneConfig config;
  std::unique_ptr<Backend> owned;
  Backend& backend;
};

using Envs = ::testing::Types<RcloneEnv, RcloneSerialEnv>;
INSTANTIATE_TYPED_TEST_SUITE_P(Rclone, BackendConformanceTest, Envs, EnvNames);

TEST(RcloneBackend, LocationAndCommandLine) {
  EXPECT_EQ(ParseRcloneLocation("rclone:b2:bucket/path"), "b2:bucket/path");
  EXPECT_EQ(CatchError([] { ParseRcloneLocation("rclone:"); }).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(RcloneCommand("b2:x", {}),
            (std::vector<std::string>{"rclone", "serve", "restic", "--stdio", "--b2-hard-delete", "b2:x"}));
  EXPECT_EQ(RcloneCommand("r:p", {.program = "/opt/rc", .args = "serve restic --stdio -v 'a b'"}),
            (std::vector<std::string>{"/opt/rc", "serve", "restic", "--stdio", "-v", "a b", "r:p"}));
  EXPECT_EQ(RcloneCommand("r:p", {.args = ""}), (std::vector<std::string>{"rclone", "r:p"}));
}

TEST(RcloneBackend, FilesLandInResticsLayoutAndTheChildIsReaped) {
  RcloneConfig config;
  {
    auto be = OpenRcloneBackend(config.dir + "/repo", {});  // a plain path is rclone's local remote
    be->Create();
    EXPECT_EQ(be->Location(), "rclone:" + config.dir + "/repo");
    Bytes data = TestBytes(5000, 3);
    Handle h = HandleFor(FileType::kPack, data);
    be->Save(h, data);
    EXPECT_TRUE(std::filesystem::exists(config.dir + "/repo/data/" + h.name.substr(0, 2) + "/" + h.name));
    EXPECT_EQ(be->Load(h, 100, 50), Bytes(data.begin() + 100, data.begin() + 150));
  }
  EXPECT_TRUE(NoChildrenLeft());
}

TEST(RcloneBackend, MissingProgramIsAClearError) {
  Error e = CatchError([] { OpenRcloneBackend("x:y", {.program = "/nonexistent/rclone"}); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(Contains(e.what(), "/nonexistent/rclone")) << e.what();
  EXPECT_TRUE(Contains(e.what(), "rclone.program")) << e.what();
  EXPECT_TRUE(NoChildrenLeft());
}

TEST(RcloneBackend, ProgramThatExitsIsAClearErrorWithItsStatus) {
  RcloneConfig config;
  for (auto [program, args, remote, status] :
       std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
           {"false", "", "x:y", "exited with status 1"},
           {"sh", "-c 'exit 7'", "x:y", "exited with status 7"},
           {"rclone", "serve restic --stdio", "no-such-remote:path", "exited with status"}}) {
    auto start = std::chrono::steady_clock::now();
    {
      auto be = OpenRcloneBackend(remote, {.program = program, .args = args});
      Error e = CatchError([&] { be->Exists(); });
      EXPECT_EQ(e.code(), ErrorCode::kIo) << program;
      EXPECT_FALSE(e.retryable()) << e.what();
      EXPECT_TRUE(Contains(e.what(), status)) << e.what();
      EXPECT_TRUE(Contains(e.what(), program)) << e.what();
      // Later calls fail the same way at once.
      Error again = CatchError([&] { be->Stat(Handle{FileType::kConfig, ""}); });
      EXPECT_FALSE(again.retryable()) << again.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << program;
    EXPECT_TRUE(NoChildrenLeft());
  }
}

}  // namespace
}  // namespace haven
