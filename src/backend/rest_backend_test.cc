// RestBackend: location parsing, the listing parser, the conformance suite against
// `rclone serve restic` (tests/tools/rclone-rest-start), basic auth, append-only refusals,
// and the REST v1 fallback against the test HTTP server (rclone speaks only v2).
#include "backend/rest_backend.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend_conformance_test.h"
#include "backend/http_test_server.h"
#include "backend/rclone_test_server.h"
#include "backend/rest_listing.h"
#include "core/error.h"
#include "core/mutex.h"

namespace haven {
namespace {

using namespace conformance;  // NOLINT: the suite's helpers are used throughout
using testing_rclone::RcloneRestServer;

// rclone's in-memory remote: its writes are atomic. (Its local remote writes a file in place,
// so a concurrent Stat can see a half-written object, which ConcurrentSavesAndLoads catches.)
struct RestEnv {
  static constexpr const char* kName = "Rest";
  RestEnv() : server("--memory"), backend(server.url() + "repo/", RestOptions{}) { backend.Create(); }
  RcloneRestServer server;
  RestBackend backend;
};

using Envs = ::testing::Types<RestEnv>;
INSTANTIATE_TYPED_TEST_SUITE_P(Rest, BackendConformanceTest, Envs, EnvNames);

TEST(RestLocation, Parses) {
  RestLocation l = ParseRestLocation("rest:http://127.0.0.1:8000/");
  EXPECT_EQ(l.base_url, "http://127.0.0.1:8000/");
  EXPECT_TRUE(l.user.empty() && l.password.empty());
  l = ParseRestLocation("rest:https://host:8000/some/repo");
  EXPECT_EQ(l.base_url, "https://host:8000/some/repo/");
  l = ParseRestLocation("rest:http://host");
  EXPECT_EQ(l.base_url, "http://host/");
  l = ParseRestLocation("rest:http://al%40ice:p%3Ass@w0rd@host:1/r/");
  EXPECT_EQ(l.user, "al@ice");
  EXPECT_EQ(l.password, "p:ss@w0rd");
  EXPECT_EQ(l.base_url, "http://host:1/r/");
  l = ParseRestLocation("rest:http://bob@host/");
  EXPECT_EQ(l.user, "bob");
  EXPECT_EQ(l.password, "");
}

TEST(RestLocation, RefusesOtherFormsWithoutRepeatingThePassword) {
  for (const char* bad : {"rest:", "rest:ftp://h/", "rest:host:8000/", "rest:http://", "rest:http:///x",
                          "rest:http://u:hunter2@/x", "rest:http://u:hunter2%zz@h/",
                          "rest:http://h/a b", "rest:http://h/x?y",
                          // a '/' in the password ends the authority early
                          "rest:http://u:hunt/er2@h:8000/r/", "rest:http://u:hunter2/x@h/r/",
                          "rest:http://u:1234/hunter2@h:8000/r/"}) {
    try {
      ParseRestLocation(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << bad;
      EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("er2"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(ParseRestLocation("rest:http://u:hunt%2Fer2@h:8000/r/").password, "hunt/er2");
  EXPECT_EQ(ParseRestLocation("rest:http://[::1]:8000/r/").base_url, "http://[::1]:8000/r/");
}

TEST(RestBackend, LocationHidesThePasswordAndUrlsFollowResticsLayout) {
  RestBackend be("http://127.0.0.1:1/r/", RestOptions{.user = "bob", .password = "hunter2"});
  EXPECT_EQ(be.Location(), "rest:http://bob:***@127.0.0.1:1/r/");
  const std::string name(64, 'a');
  EXPECT_EQ(be.UrlOf(Handle{FileType::kConfig, ""}), "http://127.0.0.1:1/r/config");
  EXPECT_EQ(be.UrlOf(Handle{FileType::kPack, name}), "http://127.0.0.1:1/r/data/" + name);  // flat
  EXPECT_EQ(be.UrlOf(Handle{FileType::kKey, name}), "http://127.0.0.1:1/r/keys/" + name);
  EXPECT_EQ(be.UrlOf(Handle{FileType::kLock, name}), "http://127.0.0.1:1/r/locks/" + name);
  EXPECT_EQ(be.UrlOf(Handle{FileType::kSnapshot, name}), "http://127.0.0.1:1/r/snapshots/" + name);
  EXPECT_EQ(be.UrlOf(Handle{FileType::kIndex, name}), "http://127.0.0.1:1/r/index/" + name);
}

TEST(RestListing, ParsesV1AndV2) {
  EXPECT_EQ(ParseRestListV1(" [ \"a\" , \"b\\u0063\" ] ", "l"), (std::vector<std::string>{"a", "bc"}));
  EXPECT_TRUE(ParseRestListV1("[]", "l").empty());
  auto v2 = ParseRestListV2(R"([{"name":"x","size":11},{"size":0,"extra":{"a":[1,2.5e3,null,true]},"name":"y"}])", "l");
  ASSERT_EQ(v2.size(), 2u);
  EXPECT_EQ(v2[0].name, "x");
  EXPECT_EQ(v2[0].size, 11u);
  EXPECT_EQ(v2[1].name, "y");
  EXPECT_EQ(v2[1].size, 0u);
  EXPECT_EQ(ParseRestListV1(R"(["\ud83d\ude00"])", "l")[0], "\xF0\x9F\x98\x80");
}

TEST(RestListing, RefusesWhatIsNotAListing) {
  for (const char* bad : {"", "{}", "[", "[\"a\"", "[\"a\",]", "[1]", "[\"a\"] x", "null",
                          "[\"\\x\"]", "[\"\\ud800\"]", "[\"a\nb\"]"}) {
    try {
      ParseRestListV1(bad, "list data");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kIo) << bad;
      EXPECT_NE(std::string(e.what()).find("list data"), std::string::npos);
    }
  }
  std::string deep = R"([{"name":"a","size":1,"x":)" + std::string(100, '[') + std::string(100, ']') + "}]";
  for (const std::string& bad : std::vector<std::string>{
           "[{}]", R"([{"name":"a"}])", R"([{"size":1}])", R"([{"name":"a","size":-1}])",
           R"([{"name":"a","size":1.5}])", R"([{"name":"a","size":99999999999999999999}])",
           R"([{"name":"a","name":"b","size":1}])", R"([{"name":1,"size":1}])", deep}) {
    try {
      ParseRestListV2(bad, "list data");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kIo) << bad;
    }
  }
}

TEST(RestBackend, BasicAuthWrongPasswordIsAClearErrorWithoutThePassword) {
  std::string dir = testing_rclone::MakeTempDir("rest_pw");
  std::ofstream(dir + "/pw") << "right-password\n";
  RcloneRestServer server("--user alice --pass-file " + dir + "/pw");
  RestBackend good(server.url() + "r/", RestOptions{.user = "alice", .password = "right-password"});
  good.Create();
  good.Save(Handle{FileType::kConfig, ""}, AsBytes("cfg"));
  EXPECT_TRUE(good.Exists());
  for (auto [user, pass] : std::vector<std::pair<std::string, std::string>>{
           {"alice", "wrong-password"}, {"", ""}}) {
    RestBackend bad(server.url() + "r/", RestOptions{.user = user, .password = pass});
    Error e = CatchError([&] { bad.Exists(); });
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_FALSE(e.retryable());
    EXPECT_TRUE(Contains(e.what(), "user name or password")) << e.what();
    EXPECT_FALSE(Contains(e.what(), "wrong-password")) << e.what();
    EXPECT_FALSE(Contains(e.what(), "right-password")) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(RestBackend, AppendOnlyRefusesRemovalNamingTheFileAndKeepsSaving) {
  RcloneRestServer server("--append-only");
  RestBackend be(server.url() + "r/", RestOptions{});
  be.Create();
  Bytes data = TestBytes(100, 1);
  Handle pack = HandleFor(FileType::kPack, data);
  be.Save(pack, data);
  be.Save(pack, data);  // a retried upload of an existing file is still accepted
  Error e = CatchError([&] { be.Remove(pack); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_FALSE(e.retryable());
  EXPECT_TRUE(Contains(e.what(), pack.ToString())) << e.what();
  EXPECT_TRUE(Contains(e.what(), "append-only")) << e.what();
  EXPECT_EQ(be.Load(pack), data);
  Handle lock = HandleFor(FileType::kLock, data);  // locks may go
  be.Save(lock, data);
  be.Remove(lock);
  EXPECT_EQ(be.Stat(lock), std::nullopt);
}

// A file named by its content's hash is saved by one POST; a server that keeps existing
// files answers 403 and only then is the file stat'ed (the same size is a retried upload,
// accepted; another is named). Any other name (the config, bytes that are not the name's
// content) is stat'ed first, as an overwriting server would replace it.
TEST(RestBackend, ContentNamedSaveIsOnePostAndOtherNamesStatFirst) {
  Mutex mu;
  std::vector<std::string> methods;
  std::map<std::string, size_t> stored;
  testing_http::TestServer server([&](const testing_http::SeenRequest& r) -> std::string {
    const std::string method = r.head.substr(0, r.head.find(' '));
    const size_t p = method.size() + 1;
    const std::string path = r.head.substr(p, r.head.find(' ', p) - p);
    MutexLock lock(mu);
    methods.push_back(method);
    auto it = stored.find(path);
    if (method == "HEAD")
      return it == stored.end() ? testing_http::Reply(404, "")
                                : "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(it->second) + "\r\n\r\n";
    if (method == "POST") {
      if (it != stored.end()) return testing_http::Reply(403, "Forbidden");
      stored[path] = r.body.size();
      return testing_http::Reply(200, "");
    }
    return testing_http::Reply(500, "unexpected");
  });
  RestBackend be(server.Url("/r/"), RestOptions{});
  auto seen = [&] {
    MutexLock lock(mu);
    return std::exchange(methods, {});
  };
  using Methods = std::vector<std::string>;
  const Bytes data = TestBytes(100, 1);
  for (FileType t : {FileType::kPack, FileType::kIndex, FileType::kLock}) {
    const Handle h = HandleFor(t, data);
    be.Save(h, data);
    EXPECT_EQ(seen(), Methods{"POST"}) << h.ToString();
    be.Save(h, data);  // a retried upload: refused, then accepted by its size
    EXPECT_EQ(seen(), (Methods{"POST", "HEAD"})) << h.ToString();
  }
  // Bytes that are not the name's content: stat'ed first and refused by their size.
  const Handle pack = HandleFor(FileType::kPack, data);
  Error e = CatchError([&] { be.Save(pack, TestBytes(50, 2)); });
  EXPECT_EQ(e.code(), ErrorCode::kFatal);
  EXPECT_TRUE(Contains(e.what(), "exists already with 100 bytes")) << e.what();
  EXPECT_TRUE(Contains(e.what(), pack.ToString())) << e.what();
  EXPECT_EQ(seen(), Methods{"HEAD"});
  const Handle other{FileType::kIndex, std::string(64, 'e')};
  be.Save(other, data);
  EXPECT_EQ(seen(), (Methods{"HEAD", "POST"}));
  // A streamed pack is hashed as it is read, then sent by one POST as well.
  const Bytes big = TestBytes(300, 3);
  const SaveSource src{.size = big.size(), .read = [&](uint64_t off, std::span<uint8_t> out) {
    std::copy_n(big.begin() + static_cast<long>(off), out.size(), out.begin());
  }};
  be.SaveFrom(HandleFor(FileType::kPack, big), src);
  EXPECT_EQ(seen(), Methods{"POST"});
  // A source whose writer named it by its hash (a PackStream's Commit) is read once only,
  // as it is sent: no pass to hash it first.
  const Bytes spooled = TestBytes(400, 4);
  uint64_t read_bytes = 0;
  const SaveSource named{.size = spooled.size(),
                         .read = [&](uint64_t off, std::span<uint8_t> out) {
                           read_bytes += out.size();
                           std::copy_n(spooled.begin() + static_cast<long>(off), out.size(), out.begin());
                         },
                         .named_by_content = true};
  be.SaveFrom(HandleFor(FileType::kPack, spooled), named);
  EXPECT_EQ(seen(), Methods{"POST"});
  EXPECT_EQ(read_bytes, spooled.size());
  // A POST refused for another reason than the name is not taken for a retried upload.
  const Handle lock = HandleFor(FileType::kLock, big);
  {
    MutexLock l(mu);
    stored["/r/locks/" + lock.name] = 7;
  }
  e = CatchError([&] { be.Save(lock, big); });
  EXPECT_TRUE(Contains(e.what(), "exists already with 7 bytes")) << e.what();
  EXPECT_EQ(seen(), (Methods{"POST", "HEAD"}));
  const Handle config{FileType::kConfig, ""};
  be.Save(config, AsBytes("cfg"));
  EXPECT_EQ(seen(), (Methods{"HEAD", "POST"}));
}

TEST(RestBackend, ServerGoneIsARetryableIoError) {
  std::string url;
  {
    RcloneRestServer server;
    url = server.url();
  }
  RestBackend be(url + "r/", RestOptions{});
  Error e = CatchError([&] { be.Stat(Handle{FileType::kConfig, ""}); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(e.retryable());
}

// REST v1 (rest-server before 0.10 and restic's v1 clients): the listing is names only
// and the size of each comes from a HEAD.
TEST(RestBackend, V1ListingFallsBackToHeadPerName) {
  const std::string a(64, 'a'), b(64, 'b');
  int heads = 0;
  testing_http::TestServer server([&](const testing_http::SeenRequest& r) -> std::string {
    EXPECT_NE(r.head.find("Accept: application/vnd.x.restic.rest.v2"), std::string::npos);
    if (r.head.rfind("GET /r/snapshots/ ", 0) == 0)
      return testing_http::Reply(200, "[\"" + a + "\",\"" + b + "\",\"junk\"]",
                                 "Content-Type: application/vnd.x.restic.rest.v1\r\n");
    if (r.head.rfind("HEAD /r/snapshots/" + a, 0) == 0) {
      heads++;
      return "HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n";
    }
    if (r.head.rfind("HEAD /r/snapshots/" + b, 0) == 0) {
      heads++;
      return "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
    }
    if (r.head.rfind("GET /r/index/ ", 0) == 0)
      return testing_http::Reply(200, "[\"" + a + "\"", "Content-Type: application/vnd.x.restic.rest.v1\r\n");
    if (r.head.rfind("GET /r/keys/ ", 0) == 0) return testing_http::Reply(404, "Not Found");
    return testing_http::Reply(500, "unexpected");
  });
  RestBackend be(server.Url("/r/"), RestOptions{});
  EXPECT_EQ(ListAll(be, FileType::kSnapshot), (std::map<std::string, uint64_t>{{a, 17}, {b, 5}}));
  EXPECT_EQ(heads, 2);
  // A listing error is never an empty listing.
  EXPECT_EQ(CatchError([&] { ListAll(be, FileType::kIndex); }).code(), ErrorCode::kIo);
  EXPECT_EQ(CatchError([&] { ListAll(be, FileType::kKey); }).code(), ErrorCode::kNotFound);
}

TEST(RestBackend, APartialReplyFromTheWrongOffsetOrTooLongIsRefused) {
  const Handle h{FileType::kPack, std::string(64, 'c')};
  {
    testing_http::TestServer server([](const testing_http::SeenRequest&) {
      return testing_http::Reply(206, "0123", "Content-Range: bytes 0-3/10\r\n");
    });
    RestBackend be(server.Url("/r/"), RestOptions{});
    Error e = CatchError([&] { be.Load(h, 4, 4); });
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_TRUE(e.retryable());
    EXPECT_TRUE(Contains(e.what(), "does not start at offset 4")) << e.what();
    // Streamed: refused before any byte is handed over.
    e = CatchError([&] { be.LoadStream(h, 4, 4, [](ByteView) { ADD_FAILURE() << "wrong bytes handed over"; }); });
    EXPECT_TRUE(e.retryable());
    EXPECT_TRUE(Contains(e.what(), "does not start at offset 4")) << e.what();
  }
  {  // 64 bytes asked, a megabyte sent: refused while it arrives
    testing_http::TestServer server([](const testing_http::SeenRequest&) {
      return testing_http::Reply(206, std::string(1 << 20, 'x'), "Content-Range: bytes 0-1048575/2000000\r\n");
    });
    RestBackend be(server.Url("/r/"), RestOptions{});
    Error e = CatchError([&] { be.Load(h, 0, 64); });
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_TRUE(Contains(e.what(), "the server sent more than 64 bytes")) << e.what();
    size_t delivered = 0;
    e = CatchError([&] { be.LoadStream(h, 0, 64, [&](ByteView p) { delivered += p.size(); }); });
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_TRUE(e.retryable());
    EXPECT_TRUE(Contains(e.what(), "more than the 64 bytes requested")) << e.what();
    EXPECT_LE(delivered, 64u);
  }
  testing_http::TestServer server([](const testing_http::SeenRequest&) {
    return testing_http::Reply(206, "4567", "Content-Range: bytes 4-7/10\r\n");
  });
  RestBackend be(server.Url("/r/"), RestOptions{});
  Bytes got = be.Load(h, 4, 4);
  EXPECT_EQ(std::string(got.begin(), got.end()), "4567");
  got.clear();
  be.LoadStream(h, 4, 4, [&](ByteView p) { got.insert(got.end(), p.begin(), p.end()); });
  EXPECT_EQ(std::string(got.begin(), got.end()), "4567");
}

TEST(RestBackend, SendsBasicAuthAndNoCredentialsInTheUrl) {
  std::string seen;
  testing_http::TestServer server([&](const testing_http::SeenRequest& r) -> std::string {
    seen = r.head;
    return "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
  });
  RestBackend be(server.Url("/r/"), RestOptions{.user = "bob", .password = "hunter2"});
  EXPECT_FALSE(be.Exists());
  EXPECT_NE(seen.find("Authorization: Basic Ym9iOmh1bnRlcjI="), std::string::npos) << seen;
  EXPECT_EQ(seen.find("hunter2"), std::string::npos);
}

}  // namespace
}  // namespace haven
