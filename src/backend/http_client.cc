#include "backend/http_client.h"


#include <algorithm>
#include <charconv>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "backend/curl_library.h"
#include "backend/rate_limiter.h"

namespace haven {

struct HttpClient::Handle {
  CURL* easy = nullptr;
  Handle() : easy(Curl().easy_init()) {
    if (!easy) Fail(ErrorCode::kFatal, "cannot create a curl handle (out of memory)");
  }
  ~Handle() { Curl().easy_cleanup(easy); }
};

namespace {

// Per-call state the curl callbacks write into.
struct Transfer {
  CURL* easy;
  const HttpRequest* req;
  HttpResponse* resp;
  size_t upload_pos = 0;
  bool overflow = false;  // the body did not fit into req->into
  bool too_big = false;   // an in-memory body passed req->max_body
  bool started = false;   // the stream's first piece was handed over
  // What req->stream, req->stream_start or req->body_source->read threw.
  std::exception_ptr stream_failure;
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' ||
                        s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    t->resp->headers.clear();  // a new response (after 100 Continue or a redirect)
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon != std::string_view::npos)
    t->resp->headers.emplace_back(Lower(Trim(line.substr(0, colon))),
                                  std::string(Trim(line.substr(colon + 1))));
  return size * n;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  long status = 0;
  Curl().easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
  if (t->req->stream && status >= 200 && status < 300) {
    try {
      if (!t->started) {
        t->started = true;
        t->resp->status = status;
        if (t->req->stream_start) (*t->req->stream_start)(*t->resp);
      }
      (*t->req->stream)(ByteView(reinterpret_cast<const uint8_t*>(data), len));
    } catch (...) {
      t->stream_failure = std::current_exception();
      return 0;  // aborts the transfer with CURLE_WRITE_ERROR
    }
  } else if (t->req->into && status >= 200 && status < 300) {
    std::span<uint8_t> out = *t->req->into;
    if (t->resp->received + len > out.size()) {
      t->overflow = true;
      return 0;  // aborts the transfer with CURLE_WRITE_ERROR
    }
    std::memcpy(out.data() + t->resp->received, data, len);
  } else {
    const bool error_body = status < 200 || status >= 300;
    if (t->resp->body.empty() && !error_body) {  // one allocation for a small body
      curl_off_t announced = -1;
      Curl().easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced);
      t->resp->body.reserve(InitialBodyReserve(announced));
    }
    size_t keep = len;
    if (error_body) keep = std::min(len, kMaxErrorBody - std::min(kMaxErrorBody, t->resp->body.size()));
    const uint64_t max = t->req->max_body ? t->req->max_body : HttpRequest::kMaxBody;
    if (!error_body && t->resp->body.size() + len > max) {
      t->too_big = true;
      return 0;  // aborts the transfer with CURLE_WRITE_ERROR
    }
    t->resp->body.insert(t->resp->body.end(), reinterpret_cast<uint8_t*>(data),
                         reinterpret_cast<uint8_t*>(data) + keep);
  }
  t->resp->received += len;
  return len;
}

size_t OnRead(char* buf, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const HttpRequest& req = *t->req;
  // --limit-upload: paid as the bytes go out, in pieces small enough that no wait leaves
  // the connection idle for long (on the caller's thread; a multiplexed transfer runs on
  // the client's thread, where no pacing is in effect).
  size_t len = static_cast<size_t>(std::min<uint64_t>(
      {size * n, req.BodySize() - t->upload_pos, UploadPieceLimit()}));
  PayUploadBytes(len);
  if (req.body_source) {
    try {
      req.body_source->read(t->upload_pos, std::span<uint8_t>(reinterpret_cast<uint8_t*>(buf), len));
    } catch (...) {
      t->stream_failure = std::current_exception();
      return CURL_READFUNC_ABORT;
    }
  } else {
    std::memcpy(buf, req.body.data() + t->upload_pos, len);
  }
  t->upload_pos += len;
  return len;
}

int OnSeek(void* user, curl_off_t offset, int origin) {
  auto* t = static_cast<Transfer*>(user);
  if (origin != SEEK_SET || offset < 0 || static_cast<uint64_t>(offset) > t->req->BodySize())
    return CURL_SEEKFUNC_FAIL;
  t->upload_pos = static_cast<size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

bool RetryableCurlError(CURLcode c) {
  switch (c) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_OUT_OF_MEMORY:
      return false;
    default:
      return true;
  }
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (Curl().global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      Fail(ErrorCode::kFatal, "cannot initialise libcurl");
  });
}

