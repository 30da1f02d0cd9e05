#include "capture/scan_paths.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>

#include "capture/fs.h"
#include "core/error.h"
#include "core/mutex.h"
#include "core/thread_pool.h"

namespace haven::capture {

ScanReport ScanPaths(const Scanner& scanner, const std::vector<std::string>& paths,
                     const ScanPathsOptions& opts) {
  ScanReport rep;
  std::vector<std::string> files;
  SkipDirs skip;
  for (const auto& d : opts.skip_dirs) skip.Add(d);
  for (const auto& p : paths)
    WalkRegularFiles(
        p, nullptr, [&](const std::string& f, const struct stat&) { files.push_back(f); },
        [&](const std::string&, const std::string& msg) { rep.errors.push_back(msg); }, &skip);
  rep.skipped_dirs = std::move(skip.skipped);
  rep.files = files.size();
  struct {
    Mutex mu;
    uint64_t bytes GUARDED_BY(mu) = 0;
    std::vector<Finding> findings GUARDED_BY(mu);
    std::vector<std::string> errors GUARDED_BY(mu);
    uint64_t package_files GUARDED_BY(mu) = 0, package_findings GUARDED_BY(mu) = 0;
  } out;
  {
    int n = ResolveJobs(opts.jobs);
    ThreadPool pool(n, static_cast<size_t>(n) * 4);
    std::vector<std::future<void>> done;
    done.reserve(files.size());
    for (const auto& f : files)
      done.push_back(pool.Submit([&, f] {
        uint64_t size = 0;
        std::vector<Finding> found;
        bool packaged = false;
        try {
          found = scanner.ScanFile(f, nullptr, &size);
          std::erase_if(found, [&](const Finding& x) { return opts.allow.Allows(x); });
          packaged = !found.empty() && opts.packages &&
                     opts.packages->IsUnmodified(f, Md5OfFile(f));
        } catch (const Error& e) {
          MutexLock lock(out.mu);
          out.errors.push_back(e.what());
          return;
        }
        MutexLock lock(out.mu);
        out.bytes += size;
        if (packaged) {
          out.package_files++;
          out.package_findings += found.size();
          return;
        }
        for (auto& x : found) out.findings.push_back(std::move(x));
      }));
    for (auto& d : done) d.get();
  }
  {
    MutexLock lock(out.mu);
    rep.bytes += out.bytes;
    rep.package_files_ignored = out.package_files;
    rep.package_findings_ignored = out.package_findings;
    rep.findings = std::move(out.findings);
    rep.errors.insert(rep.errors.end(), out.errors.begin(), out.errors.end());
  }
  std::sort(rep.findings.begin(), rep.findings.end(), FindingLess);
  std::sort(rep.errors.begin(), rep.errors.end());
  return rep;
}

}  // namespace haven::capture
