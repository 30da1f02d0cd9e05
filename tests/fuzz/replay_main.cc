// Standalone driver for the libFuzzer targets in src/**/*_fuzz.cc, so that every compiler
// (g++ included) can run them as ordinary tests:
//
//   fuzz_replay_<target> [--mutations N] [--seed S] PATH...
//
// Each PATH is a file or a directory (all regular files in it, sorted by name). Every file
// is passed to LLVMFuzzerTestOneInput once as is, then N (default 2000) deterministic
// pseudo-random mutations of those inputs are run (bit flips, interesting bytes and
// integers, deletions, insertions, duplications, truncation, splicing of two inputs).
// Exit status 0 when every input returned; a crash (uncaught exception, abort, signal)
// writes the input to ./fuzz-crash-<pid>.bin first, so it can be replayed with
//   fuzz_replay_<target> fuzz-crash-<pid>.bin
// An empty or missing corpus is an error: the test must not pass vacuously.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// The input being run, for the crash handler (written before each run).
const uint8_t* g_current = nullptr;
size_t g_current_size = 0;
char g_label[512] = "";

void WriteAll(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w <= 0) return;
    c += w;
    n -= static_cast<size_t>(w);
  }
}

void SaveCrashInput() {
  char name[64];
  std::snprintf(name, sizeof(name), "fuzz-crash-%d.bin", static_cast<int>(getpid()));
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (g_current_size) WriteAll(fd, g_current, g_current_size);
    close(fd);
  }
  const char msg1[] = "\n*** fuzz replay: crash on input ";
  WriteAll(2, msg1, sizeof(msg1) - 1);
  WriteAll(2, g_label, std::strlen(g_label));
  const char msg2[] = "\n*** input saved as ";
  WriteAll(2, msg2, sizeof(msg2) - 1);
  WriteAll(2, name, std::strlen(name));
  WriteAll(2, "\n", 1);
}

void OnSignal(int sig) {
  SaveCrashInput();
  signal(sig, SIG_DFL);
  raise(sig);
}

void OnTerminate() {
  // Name the exception if there is one, then crash through the signal path.
  if (auto e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "uncaught exception: %s\n", ex.what());
    } catch (...) {
      std::fprintf(stderr, "uncaught non-standard exception\n");
    }
  }
  std::abort();
}

// splitmix64: small, deterministic on every platform.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n ? static_cast<size_t>(Next() % n) : 0; }
};

const uint8_t kInterestingBytes[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x1f, 0x20, 0x7f, 0x80,
                                     0xfe, 0xff, '"',  '\\', '{',  '}',  '[',  ']',  ',',
                                     ':',  '-',  '.',  'e',  '0',  '9',  'n',  't',  'u'};
const uint32_t kInterestingU32[] = {0,          1,          31,         32,         33,
                                    36,         37,         41,         0x7f,       0xff,
                                    0x100,      0xffff,     0x10000,    0x1000000,  0x1000001,
                                    0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff};
const char* const kInterestingText[] = {
    "0",   "-1",      "1e400",  "18446744073709551616", "4294967296", "0.5", "null", "true",
    "\"\"", "[]",     "{}",     "\"\\u0000\"",          "\"\\ud800\"", "\"\\xff\"", "9e18",
    "\\",  "\\x",     "\\u12",  "2147483648",           "-9223372036854775809"};

