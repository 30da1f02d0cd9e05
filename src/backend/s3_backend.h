// A repository in an S3 bucket (AWS, Ceph radosgw, MinIO, ...), in restic's layout so
// restic and haven share a bucket: PREFIX/config, PREFIX/{keys,locks,snapshots,index}/NAME,
// PREFIX/data/XX/NAME (docs/backends.md, "S3").
//
// Locations (restic's forms):
//   s3:http://HOST[:PORT]/BUCKET[/PREFIX]   s3:https://HOST[:PORT]/BUCKET[/PREFIX]
//   s3:s3.amazonaws.com/BUCKET[/PREFIX]     (any HOST without a scheme means https)
// Credentials never come from the location (an URL with user:password@ is refused).
//
// Requests: signed with SigV4 (sigv4.h; the payload's SHA-256 is signed, so the server
// checks every upload's bytes), sent by HttpClient over at most `connections` reused
// connections. Save is one conditional PUT (If-None-Match: *): it never replaces an
// object; only when the name exists is it stat'ed (the same size is accepted as a retried
// upload, another size is kFatal). Remove is one DELETE, and succeeds for a missing object
// (S3's DELETE does not tell; backend.h allows it). List uses ListObjectsV2 pages (1,000 keys) and
// delivers a page only once it has been read and parsed whole; any error throws.
//
// Region: a reply that names the bucket's region in x-amz-bucket-region (AWS answers a
// request signed for the wrong region with 301 or 400 and that header) switches the
// signing region for this and every later request, as the AWS SDKs do.
//
// Errors: HttpClient's mapping (404 kNotFound, 5xx/429/transport retryable kIo, 401/403
// access denied), plus kCorrupt for a short or out-of-range read, naming the object.
// No retries here: MakeBackend wraps it in RetryBackend.
//
// Thread safety: every method may run concurrently; the only mutable state is the
// signing region, behind region_mu_.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "backend/backend.h"
#include "backend/http_client.h"
#include "backend/sigv4.h"
#include "core/mutex.h"

namespace haven {

struct S3Location {
  bool https = true;
  std::string host;    // host[:port], as in the Host header
  std::string bucket;
  std::string prefix;  // without leading or trailing '/'; may be empty
};

// Parses "s3:..." (see above). kInvalidArgument for anything else; the message never
// repeats a user:password part.
S3Location ParseS3Location(std::string_view location);

enum class S3BucketLookup { kAuto, kDns, kPath };
// "auto", "dns" or "path"; kInvalidArgument otherwise.
S3BucketLookup ParseBucketLookup(const std::string& s);

// Credentials as the AWS tools find them: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY
// (+ AWS_SESSION_TOKEN); else profile $AWS_PROFILE (or "default") of
// $AWS_SHARED_CREDENTIALS_FILE (or $HOME/.aws/credentials). `env` looks a variable up
// (nullptr: unset). Throws kInvalidArgument when none are found or the profile is
// incomplete; messages never contain a key.
AwsCredentials LoadAwsCredentials(const std::function<const char*(const char*)>& env);
// The profile's keys from credentials-file text (INI: [name], key = value, # comments);
// nullopt when the profile is missing.
std::optional<AwsCredentials> ParseCredentialsFile(std::string_view text, const std::string& profile);

struct S3Options {
  AwsCredentials credentials;
  std::string region = "us-east-1";
  S3BucketLookup bucket_lookup = S3BucketLookup::kAuto;
  std::string storage_class;  // x-amz-storage-class of every upload; empty: the bucket's
  int connections = 5;
  std::string ca_file;  // PEM bundle for https; empty: $AWS_CA_BUNDLE, else the system's
};

class S3Backend : public Backend {
 public:
  S3Backend(S3Location location, S3Options options);

  std::string Location() const override;
  bool Exists() override;
  // Creates the bucket when it is missing (in the configured region); kFatal when a
  // config exists already.
  void Create() override;
  void Save(const Handle& h, ByteView data) override;
  void SaveFrom(const Handle& h, const SaveSource& src) override;
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override;
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override;
  // Streams the body as it arrives.
  void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                  const std::function<void(ByteView)>& sink) override;
  std::optional<uint64_t> Stat(const Handle& h) override;
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override;
  void Remove(const Handle& h) override;
  int Connections() const override { return options_.connections; }
  bool RoundTrips() const override { return true; }

  // Object key of h: PREFIX/ + h.ToString().
  std::string KeyOf(const Handle& h) const;

 private:
  struct Call {
    std::string method = "GET";
    std::string key;  // object key; empty: the bucket itself
    HeaderList query;
    HeaderList headers;
    ByteView body;
    const SaveSource* body_source = nullptr;  // instead of body (HttpRequest::body_source)
    std::string payload_sha256;               // hex; empty: computed from body
    std::optional<HttpRange> range;
    std::optional<std::span<uint8_t>> into;
    const std::function<void(ByteView)>* stream = nullptr;  // HttpRequest::stream
    const std::function<void(const HttpResponse&)>* stream_start = nullptr;
  };
  HttpResponse Send(const Call& call, const std::string& what);
  // Save's one body: `data`, or `src` when it is set (SaveFrom).
  void Put(const Handle& h, ByteView data, const SaveSource* src);
  void EnsureBucket();
  // GET of [offset, offset+length) (length 0: to the end) into `into` or a new buffer.
  HttpResponse GetRange(const Handle& h, uint64_t offset, uint64_t length,
                        std::optional<std::span<uint8_t>> into);
  void ListPrefix(const std::string& dir, FileType t, const std::function<void(const FileInfo&)>& fn);

  const S3Location loc_;
  const S3Options options_;
  const bool dns_style_;
  std::unique_ptr<HttpClient> http_;
  // The signing region: options_.region until a reply names the bucket's real one.
  std::string Region() const EXCLUDES(region_mu_);
  // The store answered a conditional PUT with NotImplemented: saves look first instead.
  std::atomic<bool> plain_put_{false};
  mutable Mutex region_mu_;
  std::string region_ GUARDED_BY(region_mu_);
};

}  // namespace haven
