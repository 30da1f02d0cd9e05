#include "repo/snapshot.h"

#include <simdjson.h>

#include <algorithm>

#include "core/error.h"

namespace haven {


std::string Snapshot::ToJson() const {
  std::string out = "{\"time\":\"";
  gojson::AppendTime(out, time);
  out += '"';
  if (parent) out += ",\"parent\":\"" + parent->Hex() + "\"";
  out += ",\"tree\":\"" + tree.Hex() + "\",\"paths\":";
  if (paths.empty()) {
    out += "null";  // Go encodes a nil slice as null
  } else {
    gojson::AppendStringList(out, paths);
  }
  if (!hostname.empty()) {
    out += ",\"hostname\":";
    gojson::AppendString(out, hostname);
  }
  if (!username.empty()) {
    out += ",\"username\":";
    gojson::AppendString(out, username);
  }
  if (uid) out += ",\"uid\":" + std::to_string(uid);
  if (gid) out += ",\"gid\":" + std::to_string(gid);
  if (!excludes.empty()) {
    out += ",\"excludes\":";
    gojson::AppendStringList(out, excludes);
  }
  if (!tags.empty()) {
    out += ",\"tags\":";
    gojson::AppendStringList(out, tags);
  }
  if (original) out += ",\"original\":\"" + original->Hex() + "\"";
  if (!program_version.empty()) {
    out += ",\"program_version\":";
    gojson::AppendString(out, program_version);
  }
  if (!summary.empty()) out += ",\"summary\":" + summary;
  out += '}';
  return out;
}

Snapshot Snapshot::Parse(std::string_view json, std::string_view name) {
  const std::string where = "snapshot " + std::string(name);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (json.empty() || parser.parse(json.data(), json.size()).get(doc))
    Fail(ErrorCode::kCorrupt, where + ": invalid JSON");
  Snapshot s;
  std::string_view sv;
  if (doc["time"].get(sv)) Fail(ErrorCode::kCorrupt, where + ": missing time");
  auto t = gojson::ParseTime(sv);
  if (!t) Fail(ErrorCode::kCorrupt, where + ": invalid time \"" + std::string(sv) + "\"");
  s.time = *t;
  if (!doc["parent"].get(sv)) {
    if (auto id = FileId::FromHex(sv)) s.parent = *id;
  }
  if (doc["tree"].get(sv)) Fail(ErrorCode::kCorrupt, where + ": missing tree");
  auto tree = BlobId::FromHex(sv);
  if (!tree) Fail(ErrorCode::kCorrupt, where + ": invalid tree id");
  s.tree = *tree;
  auto strings = [&](const char* key, std::vector<std::string>& dst) {
    simdjson::dom::array a;
    if (doc[key].get(a)) return;
    for (simdjson::dom::element e : a)
      if (!e.get(sv)) dst.emplace_back(sv);
  };
  strings("paths", s.paths);
  strings("excludes", s.excludes);
  strings("tags", s.tags);
  if (!doc["hostname"].get(sv)) s.hostname = sv;
  if (!doc["username"].get(sv)) s.username = sv;
  uint64_t u;
  if (!doc["uid"].get(u)) s.uid = static_cast<uint32_t>(u);
  if (!doc["gid"].get(u)) s.gid = static_cast<uint32_t>(u);
  if (!doc["original"].get(sv)) {
    if (auto id = FileId::FromHex(sv)) s.original = *id;
  }
  if (!doc["program_version"].get(sv)) s.program_version = sv;
  simdjson::dom::object sum;
  if (!doc["summary"].get(sum)) s.summary = simdjson::minify(sum);
  return s;
}

bool Snapshot::HasTag(std::string_view t) const {
  return std::find(tags.begin(), tags.end(), t) != tags.end();
}

}  // namespace haven
