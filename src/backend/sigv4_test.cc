// Known answers from AWS's S3 documentation, "Signature Calculations for the Authorization
// Header: Transferring Payload in a Single Chunk (AWS Signature Version 4)": its GET
// Object, PUT Object, GET Bucket Lifecycle and Get Bucket (List Objects) examples, with
// its example key pair.
#include "backend/sigv4.h"

#include <gtest/gtest.h>

namespace haven {
namespace {

const AwsCredentials kCreds{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
const char* kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const char* kDate = "20130524T000000Z";

std::string Authorization(const HeaderList& h) {
  for (const auto& [k, v] : h)
    if (k == "Authorization") return v;
  return "";
}

std::string Expected(const std::string& names, const std::string& sig) {
  return "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
         "SignedHeaders=" + names + ",Signature=" + sig;
}

TEST(SigV4, AwsExampleGetObjectWithRange) {
  SigV4Request r{"GET", "examplebucket.s3.amazonaws.com", "/test.txt", {}, {{"Range", "bytes=0-9"}}, kEmpty};
  HeaderList h = SignV4(r, kCreds, "us-east-1", kDate);
  EXPECT_EQ(Authorization(h),
            Expected("host;range;x-amz-content-sha256;x-amz-date",
                     "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"));
  EXPECT_EQ(HexSha256(AsBytes(CanonicalRequest(r, kDate, "", nullptr))),
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
}

TEST(SigV4, AwsExamplePutObject) {
  std::string body = "Welcome to Amazon S3.";
  ASSERT_EQ(HexSha256(AsBytes(body)),
            "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  SigV4Request r{"PUT", "examplebucket.s3.amazonaws.com", "/test%24file.text", {},
                 {{"Date", "Fri, 24 May 2013 00:00:00 GMT"}, {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
                 HexSha256(AsBytes(body))};
  EXPECT_EQ(Authorization(SignV4(r, kCreds, "us-east-1", kDate)),
            Expected("date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
                     "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"));
}

TEST(SigV4, AwsExampleGetBucketLifecycle) {
  SigV4Request r{"GET", "examplebucket.s3.amazonaws.com", "/", {{"lifecycle", ""}}, {}, kEmpty};
  EXPECT_EQ(Authorization(SignV4(r, kCreds, "us-east-1", kDate)),
            Expected("host;x-amz-content-sha256;x-amz-date",
                     "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"));
}

TEST(SigV4, AwsExampleListObjectsSortsTheQuery) {
  // Given out of order: the signer sorts (prefix after max-keys).
  SigV4Request r{"GET", "examplebucket.s3.amazonaws.com", "/", {{"prefix", "J"}, {"max-keys", "2"}}, {}, kEmpty};
  EXPECT_EQ(Authorization(SignV4(r, kCreds, "us-east-1", kDate)),
            Expected("host;x-amz-content-sha256;x-amz-date",
                     "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"));
}

TEST(SigV4, SessionTokenIsSentAndSigned) {
  AwsCredentials c = kCreds;
  c.session_token = "TOKEN/with+chars";
  SigV4Request r{"GET", "h", "/", {}, {}, kEmpty};
  HeaderList h = SignV4(r, c, "us-east-1", kDate);
  bool sent = false;
  for (const auto& [k, v] : h) sent = sent || (k == "x-amz-security-token" && v == c.session_token);
  EXPECT_TRUE(sent);
  EXPECT_NE(Authorization(h).find("x-amz-date;x-amz-security-token"), std::string::npos);
  EXPECT_NE(Authorization(h), Authorization(SignV4(r, kCreds, "us-east-1", kDate)));
}

TEST(SigV4, QueryEncodingAndHeaderCanonicalForm) {
  EXPECT_EQ(CanonicalQuery({{"list-type", "2"}, {"prefix", "a/b c"}, {"continuation-token", "x+y="}}),
            "continuation-token=x%2By%3D&list-type=2&prefix=a%2Fb%20c");
  SigV4Request r{"GET", "h:9000", "/b/k", {}, {{"X-Odd", "  a   b  "}}, kEmpty};
  std::string names;
  std::string c = CanonicalRequest(r, kDate, "", &names);
  EXPECT_EQ(names, "host;x-amz-content-sha256;x-amz-date;x-odd");
  EXPECT_NE(c.find("host:h:9000\n"), std::string::npos);
  EXPECT_NE(c.find("x-odd:a b\n"), std::string::npos) << c;
}

TEST(SigV4, SecretNeverInOutput) {
  SigV4Request r{"GET", "h", "/", {}, {}, kEmpty};
  for (const auto& [k, v] : SignV4(r, kCreds, "us-east-1", kDate))
    EXPECT_EQ(v.find(kCreds.secret_key), std::string::npos);
  EXPECT_EQ(AmzDate(std::chrono::system_clock::time_point(std::chrono::seconds(1369353600))), kDate);
}

}  // namespace
}  // namespace haven
