#include "backend/s3_backend.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_set>

#include "backend/s3_xml.h"
#include "core/error.h"

namespace haven {
namespace {

const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string TrimSlashes(std::string_view s) {
  while (!s.empty() && s.front() == '/') s.remove_prefix(1);
  while (!s.empty() && s.back() == '/') s.remove_suffix(1);
  return std::string(s);
}

// A bucket name usable as a DNS label (virtual-hosted style).
bool DnsCompatible(const std::string& bucket, bool https) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  for (char c : bucket) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (c == '.' && !https);
    if (!ok) return false;
  }
  return bucket.front() != '-' && bucket.back() != '-';
}

bool UseDnsStyle(const S3Location& loc, S3BucketLookup lookup) {
  if (lookup == S3BucketLookup::kPath) return false;
  if (lookup == S3BucketLookup::kDns) return true;
  std::string host = loc.host.substr(0, loc.host.find(':'));
  bool aws = host == "amazonaws.com" ||
             (host.size() > 14 && host.compare(host.size() - 14, 14, ".amazonaws.com") == 0);
  return aws && DnsCompatible(loc.bucket, loc.https);
}

}  // namespace

S3Location ParseS3Location(std::string_view location) {
  if (location.rfind("s3:", 0) != 0)
    Fail(ErrorCode::kInvalidArgument, "not an s3: location");
  std::string_view rest = location.substr(3);
  S3Location loc;
  if (rest.rfind("http://", 0) == 0) {
    loc.https = false;
    rest.remove_prefix(7);
  } else if (rest.rfind("https://", 0) == 0) {
    rest.remove_prefix(8);
  } else if (rest.find("://") != std::string_view::npos) {
    Fail(ErrorCode::kInvalidArgument, "s3: only http:// and https:// endpoints are supported");
  }
  size_t slash = rest.find('/');
  loc.host = std::string(rest.substr(0, slash));
  if (loc.host.find('@') != std::string::npos)
    Fail(ErrorCode::kInvalidArgument,
         "s3: credentials in the repository location are not supported (use "
         "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)");
  if (loc.host.empty()) Fail(ErrorCode::kInvalidArgument, "s3: no host in the repository location");
  std::string path = slash == std::string_view::npos ? "" : TrimSlashes(rest.substr(slash));
  size_t b = path.find('/');
  loc.bucket = path.substr(0, b);
  if (b != std::string::npos) loc.prefix = TrimSlashes(path.substr(b));
  if (loc.bucket.empty())
    Fail(ErrorCode::kInvalidArgument, "s3: no bucket in the repository location (want "
                                      "s3:http(s)://HOST[:PORT]/BUCKET[/PREFIX])");
  return loc;
}

S3BucketLookup ParseBucketLookup(const std::string& s) {
  if (s == "auto") return S3BucketLookup::kAuto;
  if (s == "dns") return S3BucketLookup::kDns;
  if (s == "path") return S3BucketLookup::kPath;
  Fail(ErrorCode::kInvalidArgument, "invalid value \"" + s + "\" for s3.bucket-lookup (want auto, dns or path)");
}

std::optional<AwsCredentials> ParseCredentialsFile(std::string_view text, const std::string& profile) {
  std::optional<AwsCredentials> found;
  bool in_profile = false;
  std::istringstream in{std::string(text)};
  for (std::string raw; std::getline(in, raw);) {
    std::string_view line = TrimSpace(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      in_profile = TrimSpace(line.substr(1, line.size() - 2)) == profile;
      if (in_profile && !found) found = AwsCredentials{};
      continue;
    }
    size_t eq = line.find('=');
    if (!in_profile || eq == std::string_view::npos) continue;
    std::string_view key = TrimSpace(line.substr(0, eq)), value = TrimSpace(line.substr(eq + 1));
    if (key == "aws_access_key_id") found->access_key = value;
    if (key == "aws_secret_access_key") found->secret_key = value;
    if (key == "aws_session_token") found->session_token = value;
  }
  return found;
}

AwsCredentials LoadAwsCredentials(const std::function<const char*(const char*)>& env) {
  auto get = [&](const char* name) {
    const char* v = env(name);
    return std::string(v ? v : "");
  };
  AwsCredentials c{get("AWS_ACCESS_KEY_ID"), get("AWS_SECRET_ACCESS_KEY"), get("AWS_SESSION_TOKEN")};
  if (!c.access_key.empty() && !c.secret_key.empty()) return c;
  if (!c.access_key.empty() || !c.secret_key.empty())
    Fail(ErrorCode::kInvalidArgument,
         "s3: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together");
  std::string profile = get("AWS_PROFILE");
  if (profile.empty()) profile = "default";
  std::string file = get("AWS_SHARED_CREDENTIALS_FILE");
  if (file.empty() && !get("HOME").empty()) file = get("HOME") + "/.aws/credentials";
  std::ifstream in(file);
  std::optional<AwsCredentials> p;
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    p = ParseCredentialsFile(ss.str(), profile);
  }
  if (!p)
    Fail(ErrorCode::kInvalidArgument,
         "s3: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE "
         "with a profile in " + (file.empty() ? std::string("~/.aws/credentials") : file) +
         " (profile \"" + profile + "\" not found)");
  if (p->access_key.empty() || p->secret_key.empty())
    Fail(ErrorCode::kInvalidArgument, "s3: profile \"" + profile + "\" in " + file +
                                          " lacks aws_access_key_id or aws_secret_access_key");
  return *p;
}

