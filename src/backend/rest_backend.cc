#include "backend/rest_backend.h"

#include <algorithm>
#include <limits>

#include "backend/rest_listing.h"
#include "core/error.h"
#include "core/id.h"

namespace haven {
namespace {

constexpr const char* kContentTypeV2 = "application/vnd.x.restic.rest.v2";
constexpr const char* kUsage = "want rest:http(s)://[USER:PASSWORD@]HOST[:PORT]/[PATH]";

// %XX sequences decoded; nullopt for a malformed one.
std::optional<std::string> PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// TOTAL of a "Content-Range: bytes A-B/TOTAL" reply header; nullopt when absent or "*".
std::optional<uint64_t> RangeTotal(const HttpResponse& r) {
  auto v = r.Header("content-range");
  if (!v) return std::nullopt;
  size_t slash = v->rfind('/');
  if (slash == std::string::npos || slash + 1 >= v->size() || v->size() - slash > 20) return std::nullopt;
  uint64_t n = 0;
  for (char c : v->substr(slash + 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

// The first line of a server's error body, printable ASCII, at most 200 characters.
std::string BodyExcerpt(const Bytes& body) {
  std::string out;
  for (uint8_t c : body) {
    if (c == '\n' || c == '\r' || out.size() >= 200) break;
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The folder of a file type in the URL ("" for config).
std::string DirOf(FileType t) { return t == FileType::kConfig ? "" : std::string(FileTypeDir(t)) + "/"; }

}  // namespace

RestLocation ParseRestLocation(std::string_view location) {
  if (location.rfind("rest:", 0) != 0) Fail(ErrorCode::kInvalidArgument, "not a rest: location");
  std::string_view rest = location.substr(5);
  std::string scheme;
  if (rest.rfind("http://", 0) == 0) {
    scheme = "http://";
  } else if (rest.rfind("https://", 0) == 0) {
    scheme = "https://";
  } else {
    Fail(ErrorCode::kInvalidArgument, std::string("rest: the location must start with http:// or https:// (") + kUsage + ")");
  }
  rest.remove_prefix(scheme.size());
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "/" : rest.substr(slash);
  RestLocation loc;
  // A '/' in a password ends the authority early ("http://u:pa/ss@host/"): refused without
  // echoing the location (it holds the password), as Go's URL parser refuses it for restic.
  if (authority.find('@') == std::string_view::npos && path.find('@') != std::string_view::npos)
    Fail(ErrorCode::kInvalidArgument, "rest: '@' after the host in the location: write a '/' in "
                                      "the user name or password as %2F");
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    authority.remove_prefix(at + 1);
    size_t colon = userinfo.find(':');
    auto user = PercentDecode(userinfo.substr(0, colon));
    auto pass = colon == std::string_view::npos ? std::optional<std::string>("")
                                                : PercentDecode(userinfo.substr(colon + 1));
    if (!user || !pass)
      Fail(ErrorCode::kInvalidArgument, "rest: malformed %-escape in the user name or password of the location");
    loc.user = *user;
    loc.password = *pass;
  }
  if (authority.empty()) Fail(ErrorCode::kInvalidArgument, std::string("rest: no host in the location (") + kUsage + ")");
  if (size_t colon = authority.rfind(':'); colon != std::string_view::npos && authority.back() != ']') {
    std::string_view port = authority.substr(colon + 1);
    bool digits = !port.empty() && port.size() <= 5 &&
                  std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits && authority.find(']') == std::string_view::npos)
      Fail(ErrorCode::kInvalidArgument, "rest: the port in the location is not a number (a '/' "
                                        "in a password must be written as %2F)");
  }
  for (char c : authority) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == '?' || c == '#' || c == '\\')
      Fail(ErrorCode::kInvalidArgument, "rest: invalid character in the host of the location");
  }
  for (char c : path) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == '?' || c == '#')
      Fail(ErrorCode::kInvalidArgument, "rest: the path of the location may not hold spaces, '?' or '#'");
  }
  loc.base_url = scheme + std::string(authority) + std::string(path);
  if (loc.base_url.back() != '/') loc.base_url += '/';
  return loc;
}

