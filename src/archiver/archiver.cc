#include "archiver/archiver.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <climits>
#include <cstdio>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <mutex>

#include "archiver/folder_state.h"
#include "archiver/fs_node.h"
#include "core/error.h"
#include "core/huge_buffer.h"
#include "core/huge_buffer_pool.h"
#include "core/mutex.h"
#include "core/thread_pool.h"
#include "core/timings.h"
#include "repo/host_info.h"
#include "repo/node.h"

namespace haven {

std::vector<std::string> TargetComponents(const std::string& target) {
  std::vector<std::string> parts;
  bool absolute = !target.empty() && target[0] == '/';
  size_t start = 0;
  while (start <= target.size()) {
    size_t end = target.find('/', start);
    if (end == std::string::npos) end = target.size();
    std::string part = target.substr(start, end - start);
    start = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!absolute) {
        parts.push_back(part);
      }
      continue;
    }
    parts.push_back(part);
  }
  if (!absolute) {
    size_t skip = 0;
    while (skip < parts.size() && parts[skip] == "..") ++skip;
    parts.erase(parts.begin(), parts.begin() + static_cast<long>(skip));
  }
  return parts;
}

std::string AbsoluteTargetPath(const std::string& p) {
  std::string abs = p;
  if (abs.empty() || abs[0] != '/') {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd))) Fail(ErrorCode::kFatal, "getcwd failed");
    abs = std::string(cwd) + "/" + p;
  }
  auto comps = TargetComponents(abs);
  std::string out;
  for (const auto& c : comps) out += "/" + c;
  return out.empty() ? "/" : out;
}

std::shared_ptr<const LoadedTree> LoadParentTree(IndexedRepository& repo, const BlobId& id) {
  auto t = std::make_shared<LoadedTree>();
  t->id = id;
  t->raw = repo.LoadBlob(BlobType::kTree, id);
  t->nodes = DecodeTree(AsChars(t->raw), id.Hex());
  return t;
}

ExcludeRules ExcludeRulesOf(const BackupOptions& opts) {
  ExcludeRules r;
  r.excludes = opts.excludes;
  r.iexcludes = opts.iexcludes;
  r.if_present = opts.exclude_if_present;
  r.larger_than = opts.exclude_larger_than;
  r.one_file_system = opts.one_file_system;
  return r;
}

namespace {

using Clock = std::chrono::steady_clock;

struct FileResult {
  std::vector<BlobId> content;
  uint64_t size = 0;
  uint64_t added = 0;  // plain bytes of the blobs this file added
  Clock::time_point done;  // set only for opts.item_done
  std::string error;  // non-empty: the file is left out of the snapshot
  bool changed = false;  // the file changed while it was read, also on the second read
};

// The results of one batch of small files (FileBatch), set together: the folder's collector
// waits once per batch. (A promise per file, set one after the other at the batch's end,
// made the collector wait on each in turn: woken by the first, it ran on the worker's CPU
// and asked for the next before the worker, preempted, had set it. B5c, 200,000 files:
// 35,000-38,000 voluntary and 26,000-29,000 involuntary context switches; 6,300-11,900
// and 2,000-2,700 with this and kOpenSiblings.)
struct BatchResults {
  std::vector<FileResult> results;  // sized when the batch is queued
  std::vector<std::exception_ptr> errors;
  // Set by the batch's job when every place is filled (made when the batch is queued; the
  // promise is the job's own, so a job dropped unrun breaks it instead of leaving a wait).
  std::shared_future<void> done;
};

// A changed file's content as it is being stored: a job of its own (a large file) or a
// place in a batch.
class PendingContent {
 public:
  PendingContent() = default;
  explicit PendingContent(std::future<FileResult> own) : own_(std::move(own)) {}
  PendingContent(std::shared_ptr<BatchResults> batch, size_t index)
      : batch_(std::move(batch)), index_(index) {}
  bool valid() const { return own_.valid() || batch_ != nullptr; }
  // Once: waits for the file's job or batch, then gives its result or rethrows its error.
  FileResult get() {
    if (own_.valid()) return own_.get();
    std::shared_ptr<BatchResults> b = std::move(batch_);
    b->done.get();
    if (b->errors[index_]) std::rethrow_exception(b->errors[index_]);
    return std::move(b->results[index_]);
  }

 private:
  std::future<FileResult> own_;
  std::shared_ptr<BatchResults> batch_;
  size_t index_ = 0;
};

struct DirJob;

// A directory entry whose node may still wait for its file content (`content` valid), for
// its subdirectory walked on another thread (`dir` valid) or started here and not finished
// (`job` set).
struct Pending {
  Node node;
  PendingContent content;
  std::future<Node> dir;
  std::shared_ptr<DirJob> job;  // a subdirectory walked here, its tree not saved yet
  const Node* parent = nullptr;  // the parent snapshot's node of a directory
  std::string path;
  // For opts.item_done only: snapshot path, start, whether the parent had the entry.
  std::string sn_path;
  Clock::time_point start;
  bool had_parent = false;
};

// A directory of the parent snapshot (null when there is none): its nodes, and the tree
// blob they were decoded from.
struct ParentDir {
  std::shared_ptr<const LoadedTree> tree;
  const std::vector<Node>& nodes() const {
    static const std::vector<Node> kNone;
    return tree ? tree->nodes : kNone;
  }
};

// The parent snapshot's directory of a folder, loaded on first use, from any thread: a
// folder whose tree the folder state gives never loads it, unless one of its subfolders
// changed and asks for its own parent node.
class LazyParent {
 public:
  explicit LazyParent(std::function<ParentDir()> load) : load_(std::move(load)) {}
  const ParentDir& Get() {
    std::call_once(once_, [this] {
      dir_ = load_();
      load_ = nullptr;
    });
    return dir_;
  }

 private:
  std::function<ParentDir()> load_;
  std::once_flag once_;
  ParentDir dir_;
};

const Node* FindNode(const std::vector<Node>& nodes, const std::string& name) {
  auto it = std::lower_bound(nodes.begin(), nodes.end(), name,
                             [](const Node& n, const std::string& s) { return n.name < s; });
  return (it != nodes.end() && it->name == name) ? &*it : nullptr;
}

struct VirtualDir {
  std::map<std::string, VirtualDir> children;
  std::string fs_path;
  bool target = false;
};

// One entry of a folder on disk as listed (excludes applied), in name order; for a
// directory above a target, one of its listed children (virt: that child's VirtualDir).
struct Listed {
  std::string name, path;
  struct stat st;
  const VirtualDir* virt = nullptr;
};

// Small changed files are stored by one pool job per batch, not one per file: handing a
// job to another thread (a futex wake, a context switch, a future) cost more than storing
// a 1 KiB file (B9: 4 futex calls per file). A batch closes at kBatchFiles files or
// kBatchBytes bytes, before a subdirectory is walked, and at the directory's end.
constexpr off_t kBatchFileMax = 64 << 10;  // larger files get a job each
constexpr size_t kBatchFiles = 32;
constexpr uint64_t kBatchBytes = 512 << 10;
// A file is read in pieces of this size (into the buffer its chunks are cut from).
constexpr size_t kReadSize = 1 << 20;

struct FileBatch {
  struct Item {
    std::string path;
    struct stat st;
  };
  std::vector<Item> items;
  uint64_t bytes = 0;
  std::shared_ptr<BatchResults> results;  // made with the first item
};

// One directory's children while SaveChildren gathers them: the entries in name order,
// the parent snapshot's directory, the batch of small files not yet queued, and the
// counters added to the totals at the end.
struct ChildWalk {
  ParentDir parent;
  const std::string& sn_path;  // the directory's snapshot path (for opts.item_done)
  std::vector<Pending> entries;
  std::deque<size_t> open;  // entries whose `job` is not finished, oldest first
  FileBatch batch;
  BackupStats local;
  // False once an entry could not be listed, stat'ed, described or read: the folder's tree
  // is then not recorded in the folder state (the next backup must look at it again).
  bool clean = true;

