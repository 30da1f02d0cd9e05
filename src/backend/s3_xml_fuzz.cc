// Fuzz target: the S3 XML reader (ListObjectsV2 pages). Any input either parses or throws
// haven::Error kIo; a parsed page keeps its invariants (a truncated page has a token).
#include <cstdint>
#include <string_view>

#include "backend/s3_xml.h"
#include "core/error.h"
#include "core/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view xml(reinterpret_cast<const char*>(data), size);
  try {
    haven::S3ListPage page = haven::ParseListObjectsV2(xml, "fuzz");
    FUZZ_CHECK(!page.truncated || !page.next_token.empty());
    for (const auto& o : page.objects) FUZZ_CHECK(o.key.size() <= size);
  } catch (const haven::Error& e) {
    FUZZ_CHECK(e.code() == haven::ErrorCode::kIo);
  }
  size_t elements = 0;
  try {
    haven::WalkXml(xml, "fuzz", [&](const std::string& path, std::string text) {
      FUZZ_CHECK(path.size() <= size && text.size() <= size);
      elements++;
    });
  } catch (const haven::Error& e) {
    FUZZ_CHECK(e.code() == haven::ErrorCode::kIo);
  }
  FUZZ_CHECK(elements <= size);
  return 0;
}
