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

ScanReport ScanPaths(const Scanner& scanner, const std::vector<std::string>& paths, int jobs,
                     const ScanAllow& allow) {
  ScanReport rep;
  std::vector<std::string> files;
  for (const auto& p : paths)
    WalkRegularFiles(
        p, nullptr, [&](const std::string& f, const struct stat&) { files.push_back(f); },
        [&](const std::string&, const std::string& msg) { rep.errors.push_back(msg); });
  rep.files = files.size();
  struct {
    Mutex mu;
    uint64_t bytes GUARDED_BY(mu) = 0;
    std::vector<Finding> findings GUARDED_BY(mu);
    std::vector<std::string> errors GUARDED_BY(mu);
  } out;
  {
    int n = ResolveJobs(jobs);
    ThreadPool pool(n, static_cast<size_t>(n) * 4);
    std::vector<std::future<void>> done;
    done.reserve(files.size());
    for (const auto& f : files)
      done.push_back(pool.Submit([&, f] {
        std::string content;
        std::vector<Finding> found;
        try {
          found = scanner.ScanFile(f, &content);
        } catch (const Error& e) {
          MutexLock lock(out.mu);
          out.errors.push_back(e.what());
          return;
        }
        MutexLock lock(out.mu);
        out.bytes += content.size();
        for (auto& x : found)
          if (!allow.Allows(x)) out.findings.push_back(std::move(x));
      }));
    for (auto& d : done) d.get();
  }
  {
    MutexLock lock(out.mu);
    rep.bytes += out.bytes;
    rep.findings = std::move(out.findings);
    rep.errors.insert(rep.errors.end(), out.errors.begin(), out.errors.end());
  }
  std::sort(rep.findings.begin(), rep.findings.end(), FindingLess);
  std::sort(rep.errors.begin(), rep.errors.end());
  return rep;
}

}  // namespace haven::capture
