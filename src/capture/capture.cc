#include "capture/capture.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <future>
#include <map>
#include <set>
#include <unordered_map>

#include "archiver/folder_state.h"
#include "archiver/fs_node.h"
#include "capture/fs.h"
#include "capture/packages.h"
#include "capture/rules.h"
#include "chunker/chunker.h"
#include "core/deep_stack.h"
#include "core/error.h"
#include "core/mutex.h"
#include "core/path_match.h"
#include "core/thread_pool.h"
#include "repo/host_info.h"
#include "repo/tree_path.h"

namespace haven::capture {

namespace {

// The capture's folder keys (archiver/folder_state.h; docs/capture-state.md): bumped with any
// change to what a key covers or how trees are encoded from it.
constexpr const char* kCaptureKeyVersion = "haven-capture-dir-key/1";

// Parent snapshot nodes by absolute path; trees are loaded on demand and kept, also for
// the archiver (BackupOptions::parent_tree): each parent tree is read and decoded once.
class ParentTree {
 public:
  // The root is read on first use (which waits for the index): an unchanged capture with a
  // state may never look at the parent's trees, and the planning walk runs meanwhile.
  ParentTree(IndexedRepository& repo, std::optional<BlobId> root) : repo_(repo), root_(root) {}
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
  // Decodes every parent tree below `targets` on `threads` threads, one level at a time,
  // for Find to take afterwards. Meant to run beside the planning walk (which does not touch
  // this object): the walk and the decoding overlap, and sibling directories decode side by
  // side. No other member may be used until it returns.
  void PrefetchBelow(const std::vector<std::string>& targets, int threads) {
    std::vector<BlobId> level;
    for (const auto& t : targets) {
      const Node* n = Find(t);
      if (n && n->type == NodeType::kDir && n->subtree && !by_id_.count(*n->subtree))
        level.push_back(*n->subtree);
    }
    // Breadth first, bounded like every tree walk (a hostile parent is only read this deep).
    for (int depth = 0; !level.empty() && depth < kMaxTreeDepth; ++depth) {
      std::vector<std::shared_ptr<const LoadedTree>> loaded(level.size());
      ParallelFor(level.size(), threads, [&](size_t i) {
        try {
          loaded[i] = LoadParentTree(repo_, level[i]);
        } catch (const Error&) {
          // left out: Find's own Load tries again and reports nothing either
        }
      });
      for (size_t i = 0; i < level.size(); ++i)
        if (loaded[i]) by_id_.emplace(level[i], loaded[i]);
      std::vector<BlobId> next;
      for (const auto& t : loaded)
        if (t)
          for (const Node& c : t->nodes)
            if (c.type == NodeType::kDir && c.subtree && !by_id_.count(*c.subtree))
              next.push_back(*c.subtree);
      std::sort(next.begin(), next.end());
      next.erase(std::unique(next.begin(), next.end()), next.end());
      level = std::move(next);
    }
  }
  // The tree `id` if Find loaded it, else nullptr. Read-only: safe on many threads once
  // the planning (every Find) is over.
  std::shared_ptr<const LoadedTree> Loaded(const BlobId& id) const {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
  }

