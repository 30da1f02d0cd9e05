// `haven scan [--json] PATH...`: the capture's secret scanner on any files; nothing is
// stored. Exit 4 when secrets are found (docs/cli.md).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "capture/rules.h"
#include "capture/scan_paths.h"
#include "capture/scanner.h"
#include "cli/common.h"
#include "core/error.h"

namespace haven::cli {

namespace {

// Hidden: `haven scan --bench-throughput FILE [--bench-text]`: scanner throughput on one
// buffer (bench/scan-throughput.sh); prints bytes, seconds, GB/s and the match count.
void BenchThroughput(const std::string& file, bool force_text, int rounds) {
  std::ifstream in(file, std::ios::binary);
  if (!in) Fail(ErrorCode::kInvalidArgument, "cannot read " + file);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string data = ss.str();
  capture::Scanner scanner(ScannerCacheDir());
  bool binary = !force_text && capture::LooksBinary(data);
  double best = 1e30;
  uint64_t matches = 0;
  for (int i = 0; i < rounds; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    matches = scanner.CountMatches(data, binary);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
  }
  std::printf("bytes=%zu rules=%s seconds=%.4f GB/s=%.3f matches=%llu\n", data.size(),
              binary ? "binary" : "text", best, static_cast<double>(data.size()) / best / 1e9,
              static_cast<unsigned long long>(matches));
}

// haven's cache and restic's (encrypted repository objects): `scan ~` does not enter them.
std::vector<std::string> CacheDirsToSkip() {
  std::vector<std::string> dirs{CacheBaseDir()};
  if (const char* r = std::getenv("RESTIC_CACHE_DIR"); r && *r) dirs.push_back(r);
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg) {
    dirs.push_back(std::string(xdg) + "/restic");
  } else if (home && *home) {
    dirs.push_back(std::string(home) + "/.cache/restic");
  }
  return dirs;
}

}  // namespace

void RegisterScan(CLI::App& app) {
  static std::vector<std::string> paths;
  static std::string bench_file;
  static bool bench_text = false;
  static int bench_rounds = 3;
  static bool include_package_files = false;
  auto* cmd = app.add_subcommand("scan", "scan files for secrets (nothing is stored)");
  cmd->add_option("paths", paths, "files and directories to scan");
  cmd->add_flag("--include-package-files", include_package_files,
                "also report files that a Debian package installed and nobody changed (their "
                "content has the MD5 dpkg recorded; left out by default)");
  cmd->add_option("--bench-throughput", bench_file)->group("");
  cmd->add_flag("--bench-text", bench_text)->group("");
  cmd->add_option("--bench-rounds", bench_rounds)->group("");
  cmd->callback([] {
    if (!bench_file.empty()) return BenchThroughput(bench_file, bench_text, bench_rounds);
    if (paths.empty()) Fail(ErrorCode::kInvalidArgument, "scan: no paths given");
    capture::Scanner scanner(ScannerCacheDir());
    // HAVEN_DPKG_ROOT: the root dpkg manages (tests point it at a fake one).
    const char* dpkg_root = std::getenv("HAVEN_DPKG_ROOT");
    capture::DpkgFiles packages(dpkg_root && *dpkg_root ? dpkg_root : "/");
    capture::ScanPathsOptions opts;
    opts.jobs = Jobs();
    if (!include_package_files) opts.packages = &packages;
    opts.skip_dirs = CacheDirsToSkip();
    capture::ScanReport rep = capture::ScanPaths(scanner, paths, opts);
    for (const auto& f : rep.findings)
      std::printf("%s\n", Globals().json ? f.Json().c_str() : f.Text().c_str());
    std::fflush(stdout);
    for (const auto& e : rep.errors) Warn("error: " + e);
    if (!Globals().json)
      for (const auto& d : rep.skipped_dirs) Warn("skipped cache directory " + d);
    if (!Globals().json)
      Warn("scanned " + std::to_string(rep.files) + " files (" + FormatBytes(rep.bytes) +
           ") with scan version " + std::to_string(capture::kScanVersion) + ": " +
           std::to_string(rep.findings.size()) + " findings");
    if (!Globals().json && rep.package_findings_ignored > 0)
      Warn(std::to_string(rep.package_findings_ignored) + " findings in " +
           std::to_string(rep.package_files_ignored) +
           " package-owned unmodified files ignored (--include-package-files shows them)");
    if (!rep.findings.empty()) {
      g_exit_code = ExitCodeFor(ErrorCode::kSecretsFound);
    } else if (!rep.errors.empty()) {
      g_exit_code = 1;
    }
  });
}

}  // namespace haven::cli
