// bench_floor: the bare work a workload cannot avoid, timed by bench/compare beside haven and
// restic (issue 15: "each target met or the remaining gap explained by a measured floor").
// Nothing here uses haven's code: each mode is the plainest loop over the same files, on the
// same number of threads as haven, so haven/floor says how far haven is from the work itself
// and floor/restic says how low haven/restic can go at all.
//
//   bench_floor hash-compress --threads N --out FILE SRC...
//       every regular file under SRC: read, SHA-256, compressed with zstd as its own frame
//       at the level haven's "auto" gives it (1 under 4 KiB, else 3: docs/format.md §12; a
//       cold backup stores each file's bytes as blobs compressed one by one), the
//       frames appended to FILE (one per thread: FILE.<t>) and each FILE fsynced at the end.
//   bench_floor create-write --threads N SRC DST
//       DST gets SRC's directories (mkdir), then every regular file is created and written
//       with SRC's bytes, symlinks are made as links (a restore's create-and-write loop; no
//       metadata, no decoding). Files are handed out by directory, as haven's restorer does.
//   bench_floor pieces --threads N --piece BYTES FILE
//       one large file read in pieces (default 1 MiB, restic's average chunk), each piece
//       SHA-256-hashed and compressed with zstd level 3 as its own frame, on N threads; the
//       output is dropped (B1: the zstd + hash floor of one big file, one pass, no CLI).
//   bench_floor hash --threads N SRC...
//       every regular file under SRC read and SHA-256-hashed (check --read-data hashes every
//       pack file; the blob hashes and decryption come on top).
//   bench_floor unpack --threads N [--piece BYTES] SRC...
//       what check --read-data does with each blob once it is decrypted: every regular file
//       under SRC is cut into pieces (default 1 MiB, restic's average chunk; a smaller file
//       is one piece) and each piece compressed by zstd -3 when that shrinks it, in memory
//       and NOT timed; then, timed, every piece is decompressed (when it was compressed)
//       and SHA-256-hashed, on N threads. The seconds printed are the timed part only.
//
// Prints one line: mode, files, bytes, seconds. Exit 1 with a message on any error.
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

[[noreturn]] void Fail(const std::string& msg) {
  std::fprintf(stderr, "bench_floor: %s\n", msg.c_str());
  std::exit(1);
}
[[noreturn]] void Die(const std::string& what) { Fail(what + ": " + std::strerror(errno)); }

struct Entry {
  std::string rel;  // path relative to its root
  std::string root;
  bool link = false;
};

// Regular files and symlinks under each root, grouped by directory (directory order of the
// walk); directories relative to the first root in `dirs`.
void Walk(const std::vector<std::string>& roots, std::vector<Entry>* files,
          std::vector<std::string>* dirs) {
  for (const std::string& root : roots) {
    std::error_code ec;
    if (fs::is_regular_file(fs::symlink_status(root, ec))) {
      files->push_back({fs::path(root).filename().string(), fs::path(root).parent_path().string(), false});
      continue;
    }
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      const fs::file_status st = it->symlink_status();
      std::string rel = it->path().lexically_relative(root).string();
      if (fs::is_directory(st)) {
        if (dirs) dirs->push_back(rel);
      } else if (fs::is_regular_file(st) || fs::is_symlink(st)) {
        files->push_back({std::move(rel), root, fs::is_symlink(st)});
      }
    }
    if (ec) Die("walk " + root);
  }
}

using Span = std::span<const uint8_t>;

// A file's bytes, read into `buf` (the caller's, reused from file to file: it only grows,
// so a floor of many small files pays no allocation or zero-fill per file, as the tools
// measured against it do not).
Span ReadAll(const std::string& path, std::vector<uint8_t>& buf) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Die("open " + path);
  if (buf.size() < 65536) buf.resize(65536);
  size_t used = 0;
  for (;;) {
    if (buf.size() - used < 4096) buf.resize(buf.size() * 2);
    const ssize_t n = read(fd, buf.data() + used, buf.size() - used);
    if (n < 0) Die("read " + path);
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  close(fd);
  return Span(buf.data(), used);
}

void Sha256(Span data, unsigned char out[32]) {
  unsigned int len = 0;
  if (!EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr)) {
    Fail("sha256 failed");
  }
}

void WriteAll(int fd, const uint8_t* p, size_t n, const std::string& what) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0) Die("write " + what);
    p += w;
    n -= static_cast<size_t>(w);
  }
}

template <typename F>
void OnThreads(int threads, F&& f) {
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(f, t);
  f(0);
  for (auto& th : pool) th.join();
}

struct Totals {
  std::atomic<uint64_t> files{0}, bytes{0};
};