 private:
  const std::vector<Node>* Dir(const std::string& dir) {
    auto it = dirs_.find(dir);
    if (it != dirs_.end()) return it->second ? &it->second->nodes : nullptr;
    std::shared_ptr<const LoadedTree> tree;
    if (dir == "/") {
      if (root_) tree = Load(*root_);
    } else {
      const Node* n = Find(dir);
      if (n && n->type == NodeType::kDir && n->subtree) tree = Load(*n->subtree);
    }
    auto& slot = dirs_[dir] = std::move(tree);
    return slot ? &slot->nodes : nullptr;
  }
  std::shared_ptr<const LoadedTree> Load(const BlobId& id) {
    if (auto it = by_id_.find(id); it != by_id_.end()) return it->second;
    try {
      return by_id_[id] = LoadParentTree(repo_, id);
    } catch (const Error&) {
      return nullptr;  // unreadable parent tree: its files are re-read
    }
  }
  IndexedRepository& repo_;
  const std::optional<BlobId> root_;
  std::unordered_map<std::string, std::shared_ptr<const LoadedTree>> dirs_;
  std::unordered_map<BlobId, std::shared_ptr<const LoadedTree>, IdHash> by_id_;
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
  struct stat st;  // the planning walk's
  std::shared_ptr<const std::string> bytes;  // null: streamed (the archiver reads the file)
  // The stat after the read equals st: no change from the planning walk to the end of the
  // read, so the bytes are the version st describes.
  bool as_planned = false;
};

// Scanned bytes are kept for the archiver while they fit this budget (small files, the
// usual dotfiles); larger files, and any file once the budget is spent, are scanned as a
// stream and read again by the archiver under the scan's stat (expected_stat): memory stays
// bounded whatever the tracked files weigh.
constexpr uint64_t kKeepBytesBudget = 64 << 20;
constexpr uint64_t kKeepFileMax = 8 << 20;

// One capture: the steps of RunCapture and the state they share. Scan workers and the
// archiver's workers meet under mu_.
class CaptureRun {
 public:
  CaptureRun(WriteSession& session, const Scanner& scanner, const CaptureOptions& opts)
      : session_(session),
        repo_(session.repo()),
        scanner_(scanner),
        opts_(opts),
        prof_(opts.profile),
        tag_(opts.scan_tag_override.empty() ? ScanTag(prof_) : opts.scan_tag_override),
        host_(opts.host.empty() ? HostName() : opts.host) {}
  // Package discovery may still run when a step fails: stop it and wait for it.
  ~CaptureRun() {
    cancel_ = true;
    if (packages_.valid()) packages_.wait();
  }

  CaptureResult Run() {
    StartPackages();
    FindTargetsAndParent();
    LoadState();
    // With the blobs outside the tracked folders known (the state's), an unchanged set
    // needs no index: it is read only once the walk found something to store.
    if (!state_ || state_->blobs.empty()) StartIndexLoad();
    PlanFiles();
    if (StoresSomethingNew()) StartIndexLoad();
    VerifyAndScan();
    if (Blocked()) return std::move(res_);
    if (opts_.after_scan) opts_.after_scan();
    Save();
    return std::move(res_);
  }

 private:
  using Warning = std::pair<std::string, std::string>;  // (path, message)

  // 1. Package discovery, concurrent with everything below.
  void StartPackages() {
    if (prof_.managers && prof_.managers->empty()) return;
    DiscoveryOptions dopts;
    dopts.managers = prof_.managers;
    dopts.timeout_ms = prof_.package_timeout_s * 1000;
    dopts.cancel = &cancel_;
    packages_ = std::async(std::launch::async, DiscoverPackages, dopts);
  }

  // 1b. The index, read on another thread while the planning walk or the scan runs (Run
  // says when: an unchanged set whose state records the blobs outside its folders needs
  // none). A read error is thrown again by the first call that needs the index.
  void StartIndexLoad() {
    if (repo_.index_loaded() || index_load_.valid()) return;
    index_load_ = std::async(std::launch::async, [this] {
      try {
        repo_.LoadIndex();
      } catch (...) {
      }
    });
  }

  // 2. The tracked paths and the parent: the newest capture of this host not in the future.
  void FindTargetsAndParent() {
    std::vector<std::string> track_warnings;
    targets_ = ExpandTracked(prof_.track, &track_warnings);
    AddWarnings(track_warnings);
    if (targets_.empty()) Fail(ErrorCode::kInvalidArgument, "the profile tracks no existing path");
    auto snaps = repo_.LoadSnapshots();
    int64_t now = NowLocal().sec;
    for (auto it = snaps.rbegin(); it != snaps.rend(); ++it) {
      const Snapshot& s = it->second;
      if (s.hostname != host_ || !s.HasTag(kCaptureTag) || s.time.sec > now) continue;
      res_.parent = it->first;
      res_.parent_trusted = s.HasTag(tag_);
      parent_root_ = s.tree;
      break;
    }
  }

