// B9 of bench/README.md: in-process backup of a small tree (2,000 files of ~1 KiB in two
// directories, made by bench/datasets.py as small/) into a local repository with 2 worker
// threads, measured with Google Benchmark in milliseconds of wall time per backup.
//
//   b9_capture_bench [google-benchmark flags] SOURCE_DIR [--work DIR]
//
//   B9/cold       a fresh repository per iteration: LoadIndex (empty) + RunBackup
//   B9/unchanged  one repository holding a first snapshot of SOURCE_DIR; every iteration
//                 is LoadIndex + RunBackup with that snapshot as parent (no file is read)
//   B9/capture_cold/jobs:N       the capture path (issue 17): LoadIndex + RunCapture of a
//                 profile tracking SOURCE_DIR (planning walk, secret scan of every file,
//                 store), N = 1 (serial) and 2 (parallel) workers, fresh repository
//   B9/capture_unchanged/jobs:N  the same against a trusted parent capture: the planning
//                 walk finds every file unchanged (nothing read or scanned); one snapshot
//                 file is written (and fsynced). The capture state the first capture left
//                 (capture/capture_state.h, kept under --work as `haven capture` keeps it
//                 in its cache folder) gives the unchanged folders' trees
//   B9/capture_unchanged_skip/jobs:N  the same with --skip-if-unchanged: the tree equals
//                 the parent's, so nothing at all is written
//   B9/capture_unchanged_nostate/jobs:2  capture_unchanged without a capture state: the
//                 parent's trees are decoded and every tree encoded again
//
// The unchanged rows remove the snapshot each iteration wrote (untimed), so every
// iteration sees a repository of exactly one snapshot: a capture lists and reads every
// snapshot to find its parent, and a repository growing by one snapshot per iteration
// made the figure depend on how many iterations Google Benchmark chose.
//
// The scanner's compiled rules are loaded from a cache outside the timed region, as
// `haven capture` loads them from its cache directory: DIR/haven-b9-scanner-cache, kept
// between runs (a copy is valid only for its rule table, Hyperscan version and CPU).
//
// Outside the timed region: creating the repository (with cheap scrypt parameters, since
// key derivation is not what B9 measures) and opening it. Targets (issue 5): cold <= 25 ms,
// unchanged <= 8 ms. The repository lives under --work (default $TMPDIR or /tmp) and is
// deleted at exit.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "archiver/archiver.h"
#include "capture/capture.h"
#include "capture/profile.h"
#include "capture/scanner.h"
#include "backend/local_backend.h"
#include "core/error.h"
#include "repo/repository.h"

namespace {

namespace fs = std::filesystem;
using namespace haven;

constexpr int kThreads = 2;
constexpr const char* kPassword = "b9-bench";
const crypto::ScryptParams kCheapKdf{1024, 8, 1};

std::string g_source;
fs::path g_work, g_scanner_cache;

std::unique_ptr<Repository> FreshRepository(const fs::path& dir) {
  fs::remove_all(dir);
  auto be = std::make_shared<LocalBackend>(dir.string());
  Repository::Init(*be, kPassword, 2, kCheapKdf, kThreads);
  return Repository::Open(be, kPassword, kThreads);
}

BackupOptions Options() {
  BackupOptions o;
  o.targets = {g_source};
  o.host = "b9";
  o.jobs = kThreads;
  o.program_version = "haven b9";
  return o;
}

// CPU milliseconds of the whole process so far (every thread: the workers' share too),
// reported per iteration as the counter proc_cpu_ms beside the wall time.
double ProcessCpuMs() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}
// HAVEN_PERF_CTL=CTL_FIFO,ACK_FIFO: the timed part of the capture rows toggles a `perf record
// --control=fifo:CTL_FIFO,ACK_FIFO -D -1` run, so its profile holds only what B9 times
// (without it, creating each iteration's repository is most of the samples).
class PerfControl {
 public:
  PerfControl() {
    const char* v = std::getenv("HAVEN_PERF_CTL");
    if (!v || !*v) return;
    std::string s(v);
    const size_t comma = s.find(',');
    ctl_ = std::fopen(s.substr(0, comma).c_str(), "w");
    if (comma != std::string::npos) ack_ = std::fopen(s.substr(comma + 1).c_str(), "r");
  }
  ~PerfControl() {
    if (ctl_) std::fclose(ctl_);
    if (ack_) std::fclose(ack_);
  }
  void Enable() { Send("enable"); }
  void Disable() { Send("disable"); }

