#include "box/box.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <utility>

#include "backend/local_backend.h"
#include "box/tree_edit.h"
#include "core/deep_stack.h"
#include "core/error.h"
#include "core/timings.h"
#include "repo/blob_stream.h"
#include "repo/host_info.h"
#include "repo/tree_path.h"
#include "repo/write_session.h"

namespace haven::box {

namespace {

constexpr const char* kTagPrefix = "box-";

// A pattern (core/path_match: fnmatch without FNM_NOESCAPE) that matches exactly `path`.
std::string LiteralPattern(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string JoinPath(const std::vector<std::string>& comps) {
  std::string p;
  for (const std::string& c : comps) p += "/" + c;
  return p.empty() ? "/" : p;
}

void CopyObjects(Backend& from, Backend& to) {
  // Packs first and the config last: a copy cut short is no repository at all.
  for (FileType t : {FileType::kPack, FileType::kIndex, FileType::kKey, FileType::kSnapshot}) {
    std::vector<FileInfo> all;
    from.List(t, [&](const FileInfo& fi) { all.push_back(fi); });
    for (const FileInfo& fi : all) {
      Handle h{t, fi.name};
      to.Save(h, from.Load(h));
    }
  }
  Handle config{FileType::kConfig, "config"};
  to.Save(config, from.Load(config));
}

}  // namespace

Secret KeySecret(std::string_view hex) {
  bool ok = hex.size() == 64;
  for (char c : hex) ok = ok && std::isxdigit(static_cast<unsigned char>(c));
  if (!ok)
    Fail(ErrorCode::kInvalidArgument, "--key wants 64 hex digits (a random 256-bit key)");
  Secret s;
  s.is_key = true;
  for (char c : hex) s.value += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

crypto::ScryptParams KeyParams(const Secret& s) {
  // A random 256-bit key cannot be guessed whatever the KDF costs: the smallest valid
  // parameters (docs/box.md §5). A password gets restic's defaults.
  if (s.is_key) return crypto::ScryptParams{2, 1, 1};
  return crypto::ScryptParams{32768, 8, 4};
}

void Box::Create(std::shared_ptr<BoxBackend> box, std::shared_ptr<Backend> storage,
                 const Secret& secret, int jobs) {
  if (box->Exists()) Fail(ErrorCode::kFatal, "box " + box->path() + " already exists");
  storage->Create();
  Repository::Init(*storage, secret.value, 2, KeyParams(secret), jobs);
  auto b = Open(box, storage, secret, jobs);
  WriteSession s(*b->repo_);
  BlobId root = TreeEditor(s).EmptyTree();
  b->Commit(s, root, "create", {"/"}, 1);
}

std::unique_ptr<Box> Box::Open(std::shared_ptr<BoxBackend> box,
                               std::shared_ptr<Backend> storage, const Secret& secret,
                               int jobs) {
  if (!box->Exists())
    Fail(ErrorCode::kNoRepository, "box " + box->path() + " does not exist");
  std::unique_ptr<Box> b(new Box());
  b->box_ = std::move(box);
  b->jobs_ = jobs;
  auto opened = Repository::Open(std::move(storage), secret.value, jobs);
  b->repo_ = IndexedRepository::Load(*opened);
  auto snaps = b->repo_->LoadSnapshots();
  if (!snaps.empty()) {
    b->head_ = snaps.back().first;
    b->head_tree_ = snaps.back().second.tree;
  }
  return b;
}

BlobId Box::HeadTree(WriteSession& s) {
  if (head_) return head_tree_;
  return TreeEditor(s).EmptyTree();  // a repository without snapshots (haven init)
}

std::string ImportTimingsLine(const ChangeTimes& t) {
  auto sec = [](Stage s) { return Timings::Seconds(s); };
  const double prepare =
      sec(Stage::kChunk) + sec(Stage::kHash) + sec(Stage::kCompress) + sec(Stage::kSeal);
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "import timings: add %.3fs | commit %.3fs (flush %.3f, sqlite commit %.3f, "
                "checkpoint %.3f) | read %.3fs | prepare %.3f worker-s (chunk %.3f hash %.3f "
                "compress %.3f seal %.3f) | write %.3f worker-s",
                t.total, t.flush + t.commit + t.checkpoint, t.flush, t.commit, t.checkpoint,
                sec(Stage::kRead), prepare, sec(Stage::kChunk), sec(Stage::kHash),
                sec(Stage::kCompress), sec(Stage::kSeal), sec(Stage::kWrite));
  return buf;
}

ChangeResult Box::Commit(WriteSession& s, const BlobId& tree, const std::string& action,
                         std::vector<std::string> paths, size_t trees_written) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  s.Flush();
  const double flush = std::chrono::duration<double>(Clock::now() - start).count();
  Snapshot snap;
  snap.time = NowLocal();
  snap.parent = head_;
  snap.tree = tree;
  snap.paths = std::move(paths);
  snap.hostname = HostName();
  snap.username = CurrentUserName();
  snap.uid = getuid();
  snap.gid = getgid();
  snap.tags = {kTagPrefix + action};
  snap.program_version = "haven box";
  repo_->CheckLock();
  ChangeResult r;
  r.snapshot = repo_->SaveJson(FileType::kSnapshot, snap.ToJson());
  r.tree = tree;
  r.trees_written = trees_written;
  box_->Commit();
  const BoxBackend::CommitTimes ct = box_->LastCommitTimes();
  r.times.flush = flush;
  r.times.commit = ct.commit;
  r.times.checkpoint = ct.checkpoint;
  head_ = r.snapshot;
  head_tree_ = tree;
  return r;
}

ChangeResult Box::Add(const std::string& source, const std::string& dest, const AddOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  std::string abs = AbsoluteTargetPath(source);
  std::vector<std::string> src_comps = TargetComponents(abs);
  if (src_comps.empty()) Fail(ErrorCode::kInvalidArgument, "cannot add / to a box");
  struct stat st;
  if (::lstat(abs.c_str(), &st) != 0)
    Fail(ErrorCode::kNotFound, "cannot add " + source + ": it does not exist");
  std::vector<std::string> to =
      BoxPathComponents(dest.empty() ? "/" + src_comps.back() : dest);
  if (to.empty()) Fail(ErrorCode::kInvalidArgument, "cannot add as the root of the box");

  WriteSession s(*repo_, o.write);
  BackupOptions b;
  b.targets = {abs};
  b.force = true;
  b.save_snapshot = false;
  b.jobs = o.jobs;
  b.warn = o.warn;
  BackupResult br = RunBackup(s, b, false);
  TreePath tp = FindTreePath(*repo_, br.tree, src_comps);
  if (!tp.found())
    Fail(ErrorCode::kFatal, "cannot add " + source + ": it could not be read");
  TreeEditor ed(s);
  BlobId root = ed.Put(HeadTree(s), to, tp.nodes.back());
  ChangeResult r = Commit(s, root, "add", {JoinPath(to)}, ed.trees_written());
  r.stats = br.stats;
  r.incomplete = br.incomplete;
  r.times.total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

ChangeResult Box::Remove(const std::string& path) {
  std::vector<std::string> comps = BoxPathComponents(path);
  WriteSession s(*repo_);
  TreeEditor ed(s);
  BlobId root = ed.Remove(HeadTree(s), comps);
  return Commit(s, root, "rm", {JoinPath(comps)}, ed.trees_written());
}

ChangeResult Box::Move(const std::string& from, const std::string& to) {
  std::vector<std::string> a = BoxPathComponents(from), b = BoxPathComponents(to);
  if (a.empty() || b.empty()) Fail(ErrorCode::kInvalidArgument, "cannot move the root of a box");
  WriteSession s(*repo_);
  BlobId head = HeadTree(s);
  TreePath src = FindTreePath(*repo_, head, a);
  if (!src.found()) Fail(ErrorCode::kNotFound, "no " + JoinPath(a) + " in the box");
  TreePath dst = FindTreePath(*repo_, head, b);
  if (dst.found()) {
    if (!dst.DirTree())
      Fail(ErrorCode::kFatal, JoinPath(b) + " exists in the box (remove it first)");
    b.push_back(a.back());
    if (FindTreePath(*repo_, head, b).found())
      Fail(ErrorCode::kFatal, JoinPath(b) + " exists in the box (remove it first)");
  }
  if (b.size() >= a.size() && std::equal(a.begin(), a.end(), b.begin()))
    Fail(ErrorCode::kInvalidArgument, "cannot move " + JoinPath(a) + " into itself");
  TreeEditor ed(s);
  BlobId root = ed.Put(ed.Remove(head, a), b, src.nodes.back());
  return Commit(s, root, "mv", {JoinPath(a), JoinPath(b)}, ed.trees_written());
}

namespace {

// A box made elsewhere is untrusted: names that would fake paths in the listing are left
// out, and so is anything nested deeper than restore goes (TreeLevel: the same limit).
void Walk(IndexedRepository& repo, const BlobId& tree, const std::string& prefix,
          std::vector<Entry>& out, int& depth) {
  TreeLevel level(depth, prefix);
  for (Node& n : repo.LoadTree(tree)) {
    if (!SafeNodeName(n.name))
      Fail(ErrorCode::kCorrupt, "box tree below " + (prefix.empty() ? "/" : prefix) +
                                    " holds an unsafe name");
    std::string p = prefix + "/" + n.name;
    std::optional<BlobId> sub = n.type == NodeType::kDir ? n.subtree : std::nullopt;
    out.push_back(Entry{p, std::move(n)});
    if (sub) Walk(repo, *sub, p, out, depth);
  }
}

}  // namespace

std::vector<Entry> Box::List(const std::string& path) {
  std::vector<std::string> comps = BoxPathComponents(path);
  std::vector<Entry> out;
  if (!head_) return out;
  TreePath tp = FindTreePath(*repo_, head_tree_, comps);
  if (!tp.found()) Fail(ErrorCode::kNotFound, "no " + JoinPath(comps) + " in the box");
  int depth = 0;
  if (comps.empty()) {
    RunOnDeepStack([&] { Walk(*repo_, head_tree_, "", out, depth); });
    return out;
  }
  out.push_back(Entry{JoinPath(comps), tp.nodes.back()});
  if (auto sub = tp.DirTree()) RunOnDeepStack([&] { Walk(*repo_, *sub, JoinPath(comps), out, depth); });
  return out;
}

void Box::Cat(const std::string& path, const std::function<void(ByteView)>& out) {
  std::vector<std::string> comps = BoxPathComponents(path);
  TreePath tp = head_ ? FindTreePath(*repo_, head_tree_, comps) : TreePath{};
  if (!head_ || !tp.found() || comps.empty())
    Fail(ErrorCode::kNotFound, "no file " + JoinPath(comps) + " in the box");
  const Node& n = tp.nodes.back();
  if (n.type != NodeType::kFile)
    Fail(ErrorCode::kInvalidArgument, JoinPath(comps) + " in the box is not a file");
  // Read ahead on --jobs workers, written in order: a 256 MiB file took 1.25 s blob by
  // blob, each in a fresh buffer (1.24 CPU-s, 0.57 of them page faults).
  ForEachBlobInOrder(*repo_, n.content, jobs_, out);
}

ExtractResult Box::Extract(const std::string& path, const ExtractOptions& opts) {
  std::vector<std::string> comps = BoxPathComponents(path);
  if (!head_) Fail(ErrorCode::kNotFound, "the box is empty");
  TreePath tp = FindTreePath(*repo_, head_tree_, comps);
  if (!tp.found()) Fail(ErrorCode::kNotFound, "no " + JoinPath(comps) + " in the box");
  // The tree to restore: the root, or the parent of `path` with only that entry included.
  BlobId tree = comps.empty() ? head_tree_ : tp.parents.back();
  RestoreOptions ro;
  ro.target = opts.target;
  ro.jobs = opts.jobs;
  ro.warn = opts.warn;
  ro.note = opts.note;
  if (!comps.empty()) {
    ro.includes = PatternList({LiteralPattern("/" + comps.back())});
  }
  // Existing entries are kept (never written through) unless --overwrite, which replaces
  // what differs (restorer/restorer.h Overwrite).
  ro.overwrite = opts.overwrite ? Overwrite::kAlways : Overwrite::kNever;
  ro.no_permissions = opts.no_permissions;
  ExtractResult r;
  r.restore = RunRestore(*repo_, tree, ro);
  r.kept = r.restore.skipped;
  return r;
}

std::vector<LogEntry> Box::Log() {
  std::vector<LogEntry> out;
  for (auto& [id, snap] : repo_->LoadSnapshots()) {
    LogEntry e{id, snap, "snapshot"};
    for (const std::string& t : snap.tags)
      if (t.rfind(kTagPrefix, 0) == 0) e.action = t.substr(4);
    out.push_back(std::move(e));
  }
  return out;
}

void Box::Export(const std::string& dir) {
  LocalBackend to(dir);
  to.Create();
  CopyObjects(repo_->backend(), to);
}

void Box::Import(const std::string& dir, std::shared_ptr<BoxBackend> box) {
  LocalBackend from(dir);
  if (!from.Exists()) Fail(ErrorCode::kNoRepository, "no repository at " + dir);
  if (box->Exists()) Fail(ErrorCode::kFatal, "box " + box->path() + " already exists");
  box->Create();
  CopyObjects(from, *box);
  box->Commit();
}

}  // namespace haven::box
