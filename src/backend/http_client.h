// A small synchronous HTTP(S) client on libcurl, shared by the remote backends (S3, REST,
// rclone). One request at a time per call, many calls at once from many threads.
//
//   HttpClient http({.max_connections = 8});
//   HttpRequest req{.method = "GET", .url = "http://127.0.0.1:8000/bucket/config"};
//   req.range = HttpRange{0, 100};            // "Range: bytes=0-99"
//   HttpResponse r = http.Perform(req);       // throws only for transport failures
//   CheckStatus(r, "load config");            // throws haven::Error for any non-2xx
//
// Connections: a pool of at most max_connections curl easy handles; a call waits for a
// free one. Each handle keeps its connection open (HTTP keep-alive) and its TLS session
// and DNS entries, so consecutive calls reuse connections; at most max_connections
// connections exist at once.
//
// TLS: the CA bundle is ca_file when given, else $AWS_CA_BUNDLE when set (as the AWS tools
// do), else curl's default. It only matters for https URLs: a plain-http endpoint works
// with AWS_CA_BUNDLE set.
//
// Timeouts: connect_timeout for the TCP/TLS connect; a transfer slower than
// low_speed_limit bytes/s for low_speed_time is aborted. No total timeout (a 1 GiB pack on
// a slow link is fine as long as bytes move).
//
// Errors (haven::Error): transport failures (refused, reset, timeout, DNS, TLS, a body
// larger than the caller's buffer) are kIo with retryable() == true, except TLS
// certificate problems and bad URLs (not retryable). CheckStatus / StatusError map HTTP
// statuses: 404 kNotFound; 5xx, 429 and 408 kIo retryable, and so is any status whose S3
// error code names a transient condition (400 RequestTimeout, SlowDown, throttling, 409
// OperationAborted); 401/403 kIo not retryable
// ("access denied"); other 4xx kIo not retryable. Messages name `what` (e.g. "load
// data/ab/ab12..") and never contain request headers (signatures, tokens).
//
// Bodies: a 2xx body without `into` grows as bytes arrive (at most kMaxBodyReserve is
// reserved up front from Content-Length, so a lying header cannot make a huge allocation);
// the body of a non-2xx response keeps only its first kMaxErrorBody bytes.
//
// Custom transports (rclone's --stdio): with `unix_socket_path` every connection goes to
// that AF_UNIX socket instead of the URL's host, and `http2_prior_knowledge` speaks HTTP/2
// without an upgrade (h2c), as `rclone serve restic --stdio` expects.
//
// With `multiplex`, the transfers run as HTTP/2 streams of one connection, driven by one
// thread of the client (curl multi); Perform still blocks its caller until its stream ends.
//
// Thread safety: Perform may be called concurrently; the object must outlive every call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "core/bytes.h"
#include "core/error.h"
#include "core/mutex.h"

namespace haven {

struct HttpRange {
  uint64_t offset = 0;
  uint64_t length = 0;  // 0: to the end ("bytes=offset-")
};

struct HttpResponse;

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, PUT, POST, DELETE
  std::string url;             // scheme://host[:port]/path?query, already escaped
  std::vector<std::pair<std::string, std::string>> headers;  // sent as given
  ByteView body;               // request body (PUT/POST); must outlive Perform
  // Instead of `body`: a body read on demand as it is sent (a pack spooled to a temp file);
  // an exception thrown by its read aborts the request and Perform rethrows it unchanged.
  // Must outlive Perform.
  const SaveSource* body_source = nullptr;
  std::optional<HttpRange> range;
  // When set, a 2xx response body is written here instead of HttpResponse::body; a body
  // longer than `into` fails the call (kIo). HttpResponse::received tells how many bytes
  // came. Bodies of non-2xx responses always go to HttpResponse::body (error details).
  std::optional<std::span<uint8_t>> into;
  // Without `into`: the most bytes a 2xx body may hold (a server cannot make the client
  // allocate without bound); more fails the call (kIo, retryable). 0: kMaxBody.
  uint64_t max_body = 0;
  static constexpr uint64_t kMaxBody = uint64_t{512} << 20;  // packs are <= 128 MiB
  // When set, a 2xx body is handed to *stream in pieces as it arrives and not kept
  // (HttpResponse::received counts it); *stream_start, when set, is called once before the
  // first piece with the status and headers, and may throw to refuse the reply. An exception
  // thrown by either aborts the transfer and Perform rethrows it unchanged. Only on a client
  // that streams() (not `multiplex`, whose one thread would run every caller's pieces).
  const std::function<void(ByteView)>* stream = nullptr;
  const std::function<void(const HttpResponse&)>* stream_start = nullptr;

