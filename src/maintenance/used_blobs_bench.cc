// Benchmark of the used-blob walk (not built by CMake; build by hand against build/):
//   c++ -std=c++23 -O2 -Isrc src/maintenance/used_blobs_bench.cc -Lbuild -lhaven_maintenance \
//       -lhaven_repo -lhaven_chunker -lhaven_crypto -lhaven_backend -lhaven_core -lsimdjson \
//       -lzstd -lcrypto -o /tmp/used_blobs_bench
//   HAVEN_PASSWORD=... /tmp/used_blobs_bench REPO [threads] [rounds]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "backend/local_backend.h"
#include "core/error.h"
#include "maintenance/used_blobs.h"

int main(int argc, char** argv) {
  using namespace haven;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s REPO [threads] [rounds]\n", argv[0]);
    return 2;
  }
  const char* pw = std::getenv("HAVEN_PASSWORD");
  int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  try {
    auto repo = Repository::Open(std::make_shared<LocalBackend>(argv[1]), pw ? pw : "", threads);
    auto indexed = IndexedRepository::Load(*repo);
    std::vector<UsedBlobsRoot> roots;
    for (const auto& [id, s] : repo->LoadSnapshots()) roots.push_back({id, s.tree});
    for (int r = 0; r < rounds; ++r) {
      auto cpu = [] {
        rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
      };
      double c0 = cpu();
      auto t0 = std::chrono::steady_clock::now();
      UsedBlobsOptions o;
      o.threads = threads;
      UsedBlobs u = FindUsedBlobs(*indexed, roots, o);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double c = cpu() - c0;
      std::printf("threads %d: %zu snapshots, %zu trees + %zu data blobs = %zu blobs in %.3f s "
                  "= %.0f blobs/s (CPU %.3f s = %.0f blobs per CPU-second)\n",
                  threads, roots.size(), u.Count(BlobType::kTree), u.Count(BlobType::kData), u.size(), s,
                  double(u.size()) / s, c, double(u.size()) / c);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
