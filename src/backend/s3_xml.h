// The few S3 XML responses haven reads, parsed by a small strict reader (no DTDs, no
// namespaces resolved, no attributes kept): ListObjectsV2's ListBucketResult and the
// <Error> body. Input is untrusted (any server, or a proxy in between): every malformed
// document throws haven::Error kIo, retryable (a truncated or garbled body is most often a
// transfer problem), naming `what`. Nesting is limited to 16 levels, text to the entities
// &amp; &lt; &gt; &quot; &apos; and numeric references (UTF-8 encoded; NUL refused).
// Fuzz target: s3_xml_fuzz.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace haven {

// Calls `on_element(path, text)` for every element when it closes, with the path of
// element names from the root joined by '/' ("ListBucketResult/Contents/Key") and its
// decoded direct text (empty for an element that only holds elements).
void WalkXml(std::string_view xml, const std::string& what,
             const std::function<void(const std::string& path, std::string text)>& on_element);

struct S3Object {
  std::string key;
  uint64_t size = 0;
};

struct S3ListPage {
  std::vector<S3Object> objects;
  bool truncated = false;
  std::string next_token;  // set when truncated
};

// A ListObjectsV2 response. Requires the ListBucketResult root, a Key and a Size in each
// Contents, and a NextContinuationToken when IsTruncated is true.
S3ListPage ParseListObjectsV2(std::string_view xml, const std::string& what);

}  // namespace haven
