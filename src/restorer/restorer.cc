#include "restorer/restorer.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <memory>
#include <unordered_map>
#include <future>
#include <map>
#include <set>
#include <tuple>
#include <unordered_set>

#include "backend/range_reader.h"
#include "core/deep_stack.h"
#include "core/error.h"
#include "core/fd.h"
#include "core/mutex.h"
#include "core/thread_pool.h"
#include "core/timings.h"
#include "repo/node.h"
#include "repo/tree_stream.h"

namespace haven {

namespace {

bool AllZero(const uint8_t* p, size_t n) {
  static const uint8_t kZero[4096] = {};
  while (n >= sizeof(kZero)) {
    if (std::memcmp(p, kZero, sizeof(kZero)) != 0) return false;
    p += sizeof(kZero);
    n -= sizeof(kZero);
  }
  return std::memcmp(p, kZero, n) == 0;
}

}  // namespace

// `holes`: leave holes for 4 KiB-aligned runs of zeros (the file holds no older content
// there, and is sized beforehand unless `ends_file`). `ends_file`: b is the file's last
// blob, whose last block is always written, so that the write itself gives the file its
// size (no ftruncate).
void WriteBlobAt(int fd, ByteView b, uint64_t off, bool holes = true, bool ends_file = false) {
  auto hole = [&](size_t at, size_t n) {
    return holes && n == 4096 && !(ends_file && at + n == b.size()) && AllZero(b.data() + at, n);
  };
  size_t pos = 0;
  while (pos < b.size()) {
    size_t n = std::min<size_t>(b.size() - pos, 4096);
    if (hole(pos, n)) {
      pos += n;
      continue;
    }
    size_t end = pos + n;
    while (end < b.size()) {
      size_t m = std::min<size_t>(b.size() - end, 4096);
      if (hole(end, m)) break;
      end += m;
    }
    size_t done = 0;
    while (done < end - pos) {
      ssize_t w = pwrite(fd, b.data() + pos + done, end - pos - done,
                         static_cast<off_t>(off + pos + done));
      if (w < 0) {
        if (errno == EINTR) continue;
        // Out of space is retryable: it may succeed once other files free theirs.
        const bool no_space = errno == ENOSPC || errno == EDQUOT;
        Fail(ErrorCode::kIo, std::string("write: ") + strerror(errno), no_space);
      }
      done += static_cast<size_t>(w);
    }
    pos = end;
  }
}

Overwrite ParseOverwrite(const std::string& s) {
  if (s == "always") return Overwrite::kAlways;
  if (s == "if-changed") return Overwrite::kIfChanged;
  if (s == "if-newer") return Overwrite::kIfNewer;
  if (s == "never") return Overwrite::kNever;
  Fail(ErrorCode::kInvalidArgument,
       "invalid --overwrite \"" + s + "\": use always, if-changed, if-newer or never");
}

uint64_t WriteFileContent(IndexedRepository& repo, int fd, const std::vector<BlobId>& content) {
  uint64_t off = 0;
  for (const BlobId& id : content) {
    Bytes b;
    {
      ScopedTimer t(Stage::kLoad);
      b = repo.LoadBlob(BlobType::kData, id);
    }
    ScopedTimer wt(Stage::kWrite);
    WriteBlobAt(fd, b, off);  // holes are sized by the ftruncate below
    off += b.size();
  }
  if (ftruncate(fd, static_cast<off_t>(off)) != 0)
    Fail(ErrorCode::kIo, std::string("truncate: ") + strerror(errno));
  return off;
}

namespace {

bool IsRegularFile(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

// Creates `path` and its missing parents (as restic does for --target).
void MkdirAll(const std::string& path) {
  if (path.empty()) return;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) Fail(ErrorCode::kFatal, "target " + path + " is not a directory");
    return;
  }
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) MkdirAll(path.substr(0, slash));
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    Fail(ErrorCode::kFatal, "cannot create target " + path + ": " + strerror(errno));
}

// This process's umask, read without changing it (umask(2) would, for every thread).
mode_t CurrentUmask() {
  if (FILE* f = fopen("/proc/self/status", "re")) {
    char line[256];
    unsigned mask = 0;
    bool found = false;
    while (!found && fgets(line, sizeof(line), f)) found = sscanf(line, "Umask: %o", &mask) == 1;
    fclose(f);
    if (found) return static_cast<mode_t>(mask & 0777);
  }
  return 022;
}

const char* TypeName(mode_t m) {
  if (S_ISDIR(m)) return "directory";
  if (S_ISLNK(m)) return "symlink";
  if (S_ISREG(m)) return "file";
  return "special file";
}

// Restore in two phases. The walk (this thread) creates directories and special files
// and plans every content blob by the pack that holds it.
// Then each pack is read once (contiguous ranges, in order of first use) on the worker
// pool, its blobs are decoded once and written with positional writes to every file and
// offset that uses them; the job that writes a file's last blob sets its metadata.
//
// The target is untrusted ground (a crafted snapshot, or links left by an earlier
// restore): the walk holds a descriptor of each directory it is in and creates entries
// with *at() calls relative to it; an entry whose type differs from the snapshot's is
// replaced, never followed; files are later opened below the target with OpenBeneath,
// which refuses a symlink in any component. A tree with repeated names is refused.
class Restore {
 public:
  Restore(IndexedRepository& repo, const RestoreOptions& opts)
      : repo_(repo),
        opts_(opts),
        pool_(Workers(repo, opts), Workers(repo, opts) * 2),
        reader_(repo.backend(), repo.backend().Connections()),
        stream_packs_(repo.backend().RoundTrips()) {
    if (opts_.no_permissions) umask_ = CurrentUmask();
  }

  // Pack loaders wait on storage: by default at least as many as its connections (restic's
  // restorer uses exactly that many) and the CPUs; a --jobs number is taken as it is.
  static int Workers(const IndexedRepository& repo, const RestoreOptions& opts) {
    if (opts.jobs > 0) return opts.jobs;
    return std::max(ResolveJobs(0), repo.backend().Connections());
  }