// Sets the method, body and range of req on a freshly reset handle.
void SetMethod(CURL* c, const HttpRequest& req, Transfer* t, curl_slist** hdrs) {
  if (req.method == "HEAD") {
    Curl().easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (req.method == "PUT" || req.method == "POST") {
    // The body goes out through OnRead (never copied; paced by --limit-upload).
    if (req.method == "PUT") {
      Curl().easy_setopt(c, CURLOPT_UPLOAD, 1L);
      Curl().easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.BodySize()));
    } else {
      Curl().easy_setopt(c, CURLOPT_POST, 1L);
      Curl().easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.BodySize()));
    }
    Curl().easy_setopt(c, CURLOPT_READFUNCTION, OnRead);
    Curl().easy_setopt(c, CURLOPT_READDATA, t);
    Curl().easy_setopt(c, CURLOPT_SEEKFUNCTION, OnSeek);
    Curl().easy_setopt(c, CURLOPT_SEEKDATA, t);
    *hdrs = Curl().slist_append(*hdrs, "Expect:");  // no 100-continue round trip
  } else if (req.method != "GET") {
    Curl().easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
  if (req.range) {
    std::string r = "Range: bytes=" + std::to_string(req.range->offset) + "-";
    if (req.range->length) r += std::to_string(req.range->offset + req.range->length - 1);
    *hdrs = Curl().slist_append(*hdrs, r.c_str());
  }
}

std::string Excerpt(const Bytes& body, std::string_view tag) {
  std::string_view s(reinterpret_cast<const char*>(body.data()), std::min<size_t>(body.size(), 64 << 10));
  std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
  size_t a = s.find(open);
  if (a == std::string_view::npos) return "";
  a += open.size();
  size_t b = s.find(close, a);
  if (b == std::string_view::npos || b - a > 300) return "";
  std::string out(s.substr(a, b - a));
  for (char& ch : out)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e) ch = '?';
  return out;
}

}  // namespace

// The multiplexing loop: callers hand in prepared easy handles; one thread adds them to a
// multi handle (which owns the shared connection), drives every transfer and hands each
// result back. The callbacks of a transfer run on this thread while its caller waits.
struct HttpClient::Multi {
  CURLM* multi = nullptr;
  Mutex mu;
  CondVar cv;
  std::vector<CURL*> incoming GUARDED_BY(mu);
  std::map<CURL*, CURLcode> done GUARDED_BY(mu);
  bool stop GUARDED_BY(mu) = false;
  std::thread loop;

  Multi() : multi(Curl().multi_init()) {
    if (!multi) Fail(ErrorCode::kFatal, "cannot create a curl multi handle (out of memory)");
    Curl().multi_setopt(multi, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_MULTIPLEX));
    Curl().multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 1L);  // streams share one connection
    loop = std::thread([this] { Loop(); });
  }
  ~Multi() {
    {
      MutexLock l(mu);
      stop = true;
    }
    Curl().multi_wakeup(multi);
    loop.join();
    Curl().multi_cleanup(multi);
  }

  CURLcode Perform(CURL* easy) {
    {
      MutexLock l(mu);
      incoming.push_back(easy);
    }
    Curl().multi_wakeup(multi);
    MutexLock l(mu);
    while (done.find(easy) == done.end()) cv.Wait(mu);
    CURLcode rc = done[easy];
    done.erase(easy);
    return rc;
  }

  void Loop() {
    for (;;) {
      {
        MutexLock l(mu);
        if (stop) return;
        for (CURL* e : incoming) {
          CURLMcode mc = Curl().multi_add_handle(multi, e);
          if (mc != CURLM_OK) {
            done[e] = CURLE_OUT_OF_MEMORY;
            cv.NotifyAll();
          }
        }
        incoming.clear();
      }
      int running = 0;
      Curl().multi_perform(multi, &running);
      int left = 0;
      while (CURLMsg* m = Curl().multi_info_read(multi, &left)) {
        if (m->msg != CURLMSG_DONE) continue;
        CURL* e = m->easy_handle;
        CURLcode rc = m->data.result;
        Curl().multi_remove_handle(multi, e);
        MutexLock l(mu);
        done[e] = rc;
        cv.NotifyAll();
      }
      Curl().multi_poll(multi, nullptr, 0, 1000, nullptr);
    }
  }
};