  // 2b. The state of the last capture (archiver/folder_state.h), when it belongs to the trusted
  // parent and to this capture's context; without --verify-content (which re-reads).
  void LoadState() {
    if (opts_.state_dir.empty() || opts_.verify_content) return;
    state_path_ = FolderStatePath(opts_.state_dir, "capture", {host_, opts_.home, prof_.name});
    keys_.emplace();
    std::vector<std::string> parts{tag_};
    parts.insert(parts.end(), prof_.exclude.begin(), prof_.exclude.end());
    keys_->context = FolderContext(kCaptureKeyVersion, parts);
    if (!res_.parent || !res_.parent_trusted) return;
    state_ = LoadUsableFolderState(repo_, state_path_, keys_->context, *res_.parent,
                                   parent_root_, repo_.index_files());
    res_.state_used = state_.has_value();
    // Recorded by the capture that wrote the parent, in the index files the state names.
    if (state_) repo_.AddKnownBlobs(state_->blobs);
  }

  // The directories whose tree the state records under the key the walk found for them:
  // every file directly in one is unchanged; the archiver takes the tree as it is
  // (ArchiveOptions' known_tree). The trees are indexed (the state is used only while
  // every index file it recorded remains): no index lookup here. The walk did not report
  // these folders' own files (DirKeyWalk::known, the same test): none is planned.
  void MatchState() {
    if (!state_) return;
    for (const WalkedDir& d : keys_->dirs) {
      if (!d.complete) continue;
      if (const FolderState::Dir* rec = state_->Find(d.key))
        reused_.emplace(d.path, Reuse{&d, rec->tree});
    }
  }

  // 3a. The files the archiver will see (it reports what cannot be listed or stat'ed),
  // each unchanged against a trusted parent (skipped, or verified) or to scan.
  void PlanFiles() {
    PatternList excludes(prof_.exclude);
    parent_tree_.emplace(repo_, res_.parent_trusted ? parent_root_ : std::nullopt);
    // The parent's trees are decoded while the walk lists the files.
    std::future<void> prefetch;
    if (res_.parent_trusted && !state_)  // (with a state, only changed folders are looked up)
      prefetch = std::async(std::launch::async, [this] {
        parent_tree_->PrefetchBelow(targets_, ResolveJobs(opts_.jobs));
      });
    struct Join {  // the prefetch uses parent_tree_: wait for it even when the walk throws
      std::future<void>& f;
      ~Join() {
        if (f.valid()) f.wait();
      }
    } join{prefetch};
    if (state_)  // (complete is checked by the walk)
      keys_->known = [this](const RawId& key) { return state_->Find(key) != nullptr; };
    // The walk's threads: one core decodes the parent's trees when they are prefetched. (The
    // index load beside the walk is not counted: walking on every core measured faster.)
    const int walk_threads = prefetch.valid() ? 1 : ResolveJobs(opts_.jobs);
    for (const auto& t : targets_)
      WalkRegularFiles(
          t, &excludes,
          [&](const std::string& p, const struct stat& st) {
            files_.push_back(Planned{p, st, nullptr});
          },
          [](const std::string&, const std::string&) {}, nullptr, keys_ ? &*keys_ : nullptr,
          walk_threads);
    res_.files = files_.size() + (keys_ ? keys_->files_not_reported : 0);
    if (prefetch.valid()) prefetch.get();
    MatchState();
    for (Planned& f : files_) {
      const Node* pn = parent_tree_->Find(f.path);
      bool unchanged = pn && SameFileVersion(*pn, f.st);
      if (unchanged)
        for (const BlobId& b : pn->content)
          if (!repo_.HasBlob(BlobType::kData, b)) unchanged = false;
      if (unchanged) {
        f.parent = pn;
        if (opts_.verify_content) to_verify_.push_back(&f);
      } else {
        to_scan_.push_back(&f);
      }
    }
  }

