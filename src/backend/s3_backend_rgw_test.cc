// S3Backend against a real Ceph radosgw: the backend conformance suite plus S3-specific
// checks. The server is started by the ctest fixture (tests/tools/ceph-s3-start, see
// CMakeLists.txt) which exports HAVEN_TEST_S3_STATE; without it every test fails (never a
// skip). Each test uses a fresh random prefix in one shared bucket.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "backend/backend_conformance_test.h"
#include "backend/retry_backend.h"
#include "backend/s3_backend.h"
#include "crypto/random.h"

namespace haven {
namespace {

// KEY=VALUE lines of the fixture's state-dir/env file.
std::map<std::string, std::string> ServerEnv() {
  const char* dir = std::getenv("HAVEN_TEST_S3_STATE");
  if (!dir || !*dir) {
    ADD_FAILURE() << "HAVEN_TEST_S3_STATE is not set: run through ctest (the ceph_s3 fixture)";
    return {};
  }
  std::ifstream in(std::string(dir) + "/env");
  std::map<std::string, std::string> out;
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  if (out.empty()) ADD_FAILURE() << "no server state in " << dir << "/env";
  return out;
}

std::string RandomPrefix() {
  uint8_t b[8];
  crypto::RandomBytes(b, sizeof(b));
  return "t-" + HexEncode(ByteView(b, sizeof(b)));
}

S3Backend MakeS3(const std::string& bucket, const std::string& prefix,
                 const std::string& secret_override = "") {
  auto env = ServerEnv();
  S3Location loc = ParseS3Location("s3:" + env["HAVEN_TEST_S3_ENDPOINT"] + "/" + bucket + "/" + prefix);
  S3Options o;
  o.credentials = {env["AWS_ACCESS_KEY_ID"],
                   secret_override.empty() ? env["AWS_SECRET_ACCESS_KEY"] : secret_override, ""};
  o.connections = 8;
  return S3Backend(loc, o);
}

struct S3Env {
  static constexpr const char* kName = "S3";
  static constexpr bool kRemoveOfMissingSucceeds = true;  // S3's DELETE cannot tell
  S3Backend backend = MakeS3("haven-conformance", RandomPrefix());
  S3Env() { backend.Create(); }
};

}  // namespace

namespace conformance {
using S3Envs = ::testing::Types<S3Env>;
INSTANTIATE_TYPED_TEST_SUITE_P(Rgw, BackendConformanceTest, S3Envs, EnvNames);
}  // namespace conformance

namespace {

TEST(S3Rgw, CreateMakesTheBucketAndLayoutIsRestics) {
  std::string bucket = "haven-" + RandomPrefix();
  S3Backend be = MakeS3(bucket, "some/prefix");
  EXPECT_FALSE(be.Exists());  // the bucket does not exist yet: no error, just "no repository"
  be.Create();
  be.Save(Handle{FileType::kConfig, "config"}, AsBytes("c"));
  Bytes data = conformance::TestBytes(10, 1);
  Handle pack = conformance::HandleFor(FileType::kPack, data);
  be.Save(pack, data);
  EXPECT_EQ(be.KeyOf(pack), "some/prefix/data/" + pack.name.substr(0, 2) + "/" + pack.name);
  // A second backend on the bucket root sees the objects under their full keys only.
  S3Backend root = MakeS3(bucket, "");
  EXPECT_FALSE(root.Exists());
  EXPECT_TRUE(conformance::ListAll(root, FileType::kPack).empty());
  EXPECT_EQ(conformance::ListAll(be, FileType::kPack).size(), 1u);
}

TEST(S3Rgw, ListingPagesPastOneThousandKeys) {
  S3Backend be = MakeS3("haven-conformance", RandomPrefix());
  be.Create();
  constexpr int kN = 1100;  // more than one ListObjectsV2 page
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; t++)
    threads.emplace_back([&, t] {
      for (int i = t; i < kN; i += 8)
        be.Save(Handle{FileType::kSnapshot, conformance::TestName(i)}, AsBytes("s"));
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(conformance::ListAll(be, FileType::kSnapshot).size(), size_t{kN});
}

TEST(S3Rgw, WrongSecretIsAClearNonRetryableError) {
  S3Backend be = MakeS3("haven-conformance", RandomPrefix(), "not-the-secret");
  try {
    be.Exists();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_FALSE(e.retryable());
    std::string m = e.what();
    EXPECT_NE(m.find("access denied"), std::string::npos) << m;
    EXPECT_EQ(m.find("not-the-secret"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace haven