  static constexpr int kMaxDepth = kMaxTreeDepth;
  static constexpr size_t kMaxOpenPerPack = 256;  // descriptors one pack's worker holds
  // Packs first used after a pack before the walk starts it (StartPacksBehind).
  static constexpr size_t kPackHorizon = 4;

  RestoreResult Run(const BlobId& tree) {
    MkdirAll(opts_.target);
    target_ = Fd(open(opts_.target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!target_.valid())
      Fail(ErrorCode::kFatal, "cannot open target " + opts_.target + ": " + strerror(errno));
    RaiseOpenFileLimit();
    // Pack jobs start during the walk: none may outlive this, whatever throws.
    struct WaitJobs {
      std::vector<std::future<void>>& jobs;
      ~WaitJobs() {
        for (auto& j : jobs)
          if (j.valid()) j.wait();
      }
    } wait_jobs{jobs_};
    {
      ScopedTimer t(Stage::kWalk);
      OrderedTreeStream stream(repo_, Workers(repo_, opts_));
      stream_ = &stream;
      std::string rel;
      // One recursion per directory level, up to kMaxDepth: on a stack sized for that.
      RunOnDeepStack([&] {
        RestoreTree(tree, target_.get(), rel, "", opts_.includes.empty(), 0, /*fresh=*/false);
      });
      stream_ = nullptr;
    }
    if (opts_.progress) opts_.progress->totals_final = true;
    FlushEmpty();
    VerifyExisting();
    for (size_t i = 0; i < packs_.size(); i++) StartPack(i);
    for (auto& f : jobs_) f.get();
    RetryOutOfSpace();
    // Directory metadata last. dirs_ lists every directory after its subdirectories
    // (post-order), so children get their metadata before their parent loses write or
    // search permission, and creating entries never touches a finished directory.
    for (const auto& [rel, node] : dirs_) {
      Fd fd(OpenBeneath(target_.get(), rel, O_RDONLY | O_DIRECTORY));
      if (!fd.valid()) {
        Warn(rel, "open directory " + Shown(rel) + ": " + strerror(errno));
        continue;
      }
      SetMetadataFd(fd.get(), rel, node);
    }
    MutexLock lock(mu_);
    std::sort(warnings_.begin(), warnings_.end());
    for (const Report& r : warnings_) {
      const auto& sink = r.note ? opts_.note : opts_.warn;
      if (sink) sink(r.msg);
    }
    return result_;
  }

 private:
  struct File {
    std::string rel, snap_path;  // rel: below the target
    Node node;
    uint64_t size = 0;
    std::atomic<bool> created{false};  // by the first writer, or by Finish
    std::atomic<uint32_t> pending{0};  // blob writes not yet done
    std::atomic<bool> failed{false};
    std::atomic<bool> no_space{false};  // a write ran out of space: retried at the end
    // An existing file updated in place (--overwrite): its blobs that already match are
    // marked in `keep` (by ordinal, before any pack is read) and neither fetched nor
    // written; `trusted`: size and mtime matched (if-changed), every blob is kept.
    bool in_place = false, trusted = false;
    // Its folder was made by this restore (mode 0700 until the folders' metadata pass at
    // the end, so no one else can reach it): created with its final permission bits, and
    // Finish need not change them (nor the owner, when the creator's is the snapshot's).
    bool in_fresh_dir = false;
    std::vector<uint8_t> keep;
  };
  // One use of a blob: written to file `file` at `file_offset`.
  struct Use {
    uint32_t offset, length, uncompressed_length;  // the blob in its pack
    File* file;  // not an index into files_: jobs run while the walk appends to it
    uint32_t ordinal;  // the blob's position in the file's content
    uint64_t file_offset;
    BlobId id;
  };
  struct Pack {
    PackId id;
    std::vector<Use> uses;
  };

  void Warn(const std::string& path, const std::string& msg) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    warnings_.push_back({path, msg, false});
    result_.errors++;
    if (opts_.progress) opts_.progress->Error();
  }
  // A conflict resolved as the snapshot says (not an error), reported with the warnings.
  void Note(const std::string& path, const std::string& msg) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    warnings_.push_back({path, msg, true});
  }
  void FailFile(File& f, const std::string& msg) {
    if (!f.failed.exchange(true)) Warn(f.snap_path, "restore " + f.snap_path + ": " + msg);
  }

  bool Selected(const std::string& snap_path, bool is_dir, bool parent_included,
                bool* descend) {
    *descend = true;
    if (!opts_.excludes.empty() && opts_.excludes.Matches(snap_path)) {
      *descend = false;
      return false;
    }
    if (opts_.includes.empty() || parent_included) return true;
    if (opts_.includes.Matches(snap_path)) return true;
    if (is_dir && opts_.includes.ChildCouldMatch(snap_path)) return true;  // created for children
    *descend = is_dir;
    return false;
  }

  // The path shown to the user for an entry below the target.
  std::string Shown(const std::string& rel) const { return opts_.target + "/" + rel; }

  // Names that occur more than once in a tree: no entry of such a name is restored (which
  // one is meant is unknown, and a link and a directory of one name is an attack).
  static std::unordered_set<std::string> RepeatedNames(const std::vector<Node>& nodes) {
    std::unordered_set<std::string> repeated;
    bool sorted = true;
    for (size_t i = 1; i < nodes.size() && sorted; ++i) sorted = nodes[i - 1].name < nodes[i].name;
    if (sorted) return repeated;
    std::unordered_set<std::string_view> seen;
    for (const Node& n : nodes)
      if (!seen.insert(n.name).second) repeated.insert(n.name);
    return repeated;
  }

  // `fresh`: dirfd is a directory this restore has just made (it was empty then).
  void RestoreTree(const BlobId& tree, int dirfd, std::string& rel, const std::string& snap_dir,
                   bool included, int depth, bool fresh) {
    const std::string where = snap_dir.empty() ? "/" : snap_dir;
    if (depth >= kMaxDepth) {
      Warn(snap_dir, "refusing " + where + ": nested deeper than " + std::to_string(kMaxDepth) +
                         " directories");
      return;
    }
    std::vector<Node> nodes;
    try {
      nodes = stream_->Take(tree);
    } catch (const Error& e) {
      Warn(snap_dir, std::string("cannot load tree for ") + where + ": " + e.what());
      return;
    }
    std::unordered_set<std::string> repeated = RepeatedNames(nodes);
    if (depth + 1 < kMaxDepth) ExpectSubtrees(nodes, repeated, snap_dir, included);
    for (const std::string& name : std::set<std::string>(repeated.begin(), repeated.end()))
      Warn(snap_dir, "refusing repeated name \"" + gojson::QuoteName(name) + "\" in " + where +
                         " (tree " + tree.Hex() + ")");
    const size_t rel_len = rel.size();
    for (Node& n : nodes) {
      if (!SafeNodeName(n.name)) {
        Warn(snap_dir, "refusing node with unsafe name \"" + gojson::QuoteName(n.name) +
                           "\" in " + where);
        continue;
      }
      if (!repeated.empty() && repeated.count(n.name)) continue;
      std::string snap_path = snap_dir + "/" + n.name;
      bool descend;
      bool self_included =
          !opts_.includes.empty() && !included && opts_.includes.Matches(snap_path);
      if (!Selected(snap_path, n.type == NodeType::kDir, included, &descend)) continue;
      if (rel_len) rel += '/';
      rel += n.name;
      RestoreNode(n, dirfd, rel, snap_path, included || opts_.includes.empty() || self_included,
                  depth, fresh);
      rel.resize(rel_len);
    }
  }

  // Announces the subtrees RestoreTree will descend into, in its order, so that the
  // stream loads them ahead (one it does not reach after all is skipped by the stream).
  void ExpectSubtrees(const std::vector<Node>& nodes,
                      const std::unordered_set<std::string>& repeated,
                      const std::string& snap_dir, bool included) {
    std::vector<BlobId> subtrees;
    for (const Node& n : nodes) {
      if (n.type != NodeType::kDir || !n.subtree || !SafeNodeName(n.name)) continue;
      if (!repeated.empty() && repeated.count(n.name)) continue;
      bool descend;
      if (Selected(snap_dir + "/" + n.name, true, included, &descend))
        subtrees.push_back(*n.subtree);
    }
    stream_->Expect(subtrees);
  }

  // Makes room for a new entry `name` of the snapshot's kind in dirfd: removes what is
  // there unless it is a directory that is not empty (reported; the entry is skipped).
  // A directory wanted where a directory is stays (returns true, *exists set).
  bool ClearFor(int dirfd, const std::string& name, const std::string& rel,
                const std::string& snap_path, bool want_dir, bool* exists = nullptr) {
    struct stat st;
    const int lstat_error = fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
    return Clear(dirfd, name, rel, snap_path, want_dir, exists, lstat_error, st);
  }
  // The same, given the entry's lstat already taken (`st`, or `lstat_error`).
  bool Clear(int dirfd, const std::string& name, const std::string& rel,
             const std::string& snap_path, bool want_dir, bool* exists, int lstat_error,
             const struct stat& st) {
    if (lstat_error) {
      if (lstat_error == ENOENT) return true;
      Warn(snap_path, "lstat " + Shown(rel) + ": " + strerror(lstat_error));
      return false;
    }
    if (S_ISDIR(st.st_mode)) {
      if (want_dir) {
        if (exists) *exists = true;
        return true;
      }
      if (unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) == 0) {
        Note(snap_path, "replaced empty directory " + Shown(rel) + " with the snapshot's entry");
        return true;
      }
      Warn(snap_path, "cannot restore " + snap_path + ": directory " + Shown(rel) +
                          " is in the way (" + strerror(errno) + ")");
      return false;
    }
    if (unlinkat(dirfd, name.c_str(), 0) != 0) {
      Warn(snap_path, "remove " + Shown(rel) + ": " + strerror(errno));
      return false;
    }
    if (want_dir)
      Note(snap_path, std::string("replaced ") + TypeName(st.st_mode) + " " + Shown(rel) +
                          " with the snapshot's directory");
    return true;
  }

  // Plans a file's blobs. The file itself is created by the first job that writes to it
  // (creating files is the costliest part of a restore of small files, so it runs on
  // the workers), or by Finish when it has no content; hard-linked files are created
  // here so that their links can be made during the walk.
  // `existing`: the regular file already at rel is updated in place (see Overwrite), with
  // `trusted` when its size and mtime match the snapshot's.
  void PlanFile(Node& n, const std::string& rel, const std::string& snap_path,
                bool create_now, bool existing = false, bool trusted = false,
                bool in_fresh_dir = false) {
    result_.files++;
    auto f = std::make_unique<File>();
    f->rel = rel;
    f->snap_path = snap_path;
    f->in_fresh_dir = in_fresh_dir;
    const uint32_t file_no = static_cast<uint32_t>(files_.size());
    File* const fp = f.get();
    uint64_t off = 0;
    uint32_t uses = 0;
    for (const BlobId& id : n.content) {
      std::vector<BlobLocation> locs = repo_.index().Lookup(BlobType::kData, id);
      if (locs.empty()) {
        FailFile(*f, "data blob " + id.Hex() + " is not in the index");
        break;
      }
      const BlobLocation& l = locs[0];
      auto [it, inserted] = pack_no_.try_emplace(l.pack, packs_.size());
      if (inserted) packs_.push_back(Pack{l.pack, {}});
      packs_[it->second].uses.push_back(
          Use{l.offset, l.length, l.uncompressed_length, fp, uses, off, id});
      off += l.PlainLength();
      uses++;
    }
    result_.bytes += off;
    if (opts_.progress) opts_.progress->AddTotal(1, off);
    f->size = off;
    f->pending = uses;
    f->node = std::move(n);
    if (existing) {
      f->in_place = true;
      f->trusted = trusted;
      f->keep.assign(uses, 0);
      in_place_.push_back(file_no);
    }
    File& file = *f;
    files_.push_back(std::move(f));
    if (create_now) {
      int fd = Open(file);
      if (fd >= 0) close(fd);
    }
    if (uses == 0) {
      empty_.push_back(&file);
      if (empty_.size() >= 256) FlushEmpty();
    }
    StartPacksBehind();
  }

  // Starts the packs the walk has most likely left behind, while it goes on: a pack is
  // started once kPackHorizon packs first used after it have been found (backups write
  // packs in walk order, so a pack's uses come together). Uses of a started pack that
  // the walk finds later (a blob shared with a file far away) are kept for one more job
  // of that pack after the walk, which reads only their ranges. Not while files are
  // updated in place: their kept blobs are known only after the walk (VerifyExisting).
  void StartPacksBehind() {
    while (in_place_.empty() && started_ + kPackHorizon < packs_.size()) StartPack(started_++);
  }
  void StartPack(size_t i) {
    if (packs_[i].uses.empty()) return;
    auto job = std::make_shared<Pack>(Pack{packs_[i].id, std::move(packs_[i].uses)});
    packs_[i].uses.clear();
    jobs_.push_back(pool_.Submit([this, job] { RestorePack(*job); }));
  }

  // Finishes files without content on the workers, a batch at a time.
  void FlushEmpty() {
    if (empty_.empty()) return;
    jobs_.push_back(pool_.Submit([this, batch = std::move(empty_)] {
      for (File* f : batch) Finish(*f);
    }));
    empty_.clear();
  }

  // Opens a planned file for writing. A new file is created exclusively by its first
  // opener: the walk found nothing of its name (or removed it), so an entry there now was
  // put there meanwhile, by the restore itself (two names that differ only in case on a
  // case-insensitive target: a fifo or device node "A" is what "a" would open) or by
  // someone else; it is refused, never opened. Later opens (a file whose blobs lie in
  // several packs, or one updated in place) must find a regular file: they open without
  // O_CREAT and with O_NONBLOCK, so a fifo swapped in meanwhile by another process fails
  // at once instead of making the open wait for a reader, and anything but a regular
  // file is refused before a byte is written.
  int Open(File& f) {
    int fd = -1;
    bool again = f.in_place || f.created.load(std::memory_order_acquire);
    if (!again) {
      MutexLock lock(create_mu_[std::hash<const File*>{}(&f) % kCreateLocks]);
      again = f.created.load(std::memory_order_relaxed);  // made meanwhile by another job
      if (!again) {
        fd = OpenBeneath(target_.get(), f.rel, O_CREAT | O_EXCL | O_WRONLY, CreateMode(f));
        if (fd >= 0) f.created.store(true, std::memory_order_release);
        if (fd < 0 && errno == EEXIST) {
          FailFile(f, "create " + Shown(f.rel) +
                          ": an entry of that name appeared during the restore (a name that "
                          "differs only in case on a case-insensitive target?); left as it is");
          return -1;
        }
      }
    }
    if (again) {
      if (opts_.before_reopen_for_testing) opts_.before_reopen_for_testing(f.rel);
      fd = OpenBeneath(target_.get(), f.rel, O_WRONLY | O_NONBLOCK, 0);
      // ENXIO: the O_NONBLOCK write-open of a fifo that has no reader
      if ((fd >= 0 && !IsRegularFile(fd)) || (fd < 0 && errno == ENXIO)) {
        if (fd >= 0) close(fd);
        FailFile(f, "open " + Shown(f.rel) +
                        ": no longer a regular file (replaced during the restore); left as it is");
        return -1;
      }
    }
    if (fd < 0) {
      if (errno == ENOSPC || errno == EDQUOT)
        f.no_space = true;
      else
        FailFile(f, "create " + Shown(f.rel) + ": " + strerror(errno));
      return -1;
    }
    // A new file gets its size from its last blob's write (WriteBlobAt's `ends_file`); an
    // existing one updated in place is cut or extended to it here.
    if (f.in_place && !f.created.exchange(true) && ftruncate(fd, static_cast<off_t>(f.size)) != 0)
      FailFile(f, "truncate " + Shown(f.rel) + ": " + strerror(errno));
    return fd;
  }

  // Called once per file, after its last blob is written (or when it has none). `open_fd`:
  // the descriptor the last writer still holds (metadata goes through it, no second open),
  // or -1 to open (and create) the file here.
  void Finish(File& f, int open_fd = -1) {
    Fd owned;
    if (open_fd < 0 && !f.no_space) {
      owned = Fd(Open(f));
      open_fd = owned.get();
    }
    if (f.no_space && !f.failed) {
      MutexLock lock(mu_);
      no_space_.push_back(&f);
      return;
    }
    if (open_fd < 0) return;
    SetMetadataFd(open_fd, f.rel, f.node, /*only_changes=*/true);
    owned.Close();
    if (opts_.verify && !f.failed) Verify(f.rel, f.snap_path, f.node);
    f.node.content = {};
    if (opts_.progress) opts_.progress->FileDone();
  }

  // One blob of a range read: opened in place (its bytes in `sealed` are overwritten) and
  // decompressed into `out` (grown as needed); a blob whose index entry claims more than
  // kMaxBlob plaintext is decoded the allocating way, which bounds it by its frame.
  ByteView DecodeInRange(const Use& u, std::span<uint8_t> sealed, const Pack& pack, Bytes& out) {
    constexpr uint32_t kMaxBlob = 64 << 20;
    if (u.uncompressed_length > kMaxBlob) {
      out = repo_.DecodeBlob(u.id, sealed, u.uncompressed_length, pack.id.Hex());
      return out;
    }
    if (out.size() < u.uncompressed_length) out.resize(u.uncompressed_length);
    return repo_.DecodeBlobInPlace(u.id, sealed, u.uncompressed_length, pack.id.Hex(), out);
  }

  // Per pack worker: the files it holds open (each closed when its last blob is written,
  // or at the end of the pack).
  struct PackWrites {
    std::map<File*, int> fds;  // file -> open fd, for this pack
  };

  void RestorePack(Pack& pack) {
    std::vector<Use>& uses = pack.uses;
    // Blobs an existing file already holds (VerifyExisting) are neither read nor written.
    std::erase_if(uses, [this](const Use& u) {
      return u.file->in_place && u.file->keep[u.ordinal];
    });
    if (uses.empty()) return;
    // Stable: the uses of one blob stay in walk order.
    std::stable_sort(uses.begin(), uses.end(),
                     [](const Use& a, const Use& b) { return a.offset < b.offset; });
    // One ranged read per run of blobs with holes up to 4 MiB between them; the runs of
    // one pack are read in parallel (RangeReader), each handed over in order.
    const std::vector<ByteRange> ranges = CoalesceExtents(uses.size(), [&](size_t k) {
      return ByteRange{uses[k].offset, uses[k].length};
    });
    PackWrites w;
    const Handle h{FileType::kPack, pack.id.Hex()};
    try {
      if (stream_packs_) {
        // The ranges of the pack stream at once (as RangeReader::Read loads them), each
        // with the descriptors and counts of its own, merged into w afterwards.
        std::vector<PackWrites> more(ranges.empty() ? 0 : ranges.size() - 1);
        struct Merge {
          PackWrites& w;
          std::vector<PackWrites>& more;
          ~Merge() {
            for (PackWrites& m : more)
              for (auto& [file, fd] : m.fds)
                if (!w.fds.emplace(file, fd).second) close(fd);
          }
        } merge{w, more};
        reader_.ForEachRange(ranges.size(), [&](size_t i) {
          StreamRange(pack, h, ranges[i], i == 0 ? w : more[i - 1]);
        });
      } else {
        reader_.Read(h, ranges, [&](size_t r, std::span<uint8_t> bytes, const Error* error) {
          WriteRange(pack, ranges[r], bytes, error ? error->what() : "", w);
        });
      }
    } catch (...) {
      for (auto& [file, fd] : w.fds) close(fd);
      throw;
    }
    for (auto& [file, fd] : w.fds) close(fd);
  }

  // Decodes the blobs of one range of a pack (its bytes in `range`, or the read's error)
  // and writes each to every file and offset that uses it.
  void WriteRange(Pack& pack, const ByteRange& r, std::span<uint8_t> range,
                  const std::string& read_error, PackWrites& w) {
    const std::vector<Use>& uses = pack.uses;
    for (size_t k = r.first; k < r.last;) {
      // Every use of the same blob (same offset) shares one decode.
      size_t m = k + 1;
      while (m < r.last && uses[m].offset == uses[k].offset) m++;
      const Use& u = uses[k];
      WriteBlob(pack, k, m,
                read_error.empty() ? range.subspan(u.offset - r.offset, u.length) : std::span<uint8_t>(),
                read_error, w);
      k = m;
    }
  }

  // The same, the range streamed (storage with round trips): each blob is decoded and
  // written as soon as its bytes have come, so a worker holds a blob, not the range.
  void StreamRange(Pack& pack, const Handle& h, const ByteRange& r, PackWrites& w) {
    const std::vector<Use>& uses = pack.uses;
    size_t handed = r.first;
    std::string read_error;
    bool writing = false;  // an error thrown while writing is not a read error
    // Blobs that did not decode: loaded from another copy only after the stream has ended,
    // since the stream holds a connection the load may need (with every connection held
    // by a stream whose blob waits for one, a damaged repository would hang the restore).
    struct Deferred {
      size_t k, m;
      std::string error;
    };
    std::vector<Deferred> deferred;
    try {
      StreamExtents(
          repo_.backend(), h, r, [&](size_t k) { return ByteRange{uses[k].offset, uses[k].length}; },
          [&](size_t k, size_t m, std::span<uint8_t> sealed) {
            writing = true;
            if (std::string err = WriteBlob(pack, k, m, sealed, "", w, /*fallback=*/false); !err.empty())
              deferred.push_back({k, m, std::move(err)});
            writing = false;
          },
          &handed);
    } catch (const Error& e) {
      if (writing) throw;
      read_error = e.what();
    }
    for (const Deferred& d : deferred) WriteBlob(pack, d.k, d.m, {}, d.error, w);
    // The blobs that did not come fail (or are found elsewhere) as in WriteRange.
    for (size_t k = handed; k < r.last;) {
      size_t m = k + 1;
      while (m < r.last && uses[m].offset == uses[k].offset) m++;
      WriteBlob(pack, k, m, {}, read_error, w);
      k = m;
    }
  }

  // Decodes one blob of a pack (uses [k, m), all at one offset; `sealed` its bytes, or
  // `read_error` why they could not be read) and writes it to every use. A blob that does
  // not decode is loaded from another copy, or without `fallback` left unwritten and its
  // error returned (for the caller to retry later); else returns "".
  std::string WriteBlob(Pack& pack, size_t k, size_t m, std::span<uint8_t> sealed,
                        const std::string& read_error, PackWrites& w, bool fallback = true) {
    thread_local Bytes decode_buf;
    const Use& u = pack.uses[k];
    ByteView plain;
    Bytes other;
    std::string error;
    try {
      if (!read_error.empty()) Fail(ErrorCode::kIo, read_error);
      ScopedTimer t(Stage::kDecode);
      plain = DecodeInRange(u, sealed, pack, decode_buf);
    } catch (const Error& e) {
      if (!fallback) return e.what();
      // Another copy elsewhere may be intact.
      try {
        other = repo_.LoadBlob(BlobType::kData, u.id);
        plain = other;
      } catch (const Error& e2) {
        error = e2.what();
      }
    }
    for (size_t q = k; q < m; q++) WriteUse(pack.uses[q], plain, error, w);
    return "";
  }

  // Writes one use of a decoded blob (or fails its file with `error`). The file's last
  // write finishes it at once, through the descriptor this worker holds: no second open
  // for its metadata (a pack of thousands of small files used to reopen nearly all of
  // them, its descriptors having been closed at kMaxOpenPerPack).
  void WriteUse(const Use& use, ByteView plain, const std::string& error, PackWrites& w) {
    WriteOneUse(use, plain, error, w);
    File& f = *use.file;
    if (f.pending.fetch_sub(1) != 1) return;
    auto it = w.fds.find(use.file);
    if (it == w.fds.end()) {
      Finish(f);
      return;
    }
    Fd owned(it->second);  // closed after Finish, also if it throws
    w.fds.erase(it);
    Finish(f, owned.get());
  }

  void WriteOneUse(const Use& use, ByteView plain, const std::string& error, PackWrites& w) {
    File& f = *use.file;
    if (!error.empty()) {
      FailFile(f, error);
      return;
    }
    if (f.no_space) return;  // rewritten whole by RetryOutOfSpace
    auto it = w.fds.find(use.file);
    if (it == w.fds.end()) {
      // A pack of thousands of small files must not hold thousands of descriptors
      // (times the workers: over S3 a /usr/share restore hit EMFILE at 20,000):
      // the files opened so far are closed; Finish reopens the ones it needs.
      if (w.fds.size() >= kMaxOpenPerPack) {
        for (auto& [file, fd] : w.fds) close(fd);
        w.fds.clear();
      }
      int fd = Open(f);
      if (fd < 0) return;
      it = w.fds.emplace(use.file, fd).first;
    }
    try {
      ScopedTimer t(Stage::kWrite);
      WriteBlobAt(it->second, plain, use.file_offset, !f.in_place,
                  use.file_offset + plain.size() == f.size);
      if (opts_.progress) opts_.progress->AddBytes(plain.size());
    } catch (const Error& e) {
      if (!e.retryable()) {
        FailFile(f, e.what());
      } else if (!f.no_space.exchange(true)) {
        // Give back what the file holds at once, so that the files that fit do.
        if (ftruncate(it->second, 0) != 0) FailFile(f, e.what());
      }
    }
  }

  // Files whose writes ran out of space were truncated to nothing as it happened, so a
  // large file that could not fit does not keep the small ones out. They are rewritten
  // here one by one, smallest first (their blobs loaded again), each failure freeing
  // its space again: every file that fits is restored intact, the others are reported.
  void RetryOutOfSpace() {
    std::vector<File*> files;
    {
      MutexLock lock(mu_);
      files.swap(no_space_);
    }
    std::sort(files.begin(), files.end(), [](const File* a, const File* b) {
      return a->size != b->size ? a->size < b->size : a->rel < b->rel;
    });
    for (File* f : files) {
      Fd fd(OpenBeneath(target_.get(), f->rel,
                        O_CREAT | O_WRONLY | O_TRUNC | (f->created ? 0 : O_EXCL), 0600));
      if (!fd.valid()) {
        FailFile(*f, "create " + Shown(f->rel) + ": " + strerror(errno));
        continue;
      }
      try {
        WriteFileContent(repo_, fd.get(), f->node.content);
      } catch (const Error& e) {
        FailFile(*f, e.what());
        if (ftruncate(fd.get(), 0) != 0) {
          // Nothing more to free; the failure is already reported.
        }
        continue;
      }
      f->no_space = false;
      Finish(*f, fd.get());
    }
  }

  // In a `fresh` directory (made by this restore, so empty when made) no entry is looked at
  // first: every entry is created exclusively (mkdirat, symlinkat, mknodat, linkat, and a
  // file's O_EXCL open by its first writer), so one that is there anyway (a name that
  // differs only in case on a case-insensitive target, or another process) makes the create
  // fail with EEXIST, and the entry is then restored as in a directory that existed:
  // looked at, cleared, made again (a file is refused: see Open). Nothing is ever opened
  // or followed that this restore did not make.
  void RestoreNode(Node& n, int dirfd, std::string& rel, const std::string& snap_path,
                   bool included, int depth, bool fresh) {
    const std::string& name = n.name;
    if (n.type == NodeType::kDir) {
      bool exists = false;
      if (fresh && mkdirat(dirfd, name.c_str(), 0700) == 0) {
        // made here: its entries need no look either
      } else if (fresh && errno != EEXIST) {
        Warn(snap_path, "mkdir " + Shown(rel) + ": " + strerror(errno));
        return;
      } else {
        if (!ClearFor(dirfd, name, rel, snap_path, true, &exists)) return;
        if (!exists && mkdirat(dirfd, name.c_str(), 0700) != 0) {
          Warn(snap_path, "mkdir " + Shown(rel) + ": " + strerror(errno));
          return;
        }
      }
      if (!exists && opts_.after_mkdir_for_testing) opts_.after_mkdir_for_testing(rel);
      Fd sub(openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub.valid()) {
        Warn(snap_path, "open directory " + Shown(rel) + ": " + strerror(errno));
        return;
      }
      result_.dirs++;
      if (n.subtree) RestoreTree(*n.subtree, sub.get(), rel, snap_path, included, depth + 1, !exists);
      dirs_.emplace_back(rel, n);
      return;
    }
    if (!included) return;
    if (n.type == NodeType::kSocket || n.type == NodeType::kIrregular) return;  // as restic
    // One lstat serves both the overwrite decision and the clearing below (none in a fresh
    // directory).
    struct stat st;
    const int lstat_error =
        fresh ? ENOENT : fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
    // An entry in the way of an exclusive create in a fresh directory: restored again the
    // way of a directory that existed.
    auto in_the_way = [&] { return fresh && errno == EEXIST; };
    const Found found = lstat_error ? Found::kNothing : Existing(st, n);
    if (found == Found::kKeep) {
      result_.skipped++;
      return;
    }
    if ((found == Found::kUpdate || found == Found::kTrusted) && UpdateInPlace(n, rel, snap_path, found))
      return;
    if (!Clear(dirfd, name, rel, snap_path, false, nullptr, lstat_error, st)) return;
    switch (n.type) {
      case NodeType::kFile: {
        bool linked = n.links > 1 && n.inode;
        if (linked) {
          auto key = std::make_pair(n.device_id, n.inode);
          auto it = hardlinks_.find(key);
          if (it != hardlinks_.end()) {
            auto [src_dir, src_name] = SplitParent(it->second);
            Fd src(src_dir.empty() ? -1
                                   : OpenBeneath(target_.get(), src_dir, O_PATH | O_DIRECTORY));
            int src_at = src_dir.empty() ? target_.get() : src.get();
            if (src_at >= 0 &&
                linkat(src_at, std::string(src_name).c_str(), dirfd, name.c_str(), 0) == 0) {
              result_.files++;
              return;
            }
            if (in_the_way()) return RestoreNode(n, dirfd, rel, snap_path, included, depth, false);
            Warn(snap_path, "link " + Shown(rel) + ": " + strerror(errno) + ", restoring a copy");
          } else {
            hardlinks_[key] = rel;
          }
        }
        PlanFile(n, rel, snap_path, linked, false, false, fresh);
        return;
      }
      case NodeType::kSymlink:
        if (symlinkat(n.linktarget.c_str(), dirfd, name.c_str()) != 0) {
          if (in_the_way()) return RestoreNode(n, dirfd, rel, snap_path, included, depth, false);
          Warn(snap_path, "symlink " + Shown(rel) + ": " + strerror(errno));
          return;
        }
        break;
      case NodeType::kFifo:
        if (mkfifoat(dirfd, name.c_str(), 0600) != 0) {
          if (in_the_way()) return RestoreNode(n, dirfd, rel, snap_path, included, depth, false);
          Warn(snap_path, "mkfifo " + Shown(rel) + ": " + strerror(errno));
          return;
        }
        break;
      case NodeType::kDev:
      case NodeType::kCharDev: {
        mode_t kind = n.type == NodeType::kDev ? S_IFBLK : S_IFCHR;
        if (mknodat(dirfd, name.c_str(), kind | 0600, static_cast<dev_t>(n.device)) != 0) {
          if (in_the_way()) return RestoreNode(n, dirfd, rel, snap_path, included, depth, false);
          Warn(snap_path, "mknod " + Shown(rel) + ": " + strerror(errno));
          return;
        }
        break;
      }
      default:
        return;
    }
    result_.files++;
    SetMetadataAt(dirfd, rel, n);
  }

  // What is already at a non-directory node's name in the target, and what --overwrite
  // makes of it.
  enum class Found {
    kNothing,  // nothing there, or something ClearFor replaces (or refuses)
    kKeep,     // left as it is
    kUpdate,   // a regular file with one link: verified and updated in place
    kTrusted,  // the same, and its size and mtime match: content kept (if-changed)
  };
  // `st`: the lstat of the entry of n's name.
  Found Existing(const struct stat& st, const Node& n) {
    if (S_ISDIR(st.st_mode)) return Found::kNothing;
    const Overwrite mode = opts_.overwrite;
    const struct timespec mtime = n.mtime.ToTimespec();
    auto newer = [](const timespec& a, const timespec& b) {
      return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
    };
    if (mode == Overwrite::kNever) return Found::kKeep;
    if (mode == Overwrite::kIfNewer && !newer(mtime, st.st_mtim)) return Found::kKeep;
    // A file with other links may be linked from outside the target: never written through.
    if (n.type != NodeType::kFile || !S_ISREG(st.st_mode) || st.st_nlink != 1)
      return Found::kNothing;
    if (mode == Overwrite::kIfChanged && static_cast<uint64_t>(st.st_size) == n.size &&
        !newer(mtime, st.st_mtim) && !newer(st.st_mtim, mtime))
      return Found::kTrusted;
    return Found::kUpdate;
  }

  // Plans the existing regular file at rel to be updated in place. False for a later name
  // of a hard-linked set, which is replaced by a link to the first instead.
  bool UpdateInPlace(Node& n, const std::string& rel, const std::string& snap_path, Found found) {
    if (n.links > 1 && n.inode) {
      auto [it, first] = hardlinks_.try_emplace(std::make_pair(n.device_id, n.inode), rel);
      if (!first) return false;
    }
    PlanFile(n, rel, snap_path, false, true, found == Found::kTrusted);
    return true;
  }

  // Before any pack is read: finds the blobs each file updated in place already holds
  // (read back and hashed; all of them for a trusted file), so only the others are fetched.
  void VerifyExisting() {
    std::vector<std::future<void>> jobs;
    for (uint32_t f : in_place_) jobs.push_back(pool_.Submit([this, f] { VerifyFile(*files_[f]); }));
    for (auto& j : jobs) j.get();
  }

  void VerifyFile(File& f) {
    uint32_t kept = 0;
    uint64_t kept_bytes = 0, off = 0;
    Fd fd(f.trusted ? -1 : OpenBeneath(target_.get(), f.rel, O_RDONLY));
    Bytes buf;
    for (size_t i = 0; i < f.keep.size(); i++) {
      const BlobId& id = f.node.content[i];
      const std::vector<BlobLocation> locs = repo_.index().Lookup(BlobType::kData, id);
      const uint64_t len = locs.empty() ? 0 : locs[0].PlainLength();
      bool same = f.trusted;
      if (!same && fd.valid()) {
        buf.resize(len);
        ssize_t got = pread(fd.get(), buf.data(), len, static_cast<off_t>(off));
        same = got == static_cast<ssize_t>(len) && BlobId(Sha256(buf)) == id;
      }
      if (same) {
        f.keep[i] = 1;
        kept++;
        kept_bytes += len;
      }
      off += len;
    }
    {
      MutexLock lock(mu_);
      result_.bytes_kept += kept_bytes;
    }
    if (opts_.progress) opts_.progress->AddBytes(kept_bytes);
    if (kept && f.pending.fetch_sub(kept) == kept) Finish(f);
  }

  // Owner, xattrs, mode and times of an open file or directory.
  // The permission bits to set: the snapshot's, or with no_permissions the defaults.
  mode_t PermOf(const Node& n) const {
    if (!opts_.no_permissions) return PosixPermFromGoMode(n.mode);
    return (n.type == NodeType::kDir ? 0777 : 0666) & ~umask_;
  }

  // The mode a new file is created with: private (0600) unless no one else can reach it
  // before Finish (in_fresh_dir); then its permission bits, never setuid, setgid or sticky
  // (chown would clear the first two, and Finish sets them), and always writable by its
  // creator (a file whose blobs lie in several packs is opened again for writing).
  mode_t CreateMode(const File& f) const {
    if (!f.in_fresh_dir) return 0600;
    return (PermOf(f.node) & 0777) | 0600;
  }

  // `only_changes`: an fstat first, and no chown or chmod where owner or mode already are
  // the snapshot's (most files of a restore into new folders: created with their mode by
  // the owner they belong to). Either call changes the inode (ctime) and takes its lock.
  // With xattrs the chmod stays: an ACL set among them rewrites the group bits.
  void SetMetadataFd(int fd, const std::string& rel, const Node& n, bool only_changes = false) {
    const mode_t perm = PermOf(n);
    struct stat st;
    bool same_owner = false, same_mode = false;
    if (only_changes && fstat(fd, &st) == 0) {
      same_owner = st.st_uid == n.uid && st.st_gid == n.gid;
      same_mode = n.xattrs.empty() && (st.st_mode & 07777) == perm;
    }
    if (!opts_.no_permissions && !same_owner && fchown(fd, n.uid, n.gid) != 0 && errno != EPERM)
      Warn(rel, "chown " + Shown(rel) + ": " + strerror(errno));
    for (const Xattr& x : n.xattrs) {
      const std::string& v = x.value ? *x.value : std::string();
      if (fsetxattr(fd, x.name.c_str(), v.data(), v.size(), 0) != 0 && errno != ENOTSUP &&
          errno != EPERM)
        Warn(rel, "setxattr " + x.name + " on " + Shown(rel) + ": " + strerror(errno));
    }
    if (!same_mode && fchmod(fd, perm) != 0)
      Warn(rel, "chmod " + Shown(rel) + ": " + strerror(errno));
    struct timespec ts[2] = {n.atime.ToTimespec(), n.mtime.ToTimespec()};
    if (futimens(fd, ts) != 0) Warn(rel, "utimes " + Shown(rel) + ": " + strerror(errno));
  }

  // The same for an entry just created in dirfd that cannot be opened for writing
  // (symlink, fifo, device): never following a link.
  void SetMetadataAt(int dirfd, const std::string& rel, const Node& n) {
    const std::string name(SplitParent(rel).second);
    if (!opts_.no_permissions &&
        fchownat(dirfd, name.c_str(), n.uid, n.gid, AT_SYMLINK_NOFOLLOW) != 0 && errno != EPERM)
      Warn(rel, "lchown " + Shown(rel) + ": " + strerror(errno));
    if (n.type != NodeType::kSymlink) {
      // Through our own directory descriptor: /proc/self/fd/N/name, final name not followed.
      const std::string via = "/proc/self/fd/" + std::to_string(dirfd) + "/" + name;
      for (const Xattr& x : n.xattrs) {
        const std::string& v = x.value ? *x.value : std::string();
        if (lsetxattr(via.c_str(), x.name.c_str(), v.data(), v.size(), 0) != 0 &&
            errno != ENOTSUP && errno != EPERM && errno != ENOENT)
          Warn(rel, "setxattr " + x.name + " on " + Shown(rel) + ": " + strerror(errno));
      }
      struct stat st;
      if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK(st.st_mode) &&
          fchmodat(dirfd, name.c_str(), PermOf(n), 0) != 0)
        Warn(rel, "chmod " + Shown(rel) + ": " + strerror(errno));
    }
    struct timespec ts[2] = {n.atime.ToTimespec(), n.mtime.ToTimespec()};
    if (utimensat(dirfd, name.c_str(), ts, AT_SYMLINK_NOFOLLOW) != 0)
      Warn(rel, "utimes " + Shown(rel) + ": " + strerror(errno));
  }

  void Verify(const std::string& rel, const std::string& snap_path, const Node& n) {
    int fd = OpenBeneath(target_.get(), rel, O_RDONLY);
    if (fd < 0) {
      Warn(snap_path, "verify " + Shown(rel) + ": " + strerror(errno));
      return;
    }
    uint64_t off = 0;
    bool ok = true;
    for (const BlobId& id : n.content) {
      auto locs = repo_.index().Lookup(BlobType::kData, id);
      if (locs.empty()) {
        ok = false;
        break;
      }
      Bytes buf(locs[0].PlainLength());
      ssize_t r = pread(fd, buf.data(), buf.size(), static_cast<off_t>(off));
      if (r != static_cast<ssize_t>(buf.size()) || Sha256(buf) != static_cast<const RawId&>(id)) {
        ok = false;
        break;
      }
      off += buf.size();
    }
    struct stat st;
    if (ok && (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != off)) ok = false;
    close(fd);
    if (!ok) {
      Warn(snap_path, "verify " + snap_path + ": restored content differs from the snapshot");
    } else {
      MutexLock lock(mu_);
      result_.verified++;
    }
  }

  IndexedRepository& repo_;
  const RestoreOptions& opts_;
  Fd target_;
  OrderedTreeStream* stream_ = nullptr;  // during the walk: the trees, loaded ahead
  ThreadPool pool_;
  RangeReader reader_;  // the pack workers' range reads (I/O threads of its own)
  // Storage with round trips: each range streamed by the worker of its pack, blob by blob
  // (StreamExtents), instead of loaded whole (RangeReader).
  const bool stream_packs_;
  mode_t umask_ = 022;  // with no_permissions: the defaults' mask
  std::vector<std::unique_ptr<File>> files_;
  std::vector<File*> empty_;
  std::vector<std::future<void>> jobs_;
  std::vector<Pack> packs_;  // in order of first use; uses not yet handed to a job
  size_t started_ = 0;       // packs_[0, started_) were handed to a job during the walk
  std::unordered_map<PackId, size_t, IdHash> pack_no_;
  std::vector<std::pair<std::string, Node>> dirs_;
  std::map<std::pair<uint64_t, uint64_t>, std::string> hardlinks_;
  Mutex mu_;
  // A new file's exclusive creation and its `created` mark, one lock per stripe of files.
  static constexpr size_t kCreateLocks = 64;
  Mutex create_mu_[kCreateLocks];
  // Errors (opts_.warn) and notes (opts_.note), reported sorted by path after the restore.
  struct Report {
    std::string path, msg;
    bool note;
    bool operator<(const Report& o) const { return std::tie(path, msg) < std::tie(o.path, o.msg); }
  };
  std::vector<Report> warnings_ GUARDED_BY(mu_);
  std::vector<File*> no_space_ GUARDED_BY(mu_);
  std::vector<uint32_t> in_place_;  // files updated in place (walk thread, then VerifyExisting)  // files to rewrite in RetryOutOfSpace
  // Counted by the walk (one thread) without mu_, and by the jobs (errors, verified) under
  // mu_, never a field by both: not GUARDED_BY, as the walk's increments would need it.
  RestoreResult result_;
};

}  // namespace

RestoreResult RunRestore(IndexedRepository& repo, const BlobId& tree, const RestoreOptions& opts) {
  Restore r(repo, opts);
  return r.Run(tree);
}

}  // namespace haven