  // After planning: a file to scan or a folder whose tree the state does not give (its
  // tree is encoded and looked up). A changed profile or package list is found only when
  // stored: the index is read then.
  bool StoresSomethingNew() const {
    return !to_scan_.empty() || !to_verify_.empty() || !state_ ||
           reused_.size() < keys_->dirs.size();
  }

  // 3b. --verify-content re-reads the unchanged files, then every changed (or mismatched)
  // file is read and scanned, in parallel.
  void VerifyAndScan() {
    // ParallelFor, not a task per file: a handoff between threads (a futex wake and a
    // context switch) costs more than scanning a small file.
    const int n = ResolveJobs(opts_.jobs);
    ParallelFor(to_verify_.size(), n, [this](size_t i) { VerifyOne(to_verify_[i]); });
    MutexLock lock(mu_);
    to_scan_.insert(to_scan_.end(), mismatched_.begin(), mismatched_.end());
    res_.files_verified = verified_;
    res_.verify_mismatches = mismatched_.size();
    lock.Unlock();
    // Each worker fills its file's slot, no lock taken (a lock per file, contended by the
    // other worker, put the workers to sleep on the futex so often that the scan of 2,000
    // small files took 10 ms on 2 workers, as long as on one; 6-7 ms with the slots, bench
    // B9); the slots are merged here, in to_scan_'s order.
    std::vector<ScanSlot> slots(to_scan_.size());
    ParallelFor(to_scan_.size(), n, [&](size_t i) { slots[i] = ScanOne(to_scan_[i]); });
    lock.Lock();
    scanned_.reserve(slots.size());
    for (size_t i = 0; i < slots.size(); ++i) {
      const std::string& path = to_scan_[i]->path;
      must_read_scan_.insert(path);  // (an unread file too: the archiver reports its error)
      if (!slots[i].read) continue;
      scanned_.emplace(path, std::move(slots[i].scanned));
      for (auto& x : slots[i].found)
        if (!prof_.allow.Allows(x)) findings_.push_back(std::move(x));
    }
    res_.files_scanned = scanned_.size();
    // must_read is complete here (every scan has finished) and only read from now on.
    must_read_ = std::move(must_read_scan_);
    // The profile is stored too: it must hold no secret either.
    for (auto& x : scanner_.Scan(prof_.name.empty() ? "(profile)" : prof_.name, prof_.text))
      if (!prof_.allow.Allows(x)) findings_.push_back(std::move(x));
    std::sort(findings_.begin(), findings_.end(), FindingLess);
    res_.findings = std::move(findings_);
  }

  void VerifyOne(const Planned* f) {
    std::string bytes;
    try {
      bytes = ReadWholeFile(f->path);
    } catch (const Error&) {
      MutexLock lock(mu_);
      must_read_scan_.insert(f->path);  // the archiver reads it and reports the error
      return;
    }
    reads_++;
    bool same = ContentIds(repo_, bytes) == f->parent->content;
    MutexLock lock(mu_);
    verified_++;
    if (!same) {
      mismatched_.push_back(f);
      warnings_.emplace_back(f->path, "verify-content: " + f->path +
                                          " changed without a metadata change; stored again");
    }
  }

  // One changed file read and scanned (on a scan worker; touches no shared state but the
  // atomics). read = false: it could not be read (the archiver reads it again and reports
  // the error).
  struct ScanSlot {
    bool read = false;
    Scanned scanned;
    std::vector<Finding> found;
  };
  ScanSlot ScanOne(const Planned* f) {
    ScanSlot slot;
    std::string bytes;
    const uint64_t size = static_cast<uint64_t>(f->st.st_size);
    bool keep = size <= kKeepFileMax;
    if (keep) {
      uint64_t kept = kept_bytes_.fetch_add(size);
      if (kept + size > kKeepBytesBudget) {
        kept_bytes_.fetch_sub(size);
        keep = false;
      }
    }
    struct stat after;
    try {
      slot.found = scanner_.ScanFile(f->path, keep ? &bytes : nullptr, nullptr, &after, size);
    } catch (const Error&) {
      return slot;
    }
    reads_++;
    slot.read = true;
    slot.scanned =
        Scanned{f->st, keep ? std::make_shared<const std::string>(std::move(bytes)) : nullptr,
                SameStat(after, f->st)};
    return slot;
  }

