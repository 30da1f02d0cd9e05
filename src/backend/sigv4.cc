#include "backend/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "backend/http_client.h"
#include "core/error.h"
#include "core/id.h"

namespace haven {
namespace {

Bytes Hmac(ByteView key, std::string_view msg) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), out.data(), &len))
    Fail(ErrorCode::kFatal, "HMAC-SHA256 failed");
  out.resize(len);
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Trims the value and collapses runs of spaces into one, as SigV4 asks.
std::string CanonicalValue(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

HeaderList AllSignedHeaders(const SigV4Request& req, const std::string& amz_date,
                            const std::string& session_token) {
  HeaderList h;
  for (const auto& [k, v] : req.headers) h.emplace_back(Lower(k), CanonicalValue(v));
  h.emplace_back("host", req.host);
  h.emplace_back("x-amz-content-sha256", req.payload_sha256);
  h.emplace_back("x-amz-date", amz_date);
  if (!session_token.empty()) h.emplace_back("x-amz-security-token", session_token);
  std::sort(h.begin(), h.end());
  return h;
}

}  // namespace

std::string AmzDate(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string HexSha256(ByteView data) { return Sha256(data).Hex(); }

std::string CanonicalQuery(const HeaderList& query) {
  std::vector<std::pair<std::string, std::string>> enc;
  for (const auto& [k, v] : query) enc.emplace_back(UriEncode(k, false), UriEncode(v, false));
  std::sort(enc.begin(), enc.end());
  std::string out;
  for (const auto& [k, v] : enc) {
    if (!out.empty()) out += '&';
    out += k + "=" + v;
  }
  return out;
}

std::string CanonicalRequest(const SigV4Request& req, const std::string& amz_date,
                             const std::string& session_token, std::string* signed_names) {
  HeaderList h = AllSignedHeaders(req, amz_date, session_token);
  std::string headers, names;
  for (const auto& [k, v] : h) {
    headers += k + ":" + v + "\n";
    names += (names.empty() ? "" : ";") + k;
  }
  if (signed_names) *signed_names = names;
  return req.method + "\n" + (req.path.empty() ? "/" : req.path) + "\n" +
         CanonicalQuery(req.query) + "\n" + headers + "\n" + names + "\n" + req.payload_sha256;
}

HeaderList SignV4(const SigV4Request& req, const AwsCredentials& creds,
                  const std::string& region, const std::string& amz_date,
                  const std::string& service) {
  if (amz_date.size() != 16)
    Fail(ErrorCode::kInvalidArgument, "SigV4: bad date \"" + amz_date + "\"");
  const std::string date = amz_date.substr(0, 8);
  std::string names;
  const std::string canonical = CanonicalRequest(req, amz_date, creds.session_token, &names);
  const std::string scope = date + "/" + region + "/" + service + "/aws4_request";
  const std::string to_sign = "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" +
                              HexSha256(AsBytes(canonical));
  Bytes key = Hmac(AsBytes("AWS4" + creds.secret_key), date);
  key = Hmac(key, region);
  key = Hmac(key, service);
  key = Hmac(key, "aws4_request");
  const std::string signature = HexEncode(Hmac(key, to_sign));
  HeaderList out = {{"x-amz-date", amz_date}, {"x-amz-content-sha256", req.payload_sha256}};
  if (!creds.session_token.empty()) out.emplace_back("x-amz-security-token", creds.session_token);
  out.emplace_back("Authorization", "AWS4-HMAC-SHA256 Credential=" + creds.access_key + "/" +
                                        scope + ",SignedHeaders=" + names +
                                        ",Signature=" + signature);
  return out;
}

}  // namespace haven
