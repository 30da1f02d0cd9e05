// S3Backend pieces that need no server (the radosgw tests are s3_backend_rgw_test.cc).
#include "backend/s3_backend.h"
#include "backend/http_test_server.h"

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

// ---------------------------------------------------------------------------------------
// Against a fake S3 server (http_test_server.h): what radosgw cannot be made to do.

using testing_http::Reply;
using testing_http::SeenRequest;
using testing_http::TestServer;

std::string Name(char c) { return std::string(64, c); }

S3Backend FakeS3(const TestServer& server, const std::string& storage_class = "") {
  S3Options o;
  o.credentials = {"AKFAKE", "fake-secret-key", ""};
  o.storage_class = storage_class;
  return S3Backend(ParseS3Location("s3:" + server.Url("/bucket/pre")), o);
}

std::string ListXml(const std::vector<std::string>& keys, const std::string& next) {
  std::string x = "<ListBucketResult>";
  for (const auto& k : keys) x += "<Contents><Key>" + k + "</Key><Size>7</Size></Contents>";
  x += next.empty() ? "<IsTruncated>false</IsTruncated>"
                    : "<IsTruncated>true</IsTruncated><NextContinuationToken>" + next +
                          "</NextContinuationToken>";
  return x + "</ListBucketResult>";
}

TEST(S3Fake, AnErrorOnALaterListingPageFailsTheListing) {
  TestServer server([&](const SeenRequest& r) {
    if (r.head.find("continuation-token=T1") != std::string::npos) return Reply(500, "");
    return Reply(200, ListXml({"pre/snapshots/" + Name('a'), "pre/snapshots/" + Name('b')}, "T1"));
  });
  S3Backend be = FakeS3(server);
  std::vector<std::string> got;
  try {
    be.List(FileType::kSnapshot, [&](const FileInfo& fi) { got.push_back(fi.name); });
    ADD_FAILURE() << "the listing did not fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_TRUE(e.retryable());
  }
  EXPECT_EQ(got, (std::vector<std::string>{Name('a'), Name('b')}));  // page 1 only
}

TEST(S3Fake, AListingThatDoesNotAdvanceFails) {
  TestServer server([&](const SeenRequest&) { return Reply(200, ListXml({}, "SAME")); });
  S3Backend be = FakeS3(server);
  EXPECT_THROW(be.List(FileType::kIndex, [](const FileInfo&) {}), Error);
}

TEST(S3Fake, ListingPagesAndSkipsForeignKeys) {
  TestServer server([&](const SeenRequest& r) {
    if (r.head.find("continuation-token=tok%2B1") != std::string::npos)
      return Reply(200, ListXml({"pre/data/cc/" + Name('c')}, ""));
    return Reply(200, ListXml({"pre/data/aa/" + Name('a'), "pre/data/ab/" + Name('a'),
                               "pre/data/aa", "pre/data/aa/" + Name('a') + "-tmp-12",
                               "pre/data/" + Name('b'), "pre/data/aa/README"},
                              "tok+1"));
  });
  S3Backend be = FakeS3(server);
  std::vector<std::string> got;
  be.List(FileType::kPack, [&](const FileInfo& fi) {
    got.push_back(fi.name);
    EXPECT_EQ(fi.size, 7u);
  });
  EXPECT_EQ(got, (std::vector<std::string>{Name('a'), Name('c')}));
}

TEST(S3Fake, RequestsAreSignedAndCarryTheStorageClass) {
  std::vector<std::string> heads;
  TestServer server([&](const SeenRequest& r) {
    heads.push_back(r.head);
    if (r.head.rfind("HEAD", 0) == 0) return Reply(404, "");
    return Reply(200, "");
  });
  S3Backend be = FakeS3(server, "STANDARD_IA");
  be.Save(Handle{FileType::kKey, Name('d')}, AsBytes("payload"));
  ASSERT_EQ(heads.size(), 1u);  // one conditional PUT, no HEAD first
  const std::string& put = heads[0];
  EXPECT_EQ(put.rfind("PUT /bucket/pre/keys/" + Name('d') + " ", 0), 0u) << put;
  EXPECT_NE(put.find("Authorization: AWS4-HMAC-SHA256 Credential=AKFAKE/"), std::string::npos) << put;
  EXPECT_NE(put.find("/us-east-1/s3/aws4_request"), std::string::npos) << put;
  EXPECT_NE(put.find("x-amz-storage-class: STANDARD_IA"), std::string::npos) << put;
  EXPECT_NE(put.find("x-amz-content-sha256: " + HexSha256(AsBytes("payload"))), std::string::npos);
  EXPECT_EQ(put.find("fake-secret-key"), std::string::npos);
}