  // 4. The gate: a finding in block mode stores nothing.
  bool Blocked() {
    if (res_.findings.empty() || prof_.mode != SecretMode::kBlock) return false;
    res_.blocked = true;
    res_.files_read = reads_;
    FlushWarnings();
    return true;
  }

  // 5. The snapshot, then the home directory's tree in it.
  void Save() {
    std::vector<std::string> archiver_warnings;
    BackupOptions bo = ArchiveOptions();
    bo.warn = [&](const std::string& w) { archiver_warnings.push_back(w); };
    res_.backup = RunBackup(session_, bo, false);
    res_.files_read = reads_ + res_.backup->stats.files_read;
    res_.dirs_reused = dirs_reused_;
    SaveState(archiver_warnings);
    FindHomeTree();
    {
      MutexLock lock(mu_);
      for (auto& f : late_findings_) res_.findings.push_back(std::move(f));
    }
    std::sort(res_.findings.begin(), res_.findings.end(), FindingLess);
    FlushWarnings();
    for (const auto& w : archiver_warnings)
      if (opts_.warn) opts_.warn(w);
  }

  // The state for the next capture: each complete folder's key with the tree stored (or
  // reused) for it. Not written when the snapshot is incomplete (a folder that could not
  // be read must be tried again) or for a dry run (no state_dir).
  void SaveState(std::vector<std::string>& warnings) {
    if (!keys_ || res_.backup->incomplete) return;
    const FileId snap = res_.backup->skipped ? *res_.parent : res_.backup->snapshot_id;
    if (snap.IsZero()) return;
    FolderState next;
    next.context = keys_->context;
    next.snapshot = snap;
    next.tree = res_.backup->tree;
    {
      MutexLock lock(mu_);
      for (const WalkedDir& d : keys_->dirs) {
        if (!d.complete) continue;
        std::optional<BlobId> tree;
        if (auto it = saved_trees_.find(d.path); it != saved_trees_.end()) {
          tree = it->second;
        } else if (auto r = reused_.find(d.path); r != reused_.end()) {
          tree = r->second.tree;
        }
        if (tree) next.dirs.push_back({d.key, *tree, {}});
      }
    }
    try {
      std::vector<std::pair<BlobType, BlobId>> outer;
      {
        MutexLock lock(mu_);
        outer.swap(outer_);
      }
      for (const auto& [type, id] : outer)  // (the state's, else the index's: no read then)
        if (std::optional<BlobLocation> where = repo_.Locate(type, id))
          next.blobs.push_back(KnownBlob{type, id, *where});
      // (the session has flushed: the index files are read-only now)
      SaveNextFolderState(repo_, state_path_, state_, std::move(next), repo_.index_files());
    } catch (const Error& e) {
      warnings.push_back(std::string("capture state not saved (the next capture reads the "
                                     "parent's trees instead): ") + e.what());
    }
  }

