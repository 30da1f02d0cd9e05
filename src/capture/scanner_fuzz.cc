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
// An invariant of the scanner's output; a broken one is a finding (abort).
void Expect(bool ok, int line) {
  if (ok) return;
  std::fprintf(stderr, "scanner_fuzz.cc:%d: invariant broken\n", line);
  std::abort();
}
// Compiling the rule databases takes seconds under the sanitizers: done once, before the
// first input (in LLVMFuzzerInitialize, which libFuzzer's per-input timeout does not cover).
const haven::capture::Scanner& TheScanner() {
  static const haven::capture::Scanner scanner;
  return scanner;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  TheScanner();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven::capture;
  const Scanner& scanner = TheScanner();
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
  // (UTF-16 is scanned as UTF-8 and \uXXXX escapes as their characters: a decoded line has
  // no more newlines than the input, and at most 1.5 times its bytes.)
  for (size_t i = 0; i < f.size(); ++i) {
    Expect(f[i].line >= 1 && f[i].line <= lines, __LINE__);
    Expect(f[i].column >= 1 && f[i].column <= 2 * text.size() + 1, __LINE__);
    Expect(f[i].fingerprint.size() == 16, __LINE__);
    if (i > 0) Expect(!FindingLess(f[i], f[i - 1]), __LINE__);
    for (unsigned char c : f[i].excerpt) Expect(c >= 0x20 && c < 0x7f, __LINE__);
  }
  return 0;
}
