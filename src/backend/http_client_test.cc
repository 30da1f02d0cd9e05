#include "backend/http_client.h"
#include "backend/http_test_server.h"
#include "backend/rate_limiter.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace haven {
namespace {

using testing_http::Reply;
using testing_http::SeenRequest;
using testing_http::TestServer;

std::string BodyOf(const HttpResponse& r) { return std::string(r.body.begin(), r.body.end()); }

Error Catch(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error(ErrorCode::kFatal, "none");
}

TEST(HttpClient, GetPutHeadDeleteAndHeaders) {
  std::vector<std::string> seen;
  TestServer server([&](const SeenRequest& r) {
    seen.push_back(r.head.substr(0, r.head.find(' ')));
    if (r.head.rfind("PUT", 0) == 0) return Reply(200, "", "ETag: \"x\"\r\n");
    if (r.head.rfind("HEAD", 0) == 0)
      return std::string("HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n");
    if (r.head.find("X-Test: yes") == std::string::npos) return Reply(400, "no header");
    return Reply(200, "hello " + r.body);
  });
  HttpClient http;
  HttpRequest get{.method = "GET", .url = server.Url("/a"), .headers = {{"X-Test", "yes"}}};
  HttpResponse r = http.Perform(get);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(BodyOf(r), "hello ");
  EXPECT_EQ(r.Header("content-length"), "6");

  std::string payload = "payload";
  HttpRequest put{.method = "PUT", .url = server.Url("/b"), .body = AsBytes(payload)};
  r = http.Perform(put);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("etag"), "\"x\"");

  HttpRequest head{.method = "HEAD", .url = server.Url("/c")};
  r = http.Perform(head);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("content-length"), "42");
  EXPECT_TRUE(r.body.empty());

  HttpRequest del{.method = "DELETE", .url = server.Url("/d")};
  EXPECT_EQ(http.Perform(del).status, 400);  // no X-Test header
  EXPECT_EQ(seen, (std::vector<std::string>{"GET", "PUT", "HEAD", "DELETE"}));
  EXPECT_EQ(server.connections(), 1) << "keep-alive: one connection for all requests";
}

TEST(HttpClient, PutBodyArrivesWhole) {
  std::string got;
  TestServer server([&](const SeenRequest& r) {
    got = r.body;
    return Reply(200, "");
  });
  HttpClient http;
  std::string big(3 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4097) big[i] = static_cast<char>('a' + i % 26);
  for (const char* method : {"PUT", "POST"}) {
    SCOPED_TRACE(method);
    got.clear();
    HttpRequest put{.method = method, .url = server.Url("/big"), .body = AsBytes(big)};
    EXPECT_EQ(http.Perform(put).status, 200);
    EXPECT_EQ(got, big);
  }
}

// A body read on demand (a spooled pack, HttpRequest::body_source) arrives whole by PUT and
// POST, read in pieces; a read that throws aborts the request and Perform rethrows it.
TEST(HttpClient, BodyFromASourceArrivesWholeAndItsFailureIsRethrown) {
  std::string got;
  TestServer server([&](const SeenRequest& r) {
    got = r.body;
    return Reply(200, "");
  });
  HttpClient http;
  std::string big(3 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4099) big[i] = static_cast<char>('a' + i % 26);
  std::atomic<int> reads{0};
  std::atomic<size_t> largest{0};
  SaveSource src{.size = big.size(), .read = [&](uint64_t offset, std::span<uint8_t> out) {
                   reads++;
                   largest = std::max<size_t>(largest, out.size());
                   std::memcpy(out.data(), big.data() + offset, out.size());
                 }};
  for (const char* method : {"PUT", "POST"}) {
    SCOPED_TRACE(method);
    got.clear();
    EXPECT_EQ(http.Perform({.method = method, .url = server.Url("/s"), .body_source = &src}).status, 200);
    EXPECT_EQ(got, big);
  }
  EXPECT_GT(reads, 2 * 8);  // read in pieces, never whole
  EXPECT_LE(largest, size_t{1} << 20);
  SaveSource failing{.size = big.size(), .read = [&](uint64_t offset, std::span<uint8_t> out) {
                       if (offset > (1u << 20)) throw Error(ErrorCode::kCorrupt, "spool went bad");
                       std::memcpy(out.data(), big.data() + offset, out.size());
                     }};
  got = "untouched";
  Error e = Catch([&] { http.Perform({.method = "PUT", .url = server.Url("/f"), .body_source = &failing}); });
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_STREQ(e.what(), "spool went bad");
  EXPECT_EQ(got, "untouched");  // the server never saw a whole request
}