  BackupOptions ArchiveOptions() {
    BackupOptions bo;
    bo.targets = targets_;
    bo.excludes = PatternList(prof_.exclude);
    bo.exclude_strings = prof_.exclude;
    bo.tags = {kCaptureTag, tag_, kHomeTagPrefix + opts_.home};
    bo.host = host_;
    if (res_.parent && res_.parent_trusted) {
      bo.parent = res_.parent;
    } else {
      bo.force = true;
    }
    bo.jobs = opts_.jobs;
    bo.program_version = opts_.program_version;
    bo.time = opts_.time;
    bo.stable_intermediate_dirs = true;
    bo.skip_if_unchanged = opts_.skip_if_unchanged;  // (only a trusted parent is given)
    bo.may_reuse = [this](const std::string& path) { return !must_read_.count(path); };
    // The planning walk's lstat of each file planned as unchanged, and of each file whose
    // kept bytes were read under that same stat: the archiver does not stat them again
    // (the snapshot records each as planned, with exactly the bytes scanned; a change
    // after planning or scanning is seen by the next capture, as one after the archiver's
    // own lstat would be).
    known_stats_.reserve(files_.size());
    for (const Planned& f : files_) {
      const bool kept = f.parent && !must_read_.count(f.path);
      auto it = kept ? scanned_.end() : scanned_.find(f.path);
      if (kept || (it != scanned_.end() && it->second.bytes && it->second.as_planned))
        known_stats_.emplace(f.path, &f.st);
    }
    bo.known_stat = [this](const std::string& path) -> const struct stat* {
      auto it = known_stats_.find(path);
      return it == known_stats_.end() ? nullptr : it->second;
    };
    bo.content_for = [this](const std::string& path, const struct stat& st) {
      return ContentFor(path, st);
    };
    bo.expected_stat = [this](const std::string& path) -> const struct stat* {
      auto it = scanned_.find(path);
      return it == scanned_.end() ? nullptr : &it->second.st;
    };
    bo.extra_files = [this] { return PackageFiles(); };
    if (!reused_.empty())
      bo.known_tree = [this](const std::string& path, const struct stat& st)
          -> std::optional<BackupOptions::KnownTree> {
        auto it = reused_.find(path);
        if (it == reused_.end() || !SameStat(it->second.dir->st, st)) return std::nullopt;
        dirs_reused_++;
        const WalkedDir& d = *it->second.dir;
        return BackupOptions::KnownTree{it->second.tree, d.files, d.bytes, d.dirs};
      };
    if (keys_) {
      bo.tree_saved = [this](const std::string& path, const BlobId& tree) {
        MutexLock lock(mu_);
        saved_trees_[path] = tree;
      };
      bo.outer_blob = [this](BlobType type, const BlobId& id) {
        MutexLock lock(mu_);
        outer_.emplace_back(type, id);
      };
    }
    bo.parent_tree = [this](const BlobId& id) { return parent_tree_->Loaded(id); };
    return bo;
  }

  // The bytes the archiver stores for a changed file: exactly what was scanned.
  std::shared_ptr<const std::string> ContentFor(const std::string& path, const struct stat& st) {
    if (auto it = scanned_.find(path); it != scanned_.end()) {
      if (!SameStat(it->second.st, st))
        Fail(ErrorCode::kIo, path + " changed during the capture; not stored (capture again)");
      return it->second.bytes;  // null for a streamed file: read under expected_stat
    }
    // Not planned as changed (it appeared, or a parent blob went missing): scan it now.
    std::string bytes;
    auto found = scanner_.ScanFile(path, &bytes);
    reads_++;
    std::erase_if(found, [&](const Finding& f) { return prof_.allow.Allows(f); });
    if (!found.empty() && prof_.mode == SecretMode::kBlock)
      Fail(ErrorCode::kIo, path + " changed during the capture and holds a secret; not stored");
    MutexLock lock(mu_);
    for (auto& f : found) late_findings_.push_back(std::move(f));
    return std::make_shared<const std::string>(std::move(bytes));
  }

  // The package lists, stored under /.haven/packages/, and the profile.
  std::vector<std::pair<std::string, std::string>> PackageFiles() {
    std::vector<std::pair<std::string, std::string>> out;
    if (!prof_.text.empty()) out.emplace_back(kProfileFile, prof_.text);
    if (!packages_.valid()) return out;
    DiscoveryResult d = packages_.get();
    AddWarnings(d.warnings);
    for (auto& l : d.lists) {
      res_.package_files.push_back(l.file);
      out.emplace_back(std::string(kPackagesDir) + "/" + l.file, RenderPackageList(l.lines));
    }
    return out;
  }