 private:
  void Send(const char* cmd) {
    if (!ctl_) return;
    std::fprintf(ctl_, "%s\n", cmd);
    std::fflush(ctl_);
    char ack[16];
    if (ack_) std::fgets(ack, sizeof ack, ack_);
  }
  std::FILE* ctl_ = nullptr;
  std::FILE* ack_ = nullptr;
};

PerfControl& Perf() {
  static PerfControl p;
  return p;
}

void BM_Cold(benchmark::State& state) {
  fs::path dir = g_work / "cold";
  double cpu = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto repo = FreshRepository(dir);
    double c0 = ProcessCpuMs();
    state.ResumeTiming();
    auto indexed = IndexedRepository::Load(*repo, IndexLoad::kOnFirstUse);  // as the CLI
    WriteSession session(*indexed);
    BackupResult r = RunBackup(session, Options(), false);
    benchmark::DoNotOptimize(r.tree);
    state.PauseTiming();
    if (r.stats.files_new == 0) state.SkipWithError("cold backup stored no new file");
    cpu += ProcessCpuMs() - c0;
    repo.reset();
    state.ResumeTiming();
  }
  state.counters["proc_cpu_ms"] = cpu / static_cast<double>(state.iterations());
  fs::remove_all(dir);
}

void BM_Unchanged(benchmark::State& state) {
  fs::path dir = g_work / "unchanged";
  FileId first;
  {
    auto repo = FreshRepository(dir);
    auto indexed = IndexedRepository::Load(*repo);
    WriteSession session(*indexed);
    first = RunBackup(session, Options(), false).snapshot_id;
  }
  auto be = std::make_shared<LocalBackend>(dir.string());
  for (auto _ : state) {
    state.PauseTiming();
    auto repo = Repository::Open(be, kPassword, kThreads);
    BackupOptions o = Options();
    o.parent = first;
    state.ResumeTiming();
    auto indexed = IndexedRepository::Load(*repo, IndexLoad::kOnFirstUse);  // as the CLI
    WriteSession session(*indexed);
    BackupResult r = RunBackup(session, o, false);
    benchmark::DoNotOptimize(r.tree);
    state.PauseTiming();
    if (r.stats.files_new + r.stats.files_changed != 0)
      state.SkipWithError("unchanged backup read files");
    be->Remove({FileType::kSnapshot, r.snapshot_id.Hex()});
    repo.reset();
    state.ResumeTiming();
  }
  fs::remove_all(dir);
}

const capture::Scanner& BenchScanner() {
  static capture::Scanner s(g_scanner_cache.string());
  return s;
}

capture::CaptureOptions CaptureOptionsFor(int jobs) {
  capture::CaptureOptions o;
  fs::path src(g_source);
  o.home = src.parent_path().string();
  o.profile = capture::Profile::Parse("[track]\npaths = [\"" + g_source +
                                          "\"]\n[packages]\nmanagers = []\n",
                                      o.home, "b9.toml");
  o.host = "b9";
  o.jobs = jobs;
  o.program_version = "haven b9";
  o.state_dir = (g_work / "capture-state").string();  // as `haven capture`'s cache folder
  return o;
}

void BM_CaptureCold(benchmark::State& state) {
  const int jobs = static_cast<int>(state.range(0));
  fs::path dir = g_work / "capture-cold";
  const capture::Scanner& scanner = BenchScanner();
  double cpu = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto repo = FreshRepository(dir);
    capture::CaptureOptions o = CaptureOptionsFor(jobs);
    double c0 = ProcessCpuMs();
    state.ResumeTiming();
    Perf().Enable();
    auto indexed = IndexedRepository::Load(*repo, IndexLoad::kOnFirstUse);  // as the CLI
    WriteSession session(*indexed);
    capture::CaptureResult r = capture::RunCapture(session, scanner, o);
    benchmark::DoNotOptimize(r.home_tree);
    Perf().Disable();
    state.PauseTiming();
    cpu += ProcessCpuMs() - c0;
    if (r.blocked || r.files_scanned == 0) state.SkipWithError("cold capture scanned nothing");
    repo.reset();
    state.ResumeTiming();
  }
  state.counters["proc_cpu_ms"] = cpu / static_cast<double>(state.iterations());
  fs::remove_all(dir);
}