// Item 1 of issue 16's seed: a save and a removal are one round trip each (they were a
// HEAD and then the PUT or DELETE); the PUT is conditional, so nothing is ever replaced.
// A store that does not implement conditional writes (501 NotImplemented on If-None-Match)
// still takes saves: after its first refusal, a HEAD and a plain PUT, and never again the
// conditional PUT; an existing object of another size is still refused.
TEST(S3Fake, AStoreWithoutConditionalPutsGetsAHeadThenAPlainPut) {
  std::vector<std::string> lines;
  std::map<std::string, size_t> stored;  // path -> size
  TestServer server([&](const SeenRequest& r) {
    const std::string line = r.head.substr(0, r.head.find("\r\n"));
    const bool conditional = r.head.find("If-None-Match: *\r\n") != std::string::npos;
    lines.push_back(line.substr(0, line.find(' ')) + (conditional ? "?" : ""));
    const std::string path = line.substr(line.find(' ') + 1, line.rfind(' ') - line.find(' ') - 1);
    if (line.rfind("PUT", 0) == 0) {
      if (conditional) return Reply(501, "<Error><Code>NotImplemented</Code></Error>");
      stored[path] = r.body.size();
      return Reply(200, "");
    }
    if (line.rfind("HEAD", 0) == 0) {
      if (!stored.count(path)) return Reply(404, "");
      return "HTTP/1.1 200 X\r\nContent-Length: " + std::to_string(stored[path]) + "\r\n\r\n";
    }
    return Reply(400, "");
  });
  S3Backend be = FakeS3(server);
  be.Save({FileType::kLock, Name('1')}, AsBytes("lock-v1"));
  EXPECT_EQ(lines, (std::vector<std::string>{"PUT?", "HEAD", "PUT"}));
  lines.clear();
  be.Save({FileType::kLock, Name('2')}, AsBytes("lock-v1"));
  EXPECT_EQ(lines, (std::vector<std::string>{"HEAD", "PUT"}));
  lines.clear();
  be.Save({FileType::kLock, Name('2')}, AsBytes("lock-v2"));  // same size: a retried upload
  EXPECT_EQ(lines, (std::vector<std::string>{"HEAD"}));
  EXPECT_THROW(be.Save({FileType::kLock, Name('2')}, AsBytes("longer lock")), Error);
  EXPECT_EQ(stored.size(), 2u);
}

TEST(S3Fake, SaveAndRemoveAreOneRequestEach) {
  std::vector<std::string> lines;
  std::map<std::string, size_t> stored;  // path -> size
  TestServer server([&](const SeenRequest& r) {
    const std::string line = r.head.substr(0, r.head.find("\r\n"));
    lines.push_back(line.substr(0, line.find(' ')));
    const std::string path = line.substr(line.find(' ') + 1, line.rfind(' ') - line.find(' ') - 1);
    if (line.rfind("PUT", 0) == 0) {
      if (r.head.find("If-None-Match: *\r\n") == std::string::npos) return Reply(500, "unconditional");
      if (stored.count(path)) return Reply(412, "<Error><Code>PreconditionFailed</Code></Error>");
      stored[path] = r.body.size();
      return Reply(200, "");
    }
    if (line.rfind("HEAD", 0) == 0) {
      if (!stored.count(path)) return Reply(404, "");
      return "HTTP/1.1 200 X\r\nContent-Length: " + std::to_string(stored[path]) + "\r\n\r\n";
    }
    if (line.rfind("DELETE", 0) == 0) {
      stored.erase(path);
      return Reply(204, "");
    }
    return Reply(400, "");
  });
  S3Backend be = FakeS3(server);
  const Handle h{FileType::kLock, Name('9')};
  be.Save(h, AsBytes("lock-v1"));
  EXPECT_EQ(lines, (std::vector<std::string>{"PUT"}));
  lines.clear();
  be.Save(h, AsBytes("lock-v2"));  // exists with the same size: a retried upload, accepted
  EXPECT_EQ(lines, (std::vector<std::string>{"PUT", "HEAD"}));
  lines.clear();
  try {
    be.Save(h, AsBytes("longer lock"));  // another size: refused, the object is kept
    ADD_FAILURE() << "an existing object of another size was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFatal);
    EXPECT_NE(std::string(e.what()).find("exists already with 7 bytes"), std::string::npos) << e.what();
  }
  lines.clear();
  be.Remove(h);
  EXPECT_EQ(lines, (std::vector<std::string>{"DELETE"}));
  EXPECT_TRUE(stored.empty());
  lines.clear();
  be.Remove(h);  // missing: S3 cannot tell, and no HEAD is spent to find out
  EXPECT_EQ(lines, (std::vector<std::string>{"DELETE"}));
}

