#include <stdlib.h>

#include <chrono>
#include <filesystem>

#include "cli/common.h"
#include "core/timings.h"
#include "maintenance/check.h"
#include "maintenance/check_head_start.h"

namespace haven::cli {
namespace {

// A folder "haven-check-cache-XXXXXX" beside the cache folders (or in $TMPDIR when there is
// no cache folder), made by Make() and removed with everything in it when check ends,
// however it ends.
class TempCacheDir {
 public:
  TempCacheDir() = default;
  ~TempCacheDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempCacheDir(const TempCacheDir&) = delete;
  TempCacheDir& operator=(const TempCacheDir&) = delete;
  // The folder's path, or "" (with a warning) when it cannot be made.
  std::string Make() {
    std::string base = CacheBaseDir();
    std::error_code ec;
    if (!base.empty()) std::filesystem::create_directories(base, ec);
    if (base.empty() || ec) base = std::filesystem::temp_directory_path(ec).string();
    std::string tmpl = base + "/haven-check-cache-XXXXXX";
    if (::mkdtemp(tmpl.data())) path_ = tmpl;
    else Warn("cannot create a temporary cache folder in " + base + ": check reads without a cache");
    return path_;
  }

 private:
  std::string path_;
};

}  // namespace

void RegisterCheck(CLI::App& app) {
  static bool read_data = false, with_cache = false, check_unused = false;
  static std::string subset;
  auto* cmd = app.add_subcommand("check", "check the repository for errors");
  cmd->add_flag("--read-data", read_data, "read and verify all data blobs");
  cmd->add_option("--read-data-subset", subset,
                  "read a subset of data packs: n/t (group n of t), x% or a size with suffix "
                  "k/K, m/M, g/G, t/T (random packs, e.g. 50M)");
  // restic 0.14 deprecated it and ignores it (unused data is not an error): the same here.
  cmd->add_flag("--check-unused", check_unused, "deprecated and ignored, as in restic 0.14");
  cmd->add_flag("--with-cache", with_cache,
                "read index, snapshots and trees through the local cache (faster, but checks "
                "the cached copies of those files)");
  cmd->callback([] {
    // Without --with-cache, check reads the repository's own files, not cached copies; on
    // network storage through a new temporary cache as restic does (tree packs are then
    // fetched once, whole, not one ranged read per tree), removed at the end.
    // Only for network storage: on a local disk a ranged read costs no round trip, and
    // copying the tree packs into a cache made check --read-data 15 % slower (B8).
    // Decided from the backend itself (Backend::RoundTrips), so every remote kind, and any
    // decorator over one, is treated alike.
    TempCacheDir temp;
    OpenOptions open;
    if (!with_cache)
      open.cache_base = [&temp](const Backend& be) { return be.RoundTrips() ? temp.Make() : std::string(); };
    open.prefetch_index = true;
    auto repo = OpenRepository(open);
    // On remote storage the index loads, and with --read-data the packs are read, while
    // the lock is written and the listings are made (kept only where those agree).
    std::unique_ptr<CheckHeadStart> head_start;
    if (repo->backend().RoundTrips() && !Globals().no_lock)
      head_start = std::make_unique<CheckHeadStart>(*repo, read_data && subset.empty(),
                                                    CheckLoaders(repo->backend(), JobsOrAuto()));
    auto lock = LockRepositoryOverlapped(*repo, true);
    CheckOptions opts;
    opts.confirm_lock = [&lock] { ConfirmLock(lock); };
    opts.locked_exclusively = lock != nullptr;
    opts.head_start = head_start.get();
    opts.read_data = read_data;
    opts.read_data_subset = subset;
    if (check_unused)
      Warn("Flag --check-unused has been deprecated, `--check-unused` is deprecated and will be "
           "ignored");
    opts.jobs = JobsOrAuto();
    opts.progress = [](const std::string& s) { Print(s); };
    auto start = std::chrono::steady_clock::now();
    CheckResult r = RunCheck(*repo, opts);
    Timings::PrintIfEnabled(
        "check",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    for (const auto& h : r.hints) Print(h);
    for (const auto& e : r.errors) Warn("error: " + e);
    if (!r.ok()) {
      Warn("Fatal: repository contains errors");
      g_exit_code = 1;
      return;
    }
    Print("no errors were found");
  });
}

}  // namespace haven::cli