S3Backend::S3Backend(S3Location location, S3Options options)
    : loc_(std::move(location)),
      options_(std::move(options)),
      dns_style_(UseDnsStyle(loc_, options_.bucket_lookup)),
      region_(options_.region) {
  HttpClientOptions h;
  h.max_connections = options_.connections;
  h.ca_file = options_.ca_file;
  http_ = std::make_unique<HttpClient>(h);
}

std::string S3Backend::Location() const {
  return std::string("s3:") + (loc_.https ? "https://" : "http://") + loc_.host + "/" + loc_.bucket +
         (loc_.prefix.empty() ? "" : "/" + loc_.prefix);
}

std::string S3Backend::KeyOf(const Handle& h) const {
  return (loc_.prefix.empty() ? "" : loc_.prefix + "/") + h.ToString();
}

HttpResponse S3Backend::Send(const Call& call, const std::string& what) {
  SigV4Request sr;
  sr.method = call.method;
  sr.host = dns_style_ ? loc_.bucket + "." + loc_.host : loc_.host;
  std::string key = UriEncode(call.key, /*keep_slash=*/true);
  sr.path = dns_style_ ? "/" + key : "/" + UriEncode(loc_.bucket, false) + (call.key.empty() ? "" : "/" + key);
  sr.query = call.query;
  sr.headers = call.headers;
  if (call.range) {
    std::string r = "bytes=" + std::to_string(call.range->offset) + "-";
    if (call.range->length) r += std::to_string(call.range->offset + call.range->length - 1);
    sr.headers.emplace_back("Range", r);
  }
  sr.payload_sha256 = !call.payload_sha256.empty() ? call.payload_sha256
                      : call.body.empty()           ? kEmptySha256
                                                    : HexSha256(call.body);
  HttpRequest req;
  req.method = call.method;
  std::string query = CanonicalQuery(call.query);
  req.url = (loc_.https ? "https://" : "http://") + sr.host + sr.path + (query.empty() ? "" : "?" + query);
  req.body = call.body;
  req.body_source = call.body_source;
  req.into = call.into;  // the Range header is in req.headers already
  req.stream = call.stream;
  req.stream_start = call.stream_start;
  for (int attempt = 0;; ++attempt) {
    const std::string region = Region();
    req.headers = sr.headers;
    for (auto& hd : SignV4(sr, options_.credentials, region, AmzDate(std::chrono::system_clock::now())))
      req.headers.push_back(std::move(hd));
    HttpResponse r = http_->Perform(req, what);
    auto hint = r.Header("x-amz-bucket-region");
    if (attempt > 0 || (r.status != 301 && r.status != 400) || !hint || hint->empty() ||
        *hint == region || hint->size() > 64)
      return r;
    MutexLock l(region_mu_);
    region_ = *hint;
  }
}

std::string S3Backend::Region() const {
  MutexLock l(region_mu_);
  return region_;
}

bool S3Backend::Exists() {
  try {
    return Stat(Handle{FileType::kConfig, "config"}).has_value();
  } catch (const Error& e) {  // the first request: say where it went
    throw Error(e.code(), Location() + ": " + e.what(), e.retryable());
  }
}

void S3Backend::EnsureBucket() {
  const std::string what = "bucket " + loc_.bucket;
  HttpResponse r = Send(Call{.method = "HEAD"}, "stat " + what);
  if (r.status == 200) return;
  if (r.status != 404) CheckStatus(r, "stat " + what);
  std::string body;
  if (const std::string region = Region(); region != "us-east-1")
    body = "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
           "<LocationConstraint>" + region + "</LocationConstraint></CreateBucketConfiguration>";
  r = Send(Call{.method = "PUT", .body = AsBytes(body)}, "create " + what);
  if (r.status == 409 && AsChars(r.body).find("BucketAlreadyOwnedByYou") != std::string_view::npos) return;
  CheckStatus(r, "create " + what);
}

void S3Backend::Create() {
  if (Exists()) Fail(ErrorCode::kFatal, "config file already exists in " + Location());
  EnsureBucket();
}