std::optional<std::string> HttpResponse::Header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return std::nullopt;
}

std::optional<uint64_t> HttpResponse::RangeStart() const {
  auto v = Header("content-range");
  if (!v || v->rfind("bytes ", 0) != 0) return std::nullopt;
  uint64_t start = 0;
  const char* b = v->data() + 6;
  const char* e = v->data() + v->size();
  auto [p, ec] = std::from_chars(b, e, start);
  if (ec != std::errc() || p == b || p == e || *p != '-') return std::nullopt;
  return start;
}

std::optional<uint64_t> HttpResponse::ContentLength() const {
  auto v = Header("content-length");
  if (!v || v->empty() || v->size() > 19) return std::nullopt;
  uint64_t n = 0;
  for (char c : *v) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

HttpClient::HttpClient(HttpClientOptions options) : options_(std::move(options)) {
  GlobalInit();
  if (options_.max_connections < 1)
    Fail(ErrorCode::kInvalidArgument, "HTTP client needs at least one connection");
  if (options_.multiplex) multi_ = std::make_unique<Multi>();
}

HttpClient::~HttpClient() {
  multi_.reset();  // the multi handle goes before the easy handles it used
}

std::unique_ptr<HttpClient::Handle> HttpClient::Acquire() {
  MutexLock l(mu_);
  while (free_.empty() && created_ >= options_.max_connections) free_cv_.Wait(mu_);
  if (!free_.empty()) {
    auto h = std::move(free_.back());
    free_.pop_back();
    return h;
  }
  created_++;
  l.Unlock();
  try {
    return std::make_unique<Handle>();
  } catch (...) {
    MutexLock again(mu_);
    created_--;
    free_cv_.NotifyOne();
    throw;
  }
}

void HttpClient::Release(std::unique_ptr<Handle> h) {
  MutexLock l(mu_);
  free_.push_back(std::move(h));
  free_cv_.NotifyOne();
}

HttpResponse HttpClient::Perform(const HttpRequest& req, const std::string& what) {
  if (options_.http2_prior_knowledge && !h2_open_) {
    MutexLock first(first_mu_);
    if (!h2_open_) return PerformOne(req, what);
  }
  return PerformOne(req, what);
}

HttpResponse HttpClient::PerformOne(const HttpRequest& req, const std::string& what) {
  std::unique_ptr<Handle> h = Acquire();
  struct ReleaseOnExit {
    HttpClient* self;
    std::unique_ptr<Handle>& h;
    ~ReleaseOnExit() { self->Release(std::move(h)); }
  } release{this, h};

  CURL* c = h->easy;
  Curl().easy_reset(c);  // keeps the connection, DNS and TLS session caches
  HttpResponse resp;
  Transfer t{c, &req, &resp};
  char errbuf[CURL_ERROR_SIZE] = {0};
  Curl().easy_setopt(c, CURLOPT_URL, req.url.c_str());
  Curl().easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  Curl().easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  Curl().easy_setopt(c, CURLOPT_USERAGENT, options_.user_agent.c_str());
  Curl().easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  Curl().easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, options_.low_speed_limit);
  Curl().easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options_.low_speed_time.count()));
  Curl().easy_setopt(c, CURLOPT_MAXCONNECTS, 1L);
  Curl().easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  std::string ca = options_.ca_file;
  if (ca.empty())
    if (const char* env = std::getenv("AWS_CA_BUNDLE"); env && *env) ca = env;
  if (!ca.empty()) Curl().easy_setopt(c, CURLOPT_CAINFO, ca.c_str());
  Curl().easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  Curl().easy_setopt(c, CURLOPT_HEADERDATA, &t);
  Curl().easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  Curl().easy_setopt(c, CURLOPT_WRITEDATA, &t);
  if (req.stream) {
    if (multi_) Fail(ErrorCode::kFatal, "HttpClient: a multiplexing client cannot stream a body");
    Curl().easy_setopt(c, CURLOPT_BUFFERSIZE, 256L << 10);  // fewer, larger pieces
  }
  if (!options_.unix_socket_path.empty()) {
    Curl().easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, options_.unix_socket_path.c_str());
    // The one connection (rclone's stdio) cannot be opened again once closed: never let
    // curl retire it as idle (CURLOPT_MAXAGE_CONN defaults to 118 s).
    Curl().easy_setopt(c, CURLOPT_MAXAGE_CONN, 100L * 365 * 24 * 3600);
  }
  // HTTP/2 without an upgrade: prior knowledge opens the connection; a request that reuses it
  // must not ask for prior knowledge again, as libcurl 7.88 then fails with "Error in the
  // HTTP2 framing layer" (curl issue 10634, fixed in 8.0): it asks for HTTP/2, which the
  // open connection already speaks.
  if (options_.http2_prior_knowledge)
    Curl().easy_setopt(c, CURLOPT_HTTP_VERSION,
                     static_cast<long>(h2_open_.load() ? CURL_HTTP_VERSION_2_0
                                                       : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE));

  curl_slist* hdrs = nullptr;
  SetMethod(c, req, &t, &hdrs);
  for (const auto& [k, v] : req.headers) hdrs = Curl().slist_append(hdrs, (k + ": " + v).c_str());
  Curl().easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  if (multi_) Curl().easy_setopt(c, CURLOPT_PIPEWAIT, 1L);  // wait for the shared connection
  CURLcode rc = multi_ ? multi_->Perform(c) : Curl().easy_perform(c);
  Curl().slist_free_all(hdrs);
  const std::string label = what.empty() ? req.method : what;
  if (t.stream_failure) std::rethrow_exception(t.stream_failure);
  if (t.overflow)
    Fail(ErrorCode::kIo, label + ": the server sent more than the " +
                             std::to_string(req.into->size()) + " bytes requested", true);
  if (t.too_big)
    Fail(ErrorCode::kIo, label + ": the server sent more than " +
                             std::to_string(req.max_body ? req.max_body : HttpRequest::kMaxBody) +
                             " bytes", true);
  if (rc != CURLE_OK) {
    std::string detail = errbuf[0] ? errbuf : Curl().easy_strerror(rc);
    while (!detail.empty() && detail.back() == '\n') detail.pop_back();
    Fail(ErrorCode::kIo, label + ": " + detail, RetryableCurlError(rc));
  }
  Curl().easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp.status);
  if (options_.http2_prior_knowledge) h2_open_ = true;
  return resp;
}