// skip: --skip-if-unchanged (no snapshot is written for the unchanged set); use_state:
// false = no capture state (every parent tree decoded, every tree encoded again).
void CaptureUnchanged(benchmark::State& state, bool skip, bool use_state = true) {
  const int jobs = static_cast<int>(state.range(0));
  fs::path dir = g_work / "capture-unchanged";
  const capture::Scanner& scanner = BenchScanner();
  {
    auto repo = FreshRepository(dir);
    auto indexed = IndexedRepository::Load(*repo);
    WriteSession session(*indexed);
    capture::RunCapture(session, scanner, CaptureOptionsFor(jobs));
  }
  // The state the first capture left (it names the first snapshot): restored before each
  // iteration, as the snapshot each iteration writes is removed again.
  const fs::path state_dir = CaptureOptionsFor(jobs).state_dir;
  const fs::path state_copy = g_work / "capture-state-first";
  fs::remove_all(state_copy);
  fs::copy(state_dir, state_copy, fs::copy_options::recursive);
  auto be = std::make_shared<LocalBackend>(dir.string());
  double cpu = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(state_dir);
    fs::copy(state_copy, state_dir, fs::copy_options::recursive);
    auto repo = Repository::Open(be, kPassword, kThreads);
    capture::CaptureOptions o = CaptureOptionsFor(jobs);
    o.skip_if_unchanged = skip;
    if (!use_state) o.state_dir.clear();
    double c0 = ProcessCpuMs();
    state.ResumeTiming();
    Perf().Enable();
    auto indexed = IndexedRepository::Load(*repo, IndexLoad::kOnFirstUse);  // as the CLI
    WriteSession session(*indexed);
    capture::CaptureResult r = capture::RunCapture(session, scanner, o);
    benchmark::DoNotOptimize(r.home_tree);
    Perf().Disable();
    state.PauseTiming();
    cpu += ProcessCpuMs() - c0;
    if (!r.parent_trusted || r.files_read != 0) state.SkipWithError("unchanged capture read files");
    if (use_state != (r.state_used && r.dirs_reused > 0))
      state.SkipWithError(use_state ? "the capture state was not used" : "a state was used");
    if (r.backup && r.backup->skipped != skip) state.SkipWithError("skipped is not as asked");
    if (r.backup && !skip) be->Remove({FileType::kSnapshot, r.backup->snapshot_id.Hex()});
    repo.reset();
    state.ResumeTiming();
  }
  state.counters["proc_cpu_ms"] = cpu / static_cast<double>(state.iterations());
  fs::remove_all(dir);
}

void BM_CaptureUnchanged(benchmark::State& state) { CaptureUnchanged(state, false); }
void BM_CaptureUnchangedSkip(benchmark::State& state) { CaptureUnchanged(state, true); }
void BM_CaptureUnchangedNoState(benchmark::State& state) { CaptureUnchanged(state, false, false); }

}  // namespace

BENCHMARK(BM_CaptureCold)->Name("B9/capture_cold")->ArgName("jobs")->Arg(1)->Arg(2)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CaptureUnchanged)->Name("B9/capture_unchanged")->ArgName("jobs")->Arg(1)->Arg(2)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CaptureUnchangedSkip)->Name("B9/capture_unchanged_skip")->ArgName("jobs")->Arg(1)
    ->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CaptureUnchangedNoState)->Name("B9/capture_unchanged_nostate")->ArgName("jobs")
    ->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Cold)->Name("B9/cold")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Unchanged)->Name("B9/unchanged")->Unit(benchmark::kMillisecond)->UseRealTime();

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const char* tmp = std::getenv("TMPDIR");
  fs::path work_parent = tmp && *tmp ? tmp : "/tmp";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--work" && i + 1 < argc) {
      work_parent = argv[++i];
    } else if (!a.empty() && a[0] != '-' && g_source.empty()) {
      g_source = fs::absolute(a).string();
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (g_source.empty() || !fs::is_directory(g_source)) {
    std::fprintf(stderr, "usage: %s [benchmark flags] SOURCE_DIR [--work DIR]\n", argv[0]);
    return 2;
  }
  fs::create_directories(work_parent);
  std::string tmpl = (work_parent / "haven-b9.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    std::perror("mkdtemp");
    return 1;
  }
  g_work = tmpl;
  g_scanner_cache = work_parent / "haven-b9-scanner-cache";
  int rc = 0;
  try {
    benchmark::RunSpecifiedBenchmarks();
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    rc = 1;
  }
  benchmark::Shutdown();
  fs::remove_all(g_work);
  return rc;
}