// --limit-upload pays for a body as it goes out (backend/rate_limiter.h), not before or
// after the request: through a 256 KiB/s bucket that starts full, 512 KiB arrive whole
// after about 1 s (PUT), the next 512 KiB after about 2 s more (POST), and nothing is
// left to pay when the request returns. Without pacing in effect nothing waits.
TEST(HttpClient, UploadBodiesArePacedAsTheyGoOut) {
  using Clock = std::chrono::steady_clock;
  std::atomic<int64_t> start_ns{0}, arrived_ns{0};
  auto now_ns = [] { return Clock::now().time_since_epoch() / std::chrono::nanoseconds(1); };
  std::atomic<size_t> got{0};
  TestServer server([&](const SeenRequest& r) {
    arrived_ns = now_ns();
    got = r.body.size();
    return Reply(200, "");
  });
  HttpClient http;
  Bytes body(512 << 10, 'x');
  RateLimiter limiter(256 << 10);
  auto seconds = [](int64_t ns) { return static_cast<double>(ns) / 1e9; };
  const char* methods[] = {"PUT", "POST"};
  const double wanted[] = {1.0, 2.0};
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(methods[i]);
    start_ns = now_ns();
    {
      UploadPacing pacing(limiter);
      EXPECT_EQ(http.Perform({.method = methods[i], .url = server.Url("/p"), .body = body}).status, 200);
      EXPECT_GE(pacing.paid(), body.size());
      pacing.PayRest(body.size());
    }
    const double arrived = seconds(arrived_ns - start_ns), done = seconds(now_ns() - start_ns);
    EXPECT_EQ(got, body.size());
    EXPECT_GT(arrived, wanted[i] - 0.25);
    EXPECT_LT(arrived, wanted[i] + 1.5);
    EXPECT_LT(done - arrived, 0.25);  // paid while sending, nothing after
  }
  start_ns = now_ns();
  EXPECT_EQ(http.Perform({.method = "PUT", .url = server.Url("/q"), .body = body}).status, 200);
  EXPECT_LT(seconds(now_ns() - start_ns), 0.5);
}

// Under a low --limit-upload the body goes out in pieces of an eighth of a second's worth
// (UploadPieceLimit), so the connection is never silent for long inside a request: at
// 16 KiB/s, 40 KiB are read in pieces of at most 2 KiB with no gap near 1.5 s (one
// 40 KiB piece paid at once would leave the server waiting 1.5 s for any body byte).
TEST(HttpClient, LowUploadLimitsPayInSmallPieces) {
  using Clock = std::chrono::steady_clock;
  TestServer server([&](const SeenRequest&) { return Reply(200, ""); });
  HttpClient http;
  const Bytes body(40 << 10, 'y');
  std::vector<size_t> sizes;
  std::vector<Clock::time_point> times;
  SaveSource src{.size = body.size(), .read = [&](uint64_t offset, std::span<uint8_t> out) {
                   sizes.push_back(out.size());
                   times.push_back(Clock::now());
                   std::memcpy(out.data(), body.data() + offset, out.size());
                 }};
  RateLimiter limiter(16 << 10);
  const auto start = Clock::now();
  {
    UploadPacing pacing(limiter);
    EXPECT_EQ(UploadPieceLimit(), 2048u);
    EXPECT_EQ(http.Perform({.method = "PUT", .url = server.Url("/p"), .body_source = &src}).status,
              200);
  }
  EXPECT_EQ(UploadPieceLimit(), UINT64_MAX);  // no pacing: no limit
  ASSERT_FALSE(sizes.empty());
  EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()), 2048u);
  double longest = std::chrono::duration<double>(times[0] - start).count();
  for (size_t i = 1; i < times.size(); ++i)
    longest = std::max(longest, std::chrono::duration<double>(times[i] - times[i - 1]).count());
  EXPECT_LT(longest, 1.0);  // one 24 KiB payment (the body less the burst) would be 1.5 s
  EXPECT_GT(std::chrono::duration<double>(Clock::now() - start).count(), 1.2);  // still paced
  RateLimiter tiny(100);
  UploadPacing pacing(tiny);
  EXPECT_EQ(UploadPieceLimit(), 1024u);  // at least 1 KiB
}

