#include "backend/s3_xml.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace haven {
namespace {

const char* kPage = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name><Prefix>p/data/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys>
  <IsTruncated>true</IsTruncated>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
  <Contents><Key>p/data/ab/ab01</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>
    <ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag><Size>123</Size><StorageClass>STANDARD</StorageClass></Contents>
  <Contents><Key>p/a&amp;b&#x20;&#233;</Key><Size>0</Size><Owner><ID>x</ID></Owner></Contents>
</ListBucketResult>)";

ErrorCode CodeOf(std::string_view xml) {
  try {
    ParseListObjectsV2(xml, "list data");
  } catch (const Error& e) {
    EXPECT_TRUE(e.retryable());
    EXPECT_NE(std::string(e.what()).find("list data"), std::string::npos);
    return e.code();
  }
  return ErrorCode::kFatal;
}

TEST(S3Xml, ParsesAListPage) {
  S3ListPage p = ParseListObjectsV2(kPage, "list");
  ASSERT_EQ(p.objects.size(), 2u);
  EXPECT_EQ(p.objects[0].key, "p/data/ab/ab01");
  EXPECT_EQ(p.objects[0].size, 123u);
  EXPECT_EQ(p.objects[1].key, "p/a&b \xc3\xa9");
  EXPECT_EQ(p.objects[1].size, 0u);
  EXPECT_TRUE(p.truncated);
  EXPECT_EQ(p.next_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
}

TEST(S3Xml, EmptyAndLastPages) {
  S3ListPage p = ParseListObjectsV2(
      "<ListBucketResult><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount></ListBucketResult>", "l");
  EXPECT_TRUE(p.objects.empty());
  EXPECT_FALSE(p.truncated);
  p = ParseListObjectsV2("<ListBucketResult><Prefix/></ListBucketResult>", "l");
  EXPECT_TRUE(p.objects.empty());
}

TEST(S3Xml, MalformedDocumentsAreRetryableErrors) {
  for (std::string_view bad : std::initializer_list<std::string_view>{
           "",
           "   ",
           "<ListBucketResult>",                                   // truncated
           std::string_view(kPage, 300),                            // truncated mid-way
           "<Error><Code>x</Code></Error>",                        // another document
           "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",  // no token
           "<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>",  // no size
           "<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>",
           "<ListBucketResult><Contents><Key>k</Key><Size>99999999999999999999999</Size></Contents></ListBucketResult>",
           "<ListBucketResult><Contents><Key>a&bogus;</Key><Size>1</Size></Contents></ListBucketResult>",
           "<ListBucketResult><Contents><Key>&#0;</Key><Size>1</Size></Contents></ListBucketResult>",
           "<ListBucketResult></Contents></ListBucketResult>",
           "<ListBucketResult></ListBucketResult><ListBucketResult></ListBucketResult>",
           "<!DOCTYPE x [<!ENTITY a \"b\">]><ListBucketResult></ListBucketResult>",
           "<ListBucketResult><IsTruncated>yes</IsTruncated></ListBucketResult>",
           "x<ListBucketResult></ListBucketResult>",
       }) {
    EXPECT_EQ(CodeOf(bad), ErrorCode::kIo) << bad;
  }
  std::string deep;
  for (int i = 0; i < 40; i++) deep += "<a>";
  EXPECT_EQ(CodeOf(deep), ErrorCode::kIo);
}

TEST(S3Xml, WalkReportsPathsAndText) {
  std::vector<std::string> seen;
  WalkXml("<Error><Code>NoSuchBucket</Code><Message>The &lt;bucket&gt;</Message></Error>", "x",
          [&](const std::string& path, std::string text) { seen.push_back(path + "=" + text); });
  EXPECT_EQ(seen, (std::vector<std::string>{"Error/Code=NoSuchBucket", "Error/Message=The <bucket>",
                                            "Error="}));
}

}  // namespace
}  // namespace haven
