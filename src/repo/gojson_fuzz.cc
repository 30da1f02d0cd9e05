// Fuzz target: the Go encodings behind tree ids (docs/format.md §10.3-10.5).
//  * QuoteName/UnquoteName round trip for any raw bytes;
//  * UnquoteName of arbitrary text: a result must quote and unquote back to itself;
//  * ParseTime: a parsed time must format and parse back to the same instant and offset;
//  * AppendString output is a JSON string that decodes to the input (valid UTF-8) or to the
//    input with each invalid byte replaced by U+FFFD; IsValidUtf8 agrees with simdjson.
#include <simdjson.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/fuzz_check.h"
#include "repo/gojson.h"


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven::gojson;
  const std::string_view in(reinterpret_cast<const char*>(data), size);

  const std::string quoted = QuoteName(in);
  auto back = UnquoteName(quoted);
  FUZZ_CHECK(back.has_value());
  FUZZ_CHECK(*back == in);
  std::string direct;
  AppendNameString(direct, in);
  std::string via;
  AppendString(via, quoted);
  FUZZ_CHECK(direct == via);

  if (auto raw = UnquoteName(in)) {
    auto again = UnquoteName(QuoteName(*raw));
    FUZZ_CHECK(again.has_value() && *again == *raw);
  }

  if (auto t = ParseTime(in)) {
    FUZZ_CHECK(t->nsec >= 0 && t->nsec < 1000000000);
    const std::string s = FormatTime(*t);
    auto t2 = ParseTime(s);
    FUZZ_CHECK(t2.has_value());
    FUZZ_CHECK(*t2 == *t);
    FUZZ_CHECK(FormatTime(*t2) == s);
  }

  const bool valid = IsValidUtf8(in);
  FUZZ_CHECK(valid == simdjson::validate_utf8(in.data(), in.size()));
  std::string lit;
  AppendString(lit, in);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  FUZZ_CHECK(!parser.parse(lit).get(doc));
  std::string_view decoded;
  FUZZ_CHECK(!doc.get(decoded));
  if (valid) FUZZ_CHECK(decoded == in);
  return 0;
}