  void FindHomeTree() {
    const std::optional<BlobId> root = res_.backup->tree;
    const std::vector<std::string> components = TargetComponents(opts_.home);
    if (!root || components.empty()) {
      res_.home_tree = root;
      return;
    }
    // Home is usually a directory above the targets, whose tree the archiver reported.
    std::string home_path;
    for (const auto& c : components) home_path += "/" + c;
    {
      MutexLock lock(mu_);
      if (auto it = saved_trees_.find(home_path); it != saved_trees_.end()) {
        res_.home_tree = it->second;
        return;
      }
    }
    // The trees above an unchanged home are the parent's, which the planning loaded.
    auto load = [this](const BlobId& id) {
      if (auto t = parent_tree_->Loaded(id)) return t->nodes;
      return repo_.LoadTree(id);
    };
    try {  // (a dry run has no trees to read back: no home_tree then)
      res_.home_tree = FindTreePath(load, *root, components).DirTree();
    } catch (const Error&) {
      res_.home_tree.reset();
    }
  }

  void AddWarnings(const std::vector<std::string>& ws) {
    MutexLock lock(mu_);
    for (const auto& w : ws) warnings_.emplace_back("", w);
  }

  // The warnings so far, sorted by path (stable).
  void FlushWarnings() {
    MutexLock lock(mu_);
    std::stable_sort(warnings_.begin(), warnings_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [p, m] : warnings_)
      if (opts_.warn) opts_.warn(m);
    warnings_.clear();
  }

  WriteSession& session_;
  IndexedRepository& repo_;
  const Scanner& scanner_;
  const CaptureOptions& opts_;
  const Profile& prof_;
  const std::string tag_, host_;
  CaptureResult res_;
  std::atomic<bool> cancel_{false};
  std::future<DiscoveryResult> packages_;
  std::vector<std::string> targets_;
  std::optional<BlobId> parent_root_;
  std::optional<ParentTree> parent_tree_;  // owns the nodes Planned::parent points to
  std::vector<Planned> files_;
  std::vector<const Planned*> to_verify_, to_scan_;
  std::atomic<uint64_t> reads_{0};
  std::atomic<uint64_t> kept_bytes_{0};  // scanned bytes held for the archiver
  std::set<std::string> must_read_;  // changed files (no reuse); read-only once scanned
  std::unordered_map<std::string, const struct stat*> known_stats_;
  // The state (LoadState, MatchState): the folder keys of this walk, the last capture's
  // state when usable, and the folders whose trees it gives.
  std::string state_path_;
  std::optional<DirKeyWalk> keys_;
  std::optional<FolderState> state_;
  struct Reuse {
    const WalkedDir* dir;
    BlobId tree;
  };
  std::unordered_map<std::string, Reuse> reused_;  // read-only once planned
  std::atomic<uint64_t> dirs_reused_{0};

  Mutex mu_;
  std::vector<Warning> warnings_ GUARDED_BY(mu_);
  // path -> scanned: filled by VerifyAndScan once its workers are done, read-only from then
  // on (the archiver's workers read it without mu_).
  std::unordered_map<std::string, Scanned> scanned_;
  std::set<std::string> must_read_scan_ GUARDED_BY(mu_);  // must_read_ while scanning
  std::vector<Finding> findings_ GUARDED_BY(mu_);         // of the scan
  std::vector<Finding> late_findings_ GUARDED_BY(mu_);    // of files scanned while saved
  std::vector<const Planned*> mismatched_ GUARDED_BY(mu_);
  uint64_t verified_ GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, BlobId> saved_trees_ GUARDED_BY(mu_);  // archiver's
  std::vector<std::pair<BlobType, BlobId>> outer_ GUARDED_BY(mu_);  // (outer_blob)
  std::future<void> index_load_;  // last: joined before the members it could touch go
};

}  // namespace

std::string ScanTag(const Profile& p) {
  std::string policy = p.allow.Digest() + (p.mode == SecretMode::kBlock ? "b" : "w");
  return "haven-scan:" + std::to_string(kScanVersion) + "/" +
         Sha256(AsBytes(policy)).Hex().substr(0, 8);
}

CaptureResult RunCapture(WriteSession& session, const Scanner& scanner,
                         const CaptureOptions& opts) {
  return CaptureRun(session, scanner, opts).Run();
}

}  // namespace haven::capture
