// The repository config file (docs/format.md §5): version, random id, chunker polynomial.
// Stored as Seal(master, JSON), never compressed, under the fixed name "config".
#pragma once

#include <cstdint>
#include <string>

namespace haven {

struct RepoConfig {
  int version = 2;
  std::string id;                 // 64 hex characters
  uint64_t chunker_polynomial = 0;

  std::string ToJson() const;
  // Parses and validates (version 1 or 2, 64-hex id, irreducible polynomial of degree
  // <= 53). Throws kUnsupported for an unknown version, kCorrupt otherwise.
  static RepoConfig Parse(std::string_view json);
  static RepoConfig New(int version);
};

}  // namespace haven
