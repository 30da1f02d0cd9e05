#include "capture/capture.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "archiver/fs_node.h"
#include "capture/fs.h"
#include "capture/packages.h"
#include "capture/rules.h"
#include "chunker/chunker.h"
#include "core/error.h"
#include "core/path_match.h"
#include "core/thread_pool.h"
#include "repo/host_info.h"

namespace haven::capture {

namespace {

// Parent snapshot nodes by absolute path; trees are loaded on demand and kept.
class ParentTree {
 public:
  ParentTree(IndexedRepository& repo, std::optional<BlobId> root) : repo_(repo) {
    if (root) dirs_["/"] = Load(*root);
  }
  const Node* Find(const std::string& path) {
    size_t slash = path.rfind('/');
    std::string dir = slash == 0 ? "/" : path.substr(0, slash);
    const std::vector<Node>* nodes = Dir(dir);
    if (!nodes) return nullptr;
    std::string name = path.substr(slash + 1);
    auto it = std::lower_bound(nodes->begin(), nodes->end(), name,
                               [](const Node& n, const std::string& s) { return n.name < s; });
    return it != nodes->end() && it->name == name ? &*it : nullptr;
  }

 private:
  const std::vector<Node>* Dir(const std::string& dir) {
    auto it = dirs_.find(dir);
    if (it != dirs_.end()) return it->second ? &*it->second : nullptr;
    std::optional<std::vector<Node>> nodes;
    if (dir != "/") {
      const Node* n = Find(dir);
      if (n && n->type == NodeType::kDir && n->subtree) nodes = Load(*n->subtree);
    }
    auto& slot = dirs_[dir] = std::move(nodes);
    return slot ? &*slot : nullptr;
  }
  std::optional<std::vector<Node>> Load(const BlobId& id) {
    try {
      return repo_.LoadTree(id);
    } catch (const Error&) {
      return std::nullopt;  // unreadable parent tree: its files are re-read
    }
  }
  IndexedRepository& repo_;
  std::unordered_map<std::string, std::optional<std::vector<Node>>> dirs_;
};

struct Planned {
  std::string path;
  struct stat st;
  const Node* parent = nullptr;  // trusted parent node when unchanged
};

std::vector<BlobId> ContentIds(const Repository& repo, std::string_view bytes) {
  std::vector<BlobId> ids;
  size_t off = 0;
  for (size_t n : chunker::ChunkLengths(repo.chunker_tables(), AsBytes(bytes))) {
    ids.emplace_back(Sha256(AsBytes(bytes.substr(off, n))));
    off += n;
  }
  return ids;
}

bool SameStat(const struct stat& a, const struct stat& b) {
  return a.st_ino == b.st_ino && a.st_dev == b.st_dev && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

struct Scanned {
  struct stat st;
  std::shared_ptr<const std::string> bytes;
};

}  // namespace

std::string ScanTag(const Profile& p) {
  std::string policy = p.allow.Digest() + (p.mode == SecretMode::kBlock ? "b" : "w");
  return "haven-scan:" + std::to_string(kScanVersion) + "/" +
         Sha256(AsBytes(policy)).Hex().substr(0, 8);
}

CaptureResult RunCapture(WriteSession& session, const Scanner& scanner, const CaptureOptions& opts) {
  IndexedRepository& repo = session.repo();
  CaptureResult res;
  const Profile& prof = opts.profile;
  const std::string tag = opts.scan_tag_override.empty() ? ScanTag(prof) : opts.scan_tag_override;
  const std::string host = opts.host.empty() ? HostName() : opts.host;
  std::vector<std::pair<std::string, std::string>> warnings;  // (path, message)
  auto flush_warnings = [&] {
    std::stable_sort(warnings.begin(), warnings.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [p, m] : warnings)
      if (opts.warn) opts.warn(m);
    warnings.clear();
  };

  // 1. Package discovery, concurrent with everything below.
  std::atomic<bool> cancel{false};
  std::future<DiscoveryResult> packages;
  bool want_packages = !(prof.managers && prof.managers->empty());
  DiscoveryOptions dopts;
  dopts.managers = prof.managers;
  dopts.timeout_ms = prof.package_timeout_s * 1000;
  dopts.cancel = &cancel;
  if (want_packages) packages = std::async(std::launch::async, DiscoverPackages, dopts);
  struct CancelOnExit {
    std::atomic<bool>& c;
    std::future<DiscoveryResult>& f;
    ~CancelOnExit() {
      c = true;
      if (f.valid()) f.wait();
    }
  } cancel_on_exit{cancel, packages};

  // 2. Parent.
  std::vector<std::string> track_warnings;
  std::vector<std::string> targets = ExpandTracked(prof.track, &track_warnings);
  for (auto& w : track_warnings) warnings.emplace_back("", w);
  if (targets.empty()) Fail(ErrorCode::kInvalidArgument, "the profile tracks no existing path");
  std::optional<BlobId> parent_root;
  {
    auto snaps = repo.LoadSnapshots();
    int64_t now = NowLocal().sec;
    for (auto it = snaps.rbegin(); it != snaps.rend(); ++it) {
      const Snapshot& s = it->second;
      if (s.hostname != host || !s.HasTag(kCaptureTag) || s.time.sec > now) continue;
      res.parent = it->first;
      res.parent_trusted = s.HasTag(tag);
      parent_root = s.tree;
      break;
    }
  }

  // 3. Plan and scan.
  PatternList excludes(prof.exclude);
  std::vector<Planned> files;
  // The files the archiver will see (it reports what cannot be listed or stat'ed).
  for (const auto& t : targets)
    WalkRegularFiles(
        t, &excludes,
        [&](const std::string& p, const struct stat& st) { files.push_back(Planned{p, st, nullptr}); },
        [](const std::string&, const std::string&) {});
  res.files = files.size();
  ParentTree parent(repo, res.parent_trusted ? parent_root : std::nullopt);
  std::vector<const Planned*> to_verify;
  std::vector<const Planned*> to_scan;
  for (Planned& f : files) {
    const Node* pn = parent.Find(f.path);
    bool unchanged = pn && SameFileVersion(*pn, f.st);
    if (unchanged)
      for (const BlobId& b : pn->content)
        if (!repo.HasBlob(BlobType::kData, b)) unchanged = false;
    if (unchanged) {
      f.parent = pn;
      if (opts.verify_content) to_verify.push_back(&f);
    } else {
      to_scan.push_back(&f);
    }
  }

  std::mutex mu;
  std::unordered_map<std::string, Scanned> scanned;  // path -> what was scanned
  std::set<std::string> must_read;                   // changed files (no reuse)
  std::vector<Finding> all_findings;
  std::atomic<uint64_t> reads{0};
  auto scan_one = [&](const Planned* f) {
    std::string bytes;
    std::vector<Finding> found;
    try {
      found = scanner.ScanFile(f->path, &bytes);
    } catch (const Error&) {
      std::lock_guard lock(mu);
      must_read.insert(f->path);  // the archiver reads it again and reports the error
      return;
    }
    reads++;
    std::lock_guard lock(mu);
    must_read.insert(f->path);
    scanned[f->path] = Scanned{f->st, std::make_shared<const std::string>(std::move(bytes))};
    for (auto& x : found)
      if (!prof.allow.Allows(x)) all_findings.push_back(std::move(x));
  };
  {
    int n = ResolveJobs(opts.jobs);
    ThreadPool pool(n, static_cast<size_t>(n) * 4);
    std::vector<const Planned*> mismatched;
    std::vector<std::future<void>> done;
    for (const Planned* f : to_verify)
      done.push_back(pool.Submit([&, f] {
        std::string bytes;
        try {
          bytes = ReadWholeFile(f->path);
        } catch (const Error&) {
          std::lock_guard lock(mu);
          must_read.insert(f->path);  // the archiver reads it and reports the error
          return;
        }
        reads++;
        bool same = ContentIds(repo, bytes) == f->parent->content;
        std::lock_guard lock(mu);
        res.files_verified++;
        if (!same) {
          res.verify_mismatches++;
          mismatched.push_back(f);
          warnings.emplace_back(f->path, "verify-content: " + f->path +
                                             " changed without a metadata change; stored again");
        }
      }));
    for (auto& d : done) d.get();
    done.clear();
    to_scan.insert(to_scan.end(), mismatched.begin(), mismatched.end());
    for (const Planned* f : to_scan) done.push_back(pool.Submit([&, f] { scan_one(f); }));
    for (auto& d : done) d.get();
  }
  res.files_scanned = scanned.size();
  std::sort(all_findings.begin(), all_findings.end(), FindingLess);

  // 4. The gate.
  res.findings = all_findings;
  if (!res.findings.empty() && prof.mode == SecretMode::kBlock) {
    res.blocked = true;
    res.files_read = reads;
    flush_warnings();
    return res;
  }

  // 5. Archive.
  BackupOptions bo;
  bo.targets = targets;
  bo.excludes = PatternList(prof.exclude);
  bo.exclude_strings = prof.exclude;
  bo.tags = {kCaptureTag, tag, kHomeTagPrefix + opts.home};
  bo.host = host;
  if (res.parent && res.parent_trusted) {
    bo.parent = res.parent;
  } else {
    bo.force = true;
  }
  bo.jobs = opts.jobs;
  bo.program_version = opts.program_version;
  bo.time = opts.time;
  bo.stable_intermediate_dirs = true;
  std::vector<std::string> archiver_warnings;
  bo.warn = [&](const std::string& w) { archiver_warnings.push_back(w); };
  // must_read is complete here (every scan has finished) and only read from now on.
  bo.may_reuse = [&](const std::string& path) { return !must_read.count(path); };
  // The planning walk's lstat of each file planned as unchanged: the archiver does not
  // stat it again (the snapshot records it as planned; a change after planning is seen
  // by the next capture, as one after the archiver's own lstat would be).
  std::unordered_map<std::string, const struct stat*> planned_unchanged;
  planned_unchanged.reserve(files.size());
  for (const Planned& f : files)
    if (f.parent && !must_read.count(f.path)) planned_unchanged.emplace(f.path, &f.st);
  bo.known_stat = [&](const std::string& path) -> const struct stat* {
    auto it = planned_unchanged.find(path);
    return it == planned_unchanged.end() ? nullptr : it->second;
  };
  bo.content_for = [&](const std::string& path,
                       const struct stat& st) -> std::shared_ptr<const std::string> {
    {
      std::lock_guard lock(mu);
      auto it = scanned.find(path);
      if (it != scanned.end()) {
        if (!SameStat(it->second.st, st))
          Fail(ErrorCode::kIo, path + " changed during the capture; not stored (capture again)");
        return it->second.bytes;
      }
    }
    // Not planned as changed (it appeared, or a parent blob went missing): scan it now.
    std::string bytes;
    auto found = scanner.ScanFile(path, &bytes);
    reads++;
    std::erase_if(found, [&](const Finding& f) { return prof.allow.Allows(f); });
    if (!found.empty() && prof.mode == SecretMode::kBlock)
      Fail(ErrorCode::kIo, path + " changed during the capture and holds a secret; not stored");
    std::lock_guard lock(mu);
    for (auto& f : found) res.findings.push_back(std::move(f));
    return std::make_shared<const std::string>(std::move(bytes));
  };
  bo.extra_files = [&]() {
    std::vector<std::pair<std::string, std::string>> out;
    if (!packages.valid()) return out;
    DiscoveryResult d = packages.get();
    for (auto& w : d.warnings) warnings.emplace_back("", w);
    for (auto& l : d.lists) {
      res.package_files.push_back(l.file);
      out.emplace_back(std::string(kPackagesDir) + "/" + l.file, RenderPackageList(l.lines));
    }
    return out;
  };
  res.backup = RunBackup(session, bo, false);
  res.files_read = reads + res.backup->stats.files_read;
  try {  // (a dry run has no trees to read back: no home_tree then)
    std::optional<BlobId> cur = res.backup->tree;
    for (const std::string& c : TargetComponents(opts.home)) {
      const Node* found = nullptr;
      std::vector<Node> nodes = repo.LoadTree(*cur);
      for (const Node& n : nodes)
        if (n.name == c) found = &n;
      cur = found && found->type == NodeType::kDir ? found->subtree : std::nullopt;
      if (!cur) break;
    }
    res.home_tree = cur;
  } catch (const Error&) {
    res.home_tree.reset();
  }
  std::sort(res.findings.begin(), res.findings.end(), FindingLess);
  flush_warnings();
  for (const auto& w : archiver_warnings)
    if (opts.warn) opts.warn(w);
  return res;
}

}  // namespace haven::capture
