// FUZZ_CHECK(cond): an invariant of a fuzz target (src/**/*_fuzz.cc). A broken one prints
// where and aborts, which libFuzzer and the replay tests (tests/fuzz) report as a finding.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                             \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)