RestBackend::RestBackend(std::string base_url, RestOptions options)
    : base_(std::move(base_url)), options_(std::move(options)) {
  if (base_.empty() || base_.back() != '/') Fail(ErrorCode::kInvalidArgument, "rest: the base URL must end with '/'");
  if (!options_.user.empty() || !options_.password.empty())
    auth_header_ = "Basic " + Base64Encode(AsBytes(options_.user + ":" + options_.password));
  HttpClientOptions h = options_.http;
  h.max_connections = options_.connections;
  if (!options_.ca_file.empty()) h.ca_file = options_.ca_file;
  http_ = std::make_unique<HttpClient>(h);
}

std::string RestBackend::Location() const {
  if (!options_.display.empty()) return options_.display;
  if (options_.user.empty()) return "rest:" + base_;
  size_t scheme_end = base_.find("://") + 3;
  return "rest:" + base_.substr(0, scheme_end) + options_.user + ":***@" + base_.substr(scheme_end);
}

std::string RestBackend::UrlOf(const Handle& h) const {
  if (h.type == FileType::kConfig) return base_ + "config";
  return base_ + DirOf(h.type) + h.name;
}

HttpResponse RestBackend::Send(HttpRequest req, const std::string& what) {
  req.headers.emplace_back("Accept", kContentTypeV2);
  if (!auth_header_.empty()) req.headers.emplace_back("Authorization", auth_header_);
  try {
    return http_->Perform(req, what);
  } catch (const Error& e) {
    if (options_.transport_failure) {
      if (std::optional<std::string> why = options_.transport_failure())
        Fail(ErrorCode::kIo, std::string(e.what()) + "; " + *why);
    }
    throw;
  }
}

void RestBackend::Check(const HttpResponse& r, const std::string& what) const {
  if (r.status >= 200 && r.status < 300) return;
  std::string msg = what + ": HTTP status " + std::to_string(r.status);
  std::string body = BodyExcerpt(r.body);
  if (!body.empty()) msg += " (" + body + ")";
  if (r.status == 404) Fail(ErrorCode::kNotFound, msg + ": not found");
  if (r.status == 401)
    Fail(ErrorCode::kIo, msg + ": the REST server at " + Location() +
                             " refused the user name or password (wrong or missing credentials)");
  if (r.status == 403)
    Fail(ErrorCode::kIo, msg + ": refused by the REST server (a server in append-only mode "
                               "keeps every file but locks; or this user may not do this here)");
  bool retry = r.status >= 500 || r.status == 429 || r.status == 408;
  Fail(ErrorCode::kIo, msg, retry);
}

bool RestBackend::Exists() {
  try {
    return Stat(Handle{FileType::kConfig, "config"}).has_value();
  } catch (const Error& e) {  // the first request: say where it went
    throw Error(e.code(), Location() + ": " + e.what(), e.retryable());
  }
}

void RestBackend::Create() {
  if (Exists()) Fail(ErrorCode::kFatal, "config file already exists in " + Location());
  HttpRequest req{.method = "POST", .url = base_ + "?create=true"};
  req.headers.emplace_back("Content-Type", "binary/octet-stream");
  Check(Send(req, "create the repository"), "create the repository at " + Location());
}

void RestBackend::Save(const Handle& h, ByteView data) { Post(h, data, nullptr); }

void RestBackend::SaveFrom(const Handle& h, const SaveSource& src) { Post(h, {}, &src); }

