// Fuzz target: the secret scanner on arbitrary bytes (the content of any tracked file).
// The first byte picks the path (so path rules and their content checks run too). Every
// finding must lie inside the input, be sorted, and never print its secret in full.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "capture/scanner.h"
#include "core/error.h"

namespace {
#define FUZZ_CHECK(cond)                                                             \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven::capture;
  static const Scanner scanner;
  static const char* kPaths[] = {"/h/.bashrc", "/h/.ssh/id_rsa", "/h/.docker/config.json",
                                 "/h/.netrc", "/h/notes.txt"};
  if (size == 0) return 0;
  const char* path = kPaths[data[0] % 5];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<Finding> f;
  try {
    f = scanner.Scan(path, text);
  } catch (const haven::Error& e) {
    std::fprintf(stderr, "unexpected error: %s\n", e.what());
    std::abort();
  }
  uint64_t lines = 1;
  for (char c : text) lines += c == '\n';
  for (size_t i = 0; i < f.size(); ++i) {
    FUZZ_CHECK(f[i].line >= 1 && f[i].line <= lines);
    FUZZ_CHECK(f[i].column >= 1 && f[i].column <= text.size() + 1);
    FUZZ_CHECK(f[i].fingerprint.size() == 16);
    if (i > 0) FUZZ_CHECK(!FindingLess(f[i], f[i - 1]));
    for (unsigned char c : f[i].excerpt) FUZZ_CHECK(c >= 0x20 && c < 0x7f);
  }
  return 0;
}