void S3Backend::Save(const Handle& h, ByteView data) { Put(h, data, nullptr); }

void S3Backend::SaveFrom(const Handle& h, const SaveSource& src) { Put(h, {}, &src); }

void S3Backend::Put(const Handle& h, ByteView data, const SaveSource* src) {
  CheckHandle(h);
  const uint64_t bytes = src ? src->size : data.size();
  // One round trip: the PUT is conditional (If-None-Match: *, S3's "create only"), so an
  // existing object is never replaced and no HEAD goes first. 412: the name exists (a
  // retried upload whose first reply was lost, or another client's copy of the same
  // content); 409: AWS's answer to a concurrent conditional PUT of the same name. Only
  // then is the object stat'ed, to accept an equal size as files are content-addressed.
  const std::string what = "save " + h.ToString();
  auto existing = [&]() {
    auto size = Stat(h);
    if (size && *size != bytes)
      Fail(ErrorCode::kFatal, "cannot save " + h.ToString() + ": it exists already with " +
                                  std::to_string(*size) + " bytes, not " +
                                  std::to_string(bytes));
    return size.has_value();
  };
  Call c{.method = "PUT", .key = KeyOf(h), .body = data, .body_source = src};
  // The signature covers the payload's SHA-256: a streamed pack's name is that hash (the
  // server then checks the bytes it got against it); anything else is read once to hash it.
  if (src) c.payload_sha256 = src->named_by_content ? h.name : Sha256Hex(*src);
  if (!options_.storage_class.empty()) c.headers.emplace_back("x-amz-storage-class", options_.storage_class);
  if (!plain_put_.load(std::memory_order_relaxed)) {
    c.headers.emplace_back("If-None-Match", "*");
    HttpResponse r = Send(c, what);
    // A store that does not implement conditional writes: from now on HEAD, then a plain PUT.
    const bool unsupported = r.status == 501 ||
        AsChars(r.body).find("<Code>NotImplemented</Code>") != std::string_view::npos;
    if (!unsupported) {
      if (r.status != 412 && r.status != 409) {
        CheckStatus(r, what);
        return;
      }
      if (existing()) return;  // a retried upload: files are immutable
      Fail(ErrorCode::kIo, what + ": a conflicting upload of the same name (status " +
                               std::to_string(r.status) + ")", true);
    }
    plain_put_.store(true, std::memory_order_relaxed);
    c.headers.pop_back();
  }
  // The look and the write are two requests: content-addressed names make a race between
  // two writers of one name harmless (the same bytes).
  if (existing()) return;
  CheckStatus(Send(c, what), what);
}

namespace {

// A 206 must carry the bytes asked for: Content-Range starting at the requested offset.
// Bytes from elsewhere in the object would fail their blob MAC later, far from the cause; a
// wrong or missing header is a (retryable) server fault named here.
void CheckContentRangeStart(const HttpResponse& r, uint64_t offset, const std::string& what) {
  auto start = r.RangeStart();
  if (!start) Fail(ErrorCode::kIo, what + ": a partial reply without a valid Content-Range", true);
  if (*start != offset) {
    Fail(ErrorCode::kIo, what + ": the server sent bytes from offset " + std::to_string(*start) +
                             ", not " + std::to_string(offset), true);
  }
}

}  // namespace

HttpResponse S3Backend::GetRange(const Handle& h, uint64_t offset, uint64_t length,
                                 std::optional<std::span<uint8_t>> into) {
  Call c{.key = KeyOf(h), .into = into};
  if (offset || length) c.range = HttpRange{offset, length};
  const std::string what = "load " + h.ToString();
  HttpResponse r = Send(c, what);
  if (r.status == 416) {
    auto size = Stat(h);
    if (!size) Fail(ErrorCode::kNotFound, what + ": not found");
    if (offset == *size && length == 0 && !into) return HttpResponse{.status = 206};
    FailShortRead(h, offset, length ? length : 1, 0);
  }
  CheckStatus(r, what);
  if (r.status == 200 && (offset || length))
    Fail(ErrorCode::kIo, what + ": the server ignored the byte range", true);
  if (r.status == 206) CheckContentRangeStart(r, offset, what);
  return r;
}

Bytes S3Backend::Load(const Handle& h, uint64_t offset, uint64_t length) {
  CheckHandle(h);
  if (length && offset > std::numeric_limits<uint64_t>::max() - length) FailShortRead(h, offset, length, 0);
  HttpResponse r = GetRange(h, offset, length, std::nullopt);
  if (length && r.body.size() != length) FailShortRead(h, offset, length, r.body.size());
  return std::move(r.body);
}