TEST(S3Fake, AnIgnoredRangeAndA416AreReported) {
  TestServer server([&](const SeenRequest& r) {
    if (r.head.rfind("HEAD", 0) == 0) return Reply(200, "", "");  // Content-Length: 0
    if (r.head.find("bytes=5-") != std::string::npos) return Reply(416, "");
    return Reply(200, "0123456789");  // ignores any Range
  });
  S3Backend be = FakeS3(server);
  Handle h{FileType::kPack, Name('e')};
  for (bool stream : {false, true}) {
    size_t delivered = 0;
    try {
      if (stream) be.LoadStream(h, 2, 3, [&](ByteView p) { delivered += p.size(); });
      else be.Load(h, 2, 3);
      ADD_FAILURE();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kIo);
      EXPECT_TRUE(e.retryable());
    }
    EXPECT_EQ(delivered, 0u);  // refused before the first byte
  }
  try {
    be.LoadStream(h, 5, 1, [](ByteView) {});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  }
  try {
    be.Load(h, 5, 0);  // past the end of a 0-byte object
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find(h.name), std::string::npos);
  }
}

TEST(S3Fake, APartialReplyFromTheWrongOffsetIsRefused) {
  // A broken or hostile server answers "bytes=4-7" with other bytes of the object.
  Handle h{FileType::kPack, Name('f')};
  {
    TestServer server([](const SeenRequest&) { return Reply(206, "0123", "Content-Range: bytes 0-3/10\r\n"); });
    S3Backend be = FakeS3(server);
    for (int how : {0, 1, 2}) {
      try {
        std::vector<uint8_t> buf(4);
        if (how == 1) be.LoadInto(h, 4, buf);
        else if (how == 2) be.LoadStream(h, 4, 4, [](ByteView) { ADD_FAILURE() << "wrong bytes handed over"; });
        else be.Load(h, 4, 4);
        ADD_FAILURE() << "wrong bytes accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kIo);
        EXPECT_TRUE(e.retryable());
        EXPECT_NE(std::string(e.what()).find("offset 0, not 4"), std::string::npos) << e.what();
      }
    }
  }
  {
    TestServer server([](const SeenRequest&) { return Reply(206, "0123"); });  // no Content-Range
    S3Backend be = FakeS3(server);
    EXPECT_THROW(be.Load(h, 4, 4), Error);
  }
  TestServer server([](const SeenRequest&) { return Reply(206, "4567", "Content-Range: bytes 4-7/10\r\n"); });
  S3Backend be = FakeS3(server);
  Bytes got = be.Load(h, 4, 4);
  EXPECT_EQ(std::string(got.begin(), got.end()), "4567");
  got.clear();
  be.LoadStream(h, 4, 4, [&](ByteView p) { got.insert(got.end(), p.begin(), p.end()); });
  EXPECT_EQ(std::string(got.begin(), got.end()), "4567");
}

TEST(S3Fake, TheBucketRegionNamedByTheServerIsUsedFromThenOn) {
  std::vector<std::string> auths;
  TestServer server([&](const SeenRequest& r) {
    size_t a = r.head.find("Authorization: ");
    auths.push_back(r.head.substr(a, r.head.find("\r\n", a) - a));
    if (r.head.find("/eu-west-3/s3/") == std::string::npos)
      return Reply(400, "", "x-amz-bucket-region: eu-west-3\r\n");  // HEAD: no body
    return Reply(200, "", "");
  });
  S3Backend be = FakeS3(server);
  EXPECT_EQ(be.Stat(Handle{FileType::kKey, Name('f')}), 0u);
  EXPECT_EQ(be.Stat(Handle{FileType::kKey, Name('f')}), 0u);
  ASSERT_EQ(auths.size(), 3u);  // wrong region, retried once; then right at once
  EXPECT_NE(auths[0].find("/us-east-1/s3/"), std::string::npos);
  EXPECT_NE(auths[1].find("/eu-west-3/s3/"), std::string::npos);
  EXPECT_NE(auths[2].find("/eu-west-3/s3/"), std::string::npos);
}

}  // namespace
}  // namespace haven