void RestBackend::Post(const Handle& h, ByteView data, const SaveSource* src) {
  CheckHandle(h);
  const uint64_t bytes = src ? src->size : data.size();
  auto existing = [&] {
    auto size = Stat(h);
    if (size && *size != bytes)
      Fail(ErrorCode::kFatal, "cannot save " + h.ToString() + ": it exists already with " +
                                  std::to_string(*size) + " bytes, not " + std::to_string(bytes));
    return size.has_value();  // the same size: a retried upload, files are immutable
  };
  // A name that is the SHA-256 of these bytes (every file of the format but the config;
  // checked here unless the source's writer computed it, a hash costs far less than a
  // round trip) cannot name other bytes, so a
  // POST over an existing file writes what is there already: the POST goes first and
  // alone, one round trip (as restic's client). A server that keeps existing files
  // (rest-server, append-only mode) answers 403, and only then is the file stat'ed. Any
  // other name is stat'ed first, as an overwriting server (rclone) would replace it.
  const bool content_named = h.type != FileType::kConfig &&
      (src ? src->named_by_content || Sha256Hex(*src) == h.name : Sha256(data).Hex() == h.name);
  if (!content_named && existing()) return;
  const std::string what = "save " + h.ToString();
  HttpRequest req{.method = "POST", .url = UrlOf(h), .body = data, .body_source = src};
  req.headers.emplace_back("Content-Type", "application/octet-stream");
  HttpResponse r = Send(req, what);
  if (r.status == 403 && content_named && existing()) return;
  Check(r, what);
}

HttpResponse RestBackend::GetRange(const Handle& h, uint64_t offset, uint64_t length,
                                   std::optional<std::span<uint8_t>> into) {
  const std::string what = "load " + h.ToString();
  HttpRequest req{.method = "GET", .url = UrlOf(h), .into = into};
  if (offset || length) req.range = HttpRange{offset, length};
  // At most the whole prefix (a server may answer 200 with the whole object), not without bound.
  if (!into && length) req.max_body = offset + length;
  HttpResponse r = Send(req, what);
  if (r.status == 416) {
    auto size = Stat(h);
    if (!size) Fail(ErrorCode::kNotFound, what + ": not found");
    if (offset == *size && length == 0 && !into) return HttpResponse{.status = 206};
    FailShortRead(h, offset, length ? length : 1, 0);
  }
  Check(r, what);
  // rclone answers a range that starts past the end with 206 and "bytes 12-10/11".
  if (r.status == 206) {
    if (auto total = RangeTotal(r); total && offset > *total) FailShortRead(h, offset, length ? length : 1, 0);
    // Bytes from another offset would fail their MAC later, far from the cause (or make
    // repair index drop a good pack): a server fault, named here and retried.
    if (auto start = r.RangeStart(); !start || *start != offset)
      Fail(ErrorCode::kIo, what + ": the partial reply does not start at offset " + std::to_string(offset), true);
  }
  return r;
}

Bytes RestBackend::Load(const Handle& h, uint64_t offset, uint64_t length) {
  CheckHandle(h);
  if (length && offset > std::numeric_limits<uint64_t>::max() - length) FailShortRead(h, offset, length, 0);
  HttpResponse r = GetRange(h, offset, length, std::nullopt);
  if (r.status == 200 && (offset || length)) {  // the server sent the whole object
    if (offset > r.body.size() || (length && r.body.size() - offset < length))
      FailShortRead(h, offset, length, offset > r.body.size() ? 0 : r.body.size() - offset);
    uint64_t n = length ? length : r.body.size() - offset;
    return Bytes(r.body.begin() + static_cast<long>(offset), r.body.begin() + static_cast<long>(offset + n));
  }
  if (length && r.body.size() != length) FailShortRead(h, offset, length, r.body.size());
  return std::move(r.body);
}

void RestBackend::LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) {
  CheckHandle(h);
  if (out.size() > std::numeric_limits<uint64_t>::max() - offset) FailShortRead(h, offset, out.size(), 0);
  if (out.empty()) {
    auto size = Stat(h);
    if (!size) Fail(ErrorCode::kNotFound, "load " + h.ToString() + ": not found");
    if (offset > *size) FailShortRead(h, offset, 0, 0);
    return;
  }
  HttpResponse r = GetRange(h, offset, out.size(), out);
  if (r.status == 200 && offset != 0)
    Fail(ErrorCode::kIo, "load " + h.ToString() + ": the server ignored the byte range", true);
  if (r.received != out.size()) FailShortRead(h, offset, out.size(), r.received);
}

