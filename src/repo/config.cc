#include "repo/config.h"

#include <simdjson.h>

#include <cinttypes>
#include <cstdio>

#include "chunker/polynomial.h"
#include "core/error.h"
#include "core/id.h"
#include "crypto/random.h"

namespace haven {

std::string RepoConfig::ToJson() const {
  char pol[32];
  std::snprintf(pol, sizeof(pol), "%" PRIx64, chunker_polynomial);
  return "{\"version\":" + std::to_string(version) + ",\"id\":\"" + id +
         "\",\"chunker_polynomial\":\"" + pol + "\"}";
}

RepoConfig RepoConfig::Parse(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (json.empty() || parser.parse(json.data(), json.size()).get(doc))
    Fail(ErrorCode::kCorrupt, "config: invalid JSON");
  RepoConfig c;
  int64_t version;
  if (doc["version"].get(version))
    Fail(ErrorCode::kCorrupt, "config: missing \"version\"");
  if (version != 1 && version != 2)
    Fail(ErrorCode::kUnsupported,
         "config: unsupported repository version " + std::to_string(version) +
             " (haven reads versions 1 and 2)");
  c.version = static_cast<int>(version);
  std::string_view id, pol;
  if (doc["id"].get(id) || !RawId::FromHex(id))
    Fail(ErrorCode::kCorrupt, "config: invalid repository id");
  c.id = std::string(id);
  if (doc["chunker_polynomial"].get(pol) || pol.empty() || pol.size() > 16)
    Fail(ErrorCode::kCorrupt, "config: invalid chunker_polynomial");
  uint64_t p = 0;
  for (char ch : pol) {
    int v = (ch >= '0' && ch <= '9')   ? ch - '0'
            : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10
            : (ch >= 'A' && ch <= 'F') ? ch - 'A' + 10
                                       : -1;
    if (v < 0) Fail(ErrorCode::kCorrupt, "config: invalid chunker_polynomial");
    p = p << 4 | uint64_t(v);
  }
  if (!chunker::IsIrreducible(p) || chunker::Degree(p) > 53)
    Fail(ErrorCode::kCorrupt, "config: chunker polynomial " + std::string(pol) +
                                  " is not an irreducible polynomial of degree <= 53");
  c.chunker_polynomial = p;
  return c;
}

RepoConfig RepoConfig::New(int version) {
  RepoConfig c;
  c.version = version;
  uint8_t raw[32];
  crypto::RandomBytes(raw, sizeof(raw));
  c.id = HexEncode(ByteView(raw, 32));
  c.chunker_polynomial = chunker::RandomPolynomial();
  return c;
}

}  // namespace haven