  // The parent snapshot's node of the same name, or nullptr.
  const Node* ParentNode(const std::string& name) const { return FindNode(parent.nodes(), name); }
};

// Subdirectories a folder's walk keeps started but not finished (DirJob): while the
// walker lists the next one and queues its files, the workers store the files of those
// before it, and its wait for their results comes after. Walked and finished at once, a
// folder of small files left the workers idle while the walker listed the next one and
// the walker idle while they stored its files (B5c: each worker busy 48 % of the time).
// Fewer when those hold many entries (each entry's node is kept until its folder is
// finished: a folder of a million entries holds about 1 GB of them, SaveTree).
constexpr size_t kOpenSiblings = 2;
constexpr size_t kOpenEntriesMax = 16384;

// A folder's children walked (listed, files queued, subfolders started) whose tree is not
// saved yet: SaveChildren is StartChildren then FinishChildren.
struct ChildrenJob {
  explicit ChildrenJob(std::string sn) : sn_path(std::move(sn)), walk{{}, sn_path, {}, {}, {}, {}} {}
  ChildrenJob(const ChildrenJob&) = delete;  // walk refers to this object's sn_path
  ChildrenJob& operator=(const ChildrenJob&) = delete;
  std::string sn_path;
  ChildWalk walk;  // refers to sn_path
  const VirtualDir* virt = nullptr;
  bool above = false;
  std::optional<RawId> key;    // the folder's, when the folder state is kept
  std::optional<BlobId> tree;  // set at the start when the folder state gave the tree
};

// A directory started by StartDirectory: its node without the subtree, and its children.
struct DirJob {
  Node dir;
  const Node* parent = nullptr;
  std::string path;
  Clock::time_point start;
  std::unique_ptr<ChildrenJob> children;  // holds the snapshot path (sn_path)
};

// The folder keys of a backup (folder_state.h): bumped with any change to what a key
// covers or how trees are encoded from it.
constexpr const char* kBackupKeyVersion = "haven-backup-dir-key/1";

class Backup {
 public:
  Backup(WriteSession& session, const BackupOptions& opts)
      : repo_(session.repo()),
        session_(session),
        opts_(opts),
        rules_(ExcludeRulesOf(opts)),
        jobs_(ResolveJobs(opts.jobs)),
        budget_(std::max<size_t>(64 << 20, static_cast<size_t>(jobs_) * (24 << 20))),
        pool_(jobs_, static_cast<size_t>(jobs_) * 4),
        blob_pool_(jobs_, static_cast<size_t>(jobs_) * 4),
        walk_threads_(jobs_ - 1) {}

  BackupResult Run();

 private:
  void Warn(const std::string& path, const std::string& msg) {
    MutexLock lock(warn_mu_);
    warnings_.emplace_back(path, msg);
    if (opts_.progress) opts_.progress->Error();
  }
  // A source that could not be read: the snapshot is incomplete (exit code 3).
  void SourceError(const std::string& path, const std::string& msg) {
    Warn(path, msg);
    MutexLock lock(warn_mu_);
    stats_.errors++;
  }
  // Node for a directory (subtree saved). parent: the parent snapshot's node, if any.
  // sn_path: its path in the snapshot, for opts_.item_done ("" when that is unset).
  // up (instead of parent): the folder above was found unchanged in the folder state; only
  // the node's subtree is filled, and the parent node is looked up in `up` when needed.
  Node SaveDirectory(const std::string& path, const std::string& name, const struct stat& st,
                     const VirtualDir* virt, const Node* parent, const std::string& sn_path,
                     std::shared_ptr<LazyParent> up = nullptr);
  // A directory's node without its subtree (virt: set for a directory above a target).
  Node DirNode(const std::string& path, const std::string& name, const struct stat& st,
               const VirtualDir* virt, const Node* parent,
               std::vector<std::string>* warnings) const;
  // Saves the tree of a directory's children: all entries of a target directory (minus
  // excludes), or only the listed children of an intermediate directory of a target.
  // *tree_added (when given): the tree blob's plain size if it was new, else 0.
  BlobId SaveChildren(const std::string& path, const VirtualDir* virt,
                      std::function<ParentDir()> load_parent, const std::string& sn_path,
                      uint64_t* tree_added);
  std::unique_ptr<ChildrenJob> StartChildren(const std::string& path, const VirtualDir* virt,
                                             std::function<ParentDir()> load_parent,
                                             const std::string& sn_path);
  BlobId FinishChildren(ChildrenJob& job, uint64_t* tree_added);
  // SaveDirectory in two halves (see kOpenSiblings).
  std::shared_ptr<DirJob> StartDirectory(const std::string& path, const std::string& name,
                                         const struct stat& st, const VirtualDir* virt,
                                         const Node* parent, const std::string& sn_path,
                                         std::shared_ptr<LazyParent> up);
  Node FinishDirectory(DirJob& job);
  // Finishes the oldest started subdirectory of a walk.
  void FinishOldest(ChildWalk& walk);
  // The children of an intermediate directory of a target: only the listed ones, stat'ed
  // (a target lstat'ed), in name order; what cannot be stat'ed is reported (and
  // walk.clean cleared).
  std::vector<Listed> ListVirtualChildren(const VirtualDir& virt, ChildWalk& walk);
  // Every entry of a directory on disk (minus excludes), in name order, lstat'ed; what
  // cannot be listed is reported (and walk.clean cleared).
  std::vector<Listed> ListDirectory(const std::string& path, ChildWalk& walk);
  // ---- The folder state (folder_state.h) ----
  // Reads the state of these paths when it belongs to `parent`; prepares the next one.
  void OpenFolderState(const std::vector<std::string>& abs_paths, const std::string& host,
                       const std::optional<FileId>& parent);
  // The folder's record when its key is in the state. Its tree is indexed: the state is
  // used only while every index file it recorded remains (folder_state.h), and those
  // index the trees it names; no index is read here.
  const FolderState::Dir* RecordedFolder(const RawId& key) const;
  // A folder recorded with the same key: its subfolders are walked (each one on its own
  // from the state or not); when every subfolder's tree is the recorded one, the folder's
  // tree is returned and its entries are counted as unmodified. Otherwise *done holds the
  // subfolders' results (by index in `listed`) for the usual path, and nullopt is returned.
  // `counted`: adds to dirs_reused_ (the folders of the targets, not those above them).
  std::optional<BlobId> ReuseFolder(const std::vector<Listed>& listed,
                                    const FolderState::Dir& rec,
                                    const std::shared_ptr<LazyParent>& parent,
                                    std::vector<std::optional<Node>>* done, bool counted);
  void RecordFolder(const RawId& key, const BlobId& tree, std::vector<BlobId> subtrees);
  // Adds one folder's counters to the totals.
  void AddStats(const BackupStats& l);
  // Writes the next state, naming `snap`, after the snapshot.
  void SaveFolderStateFor(const FileId& snap, const BlobId& tree);
  // Adds a subfolder that ReuseFolder walked already: its node with that subtree.
  void AddWalkedDir(ChildWalk& walk, const Listed& e, Node walked);
  // Adds one entry: a directory is walked (inline or on a walk thread), a file is reused
  // from the parent or queued for reading.
  void AddEntry(ChildWalk& walk, const std::string& child_path, const std::string& child_name,
                const struct stat& cst, const VirtualDir* child_virt);
  void AddDirEntry(ChildWalk& walk, Pending p, const std::string& child_name,
                   const struct stat& cst, const VirtualDir* child_virt, const Node* pnode);
  // True when a file's content can be taken from its parent node without reading.
  bool Unchanged(const std::string& path, const struct stat& cst, const Node* pnode);
  // Queues a changed or new file for reading (or for opts_.content_for) on pool_: a small
  // one joins walk.batch.
  PendingContent QueueFile(ChildWalk& walk, const std::string& path, const struct stat& cst);
  // Hands walk.batch to pool_ (nothing when it is empty).
  void FlushBatch(ChildWalk& walk);
  // A changed file's content stored: opts_.content_for's bytes, else read from disk.
  FileResult StoreFile(const std::string& path, const struct stat& cst);
  // Waits for every entry in name order; returns the nodes of the tree.
  std::vector<Node> CollectNodes(ChildWalk& walk);
  // Adds opts_.extra_files' root entries to the root's nodes, sorted.
  void AddExtraFiles(std::vector<Node>& nodes);
  void Report(const std::string& item, bool dir, BackupItem::Action action,
              Clock::time_point start, uint64_t data_added, uint64_t tree_added) {
    double secs = action == BackupItem::Action::kUnchanged
                      ? 0
                      : std::chrono::duration<double>(Clock::now() - start).count();
    opts_.item_done(BackupItem{item, dir, action, secs, data_added, tree_added});
  }
  ParentDir ParentChildren(const Node* parent);
  // Reads, chunks and stores the content read from fd.
  // `size`: the file's size by its last stat; once that many bytes (more than 0) are read,
  // no read waits for the end (the fstat after the read tells a file that grew).
  FileResult ReadContent(int fd, const std::string& path, std::optional<uint64_t> size);
  // Reads, chunks and stores one file ("-" = stdin).
  FileResult SaveFile(const std::string& path, const struct stat* walked = nullptr);
  // Chunks and stores bytes held in memory; *added (when given) += bytes of new blobs.
  std::vector<BlobId> SaveBytes(std::string_view bytes, uint64_t* added = nullptr);
  // The tree node of opts_.extra_files' directory `dir` ("" = the root's entries).
  std::vector<Node> ExtraNodes(const std::map<std::string, std::string>& files,
                               const std::string& dir);
  const VirtualDir* root_virt_ = nullptr;
  // Encodes and stores a tree; when its bytes equal the parent directory's tree, that
  // tree's id is returned without hashing or storing (it is indexed already).
  // *added (when given): the tree's plain size when it was stored as a new blob, else 0.
  BlobId SaveTree(std::vector<Node> nodes, const ParentDir* parent = nullptr,
                  uint64_t* added = nullptr);
  std::optional<FileId> FindParent(const std::vector<std::string>& abs_paths,
                                   const std::string& host, const gojson::Timestamp& limit);
  // Run's steps: the new snapshot's metadata; the --stdin file as the root; the virtual
  // tree of the targets (and their sorted absolute paths); the parent's root directory;
  // the warnings, sorted by path, to opts_.
  Snapshot NewSnapshot() const;
  BlobId SaveStdin(const Snapshot& snap);
  VirtualDir TargetTree(std::vector<std::string>* abs_paths) const;
  // The parent snapshot's root tree (into parent_tree_), read from its snapshot file.
  void LoadParentSnapshot(const FileId& parent);
  void MakeExcluder(const std::vector<std::string>& abs_paths);
  void ReportWarnings() EXCLUDES(warn_mu_);