// Every regular file read whole and SHA-256-hashed on `threads` threads, files handed out
// one at a time; use(t, data) then runs on thread t.
template <typename Use>
void EachFileHashed(const std::vector<Entry>& files, int threads, Totals* tot, Use use) {
  std::atomic<size_t> next{0};
  OnThreads(threads, [&](int t) {
    std::vector<uint8_t> buf;
    for (size_t i; (i = next.fetch_add(1)) < files.size();) {
      if (files[i].link) continue;
      const Span data = ReadAll(files[i].root + "/" + files[i].rel, buf);
      unsigned char digest[32];
      Sha256(data, digest);
      use(t, data);
      tot->files++;
      tot->bytes += data.size();
    }
  });
}

// hash-compress's output of one thread: frames appended to OUT.<t>, fsynced when destroyed.
struct FrameFile {
  std::string name;
  int fd;
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::vector<uint8_t> frame;
  FrameFile(const std::string& out, int t) : name(out + "." + std::to_string(t)) {
    fd = open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) Die("create " + name);
  }
  ~FrameFile() {
    ZSTD_freeCCtx(cctx);
    if (fsync(fd) != 0) Die("fsync " + name);
    close(fd);
  }
  int level = 0;
  void Add(Span data) {
    const int want = data.size() < 4096 ? 1 : 3;
    if (want != level) ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level = want);
    frame.resize(ZSTD_compressBound(data.size()));
    const size_t n = ZSTD_compress2(cctx, frame.data(), frame.size(), data.data(), data.size());
    if (ZSTD_isError(n)) Fail(std::string("zstd: ") + ZSTD_getErrorName(n));
    WriteAll(fd, frame.data(), n, name);
  }
};

void CreateWrite(const std::vector<Entry>& files, const std::vector<std::string>& dirs,
                 const std::string& dst, int threads, Totals* tot) {
  if (mkdir(dst.c_str(), 0755) != 0 && errno != EEXIST) Die("mkdir " + dst);
  for (const std::string& d : dirs) {
    const std::string p = dst + "/" + d;
    if (mkdir(p.c_str(), 0755) != 0) Die("mkdir " + p);
  }
  // Hand out runs of files of one directory (the walk lists a directory's files together).
  std::atomic<size_t> next{0};
  constexpr size_t kRun = 32;
  OnThreads(threads, [&](int) {
    std::vector<uint8_t> buf;
    for (size_t start; (start = next.fetch_add(kRun)) < files.size();) {
      for (size_t i = start; i < std::min(files.size(), start + kRun); ++i) {
        const std::string src = files[i].root + "/" + files[i].rel;
        const std::string to = dst + "/" + files[i].rel;
        if (files[i].link) {
          const std::string target = fs::read_symlink(src).string();
          if (symlink(target.c_str(), to.c_str()) != 0) Die("symlink " + to);
          continue;
        }
        const Span data = ReadAll(src, buf);
        const int fd = open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) Die("create " + to);
        WriteAll(fd, data.data(), data.size(), to);
        close(fd);
        tot->files++;
        tot->bytes += data.size();
      }
    }
  });
}

void Pieces(const std::string& path, size_t piece, int threads, Totals* tot) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Die("open " + path);
  struct stat st;
  if (fstat(fd, &st) != 0) Die("stat " + path);
  const size_t count = (static_cast<size_t>(st.st_size) + piece - 1) / piece;
  std::atomic<size_t> next{0};
  OnThreads(threads, [&](int) {
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
    std::vector<uint8_t> data(piece), frame(ZSTD_compressBound(piece));
    for (size_t i; (i = next.fetch_add(1)) < count;) {
      const ssize_t n = pread(fd, data.data(), piece, static_cast<off_t>(i * piece));
      if (n < 0) Die("read " + path);
      data.resize(static_cast<size_t>(n));
      unsigned char digest[32];
      Sha256(Span(data.data(), data.size()), digest);
      const size_t z = ZSTD_compress2(cctx, frame.data(), frame.size(), data.data(), data.size());
      if (ZSTD_isError(z)) Fail(std::string("zstd: ") + ZSTD_getErrorName(z));
      data.resize(piece);
      tot->files += i == 0;
      tot->bytes += static_cast<uint64_t>(n);
    }
    ZSTD_freeCCtx(cctx);
  });
  close(fd);
}

