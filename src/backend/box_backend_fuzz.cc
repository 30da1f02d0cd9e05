// Fuzz target: a box file made elsewhere (docs/box.md §1). The input is written as the SQLite
// file; BoxBackend must open it or refuse it with an error, list every type, and load every
// listed object whole and in ranges: every failure is a haven::Error (kCorrupt for damaged
// rows or pages, kUnsupported for another format version, kIo for what SQLite reports as
// I/O), never a crash, a hang or a read past a part. Nothing is written to the file.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backend/box_backend.h"
#include "core/error.h"
#include "core/fuzz_check.h"

namespace {

void Probe(haven::BoxBackend& b) {
  using namespace haven;
  if (!b.Exists()) return;
  for (FileType t : {FileType::kConfig, FileType::kKey, FileType::kSnapshot, FileType::kIndex,
                     FileType::kPack}) {
    std::vector<FileInfo> all;
    b.List(t, [&](const FileInfo& fi) { all.push_back(fi); });
    for (const FileInfo& fi : all) {
      Handle h{t, fi.name};
      auto size = b.Stat(h);
      FUZZ_CHECK(size && *size == fi.size);
      if (fi.size > (64u << 20)) continue;  // a row may claim any size; reading it is bounded
      try {
        Bytes whole = b.Load(h);
        FUZZ_CHECK(whole.size() == fi.size);
        if (fi.size > 2) FUZZ_CHECK(b.Load(h, 1, fi.size - 2).size() == fi.size - 2);
      } catch (const Error& e) {
        FUZZ_CHECK(e.code() == ErrorCode::kCorrupt || e.code() == ErrorCode::kIo);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven;
  static const std::string path =
      std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/haven-box-fuzz-" +
      std::to_string(getpid()) + ".hbox";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((path + suffix).c_str());
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    std::abort();
  }
  try {
    BoxBackend b(path);
    Probe(b);
  } catch (const Error& e) {
    FUZZ_CHECK(e.code() == ErrorCode::kCorrupt || e.code() == ErrorCode::kIo ||
               e.code() == ErrorCode::kUnsupported);
  }
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((path + suffix).c_str());
  return 0;
}