namespace {
// S3 error codes that name a transient condition whatever their status (RequestTimeout is a
// 400: the server gave up waiting for the body, as under a very low --limit-upload;
// OperationAborted a 409 while a conflicting operation runs), as the AWS SDKs retry them.
bool TransientS3Code(std::string_view code) {
  static constexpr std::string_view kCodes[] = {
      "RequestTimeout",  "RequestTimeoutException", "PriorRequestNotComplete",
      "SlowDown",        "Throttling",              "ThrottlingException",
      "RequestThrottled", "RequestLimitExceeded",   "BandwidthLimitExceeded",
      "TooManyRequestsException", "OperationAborted"};
  for (std::string_view c : kCodes)
    if (code == c) return true;
  return false;
}
}  // namespace

Error StatusError(const HttpResponse& r, const std::string& what) {
  std::string msg = what + ": HTTP status " + std::to_string(r.status);
  std::string code = Excerpt(r.body, "Code"), text = Excerpt(r.body, "Message");
  if (!code.empty()) msg += " " + code;
  if (!text.empty()) msg += " (" + text + ")";
  if (r.status == 404) return Error(ErrorCode::kNotFound, msg);
  if (r.status == 401 || r.status == 403)
    return Error(ErrorCode::kIo, msg + ": access denied, check the credentials and permissions");
  bool retry = r.status >= 500 || r.status == 429 || r.status == 408 || TransientS3Code(code);
  return Error(ErrorCode::kIo, msg, retry);
}

void CheckStatus(const HttpResponse& r, const std::string& what) {
  if (r.status < 200 || r.status >= 300) throw StatusError(r, what);
}

std::string UriEncode(std::string_view s, bool keep_slash) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace haven