// unpack: the pieces prepared untimed, then decompressed and hashed; *t0 is reset to the
// start of the timed part.
void Unpack(const std::vector<Entry>& files, size_t piece, int threads, Totals* tot,
            std::chrono::steady_clock::time_point* t0) {
  struct Piece {
    std::vector<uint8_t> stored;
    size_t plain = 0;
    bool compressed = false;
  };
  std::vector<std::vector<Piece>> per_file(files.size());
  std::atomic<size_t> next{0};
  OnThreads(threads, [&](int) {
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
    std::vector<uint8_t> buf;
    for (size_t i; (i = next.fetch_add(1)) < files.size();) {
      if (files[i].link) continue;
      const Span data = ReadAll(files[i].root + "/" + files[i].rel, buf);
      for (size_t off = 0; off < data.size(); off += piece) {
        const size_t n = std::min(piece, data.size() - off);
        Piece p;
        p.plain = n;
        p.stored.resize(ZSTD_compressBound(n));
        const size_t z = ZSTD_compress2(cctx, p.stored.data(), p.stored.size(), data.data() + off, n);
        if (ZSTD_isError(z)) Fail(std::string("zstd: ") + ZSTD_getErrorName(z));
        p.compressed = z < n;
        if (p.compressed) {
          p.stored.resize(z);
        } else {
          p.stored.assign(data.begin() + static_cast<std::ptrdiff_t>(off),
                          data.begin() + static_cast<std::ptrdiff_t>(off + n));
        }
        p.stored.shrink_to_fit();
        per_file[i].push_back(std::move(p));
      }
    }
    ZSTD_freeCCtx(cctx);
  });
  std::vector<const Piece*> pieces;
  for (const auto& f : per_file)
    for (const Piece& p : f) pieces.push_back(&p);
  *t0 = std::chrono::steady_clock::now();
  next = 0;
  OnThreads(threads, [&](int) {
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    std::vector<uint8_t> plain(piece);
    for (size_t i; (i = next.fetch_add(1)) < pieces.size();) {
      const Piece& p = *pieces[i];
      const uint8_t* bytes = p.stored.data();
      if (p.compressed) {
        const size_t n = ZSTD_decompressDCtx(dctx, plain.data(), plain.size(), p.stored.data(),
                                             p.stored.size());
        if (ZSTD_isError(n) || n != p.plain) Fail("zstd: a piece did not decompress");
        bytes = plain.data();
      }
      unsigned char digest[32];
      unsigned int len = 0;
      if (!EVP_Digest(bytes, p.plain, digest, &len, EVP_sha256(), nullptr)) Fail("sha256 failed");
      tot->bytes += p.plain;
    }
    ZSTD_freeDCtx(dctx);
  });
  for (const auto& f : per_file) tot->files += !f.empty();
}

int Usage() {
  std::fprintf(stderr,
               "usage: bench_floor hash-compress --threads N --out FILE SRC...\n"
               "       bench_floor create-write --threads N SRC DST\n"
               "       bench_floor pieces --threads N [--piece BYTES] FILE\n"
               "       bench_floor hash --threads N SRC...\n"
               "       bench_floor unpack --threads N [--piece BYTES] SRC...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string mode = argv[1];
  int threads = 1;
  size_t piece = 1 << 20;
  std::string out;
  std::vector<std::string> args;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--piece" && i + 1 < argc) {
      piece = std::max<size_t>(4096, std::strtoull(argv[++i], nullptr, 10));
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else {
      args.push_back(a);
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  Totals tot;
  std::vector<Entry> files;
  if (mode == "hash-compress" && !out.empty() && !args.empty()) {
    Walk(args, &files, nullptr);
    std::vector<std::unique_ptr<FrameFile>> frames;
    for (int t = 0; t < threads; ++t) frames.push_back(std::make_unique<FrameFile>(out, t));
    EachFileHashed(files, threads, &tot, [&](int t, Span d) { frames[t]->Add(d); });
    frames.clear();  // fsync and close, timed
  } else if (mode == "create-write" && args.size() == 2) {
    std::vector<std::string> dirs;
    Walk({args[0]}, &files, &dirs);
    CreateWrite(files, dirs, args[1], threads, &tot);
  } else if (mode == "pieces" && args.size() == 1) {
    Pieces(args[0], piece, threads, &tot);
  } else if (mode == "unpack" && !args.empty()) {
    Walk(args, &files, nullptr);
    Unpack(files, piece, threads, &tot, &t0);
  } else if (mode == "hash" && !args.empty()) {
    Walk(args, &files, nullptr);
    EachFileHashed(files, threads, &tot, [](int, Span) {});
  } else {
    return Usage();
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %llu files, %llu bytes, %.3f s on %d threads\n", mode.c_str(),
              static_cast<unsigned long long>(tot.files.load()),
              static_cast<unsigned long long>(tot.bytes.load()), secs, threads);
  return 0;
}