  IndexedRepository& repo_;  // parent trees and snapshots
  WriteSession& session_;    // every blob saved
  const BackupOptions& opts_;
  std::optional<BlobId> parent_tree_;  // the parent snapshot's root tree, once loaded
  // The exclusion rules; excluder_ is null when there are none (no per-entry work).
  ExcludeRules rules_;
  std::unique_ptr<Excluder> excluder_;
  Mutex notice_mu_;  // opts_.notice is called by one thread at a time
  int jobs_;
  ByteBudget budget_;  // bytes of chunks queued in blob_pool_ (before the pools, too)
  // Read buffers, recycled: a file is read straight into one, and a chunk cut from it is
  // handed to blob_pool_ with the buffer it was read into (only the bytes read past the cut
  // are copied, into the next buffer). A fresh buffer per chunk meant a fresh mmap and a
  // page fault per 4 KiB of every chunk; copying each chunk out of one read buffer cost a
  // memcpy of every byte and a memmove of the rest.
  // As many buffers are kept as were ever in use at once, at most 32. In use at once: per
  // file being read, the one it is read into and its chunks queued or being stored (at
  // most 2 x jobs + 1 each: ReadContent's `collect`), within the byte budget. Of a kept
  // buffer, 4 MiB stay resident. Declared before the pools: it outlives their threads.
  HugeBufferPool chunk_buffers_{
      {.bytes = chunker::kMaxSize + kReadSize, .max_kept = 32, .resident = size_t{4} << 20}};
  ThreadPool pool_;       // one job per changed file: read + chunk
  ThreadPool blob_pool_;  // one job per chunk of a multi-chunk file: hash + store
  // Walk threads that may still be started: a subdirectory is walked on a thread of its
  // own while one is free (else inline), so the walk uses every core on many small files.
  SpareThreads walk_threads_;
  Mutex warn_mu_;
  BackupStats stats_ GUARDED_BY(warn_mu_);
  std::vector<std::pair<std::string, std::string>> warnings_ GUARDED_BY(warn_mu_);
  // The folder state: the one read (const once the walk starts), where the next one goes,
  // and the folders recorded for it.
  bool collect_state_ = false;
  std::optional<FolderState> state_;
  RawId state_context_;
  RawId above_context_;  // the keys of the directories above a target
  std::string state_path_;
  std::atomic<uint64_t> dirs_reused_{0};
  Mutex state_mu_;
  std::vector<FolderState::Dir> next_dirs_ GUARDED_BY(state_mu_);
};

BlobId Backup::SaveTree(std::vector<Node> nodes, const ParentDir* parent, uint64_t* added) {
  if (added) *added = 0;
  std::string bytes = EncodeTree(nodes);
  // A directory of a million entries holds ~1 GB of nodes: gone before the tree is
  // compressed and sealed (peak memory of a wide directory).
  std::vector<Node>().swap(nodes);
  // Same bytes, same id: the parent's bytes hashed to its id when they were loaded.
  if (parent && parent->tree && parent->tree->raw.size() == bytes.size() &&
      std::memcmp(parent->tree->raw.data(), bytes.data(), bytes.size()) == 0)
    return parent->tree->id;
  BlobId id(Sha256(AsBytes(bytes)));
  if (session_.SaveBlob(BlobType::kTree, id, AsBytes(bytes)) && added) *added = bytes.size();
  return id;
}

ParentDir Backup::ParentChildren(const Node* parent) {
  ParentDir d;
  if (!parent || parent->type != NodeType::kDir || !parent->subtree) return d;
  try {
    if (opts_.parent_tree) d.tree = opts_.parent_tree(*parent->subtree);
    if (!d.tree) d.tree = LoadParentTree(repo_, *parent->subtree);
  } catch (const Error& e) {
    Warn("", std::string("cannot load parent tree, files are re-read: ") + e.what());
    return {};
  }
  return d;
}

std::vector<BlobId> Backup::SaveBytes(std::string_view bytes, uint64_t* added) {
  std::vector<BlobId> ids;
  size_t off = 0;
  for (size_t n : chunker::ChunkLengths(repo_.chunker_tables(), AsBytes(bytes))) {
    ByteView blob = AsBytes(bytes.substr(off, n));
    BlobId id(Sha256(blob));
    if (session_.SaveBlob(BlobType::kData, id, blob) && added) *added += n;
    ids.push_back(id);
    off += n;
  }
  return ids;
}

std::vector<Node> Backup::ExtraNodes(const std::map<std::string, std::string>& files,
                                     const std::string& dir) {
  // files: relative path -> bytes, sorted, so one directory's entries are contiguous.
  std::map<std::string, Node> out;
  const std::string prefix = dir.empty() ? "" : dir + "/";
  for (auto it = files.lower_bound(prefix); it != files.end() && it->first.starts_with(prefix);
       ++it) {
    std::string rest = it->first.substr(prefix.size());
    size_t slash = rest.find('/');
    std::string name = rest.substr(0, slash);
    if (name.empty() || out.count(name)) continue;
    Node n;
    n.name = name;
    n.uid = getuid();
    n.gid = getgid();
    n.user = UserNameOf(n.uid);
    n.group = GroupNameOf(n.gid);
    if (slash == std::string::npos) {
      n.type = NodeType::kFile;
      n.mode = 0644;
      n.size = it->second.size();
      n.content = SaveBytes(it->second);
      if (opts_.outer_blob)
        for (const BlobId& b : n.content) opts_.outer_blob(BlobType::kData, b);
      MutexLock lock(warn_mu_);
      stats_.total_files++;
      stats_.total_bytes += n.size;
    } else {
      n.type = NodeType::kDir;
      n.mode = gomode::kDir | 0755;
      n.subtree = SaveTree(ExtraNodes(files, prefix + name));
      if (opts_.outer_blob) opts_.outer_blob(BlobType::kTree, *n.subtree);
    }
    out.emplace(name, std::move(n));
  }
  std::vector<Node> nodes;
  for (auto& [name, n] : out) nodes.push_back(std::move(n));
  return nodes;
}

namespace {
// The same version of a file: a write, truncate or replace in place changes one of these.
bool SameVersion(const struct stat& a, const struct stat& b) {
  return a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec && a.st_ctim.tv_sec == b.st_ctim.tv_sec &&
         a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}
}  // namespace

FileResult Backup::SaveFile(const std::string& path, const struct stat* walked) {
  {
    MutexLock lock(warn_mu_);
    stats_.files_read++;
  }
  int fd = path == "-" ? dup(STDIN_FILENO)
                       : open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    FileResult r;
    r.error = std::string("open ") + path + ": " + strerror(errno);
    return r;
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  FileResult r;
  // A file written while it is read would be stored as a mix of old and new bytes: the
  // stat before and after the read are compared, and a changed file is read once more
  // (the first read's blobs stay unreferenced until prune). Changed twice: kept as read,
  // reported (exit 3).
  // The first read is compared with the walk's lstat (no fstat before it: a change since
  // the walk counts as a change during the read), later ones with the fstat after the last.
  for (int attempt = 0;; ++attempt) {
    struct stat before, after;
    bool seekable;
    if (attempt == 0 && walked && S_ISREG(walked->st_mode) && !opts_.expected_stat) {
      before = *walked;
      seekable = true;
    } else {
      seekable = path != "-" && fstat(fd, &before) == 0 && S_ISREG(before.st_mode);
    }
    if (const struct stat* want = opts_.expected_stat ? opts_.expected_stat(path) : nullptr;
        want && (!seekable || want->st_ino != before.st_ino || !SameVersion(*want, before))) {
      r = FileResult{};
      r.error = path + " changed after it was scanned; not stored (capture again)";
      break;
    }
    r = ReadContent(fd, path, seekable ? std::optional<uint64_t>(before.st_size) : std::nullopt);
    if (opts_.after_read) opts_.after_read(path, attempt);
    // The inode too: `before` may be the walk's lstat of a file replaced since.
    if (!r.error.empty() || !seekable || fstat(fd, &after) != 0 ||
        (SameVersion(before, after) && before.st_ino == after.st_ino &&
         before.st_dev == after.st_dev))
      break;
    if (attempt == 1 || lseek(fd, 0, SEEK_SET) != 0) {
      r.changed = true;
      break;
    }
  }
  if (opts_.progress) opts_.progress->FileDone();
  if (opts_.item_done) r.done = Clock::now();
  return r;
}

FileResult Backup::ReadContent(int fd, const std::string& path, std::optional<uint64_t> size) {
  FileResult r;
  // The buffer the file is read into; a chunk cut from it leaves with it (see chunk_buffers_).
  std::unique_ptr<HugeBuffer> cur = chunk_buffers_.Take();
  size_t len = 0;      // bytes of the current chunk (and what was read past it) in buf
  size_t touched = 0;  // the most bytes buf has held
  struct GiveBack {
    HugeBufferPool& pool;
    std::unique_ptr<HugeBuffer>& b;
    const size_t& touched;
    ~GiveBack() {
      if (b) pool.Put(std::move(b), touched);
    }
  } give_back{chunk_buffers_, cur, touched};
  uint8_t* buf = cur->data();
  chunker::Chunker ch(repo_.chunker_tables());
  // Chunks of a file that has more than one are hashed and stored on blob_pool_, so one
  // large file uses every core; their ids are collected in file order.
  std::deque<std::future<std::pair<BlobId, size_t>>> pending;
  std::exception_ptr failure;
  auto collect = [&](size_t keep) {
    while (pending.size() > keep) {
      try {
        auto [id, added] = pending.front().get();
        r.content.push_back(id);
        r.added += added;
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
      pending.pop_front();
    }
  };
  // The blob's id, and its size when it was added (0 when the repository had it).
  auto store = [this](ByteView blob, int level) {
    BlobId id;
    {
      ScopedTimer t(Stage::kHash);
      id = BlobId(Sha256(blob));
    }
    bool added = session_.SaveBlob(BlobType::kData, id, blob, level);
    return std::pair<BlobId, size_t>(id, added ? blob.size() : 0);
  };
  bool multi = false;
  // The zstd level of a large file's chunks: chosen by a trial on its chunk kLevelTrialAt,
  // and again every kLevelTrialEvery chunks (a file whose content changes kind); the mode's
  // level before the first trial, so a file of fewer chunks never pays for one.
  constexpr size_t kLevelTrialAt = 8, kLevelTrialEvery = 64;
  size_t chunks = 0;
  int level = 0;
  // Emits buf[0, n) as a chunk; the len - n bytes read past it move to a fresh buffer.
  auto emit = [&](size_t n, bool last) {
    r.size += n;
    if (opts_.progress) opts_.progress->AddBytes(n);
    if (last && !multi) {  // the whole file is one chunk: no hand-off
      auto [id, added] = store(ByteView(buf, n), 0);
      r.content.push_back(id);
      r.added += added;
      return;
    }
    multi = true;
    if (chunks >= kLevelTrialAt && (chunks - kLevelTrialAt) % kLevelTrialEvery == 0)
      level = session_.DataLevelFor(ByteView(buf, n));
    ++chunks;
    budget_.Acquire(n);
    // Released here if anything below throws (bad_alloc) before the job owns the bytes: a
    // lost release would make every later Acquire wait for ever.
    struct Hold {
      ByteBudget& b;
      size_t n;
      bool handed = false;
      ~Hold() {
        if (!handed) b.Release(n);
      }
    } hold{budget_, n};
    std::shared_ptr<HugeBuffer> chunk = chunk_buffers_.Share(std::move(cur), touched);
    if (!last) {
      cur = chunk_buffers_.Take();
      std::memcpy(cur->data(), buf + n, len - n);
    }
    buf = cur ? cur->data() : nullptr;
    len -= n;
    touched = len;
    auto job = blob_pool_.Submit([this, chunk, store, n, level]() mutable {
      // The buffer goes back to the pool when the job ends, not when its future is
      // collected (the job's state lives as long as the future).
      std::shared_ptr<HugeBuffer> held = std::move(chunk);
      struct Release {
        ByteBudget& b;
        size_t n;
        ~Release() { b.Release(n); }
      } release{budget_, n};
      return store(ByteView(held->data(), n), level);
    });
    hold.handed = true;  // the job releases them when it ends
    pending.push_back(std::move(job));
    collect(static_cast<size_t>(jobs_) * 2);
  };
  uint64_t total = 0;  // bytes read
  // A size of 0 is no promise of an empty file (/proc, some FUSE file systems): read to
  // the end then.
  while (!size || *size == 0 || total < *size) {
    ssize_t got;
    {
      ScopedTimer t(Stage::kRead);
      got = read(fd, buf + len, kReadSize);
    }
    if (got < 0) {
      if (errno == EINTR) continue;
      r.error = std::string("read ") + path + ": " + strerror(errno);
      break;
    }
    if (got == 0) break;
    total += static_cast<uint64_t>(got);
    size_t scan_from = len;
    len += static_cast<size_t>(got);
    touched = std::max(touched, len);
    while (scan_from < len) {
      std::optional<size_t> cut;
      {
        ScopedTimer t(Stage::kChunk);
        cut = ch.Next(ByteView(buf + scan_from, len - scan_from));
      }
      if (!cut) break;
      emit(scan_from + *cut, false);
      scan_from = 0;
    }
  }
  if (r.error.empty() && len > 0) emit(len, true);
  collect(0);
  if (failure) std::rethrow_exception(failure);
  return r;
}

Node Backup::DirNode(const std::string& path, const std::string& name, const struct stat& st,
                     const VirtualDir* virt, const Node* parent,
                     std::vector<std::string>* warnings) const {
  Node dir = NodeFromStat(path, name, st, warnings, opts_.with_atime, parent);
  if (opts_.stable_intermediate_dirs && virt && !virt->target) {
    dir.mtime = dir.atime = dir.ctime = gojson::Timestamp{};
    dir.inode = dir.device_id = 0;
  }
  return dir;
}

Node Backup::SaveDirectory(const std::string& path, const std::string& name,
                           const struct stat& st, const VirtualDir* virt, const Node* parent,
                           const std::string& sn_path, std::shared_ptr<LazyParent> up) {
  std::shared_ptr<DirJob> job = StartDirectory(path, name, st, virt, parent, sn_path, std::move(up));
  return FinishDirectory(*job);
}

std::shared_ptr<DirJob> Backup::StartDirectory(const std::string& path, const std::string& name,
                                               const struct stat& st, const VirtualDir* virt,
                                               const Node* parent, const std::string& sn_path,
                                               std::shared_ptr<LazyParent> up) {
  auto job = std::make_shared<DirJob>();
  if (opts_.item_done) job->start = Clock::now();
  job->parent = parent;
  job->path = path;
  Node& dir = job->dir;
  std::function<ParentDir()> load_parent;
  if (up) {
    dir.name = name;
    dir.type = NodeType::kDir;
    load_parent = [this, up = std::move(up), name] {
      return ParentChildren(FindNode(up->Get().nodes(), name));
    };
  } else {
    std::vector<std::string> node_warnings;
    dir = DirNode(path, name, st, virt, parent, &node_warnings);
    for (const auto& w : node_warnings) Warn(path, w);
    load_parent = [this, parent] { return ParentChildren(parent); };
  }
  job->children = StartChildren(path, virt, std::move(load_parent), sn_path);
  return job;
}

Node Backup::FinishDirectory(DirJob& job) {
  uint64_t tree_added = 0;
  Node& dir = job.dir;
  dir.subtree = FinishChildren(*job.children, opts_.item_done ? &tree_added : nullptr);
  const std::string sn_path = std::move(job.children->sn_path);
  job.children.reset();
  if (opts_.tree_saved) opts_.tree_saved(job.path, *dir.subtree);
  if (opts_.item_done) {
    // The same classification as the dirs_* counters.
    const Node* parent = job.parent;
    BackupItem::Action a = !parent ? BackupItem::Action::kNew
                           : (parent->subtree && *parent->subtree == *dir.subtree)
                               ? BackupItem::Action::kUnchanged
                               : BackupItem::Action::kModified;
    Report(sn_path + "/", true, a, job.start, 0, tree_added);
  }
  return std::move(dir);
}

void Backup::FinishOldest(ChildWalk& walk) {
  Pending& p = walk.entries[walk.open.front()];
  walk.open.pop_front();
  std::shared_ptr<DirJob> job = std::move(p.job);
  p.node = FinishDirectory(*job);
}

BlobId Backup::SaveChildren(const std::string& path, const VirtualDir* virt,
                            std::function<ParentDir()> load_parent, const std::string& sn_path,
                            uint64_t* tree_added) {
  std::unique_ptr<ChildrenJob> job = StartChildren(path, virt, std::move(load_parent), sn_path);
  return FinishChildren(*job, tree_added);
}

std::unique_ptr<ChildrenJob> Backup::StartChildren(const std::string& path, const VirtualDir* virt,
                                                   std::function<ParentDir()> load_parent,
                                                   const std::string& sn_path) {
  auto job = std::make_unique<ChildrenJob>(sn_path);
  job->virt = virt;
  auto parent = std::make_shared<LazyParent>(std::move(load_parent));
  ChildWalk& walk = job->walk;
  // A directory above a target is a folder whose entries are the listed children (its
  // key has its own context: the same entries are not the same tree as a whole folder's).
  const bool above = job->above = virt && !virt->target;
  std::vector<Listed> listed = above ? ListVirtualChildren(*virt, walk) : ListDirectory(path, walk);
  std::vector<std::optional<Node>> walked;  // subfolders ReuseFolder walked already
  if (collect_state_ && walk.clean) {
    DirKey k(above ? above_context_ : state_context_);
    for (const Listed& e : listed) k.AddEntry(e.name, e.st);
    job->key = k.Finish();
    if (const FolderState::Dir* rec = RecordedFolder(*job->key))
      if (auto tree = ReuseFolder(listed, *rec, parent, &walked, !above)) {
        if (above && opts_.outer_blob) opts_.outer_blob(BlobType::kTree, *tree);
        job->tree = *tree;
        return job;
      }
  }
  walk.parent = parent->Get();
  for (size_t i = 0; i < listed.size(); ++i) {
    const Listed& e = listed[i];
    if (i < walked.size() && walked[i]) {
      AddWalkedDir(walk, e, std::move(*walked[i]));
    } else {
      AddEntry(walk, e.path, e.name, e.st, e.virt);
    }
  }
  FlushBatch(walk);
  return job;
}

BlobId Backup::FinishChildren(ChildrenJob& job, uint64_t* tree_added) {
  if (job.tree) {
    if (tree_added) *tree_added = 0;
    return *job.tree;
  }
  ChildWalk& walk = job.walk;
  const bool above = job.above;
  const VirtualDir* virt = job.virt;
  std::vector<Node> nodes = CollectNodes(walk);
  std::vector<Pending>().swap(walk.entries);  // paths and moved-from nodes, before encoding
  AddStats(walk.local);
  if (above && opts_.outer_blob)  // (a file target's content, e.g. of ~/.bashrc)
    for (const Node& n : nodes)
      for (const BlobId& b : n.content) opts_.outer_blob(BlobType::kData, b);
  if (virt && virt == root_virt_ && opts_.extra_files) AddExtraFiles(nodes);
  std::vector<BlobId> subtrees;
  if (job.key && walk.clean)
    for (const Node& n : nodes)
      if (n.type == NodeType::kDir && n.subtree) subtrees.push_back(*n.subtree);
  BlobId tree = SaveTree(std::move(nodes), &walk.parent, tree_added);
  if (above && opts_.outer_blob) opts_.outer_blob(BlobType::kTree, tree);
  if (job.key && walk.clean) RecordFolder(*job.key, tree, std::move(subtrees));
  return tree;
}

void Backup::AddStats(const BackupStats& l) {
  MutexLock lock(warn_mu_);
  stats_.files_new += l.files_new;
  stats_.files_changed += l.files_changed;
  stats_.files_unmodified += l.files_unmodified;
  stats_.dirs_new += l.dirs_new;
  stats_.dirs_changed += l.dirs_changed;
  stats_.dirs_unmodified += l.dirs_unmodified;
  stats_.total_files += l.total_files;
  stats_.total_bytes += l.total_bytes;
}

const FolderState::Dir* Backup::RecordedFolder(const RawId& key) const {
  return state_ ? state_->Find(key) : nullptr;
}

std::optional<BlobId> Backup::ReuseFolder(const std::vector<Listed>& listed,
                                          const FolderState::Dir& rec,
                                          const std::shared_ptr<LazyParent>& parent,
                                          std::vector<std::optional<Node>>* done,
                                          bool counted) {
  // The subfolders, in name order: each on a walk thread while one is free.
  std::vector<std::pair<size_t, std::future<Node>>> subs;
  done->assign(listed.size(), std::nullopt);
  for (size_t i = 0; i < listed.size(); ++i) {
    const Listed& e = listed[i];
    if (!S_ISDIR(e.st.st_mode)) continue;
    std::future<Node> f = walk_threads_.TryAsync([this, &e, parent] {
      return SaveDirectory(e.path, e.name, e.st, e.virt, nullptr, "", parent);
    });
    if (f.valid()) {
      subs.emplace_back(i, std::move(f));
    } else {
      (*done)[i] = SaveDirectory(e.path, e.name, e.st, e.virt, nullptr, "", parent);
    }
  }
  for (auto& [i, f] : subs) (*done)[i] = f.get();
  std::vector<BlobId> subtrees;
  for (const auto& n : *done)
    if (n) subtrees.push_back(*n->subtree);
  if (subtrees != rec.subtrees) return std::nullopt;
  // Every entry is as recorded: the recorded tree, and the counts of an unchanged folder.
  BackupStats local;
  local.dirs_unmodified = subtrees.size();
  for (const Listed& e : listed) {
    if (!S_ISREG(e.st.st_mode)) continue;
    local.total_files++;
    local.total_bytes += static_cast<uint64_t>(e.st.st_size);
    local.files_unmodified++;
    if (opts_.progress) {
      opts_.progress->AddBytes(static_cast<uint64_t>(e.st.st_size));
      opts_.progress->FileDone();
    }
  }
  AddStats(local);
  if (counted) dirs_reused_++;
  RecordFolder(rec.key, rec.tree, rec.subtrees);
  return rec.tree;
}

void Backup::AddWalkedDir(ChildWalk& walk, const Listed& e, Node walked) {
  Pending p;
  p.path = e.path;
  p.parent = walk.ParentNode(e.name);
  std::vector<std::string> w;
  p.node = DirNode(e.path, e.name, e.st, e.virt, p.parent, &w);
  for (const auto& msg : w) Warn(e.path, msg);
  if (!w.empty()) walk.clean = false;
  p.node.subtree = walked.subtree;
  walk.entries.push_back(std::move(p));
}

void Backup::RecordFolder(const RawId& key, const BlobId& tree, std::vector<BlobId> subtrees) {
  MutexLock lock(state_mu_);
  next_dirs_.push_back(FolderState::Dir{key, tree, std::move(subtrees)});
}

void Backup::OpenFolderState(const std::vector<std::string>& abs_paths, const std::string& host,
                             const std::optional<FileId>& parent) {
  // The capture's hooks and per-item reports need every entry looked at; atime is not in
  // a key (a read moves it).
  if (opts_.folder_state_dir.empty() || opts_.with_atime || opts_.item_done ||
      opts_.may_reuse || opts_.known_stat || opts_.content_for || opts_.expected_stat ||
      opts_.known_tree || opts_.parent_tree || opts_.extra_files)
    return;
  collect_state_ = true;
  std::vector<std::string> who{host};
  who.insert(who.end(), abs_paths.begin(), abs_paths.end());
  state_path_ = FolderStatePath(opts_.folder_state_dir, "backup", who);
  state_context_ = FolderContext(kBackupKeyVersion, {});
  above_context_ = FolderContext(kBackupKeyVersion, {"above a target"});
  if (!parent || opts_.force) return;
  state_ = LoadUsableFolderState(repo_, state_path_, state_context_, *parent, parent_tree_,
                                 repo_.index_files());
}

void Backup::SaveFolderStateFor(const FileId& snap, const BlobId& tree) {
  FolderState next;
  next.context = state_context_;
  next.snapshot = snap;
  next.tree = tree;
  {
    MutexLock lock(state_mu_);
    next.dirs = std::move(next_dirs_);
  }
  try {
    // (the session has flushed: the index files are read-only now)
    SaveNextFolderState(repo_, state_path_, state_, std::move(next), repo_.index_files());
  } catch (const Error& e) {
    // A cache: the next backup reads the parent's trees instead.
    if (opts_.warn) opts_.warn(std::string("folder state not saved: ") + e.what());
  }
}

std::vector<Listed> Backup::ListVirtualChildren(const VirtualDir& virt, ChildWalk& walk) {
  std::vector<Listed> listed;
  const Excluder* ex = excluder_.get();
  const bool by_name = ex && ex->by_name();
  const bool by_stat = ex && ex->by_stat();
  // The rules apply to a source path itself too (as restic's), not to the directories
  // above it.
  for (const auto& [child_name, child] : virt.children) {
    if (child.target && by_name) {
      size_t slash = child.fs_path.rfind('/');
      std::string_view dir = slash == 0 ? std::string_view("/")
                                        : std::string_view(child.fs_path).substr(0, slash);
      Excluder::DirState dir_state;
      if (ex->ExcludedByName(child.fs_path, dir,
                             std::string_view(child.fs_path).substr(slash + 1), dir_state))
        continue;
    }
    struct stat cst;
    if (const struct stat* known = opts_.known_stat ? opts_.known_stat(child.fs_path) : nullptr) {
      cst = *known;
    } else if (child.target ? lstat(child.fs_path.c_str(), &cst) != 0
                            : stat(child.fs_path.c_str(), &cst) != 0) {
      // A directory above a target is resolved, as restic does: `lnk/file` with `lnk` a
      // symlink to a directory stores `lnk` as that directory holding `file` (an lstat
      // would store the link and drop the file). The target itself stays unresolved.
      SourceError(child.fs_path, std::string(child.target ? "lstat " : "stat ") +
                                     child.fs_path + ": " + strerror(errno));
      walk.clean = false;
      continue;
    }
    if (!child.target && !S_ISDIR(cst.st_mode)) {
      SourceError(child.fs_path, child.fs_path + " is not a directory");
      walk.clean = false;
      continue;
    }
    if (child.target && by_stat && ex->ExcludedByStat(child.fs_path, cst)) continue;
    listed.push_back(Listed{child_name, child.fs_path, cst, &child});
  }
  return listed;
}

std::vector<Listed> Backup::ListDirectory(const std::string& path, ChildWalk& walk) {
  const Excluder* ex = excluder_.get();
  const bool by_name = ex && ex->by_name();
  const bool by_stat = ex && ex->by_stat();
  std::vector<Listed> listed;
  DIR* d = opendir(path.c_str());
  if (!d) {
    SourceError(path, std::string("open directory ") + path + ": " + strerror(errno));
    walk.clean = false;
    return listed;
  }
  std::vector<std::string> names;
  {
    ScopedTimer t(Stage::kWalk);
    errno = 0;
    while (struct dirent* de = readdir(d)) {
      std::string n = de->d_name;
      if (n != "." && n != "..") names.push_back(std::move(n));
      errno = 0;
    }
  }
  if (errno != 0) {
    SourceError(path, std::string("read directory ") + path + ": " + strerror(errno));
    walk.clean = false;
  }
  int dfd = dirfd(d);
  std::sort(names.begin(), names.end());
  Excluder::DirState dir_state;
  for (const std::string& n : names) {
    std::string child_path = path == "/" ? "/" + n : path + "/" + n;
    if (by_name && ex->ExcludedByName(child_path, path, n, dir_state)) continue;
    struct stat cst;
    int rc = 0;
    if (const struct stat* known = opts_.known_stat ? opts_.known_stat(child_path) : nullptr) {
      cst = *known;
    } else {
      ScopedTimer t(Stage::kWalk);
      rc = fstatat(dfd, n.c_str(), &cst, AT_SYMLINK_NOFOLLOW);
    }
    if (rc != 0) {
      SourceError(child_path, std::string("lstat ") + child_path + ": " + strerror(errno));
      walk.clean = false;
      continue;
    }
    if (by_stat && ex->ExcludedByStat(child_path, cst)) continue;
    listed.push_back(Listed{n, std::move(child_path), cst});
  }
  closedir(d);
  return listed;
}

void Backup::AddEntry(ChildWalk& walk, const std::string& child_path,
                      const std::string& child_name, const struct stat& cst,
                      const VirtualDir* child_virt) {
  const Node* pnode = walk.ParentNode(child_name);
  const bool report = static_cast<bool>(opts_.item_done);
  Pending p;
  p.path = child_path;
  if (report) p.sn_path = walk.sn_path + "/" + child_name;
  if (S_ISDIR(cst.st_mode)) {
    FlushBatch(walk);  // the workers store the batch while the subdirectory is walked
    AddDirEntry(walk, std::move(p), child_name, cst, child_virt, pnode);
    return;
  }
  std::vector<std::string> w;
  p.node = NodeFromStat(child_path, child_name, cst, &w, opts_.with_atime, pnode);
  for (const auto& msg : w) Warn(child_path, msg);
  if (!w.empty()) walk.clean = false;
  if (p.node.type == NodeType::kFile) {
    BackupStats& local = walk.local;
    local.total_files++;
    local.total_bytes += p.node.size;
    if (Unchanged(child_path, cst, pnode)) {
      p.node.content = pnode->content;
      local.files_unmodified++;
      if (opts_.progress) {
        opts_.progress->AddBytes(p.node.size);
        opts_.progress->FileDone();
      }
      if (report) Report(p.sn_path, false, BackupItem::Action::kUnchanged, {}, 0, 0);
    } else {
      if (report) {
        p.start = Clock::now();
        p.had_parent = pnode != nullptr;
      }
      if (pnode) {
        local.files_changed++;
      } else {
        local.files_new++;
      }
      p.content = QueueFile(walk, child_path, cst);
    }
  }
  walk.entries.push_back(std::move(p));
}

void Backup::AddDirEntry(ChildWalk& walk, Pending p, const std::string& child_name,
                         const struct stat& cst, const VirtualDir* child_virt,
                         const Node* pnode) {
  p.parent = pnode;
  if (opts_.known_tree && !opts_.item_done &&
      (!child_virt || (child_virt->target && child_virt->children.empty()))) {
    if (auto known = opts_.known_tree(p.path, cst)) {
      std::vector<std::string> w;
      p.node = NodeFromStat(p.path, child_name, cst, &w, opts_.with_atime, pnode);
      for (const auto& msg : w) Warn(p.path, msg);
      p.node.subtree = known->tree;
      BackupStats& local = walk.local;
      local.files_unmodified += known->files;
      local.total_files += known->files;
      local.total_bytes += known->bytes;
      local.dirs_unmodified += known->dirs;
      if (opts_.progress) {
        opts_.progress->AddBytes(known->bytes);
        for (uint64_t i = 0; i < known->files; ++i) opts_.progress->FileDone();
      }
      walk.entries.push_back(std::move(p));
      return;
    }
  }
  p.dir = walk_threads_.TryAsync([this, child_path = p.path, child_name, cst, child_virt,
                                   pnode, child_sn = p.sn_path] {
    return SaveDirectory(child_path, child_name, cst, child_virt, pnode, child_sn);
  });
  if (!p.dir.valid()) {
    p.job = StartDirectory(p.path, child_name, cst, child_virt, pnode, p.sn_path, nullptr);
    walk.open.push_back(walk.entries.size());
  }
  walk.entries.push_back(std::move(p));
  auto open_entries = [&walk] {
    size_t n = 0;
    for (size_t i : walk.open) n += walk.entries[i].job->children->walk.entries.size();
    return n;
  };
  while (walk.open.size() > kOpenSiblings || (!walk.open.empty() && open_entries() > kOpenEntriesMax))
    FinishOldest(walk);
}

bool Backup::Unchanged(const std::string& path, const struct stat& cst, const Node* pnode) {
  const bool check_ctime = !opts_.ignore_ctime && !opts_.ignore_inode;
  const bool check_inode = !opts_.ignore_inode;
  if (opts_.force || !pnode || !SameFileVersion(*pnode, cst, check_ctime, check_inode))
    return false;
  if (opts_.may_reuse && !opts_.may_reuse(path)) return false;
  for (const BlobId& b : pnode->content)
    if (!session_.HasBlob(BlobType::kData, b)) return false;
  return true;
}

PendingContent Backup::QueueFile(ChildWalk& walk, const std::string& path,
                                 const struct stat& cst) {
  if (cst.st_size > kBatchFileMax)
    return PendingContent(pool_.Submit([this, path, cst] { return StoreFile(path, cst); }));
  FileBatch& b = walk.batch;
  if (!b.results) b.results = std::make_shared<BatchResults>();
  b.items.push_back(FileBatch::Item{path, cst});
  PendingContent c(b.results, b.items.size() - 1);
  b.bytes += static_cast<uint64_t>(cst.st_size);
  if (b.items.size() >= kBatchFiles || b.bytes >= kBatchBytes) FlushBatch(walk);
  return c;
}

void Backup::FlushBatch(ChildWalk& walk) {
  if (walk.batch.items.empty()) return;
  auto items = std::make_shared<std::vector<FileBatch::Item>>(std::move(walk.batch.items));
  std::shared_ptr<BatchResults> out = std::move(walk.batch.results);
  out->results.resize(items->size());
  out->errors.resize(items->size());
  walk.batch = FileBatch{};
  auto set = std::make_shared<std::promise<void>>();
  out->done = set->get_future().share();
  pool_.Post([this, items, out, set] {
    for (size_t i = 0; i < items->size(); ++i) {
      try {
        out->results[i] = StoreFile((*items)[i].path, (*items)[i].st);
      } catch (...) {
        out->errors[i] = std::current_exception();
      }
    }
    set->set_value();
  });
}

FileResult Backup::StoreFile(const std::string& path, const struct stat& cst) {
  if (opts_.content_for) {
    FileResult r;
    try {
      if (auto bytes = opts_.content_for(path, cst)) {
        r.size = bytes->size();
        r.content = SaveBytes(*bytes, &r.added);
        if (opts_.item_done) r.done = Clock::now();
        return r;
      }
    } catch (const Error& e) {
      r.error = e.what();
      return r;
    }
  }
  return SaveFile(path, &cst);
}

std::vector<Node> Backup::CollectNodes(ChildWalk& walk) {
  while (!walk.open.empty()) FinishOldest(walk);
  BackupStats& local = walk.local;
  std::vector<Node> nodes;
  nodes.reserve(walk.entries.size());
  for (Pending& p : walk.entries) {
    if (p.dir.valid()) p.node = p.dir.get();
    if (p.node.type == NodeType::kDir) {
      const Node* pnode = p.parent;
      if (!pnode) {
        local.dirs_new++;
      } else if (pnode->subtree && p.node.subtree && *pnode->subtree == *p.node.subtree) {
        local.dirs_unmodified++;
      } else {
        local.dirs_changed++;
      }
    }
    if (p.content.valid()) {
      FileResult fr = p.content.get();
      if (!fr.error.empty()) {
        SourceError(p.path, fr.error);
        walk.clean = false;
        continue;
      }
      p.node.content = std::move(fr.content);
      p.node.size = fr.size;
      if (opts_.item_done) {
        double secs = std::chrono::duration<double>(fr.done - p.start).count();
        opts_.item_done(BackupItem{p.sn_path, false,
                                   p.had_parent ? BackupItem::Action::kModified
                                                : BackupItem::Action::kNew,
                                   secs, fr.added, 0});
      }
      if (fr.changed) walk.clean = false;
      if (fr.changed)
        SourceError(p.path, "file " + p.path +
                                " changed while it was read, twice: stored as read, which may "
                                "mix old and new content");
    }
    nodes.push_back(std::move(p.node));
  }
  return nodes;
}

void Backup::AddExtraFiles(std::vector<Node>& nodes) {
  auto list = opts_.extra_files();
  std::map<std::string, std::string> files(list.begin(), list.end());
  for (Node& n : ExtraNodes(files, "")) {
    for (const Node& have : nodes)
      if (have.name == n.name)
        Fail(ErrorCode::kFatal, "in-memory entry /" + n.name + " collides with a tracked path");
    nodes.push_back(std::move(n));
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const Node& a, const Node& b) { return a.name < b.name; });
}

std::optional<FileId> Backup::FindParent(const std::vector<std::string>& abs_paths,
                                         const std::string& host,
                                         const gojson::Timestamp& limit) {
  auto snaps = repo_.LoadSnapshots();
  for (auto it = snaps.rbegin(); it != snaps.rend(); ++it) {
    const Snapshot& s = it->second;
    // Not newer than the new snapshot's time (restic: --time moves this limit too).
    if (s.hostname != host || s.time.sec > limit.sec ||
        (s.time.sec == limit.sec && s.time.nsec > limit.nsec))
      continue;
    std::vector<std::string> p = s.paths;
    std::sort(p.begin(), p.end());
    if (p == abs_paths) return it->first;
  }
  return std::nullopt;
}

Snapshot Backup::NewSnapshot() const {
  Snapshot snap;
  snap.time = opts_.time ? *opts_.time : NowLocal();
  snap.hostname = opts_.host.empty() ? HostName() : opts_.host;
  snap.username = CurrentUserName();
  snap.uid = getuid();
  snap.gid = getgid();
  snap.tags = opts_.tags;
  snap.excludes = opts_.exclude_strings;
  snap.program_version = opts_.program_version;
  return snap;
}

BlobId Backup::SaveStdin(const Snapshot& snap) {
  Node n;
  n.name = opts_.stdin_filename;
  n.type = NodeType::kFile;
  n.mode = 0644;
  n.mtime = n.atime = n.ctime = snap.time;
  n.uid = snap.uid;
  n.gid = snap.gid;
  n.user = UserNameOf(n.uid);
  n.group = GroupNameOf(n.gid);
  FileResult fr = pool_.Submit([this] { return SaveFile("-"); }).get();
  if (!fr.error.empty()) Fail(ErrorCode::kFatal, fr.error);
  n.content = std::move(fr.content);
  n.size = fr.size;
  {
    MutexLock lock(warn_mu_);
    stats_.files_new++;
    stats_.total_files++;
    stats_.total_bytes += n.size;
  }
  return SaveTree({std::move(n)});
}

VirtualDir Backup::TargetTree(std::vector<std::string>* abs_paths) const {
  VirtualDir top;
  top.fs_path = "/";
  for (const std::string& t : opts_.targets) {
    struct stat st;
    if (lstat(t.c_str(), &st) != 0)
      Fail(ErrorCode::kFatal, "unable to back up " + t + ": " + strerror(errno));
    std::string abs = AbsoluteTargetPath(t);
    abs_paths->push_back(abs);
    auto comps = TargetComponents(t[0] == '/' ? abs : t);
    if (comps.empty()) comps = TargetComponents(abs);
    // Real file-system path of each component: the absolute path's tail.
    auto abs_comps = TargetComponents(abs);
    size_t base = abs_comps.size() - comps.size();
    VirtualDir* cur = &top;
    std::string fs = "";
    for (size_t i = 0; i < base; ++i) fs += "/" + abs_comps[i];
    for (size_t i = 0; i < comps.size(); ++i) {
      fs += "/" + abs_comps[base + i];
      if (cur->target) break;
      VirtualDir& child = cur->children[comps[i]];
      child.fs_path = fs;
      cur = &child;
    }
    cur->target = true;
    cur->children.clear();
  }
  std::sort(abs_paths->begin(), abs_paths->end());
  abs_paths->erase(std::unique(abs_paths->begin(), abs_paths->end()), abs_paths->end());
  return top;
}

void Backup::LoadParentSnapshot(const FileId& parent) {
  parent_tree_ =
      Snapshot::Parse(repo_.LoadJson(FileType::kSnapshot, parent), parent.Hex()).tree;
}

void Backup::MakeExcluder(const std::vector<std::string>& abs_paths) {
  if (!rules_.by_name() && !rules_.by_stat()) return;
  std::function<void(const std::string&)> notice;
  if (opts_.notice)
    notice = [this](const std::string& msg) {
      MutexLock lock(notice_mu_);
      opts_.notice(msg);
    };
  excluder_ = std::make_unique<Excluder>(rules_, abs_paths, std::move(notice));
}

void Backup::ReportWarnings() {
  MutexLock lock(warn_mu_);
  std::stable_sort(warnings_.begin(), warnings_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [path, msg] : warnings_) {
    if (opts_.warn_item) {
      opts_.warn_item(path, msg);
    } else if (opts_.warn) {
      opts_.warn(msg);
    }
  }
}

BackupResult Backup::Run() {
  BackupResult res;
  Snapshot snap = NewSnapshot();
  if (opts_.stdin_mode) {
    res.tree = SaveStdin(snap);
    snap.paths = {"/" + opts_.stdin_filename};
  } else {
    if (opts_.targets.empty()) Fail(ErrorCode::kInvalidArgument, "nothing to back up");
    std::vector<std::string> abs_paths;
    VirtualDir top = TargetTree(&abs_paths);
    snap.paths = abs_paths;
    if (opts_.parent) {
      res.parent = opts_.parent;
    } else if (!opts_.force) {
      res.parent = FindParent(abs_paths, snap.hostname, snap.time);
    }
    // The parent's root directory, read when first needed (with the folder state, an
    // unchanged backup reads no tree of the parent, and no index).
    std::function<ParentDir()> load_root = [] { return ParentDir{}; };
    if (res.parent) {
      LoadParentSnapshot(*res.parent);
      load_root = [this] {
        Node fake;
        fake.type = NodeType::kDir;
        fake.subtree = parent_tree_;
        return ParentChildren(&fake);
      };
    }
    MakeExcluder(abs_paths);
    OpenFolderState(abs_paths, snap.hostname, res.parent);
    res.folder_state_used = state_.has_value();
    root_virt_ = &top;
    res.tree = SaveChildren("/", &top, std::move(load_root), "", nullptr);
  }
  snap.tree = res.tree;
  snap.parent = res.parent;
  session_.Flush();
  ReportWarnings();
  {
    MutexLock lock(warn_mu_);
    res.stats = stats_;
    res.incomplete = stats_.errors > 0;
  }
  res.skipped = opts_.skip_if_unchanged && parent_tree_ && *parent_tree_ == res.tree;
  if (opts_.save_snapshot && !res.skipped) {
    ScopedTimer t(Stage::kSnapshot);
    res.snapshot_id = repo_.SaveJson(FileType::kSnapshot, snap.ToJson());
  }
  res.dirs_reused = dirs_reused_;
  if (collect_state_) {
    const FileId named = res.skipped ? *res.parent : res.snapshot_id;
    if (!named.IsZero()) SaveFolderStateFor(named, res.tree);
  }
  return res;
}

}  // namespace

BackupResult RunBackup(WriteSession& session, const BackupOptions& opts, bool) {
  Backup b(session, opts);
  return b.Run();
}

}  // namespace haven
