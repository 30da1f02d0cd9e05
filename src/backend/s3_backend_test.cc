// S3Backend pieces that need no server (the radosgw tests are s3_backend_rgw_test.cc).
#include "backend/s3_backend.h"

#include <gtest/gtest.h>

#include <map>

#include "core/error.h"

namespace haven {
namespace {

TEST(S3Location, ResticForms) {
  S3Location a = ParseS3Location("s3:http://127.0.0.1:9000/bucket/some/prefix/");
  EXPECT_FALSE(a.https);
  EXPECT_EQ(a.host, "127.0.0.1:9000");
  EXPECT_EQ(a.bucket, "bucket");
  EXPECT_EQ(a.prefix, "some/prefix");
  S3Location b = ParseS3Location("s3:s3.amazonaws.com/bucket");
  EXPECT_TRUE(b.https);
  EXPECT_EQ(b.host, "s3.amazonaws.com");
  EXPECT_EQ(b.bucket, "bucket");
  EXPECT_EQ(b.prefix, "");
  S3Location c = ParseS3Location("s3:https://rgw.example:7480/b/");
  EXPECT_TRUE(c.https);
  EXPECT_EQ(c.bucket, "b");
  EXPECT_EQ(c.prefix, "");
}

TEST(S3Location, BadFormsAreRefusedWithoutEchoingSecrets) {
  for (const char* bad : {"s3:http://host", "s3:http://host/", "s3:", "s3:ftp://h/b", "rest:http://h/b"}) {
    try {
      ParseS3Location(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << bad;
    }
  }
  try {
    ParseS3Location("s3:http://AKIDKEY:SuperSecret123@host/b");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("SuperSecret123"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find("AKIDKEY"), std::string::npos);
  }
}

TEST(S3Location, BucketLookup) {
  EXPECT_EQ(ParseBucketLookup("auto"), S3BucketLookup::kAuto);
  EXPECT_EQ(ParseBucketLookup("dns"), S3BucketLookup::kDns);
  EXPECT_EQ(ParseBucketLookup("path"), S3BucketLookup::kPath);
  EXPECT_THROW(ParseBucketLookup("vhost"), Error);
}

TEST(S3Credentials, FromEnvironmentFirst) {
  std::map<std::string, std::string> env{{"AWS_ACCESS_KEY_ID", "AK"},
                                         {"AWS_SECRET_ACCESS_KEY", "SK"},
                                         {"AWS_SESSION_TOKEN", "TOK"}};
  auto get = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  AwsCredentials c = LoadAwsCredentials(get);
  EXPECT_EQ(c.access_key, "AK");
  EXPECT_EQ(c.secret_key, "SK");
  EXPECT_EQ(c.session_token, "TOK");
  env.erase("AWS_SECRET_ACCESS_KEY");
  EXPECT_THROW(LoadAwsCredentials(get), Error);  // half a key pair
  env.clear();
  env["AWS_SHARED_CREDENTIALS_FILE"] = "/nonexistent/credentials";
  try {
    LoadAwsCredentials(get);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("AWS_ACCESS_KEY_ID"), std::string::npos) << e.what();
  }
}

TEST(S3Credentials, ProfilesFile) {
  const char* text =
      "# comment\n[default]\naws_access_key_id = DEF\naws_secret_access_key=DEFSECRET\n\n"
      "[work]\r\n  aws_access_key_id = WORK \r\naws_secret_access_key = WORKSECRET\r\n"
      "aws_session_token = T\r\n[other]\naws_access_key_id = O\n";
  auto d = ParseCredentialsFile(text, "default");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->access_key, "DEF");
  EXPECT_EQ(d->secret_key, "DEFSECRET");
  auto w = ParseCredentialsFile(text, "work");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->access_key, "WORK");
  EXPECT_EQ(w->secret_key, "WORKSECRET");
  EXPECT_EQ(w->session_token, "T");
  EXPECT_FALSE(ParseCredentialsFile(text, "missing"));
  auto o = ParseCredentialsFile(text, "other");
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->secret_key.empty());
}

TEST(S3Backend, KeysAndLocationFollowResticsLayout) {
  S3Options o;
  o.credentials = {"AK", "SK", ""};
  S3Backend be(ParseS3Location("s3:http://h:1/b/p/q"), o);
  std::string name(64, 'a');
  name[0] = 'c';
  name[1] = 'd';
  EXPECT_EQ(be.KeyOf(Handle{FileType::kPack, name}), "p/q/data/cd/" + name);
  EXPECT_EQ(be.KeyOf(Handle{FileType::kIndex, name}), "p/q/index/" + name);
  EXPECT_EQ(be.KeyOf(Handle{FileType::kConfig, "config"}), "p/q/config");
  EXPECT_EQ(be.Location(), "s3:http://h:1/b/p/q");
  S3Backend root(ParseS3Location("s3:http://h:1/b"), o);
  EXPECT_EQ(root.KeyOf(Handle{FileType::kKey, name}), "keys/" + name);
}

}  // namespace
}  // namespace haven
