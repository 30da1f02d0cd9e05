// Test data: log lines as services write them (a timestamp, a level, a component, random
// request and trace ids in hex, and a message from a small vocabulary with numbers), the
// same for the same seed. Such text compresses as well at zstd level 1 as at level 3.
#pragma once

#include <cstdio>
#include <random>
#include <string>

#include "core/bytes.h"

namespace haven::testing {

inline Bytes LogLines(size_t n, uint32_t seed) {
  static const char* kWords[] = {"request", "served", "cache", "miss", "user", "session",
                                 "opened", "closed", "timeout", "retry", "GET", "POST",
                                 "/api/v1/items", "/login", "db", "query", "ok", "slow"};
  static const char* kLevels[] = {"INFO", "WARN", "DEBUG", "ERROR"};
  std::mt19937 rng(seed);
  std::string s;
  uint64_t t = 1700000000000;
  while (s.size() < n) {
    t += rng() % 5000;
    char ids[64];
    std::snprintf(ids, sizeof ids, " req=%010llx trace=%08x%08x",
                  static_cast<unsigned long long>(rng()) << 8 | (rng() & 0xff),
                  static_cast<unsigned>(rng()), static_cast<unsigned>(rng()));
    s += std::to_string(t / 1000) + "." + std::to_string(t % 1000) + " " + kLevels[rng() % 4] +
         " svc" + std::to_string(rng() % 8) + ids;
    for (int w = 0, k = 3 + static_cast<int>(rng() % 6); w < k; ++w)
      s += std::string(" ") + kWords[rng() % 18];
    s += " id=" + std::to_string(rng() % 100000) + " ms=" + std::to_string(rng() % 900) + "\n";
  }
  s.resize(n);
  return Bytes(s.begin(), s.end());
}

}  // namespace haven::testing