void RestBackend::LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                             const std::function<void(ByteView)>& sink) {
  if (length == 0) return;
  if (!http_->streams()) return Backend::LoadStream(h, offset, length, sink);
  CheckHandle(h);
  if (offset > std::numeric_limits<uint64_t>::max() - length) FailShortRead(h, offset, length, 0);
  const std::string what = "load " + h.ToString();
  // The reply is checked before its first byte is handed over (as GetRange does after).
  const std::function<void(const HttpResponse&)> start = [&](const HttpResponse& r) {
    if (r.status == 200 && offset != 0)
      Fail(ErrorCode::kIo, what + ": the server ignored the byte range", true);
    if (r.status != 206) return;
    if (auto total = RangeTotal(r); total && offset > *total) FailShortRead(h, offset, length, 0);
    if (auto from = r.RangeStart(); !from || *from != offset)
      Fail(ErrorCode::kIo, what + ": the partial reply does not start at offset " + std::to_string(offset), true);
  };
  uint64_t got = 0;
  const std::function<void(ByteView)> piece = [&](ByteView p) {
    if (p.size() > length - got)  // as LoadInto: a reply longer than asked is refused
      Fail(ErrorCode::kIo, what + ": the server sent more than the " + std::to_string(length) +
                               " bytes requested", true);
    got += p.size();
    sink(p);
  };
  HttpRequest req{.method = "GET", .url = UrlOf(h)};
  req.range = HttpRange{offset, length};
  req.stream = &piece;
  req.stream_start = &start;
  HttpResponse r = Send(req, what);
  if (r.status == 416) {
    if (!Stat(h)) Fail(ErrorCode::kNotFound, what + ": not found");
    FailShortRead(h, offset, length, 0);
  }
  Check(r, what);
  if (got != length) FailShortRead(h, offset, length, got);
}

std::optional<uint64_t> RestBackend::Stat(const Handle& h) {
  CheckHandle(h);
  const std::string what = "stat " + h.ToString();
  HttpResponse r = Send(HttpRequest{.method = "HEAD", .url = UrlOf(h)}, what);
  if (r.status == 404) return std::nullopt;
  Check(r, what);
  auto size = r.ContentLength();
  if (!size) Fail(ErrorCode::kIo, what + ": no Content-Length in the reply", true);
  return size;
}

void RestBackend::List(FileType t, const std::function<void(const FileInfo&)>& fn) {
  if (t == FileType::kConfig) {
    if (auto size = Stat(Handle{FileType::kConfig, "config"})) fn(FileInfo{"config", *size});
    return;
  }
  const std::string what = std::string("list ") + FileTypeDir(t);
  HttpResponse r = Send(HttpRequest{.method = "GET", .url = base_ + DirOf(t)}, what);
  Check(r, what);
  std::vector<FileInfo> items;
  const std::string type = r.Header("content-type").value_or("");
  if (type.rfind(kContentTypeV2, 0) == 0) {
    for (FileInfo& fi : ParseRestListV2(AsChars(r.body), what))
      if (IsValidObjectName(fi.name)) items.push_back(std::move(fi));
  } else {  // v1: names only, a HEAD each for the size
    for (std::string& name : ParseRestListV1(AsChars(r.body), what)) {
      if (!IsValidObjectName(name)) continue;
      if (auto size = Stat(Handle{t, name})) items.push_back(FileInfo{std::move(name), *size});
    }
  }
  for (const FileInfo& fi : items) fn(fi);
}

void RestBackend::Remove(const Handle& h) {
  CheckHandle(h);
  // One round trip: REST servers answer a DELETE of a missing file with 404 (kNotFound).
  const std::string what = "remove " + h.ToString();
  Check(Send(HttpRequest{.method = "DELETE", .url = UrlOf(h)}, what), what);
}

}  // namespace haven