  uint64_t BodySize() const { return body_source ? body_source->size : body.size(); }
};

struct HttpResponse {
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  Bytes body;
  uint64_t received = 0;  // body bytes received (into `into` or `body`)

  // Value of the first header with this (lower-case) name.
  std::optional<std::string> Header(std::string_view name) const;
  // Content-Length as a number; nullopt when absent or not a plain decimal (at most 19 digits).
  std::optional<uint64_t> ContentLength() const;
  // START of "Content-Range: bytes START-END/TOTAL"; nullopt when absent or malformed.
  std::optional<uint64_t> RangeStart() const;
};

struct HttpClientOptions {
  int max_connections = 8;
  std::chrono::milliseconds connect_timeout{10'000};
  long low_speed_limit = 1;  // bytes per second
  std::chrono::seconds low_speed_time{120};
  std::string ca_file;  // PEM bundle; empty: $AWS_CA_BUNDLE, else curl's default
  std::string user_agent = "haven";
  // See "Custom transports" above.
  std::string unix_socket_path;
  bool http2_prior_knowledge = false;
  // All transfers share one connection as HTTP/2 streams (at most max_connections at once),
  // driven by one thread of this client through curl's multi interface; Perform blocks
  // until its own stream is done. For a single-connection transport such as a pipe.
  bool multiplex = false;
};

// Bytes reserved at most from a 2xx response's Content-Length before they arrive.
inline constexpr size_t kMaxBodyReserve = size_t{8} << 20;
// Bytes of a non-2xx response's body kept for the error message.
inline constexpr size_t kMaxErrorBody = size_t{64} << 10;
// What a 2xx body reserves for an announced Content-Length (negative: none announced).
inline size_t InitialBodyReserve(int64_t announced) {
  if (announced <= 0) return 0;
  return static_cast<uint64_t>(announced) < kMaxBodyReserve ? static_cast<size_t>(announced) : kMaxBodyReserve;
}

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends the request and returns the response, whatever its status. Throws haven::Error
  // (kIo) when no complete response arrived; `what` names the operation in the message.
  HttpResponse Perform(const HttpRequest& req, const std::string& what = "");

  int max_connections() const { return options_.max_connections; }
  // True when a request may stream its body (HttpRequest::stream) on the caller's thread.
  bool streams() const { return !options_.multiplex; }

 private:
  struct Handle;
  struct Multi;  // the multiplexing thread (options.multiplex)
  HttpResponse PerformOne(const HttpRequest& req, const std::string& what);
  std::unique_ptr<Handle> Acquire();
  void Release(std::unique_ptr<Handle> h);

  const HttpClientOptions options_;
  Mutex mu_;
  CondVar free_cv_;
  std::vector<std::unique_ptr<Handle>> free_ GUARDED_BY(mu_);
  int created_ GUARDED_BY(mu_) = 0;
  std::unique_ptr<Multi> multi_;
  // http2_prior_knowledge: the connection is open (see Perform); until then requests are
  // sent one at a time (first_mu_), so that only one of them opens it.
  std::atomic<bool> h2_open_{false};
  Mutex first_mu_;
};

// The haven::Error for a response with a non-2xx status (see the header comment); the
// message holds `what`, the status and, when the body carries one, the server's error code
// and message (S3's <Code>/<Message>).
Error StatusError(const HttpResponse& r, const std::string& what);
// Throws StatusError unless the status is 2xx.
void CheckStatus(const HttpResponse& r, const std::string& what);

// Percent-encodes s as RFC 3986 (unreserved characters kept); '/' is kept when
// keep_slash.
std::string UriEncode(std::string_view s, bool keep_slash);

}  // namespace haven