std::vector<uint8_t> Mutate(const std::vector<uint8_t>& in, const std::vector<uint8_t>& other,
                            Rng& rng) {
  std::vector<uint8_t> m = in;
  const int ops = 1 + static_cast<int>(rng.Below(4));
  for (int op = 0; op < ops; ++op) {
    switch (rng.Below(11)) {
      case 0:  // flip a bit
        if (!m.empty()) m[rng.Below(m.size())] ^= static_cast<uint8_t>(1u << rng.Below(8));
        break;
      case 1:  // interesting byte
        if (!m.empty())
          m[rng.Below(m.size())] = kInterestingBytes[rng.Below(std::size(kInterestingBytes))];
        break;
      case 2:  // random byte
        if (!m.empty()) m[rng.Below(m.size())] = static_cast<uint8_t>(rng.Next());
        break;
      case 3: {  // delete a range
        if (m.empty()) break;
        size_t pos = rng.Below(m.size());
        size_t len = 1 + rng.Below(std::min<size_t>(16, m.size() - pos));
        m.erase(m.begin() + static_cast<ptrdiff_t>(pos),
                m.begin() + static_cast<ptrdiff_t>(pos + len));
        break;
      }
      case 4: {  // insert random bytes
        size_t pos = rng.Below(m.size() + 1);
        size_t len = 1 + rng.Below(8);
        std::vector<uint8_t> ins(len);
        for (auto& b : ins) b = static_cast<uint8_t>(rng.Next());
        m.insert(m.begin() + static_cast<ptrdiff_t>(pos), ins.begin(), ins.end());
        break;
      }
      case 5: {  // duplicate a range
        if (m.empty() || m.size() > (1u << 20)) break;
        size_t pos = rng.Below(m.size());
        size_t len = 1 + rng.Below(std::min<size_t>(64, m.size() - pos));
        std::vector<uint8_t> dup(m.begin() + static_cast<ptrdiff_t>(pos),
                                 m.begin() + static_cast<ptrdiff_t>(pos + len));
        size_t at = rng.Below(m.size() + 1);
        m.insert(m.begin() + static_cast<ptrdiff_t>(at), dup.begin(), dup.end());
        break;
      }
      case 6:  // truncate
        m.resize(rng.Below(m.size() + 1));
        break;
      case 7: {  // interesting little-endian u32 (also at the very end: pack trailers)
        if (m.size() < 4) break;
        uint32_t v = kInterestingU32[rng.Below(std::size(kInterestingU32))];
        if (rng.Below(4) == 0) v = static_cast<uint32_t>(m.size() - 4 + rng.Below(3) - 1);
        size_t pos = rng.Below(3) == 0 ? m.size() - 4 : rng.Below(m.size() - 3);
        for (int i = 0; i < 4; ++i) m[pos + i] = static_cast<uint8_t>(v >> (8 * i));
        break;
      }
      case 8: {  // splice with another input
        if (other.empty()) break;
        size_t a = rng.Below(m.size() + 1), b = rng.Below(other.size() + 1);
        m.resize(a);
        m.insert(m.end(), other.begin() + static_cast<ptrdiff_t>(b), other.end());
        break;
      }
      case 9: {  // replace a run of digits / a token with interesting JSON text
        if (m.empty()) break;
        size_t pos = rng.Below(m.size());
        size_t end = pos;
        while (end < m.size() && end - pos < 24 &&
               ((m[end] >= '0' && m[end] <= '9') || m[end] == '-' || m[end] == '.'))
          ++end;
        if (end == pos) end = pos + 1;
        const char* t = kInterestingText[rng.Below(std::size(kInterestingText))];
        m.erase(m.begin() + static_cast<ptrdiff_t>(pos), m.begin() + static_cast<ptrdiff_t>(end));
        m.insert(m.begin() + static_cast<ptrdiff_t>(pos), t, t + std::strlen(t));
        break;
      }
      default: {  // overwrite a range with one repeated byte
        if (m.empty()) break;
        size_t pos = rng.Below(m.size());
        size_t len = 1 + rng.Below(std::min<size_t>(32, m.size() - pos));
        std::fill_n(m.begin() + static_cast<ptrdiff_t>(pos), len,
                    kInterestingBytes[rng.Below(std::size(kInterestingBytes))]);
        break;
      }
    }
  }
  return m;
}

void Run(const std::vector<uint8_t>& input, const std::string& label) {
  g_current = input.data();
  g_current_size = input.size();
  std::snprintf(g_label, sizeof(g_label), "%s", label.c_str());
  // A copy in its own allocation, so out-of-bounds reads hit the allocator's guard
  // (under ASan) and a target cannot rely on data beyond `size`.
  // Like libFuzzer, never pass a null pointer, even for an empty input.
  std::vector<uint8_t> copy(input);
  static const uint8_t kEmpty = 0;
  LLVMFuzzerTestOneInput(copy.empty() ? &kEmpty : copy.data(), copy.size());
}

int Usage() {
  std::fprintf(stderr, "usage: fuzz_replay [--mutations N] [--seed S] PATH...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, OnSignal);
  std::set_terminate(OnTerminate);

  long mutations = 2000;
  uint64_t seed = 0x68617665'6e2d667aull;  // "haven-fz"
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--mutations" && i + 1 < argc) {
      mutations = std::strtol(argv[++i], nullptr, 10);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 0);
    } else if (a.rfind("--", 0) == 0) {
      return Usage();
    } else {
      paths.push_back(a);
    }
  }
  if (paths.empty()) return Usage();

  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& e : std::filesystem::directory_iterator(p, ec))
        if (e.is_regular_file()) in_dir.push_back(e.path().string());
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (std::filesystem::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "fuzz_replay: %s: no such file or directory\n", p.c_str());
      return 1;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "fuzz_replay: no inputs found in the given paths\n");
    return 1;
  }

  std::vector<std::vector<uint8_t>> inputs;
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    inputs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < inputs.size(); ++i) Run(inputs[i], files[i]);

  Rng rng{seed};
  for (long n = 0; n < mutations; ++n) {
    const size_t a = static_cast<size_t>(n) % inputs.size();
    const size_t b = rng.Below(inputs.size());
    Run(Mutate(inputs[a], inputs[b], rng),
        "mutation " + std::to_string(n) + " of " + files[a] + " (seed " + std::to_string(seed) +
            ")");
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz_replay: %zu inputs + %ld mutations ran in %.2f s, no crash\n", inputs.size(),
              mutations, secs);
  return 0;
}
