#include "capture/scan_paths.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <mutex>

#include "core/error.h"
#include "core/thread_pool.h"

namespace haven::capture {

namespace {

void Walk(const std::string& path, std::vector<std::string>& files,
          std::vector<std::string>& errors) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    errors.push_back("lstat " + path + ": " + strerror(errno));
    return;
  }
  if (S_ISREG(st.st_mode)) {
    files.push_back(path);
    return;
  }
  if (!S_ISDIR(st.st_mode)) return;
  DIR* d = opendir(path.c_str());
  if (!d) {
    errors.push_back("open directory " + path + ": " + strerror(errno));
    return;
  }
  std::vector<std::string> names;
  while (struct dirent* de = readdir(d)) {
    std::string n = de->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) Walk(path.back() == '/' ? path + n : path + "/" + n, files, errors);
}

}  // namespace

ScanReport ScanPaths(const Scanner& scanner, const std::vector<std::string>& paths, int jobs,
                     const ScanAllow& allow) {
  ScanReport rep;
  std::vector<std::string> files;
  for (const auto& p : paths) Walk(p, files, rep.errors);
  rep.files = files.size();
  std::mutex mu;
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
          std::lock_guard lock(mu);
          rep.errors.push_back(e.what());
          return;
        }
        std::lock_guard lock(mu);
        rep.bytes += content.size();
        for (auto& x : found)
          if (!allow.Allows(x)) rep.findings.push_back(std::move(x));
      }));
    for (auto& d : done) d.get();
  }
  std::sort(rep.findings.begin(), rep.findings.end(), FindingLess);
  std::sort(rep.errors.begin(), rep.errors.end());
  return rep;
}

}  // namespace haven::capture