void S3Backend::LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) {
  CheckHandle(h);
  if (out.size() > std::numeric_limits<uint64_t>::max() - offset) FailShortRead(h, offset, out.size(), 0);
  if (out.empty()) {
    auto size = Stat(h);
    if (!size) Fail(ErrorCode::kNotFound, "load " + h.ToString() + ": not found");
    if (offset > *size) FailShortRead(h, offset, 0, 0);
    return;
  }
  HttpResponse r = GetRange(h, offset, out.size(), out);
  if (r.received != out.size()) FailShortRead(h, offset, out.size(), r.received);
}

void S3Backend::LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                           const std::function<void(ByteView)>& sink) {
  if (length == 0) return;
  if (!http_->streams()) return Backend::LoadStream(h, offset, length, sink);
  CheckHandle(h);
  if (offset > std::numeric_limits<uint64_t>::max() - length) FailShortRead(h, offset, length, 0);
  const std::string what = "load " + h.ToString();
  // The reply is checked before its first byte is handed over (as GetRange does after).
  const std::function<void(const HttpResponse&)> start = [&](const HttpResponse& r) {
    if (r.status == 200) Fail(ErrorCode::kIo, what + ": the server ignored the byte range", true);
    if (r.status == 206) CheckContentRangeStart(r, offset, what);
  };
  uint64_t got = 0;
  const std::function<void(ByteView)> piece = [&](ByteView p) {
    if (p.size() > length - got)
      Fail(ErrorCode::kIo, what + ": the server sent more than the " + std::to_string(length) +
                               " bytes requested", true);
    got += p.size();
    sink(p);
  };
  Call c{.key = KeyOf(h), .stream = &piece, .stream_start = &start};
  c.range = HttpRange{offset, length};
  HttpResponse r = Send(c, what);
  if (r.status == 416) {
    if (!Stat(h)) Fail(ErrorCode::kNotFound, what + ": not found");
    FailShortRead(h, offset, length, 0);
  }
  CheckStatus(r, what);
  if (got != length) FailShortRead(h, offset, length, got);
}

std::optional<uint64_t> S3Backend::Stat(const Handle& h) {
  CheckHandle(h);
  const std::string what = "stat " + h.ToString();
  HttpResponse r = Send(Call{.method = "HEAD", .key = KeyOf(h)}, what);
  if (r.status == 404) return std::nullopt;
  CheckStatus(r, what);
  auto size = r.ContentLength();
  if (!size) Fail(ErrorCode::kIo, what + ": no Content-Length in the reply", true);
  return size;
}

void S3Backend::ListPrefix(const std::string& dir, FileType t,
                           const std::function<void(const FileInfo&)>& fn) {
  const std::string what = std::string("list ") + FileTypeDir(t);
  std::string token;
  std::unordered_set<std::string> seen_tokens;
  for (;;) {
    Call c{.query = {{"list-type", "2"}, {"prefix", dir}}};
    if (!token.empty()) c.query.emplace_back("continuation-token", token);
    HttpResponse r = Send(c, what);
    CheckStatus(r, what);
    S3ListPage page = ParseListObjectsV2(AsChars(r.body), what);
    std::vector<FileInfo> items;
    for (S3Object& o : page.objects) {
      if (o.key.size() <= dir.size() || o.key.compare(0, dir.size(), dir) != 0) continue;
      std::string name = o.key.substr(dir.size());
      if (t == FileType::kPack) {  // XX/NAME with XX the first two characters of NAME
        if (name.size() < 3 || name[2] != '/') continue;
        if (name.compare(3, 2, name, 0, 2) != 0) continue;
        name = name.substr(3);
      }
      if (IsValidObjectName(name)) items.push_back(FileInfo{std::move(name), o.size});
    }
    for (const FileInfo& fi : items) fn(fi);
    if (!page.truncated) return;
    // A server that hands out a token it gave before (A, B, A...) would list forever.
    if (!seen_tokens.insert(page.next_token).second)
      Fail(ErrorCode::kIo, what + ": the listing does not advance", true);
    token = page.next_token;
  }
}

void S3Backend::List(FileType t, const std::function<void(const FileInfo&)>& fn) {
  if (t == FileType::kConfig) {
    if (auto size = Stat(Handle{FileType::kConfig, "config"})) fn(FileInfo{"config", *size});
    return;
  }
  ListPrefix((loc_.prefix.empty() ? "" : loc_.prefix + "/") + FileTypeDir(t) + "/", t, fn);
}

void S3Backend::Remove(const Handle& h) {
  CheckHandle(h);
  // One DELETE: S3 answers 204 whether or not the object existed, so removing a missing
  // object succeeds here (backend.h allows it for storage that cannot tell); a HEAD first
  // would cost a round trip per removal (prune, lock refreshes) to tell it.
  const std::string what = "remove " + h.ToString();
  CheckStatus(Send(Call{.method = "DELETE", .key = KeyOf(h)}, what), what);
}

}  // namespace haven