TEST(HttpClient, RangeHeaderAndCallerMemory) {
  std::string range;
  TestServer server([&](const SeenRequest& r) {
    size_t p = r.head.find("Range: ");
    range = p == std::string::npos ? "" : r.head.substr(p, r.head.find("\r\n", p) - p);
    if (r.head.find("/long") != std::string::npos) return Reply(206, "0123456789");
    return Reply(206, "abcd");
  });
  HttpClient http;
  uint8_t buf[4] = {0};
  HttpRequest get{.url = server.Url("/x"), .range = HttpRange{10, 4}, .into = std::span(buf)};
  HttpResponse r = http.Perform(get);
  EXPECT_EQ(range, "Range: bytes=10-13");
  EXPECT_EQ(r.received, 4u);
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(std::string(buf, buf + 4), "abcd");

  HttpRequest open_end{.url = server.Url("/x"), .range = HttpRange{5, 0}};
  http.Perform(open_end);
  EXPECT_EQ(range, "Range: bytes=5-");

  HttpRequest too_long{.url = server.Url("/long"), .into = std::span(buf)};
  Error e = Catch([&] { http.Perform(too_long, "load data/xy"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(e.retryable());
  EXPECT_NE(std::string(e.what()).find("load data/xy"), std::string::npos) << e.what();
}

TEST(HttpClient, StatusMapping) {
  TestServer server([&](const SeenRequest& r) {
    int status = std::stoi(r.head.substr(r.head.find('/') + 1, 3));
    return Reply(status, "<Error><Code>SomeCode</Code><Message>some text</Message></Error>");
  });
  HttpClient http;
  auto err = [&](int status) {
    HttpResponse r = http.Perform(HttpRequest{.url = server.Url("/" + std::to_string(status))});
    EXPECT_EQ(r.status, status);
    return StatusError(r, "load keys/ab");
  };
  Error e404 = err(404);
  EXPECT_EQ(e404.code(), ErrorCode::kNotFound);
  EXPECT_FALSE(e404.retryable());
  for (int s : {500, 502, 503, 429}) {
    Error e = err(s);
    EXPECT_EQ(e.code(), ErrorCode::kIo) << s;
    EXPECT_TRUE(e.retryable()) << s;
  }
  for (int s : {401, 403}) {
    Error e = err(s);
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_FALSE(e.retryable());
    EXPECT_NE(std::string(e.what()).find("access denied"), std::string::npos) << e.what();
  }
  Error e400 = err(400);
  EXPECT_FALSE(e400.retryable());
  std::string m = e400.what();
  EXPECT_NE(m.find("load keys/ab"), std::string::npos) << m;
  EXPECT_NE(m.find("400"), std::string::npos) << m;
  EXPECT_NE(m.find("SomeCode"), std::string::npos) << m;
  EXPECT_NE(m.find("some text"), std::string::npos) << m;
  HttpResponse ok = http.Perform(HttpRequest{.url = server.Url("/204")});
  CheckStatus(ok, "x");  // 2xx: no throw
  EXPECT_THROW(CheckStatus(http.Perform(HttpRequest{.url = server.Url("/500")}), "x"), Error);
}

// S3 names transient faults in the body whatever the status: a 400 RequestTimeout (the
// server stopped waiting for a slow body) is retried, a 400 of another code is not.
TEST(HttpClient, TransientS3CodesAreRetryable) {
  TestServer server([&](const SeenRequest& r) {
    const size_t at = r.head.find('/') + 1;
    const std::string code = r.head.substr(at, r.head.find(' ', at) - at);
    const int status = code == "OperationAborted" ? 409 : code == "SlowDown" ? 503 : 400;
    return Reply(status, "<Error><Code>" + code + "</Code><Message>m</Message></Error>");
  });
  HttpClient http;
  auto err = [&](const std::string& code) {
    return StatusError(http.Perform(HttpRequest{.url = server.Url("/" + code)}), "save data/ab");
  };
  for (const char* code : {"RequestTimeout", "OperationAborted", "SlowDown", "Throttling",
                           "RequestLimitExceeded"}) {
    Error e = err(code);
    EXPECT_EQ(e.code(), ErrorCode::kIo) << code;
    EXPECT_TRUE(e.retryable()) << code;
    EXPECT_NE(std::string(e.what()).find(code), std::string::npos) << e.what();
  }
  for (const char* code : {"InvalidArgument", "ExpiredToken", "RequestTimeoutX", "EntityTooLarge"})
    EXPECT_FALSE(err(code).retryable()) << code;
}

TEST(HttpClient, TransportErrorsAreRetryableIo) {
  // A connection closed without an answer.
  TestServer server([&](const SeenRequest&) { return std::string(); });
  HttpClient http;
  Error e = Catch([&] { http.Perform(HttpRequest{.url = server.Url("/")}, "stat config"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(e.retryable());
  EXPECT_NE(std::string(e.what()).find("stat config"), std::string::npos);

  // Nothing listening (a port just released).
  int port;
  {
    TestServer gone([](const SeenRequest&) { return std::string(); });
    port = std::stoi(gone.Url("").substr(17));
  }
  Error refused = Catch([&] {
    http.Perform(HttpRequest{.url = "http://127.0.0.1:" + std::to_string(port) + "/"});
  });
  EXPECT_EQ(refused.code(), ErrorCode::kIo);
  EXPECT_TRUE(refused.retryable());

  Error bad_url = Catch([&] { http.Perform(HttpRequest{.url = "ftp://127.0.0.1/x"}); });
  EXPECT_FALSE(bad_url.retryable());
}

TEST(HttpClient, StreamedBodyArrivesInPiecesAfterItsStartIsChecked) {
  const std::string big(3 << 20, 'q');  // more than one piece
  TestServer server([&](const SeenRequest& r) {
    if (r.head.find("/error") != std::string::npos) return Reply(503, "busy");
    return Reply(206, big);
  });
  HttpClient http;
  ASSERT_TRUE(http.streams());
  std::string got;
  size_t pieces = 0;
  long seen_status = 0;
  const std::function<void(ByteView)> sink = [&](ByteView p) {
    got.append(reinterpret_cast<const char*>(p.data()), p.size());
    pieces++;
  };
  const std::function<void(const HttpResponse&)> start = [&](const HttpResponse& r) {
    EXPECT_TRUE(got.empty());  // before the first piece
    seen_status = r.status;
  };
  HttpRequest get{.url = server.Url("/x")};
  get.stream = &sink;
  get.stream_start = &start;
  HttpResponse r = http.Perform(get);
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(seen_status, 206);
  EXPECT_EQ(got, big);
  EXPECT_GT(pieces, 1u);
  EXPECT_EQ(r.received, big.size());
  EXPECT_TRUE(r.body.empty());  // handed over, not kept

  // A non-2xx body is not streamed: it stays for the error message.
  got.clear();
  HttpRequest err{.url = server.Url("/error")};
  err.stream = &sink;
  r = http.Perform(err);
  EXPECT_EQ(r.status, 503);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(BodyOf(r), "busy");

  // What the start check or the sink throws aborts the transfer and comes out unchanged.
  const std::function<void(const HttpResponse&)> refuse = [](const HttpResponse&) {
    Fail(ErrorCode::kCorrupt, "refused by the start check");
  };
  get.stream_start = &refuse;
  Error e = Catch([&] { http.Perform(get); });
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_EQ(std::string(e.what()), "refused by the start check");
  struct Stop {};
  const std::function<void(ByteView)> stop = [](ByteView) { throw Stop{}; };
  get.stream = &stop;
  get.stream_start = nullptr;
  EXPECT_THROW(http.Perform(get), Stop);
  // The client is still usable.
  get.stream = &sink;
  got.clear();
  EXPECT_EQ(http.Perform(get).status, 206);
  EXPECT_EQ(got, big);
}

TEST(HttpClient, TruncatedBodyIsAnError) {
  TestServer server([&](const SeenRequest&) {
    return std::string("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nshort");
  });
  HttpClient http;
  // The server closes after "short": curl reports a partial transfer.
  Error e = Catch([&] { http.Perform(HttpRequest{.url = server.Url("/")}); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(e.retryable());
}

TEST(HttpClient, BodyReserveIsCappedAndGrowsAsBytesArrive) {
  EXPECT_EQ(InitialBodyReserve(-1), 0u);
  EXPECT_EQ(InitialBodyReserve(0), 0u);
  EXPECT_EQ(InitialBodyReserve(1000), 1000u);
  EXPECT_EQ(InitialBodyReserve(int64_t{4} << 30), kMaxBodyReserve);
  EXPECT_EQ(InitialBodyReserve(INT64_MAX), kMaxBodyReserve);
  const std::string big(kMaxBodyReserve + 12345, 'x');
  TestServer server([&](const SeenRequest& r) {
    if (r.head.find("/lie") != std::string::npos)  // announces 4 GiB, sends 5 bytes
      return std::string("HTTP/1.1 200 OK\r\nContent-Length: 4294967296\r\nConnection: close\r\n\r\nshort");
    return Reply(200, big);
  });
  HttpClient http;
  HttpResponse r = http.Perform(HttpRequest{.url = server.Url("/big")});
  EXPECT_EQ(r.body.size(), big.size());
  EXPECT_TRUE(BodyOf(r) == big);
  Error e = Catch([&] { http.Perform(HttpRequest{.url = server.Url("/lie")}, "load data/ab"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(e.retryable());
}

TEST(HttpClient, ErrorBodiesAreCappedAndTheConnectionIsKept) {
  const std::string huge(kMaxErrorBody * 3 + 7, 'e');
  TestServer server([&](const SeenRequest& r) {
    if (r.head.find("/ok") != std::string::npos) return Reply(200, "fine");
    return Reply(500, huge);
  });
  HttpClient http({.max_connections = 1});
  HttpResponse r = http.Perform(HttpRequest{.url = server.Url("/err")});
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body.size(), kMaxErrorBody);
  EXPECT_EQ(r.received, huge.size());  // the whole body was read, so the connection stays usable
  EXPECT_EQ(BodyOf(http.Perform(HttpRequest{.url = server.Url("/ok")})), "fine");
  EXPECT_EQ(server.connections(), 1);
}

TEST(HttpClient, ConnectionsAreBoundedAndReused) {
  std::atomic<int> active{0}, peak{0};
  TestServer server([&](const SeenRequest&) {
    int now = ++active;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    --active;
    return Reply(200, "ok");
  });
  HttpClient http({.max_connections = 3});
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; i++)
    threads.emplace_back([&] {
      for (int j = 0; j < 10; j++)
        EXPECT_EQ(http.Perform(HttpRequest{.url = server.Url("/")}).status, 200);
    });
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), 3);
  EXPECT_LE(server.connections(), 3) << "80 requests over at most 3 reused connections";
}

TEST(HttpClient, CaBundleIsHarmlessForPlainHttp) {
  TestServer server([&](const SeenRequest&) { return Reply(200, "ok"); });
  const char* old = std::getenv("AWS_CA_BUNDLE");
  std::string saved = old ? old : "";
  ::setenv("AWS_CA_BUNDLE", "/nonexistent/ca.pem", 1);
  HttpClient http;
  HttpResponse r = http.Perform(HttpRequest{.url = server.Url("/")});
  if (old) {
    ::setenv("AWS_CA_BUNDLE", saved.c_str(), 1);
  } else {
    ::unsetenv("AWS_CA_BUNDLE");
  }
  EXPECT_EQ(r.status, 200);
}

TEST(HttpClient, UriEncode) {
  EXPECT_EQ(UriEncode("a b/c~d_e.f-g", false), "a%20b%2Fc~d_e.f-g");
  EXPECT_EQ(UriEncode("a b/c", true), "a%20b/c");
  EXPECT_EQ(UriEncode("\xff=&", false), "%FF%3D%26");
}

}  // namespace
}  // namespace haven
