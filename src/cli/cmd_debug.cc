// `haven debug ...`: hidden commands for benchmarks and tests.
//   gen-repo    fills an existing (empty) repository with a large synthetic history
//               (maintenance/gen_repo.h)
//   used-blobs  loads the index and runs prune's used-blob walk alone, printing wall
//               time, blobs per second and resident memory (from /proc/self/status)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "cli/common.h"
#include "maintenance/gen_repo.h"
#include "maintenance/used_blobs.h"

namespace haven::cli {

namespace {

// VmRSS or VmHWM of this process in bytes (0 when /proc is not there).
uint64_t ProcStatus(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.compare(0, key.size(), key) == 0 && line[key.size()] == ':')
      return std::stoull(line.substr(key.size() + 1)) * 1024;
  return 0;
}

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// User + system CPU seconds of this process so far (all threads). On a shared machine
// this moves less than wall time does.
double CpuSeconds() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void RunGenRepo(const GenRepoOptions& in) {
  OpenOptions open;
  open.use_cache = false;
  auto repo = OpenRepository(open);
  auto lock = Lock::Acquire(*repo, /*exclusive=*/true);
  auto indexed = IndexedRepository::Load(*repo);
  GenRepoOptions o = in;
  o.threads = Jobs();
  o.write = GlobalWriteOptions();
  o.progress = [](const std::string& s) { Print(s); };
  auto t0 = std::chrono::steady_clock::now();
  GenRepoResult r = GenerateRepository(*indexed, o);
  char buf[200];
  std::snprintf(buf, sizeof buf, "generated %llu data blobs, %llu trees, %llu snapshots in %.1f s",
                static_cast<unsigned long long>(r.data_blobs),
                static_cast<unsigned long long>(r.tree_blobs),
                static_cast<unsigned long long>(r.snapshots), Since(t0));
  Print(buf);
}

void RunUsedBlobs() {
  auto repo = OpenRepository();
  auto lock = LockRepository(*repo, /*exclusive=*/false);
  const uint64_t rss0 = ProcStatus("VmRSS");
  auto t0 = std::chrono::steady_clock::now();
  const double c0 = CpuSeconds();
  auto indexed = IndexedRepository::Load(*repo);
  const double t_index = Since(t0);
  const double c_index = CpuSeconds() - c0;
  const uint64_t rss1 = ProcStatus("VmRSS");
  const uint64_t hwm_load = ProcStatus("VmHWM");
  const uint64_t n = indexed->index().BlobCount();
  std::vector<UsedBlobsRoot> roots;
  for (const auto& [id, s] : repo->LoadSnapshots()) roots.push_back({id, s.tree});
  auto t1 = std::chrono::steady_clock::now();
  const double c1 = CpuSeconds();
  UsedBlobs used = FindUsedBlobs(*indexed, roots, {Jobs(), {}});
  const double t_walk = Since(t1);
  const double c_walk = CpuSeconds() - c1;
  const uint64_t hwm = ProcStatus("VmHWM");
  const double per = n ? 1.0 / double(n) : 0;
  char buf[700];
  std::snprintf(buf, sizeof buf,
                "index: %llu blobs in %llu packs loaded in %.2f s (CPU %.2f s), %.1f bytes/blob "
                "held, RSS +%.1f bytes/blob\n"
                "walk: %zu snapshots, %zu trees + %zu data blobs used in %.2f s (CPU %.2f s; "
                "%.0f used blobs/s, %.0f indexed blobs/s, %.0f used blobs per CPU-second)\n"
                "peak RSS %.1f MiB (%.1f bytes per indexed blob; %.1f during the index load)",
                static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(indexed->index().PackCount()), t_index, c_index,
                double(indexed->index().MemoryUsage()) * per, double(rss1 - rss0) * per,
                roots.size(), used.Count(BlobType::kTree), used.Count(BlobType::kData), t_walk,
                c_walk, double(used.size()) / t_walk, double(n) / t_walk,
                double(used.size()) / c_walk,
                double(hwm) / (1 << 20), double(hwm) * per, double(hwm_load) * per);
  Print(buf);
}

}  // namespace

void RegisterDebug(CLI::App& app) {
  auto* debug = app.add_subcommand("debug", "");  // hidden (empty description)
  debug->group("");
  debug->require_subcommand(1);

  static GenRepoOptions gen;
  auto* g = debug->add_subcommand("gen-repo", "fill an empty repository with synthetic snapshots");
  g->add_option("--seed", gen.seed, "seed of everything generated");
  g->add_option("--dirs", gen.dirs, "leaf directories");
  g->add_option("--files", gen.files, "files per leaf directory");
  g->add_option("--blobs", gen.blobs_per_file, "data blobs per file");
  g->add_option("--blob-size", gen.blob_size, "bytes per data blob");
  g->add_option("--snapshots", gen.snapshots, "number of snapshots");
  g->add_option("--changed-dirs", gen.changed_dirs, "leaf directories changed per snapshot");
  g->callback([] { RunGenRepo(gen); });

  static uint32_t deep = 5000;
  auto* d = debug->add_subcommand("gen-deep", "add a snapshot of one chain of nested directories");
  d->add_option("--depth", deep, "directories in the chain");
  d->callback([] {
    auto repo = OpenRepository({.use_cache = false});
    auto lock = Lock::Acquire(*repo, /*exclusive=*/true);
    auto indexed = IndexedRepository::Load(*repo);
    Print("snapshot " + GenerateDeepChain(*indexed, deep, GlobalWriteOptions()).Hex() + " saved");
  });

  auto* u = debug->add_subcommand("used-blobs", "time the used-blob walk of prune alone");
  u->callback([] { RunUsedBlobs(); });
}

}  // namespace haven::cli
