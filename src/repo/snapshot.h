// Snapshot files (docs/format.md §9). The snapshot id is the storage id of the sealed file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/id.h"
#include "repo/gojson.h"

namespace haven {

struct Snapshot {
  gojson::Timestamp time;
  std::optional<FileId> parent;
  BlobId tree;
  std::vector<std::string> paths;
  std::string hostname, username;
  uint32_t uid = 0, gid = 0;
  std::vector<std::string> excludes, tags;
  std::optional<FileId> original;
  std::string program_version;
  std::string summary;  // raw JSON object, preserved; "" when absent

  std::string ToJson() const;
  static Snapshot Parse(std::string_view json, std::string_view name);
  bool HasTag(std::string_view t) const;
};

}  // namespace haven
