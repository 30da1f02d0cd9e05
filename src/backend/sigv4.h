// AWS Signature Version 4 for S3 requests (Authorization header form), computed here
// rather than by curl: curl 7.88's CURLOPT_AWS_SIGV4 neither sorts the query nor sends
// x-amz-content-sha256, and radosgw rejects both. docs/backends.md, "S3", names the spec.
//
//   canonical request = METHOD \n PATH \n SORTED-QUERY \n HEADERS \n SIGNED-NAMES \n PAYLOAD-HASH
//   string to sign    = "AWS4-HMAC-SHA256" \n AMZ-DATE \n SCOPE \n hex(SHA256(canonical request))
//   signing key       = HMAC chain over "AWS4"+secret, date, region, service, "aws4_request"
//
// Every header given is signed, plus host, x-amz-date, x-amz-content-sha256 and, with a
// session token, x-amz-security-token. Query names and values are given decoded and are
// encoded (RFC 3986) and sorted here; the path is given already encoded, exactly as it
// goes on the wire.
//
// Pure functions; thread-safe. The secret never appears in any returned string.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "core/bytes.h"

namespace haven {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct AwsCredentials {
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // empty unless temporary credentials
};

struct SigV4Request {
  std::string method;          // "GET", "PUT", ...
  std::string host;            // the Host header: host, plus ":port" when not the default
  std::string path;            // encoded path, e.g. "/bucket/data/ab/ab12..."
  HeaderList query;            // decoded name/value pairs; "" value for a bare name
  HeaderList headers;          // further headers to sign and send (e.g. Range)
  std::string payload_sha256;  // lowercase hex SHA-256 of the body
};

// "YYYYMMDDTHHMMSSZ" in UTC.
std::string AmzDate(std::chrono::system_clock::time_point t);
// Lowercase hex SHA-256.
std::string HexSha256(ByteView data);
// name=value pairs encoded and sorted by name then value, joined by '&'.
std::string CanonicalQuery(const HeaderList& query);
// The canonical request (exposed for tests and error diagnostics; holds no secret).
std::string CanonicalRequest(const SigV4Request& req, const std::string& amz_date,
                             const std::string& session_token, std::string* signed_names);

// The headers to add to the request: x-amz-date, x-amz-content-sha256,
// x-amz-security-token (with a session token) and Authorization.
HeaderList SignV4(const SigV4Request& req, const AwsCredentials& creds,
                  const std::string& region, const std::string& amz_date,
                  const std::string& service = "s3");

}  // namespace haven
