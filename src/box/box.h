// The box's archive verbs on a repository kept in one SQLite file (docs/box.md). Every
// change (add, rm, mv) is one new snapshot whose tree is the previous snapshot's tree with
// the change applied (tree_edit.h), written in the box's single transaction and committed
// at the end: a crash leaves the box at its previous state.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "archiver/archiver.h"
#include "backend/box_backend.h"
#include "repo/indexed_repository.h"
#include "repo/node.h"
#include "repo/snapshot.h"
#include "repo/write_session.h"
#include "restorer/restorer.h"

namespace haven::box {

// How a box is opened: a password (scrypt as for every repository), or a random 256-bit
// key given as 64 hex digits, which is the password of key files with minimal scrypt cost
// (docs/box.md §5).
struct Secret {
  std::string value;
  bool is_key = false;
};
// The --key value: exactly 64 hex digits (case-insensitive). The key is never echoed.
Secret KeySecret(std::string_view hex);
// The scrypt parameters of a new key file for `s`.
crypto::ScryptParams KeyParams(const Secret& s);

struct AddOptions {
  int jobs = 1;
  WriteOptions write;  // pack size, compression
  std::function<void(const std::string&)> warn;
};

// Wall seconds of one change (HAVEN_IMPORT_TIMINGS=1): the whole change, the last packs
// and the index written (flush), SQLite's COMMIT, the checkpoint after it.
struct ChangeTimes {
  double total = 0, flush = 0, commit = 0, checkpoint = 0;
};

struct ChangeResult {
  FileId snapshot;
  BlobId tree;
  size_t trees_written = 0;  // trees rewritten on the path to the change
  BackupStats stats;         // add only
  bool incomplete = false;   // add: some source files could not be read
  ChangeTimes times;
};

// HAVEN_IMPORT_TIMINGS' line for an add: "import timings: add 3.10s | commit 0.40s (...)
// | read 0.10s | prepare 5.20 worker-s (chunk .. hash .. compress .. seal ..) | write
// 0.90 worker-s". read, prepare and write are the pipeline's stage sums (core/timings.h).
std::string ImportTimingsLine(const ChangeTimes& t);

struct Entry {
  std::string path;  // in the box, starting with '/'
  Node node;
};

struct LogEntry {
  FileId id;
  Snapshot snapshot;
  std::string action;  // "create", "add", "rm", "mv", or "snapshot" (not made by box verbs)
};

struct ExtractOptions {
  std::string target;
  bool overwrite = false;  // replace existing files (default: keep them)
  // No owner set and no stored mode applied: default modes (restorer.h no_permissions).
  bool no_permissions = false;
  int jobs = 1;
  std::function<void(const std::string&)> warn;  // errors (counted)
  std::function<void(const std::string&)> note;  // kept files, resolved conflicts
};

struct ExtractResult {
  RestoreResult restore;
  size_t kept = 0;  // existing files left as they were
};

class Box {
 public:
  // A new box at `path` (kFatal if one exists there): a repository (format 2) with one key
  // for `secret` and a first, empty snapshot. `storage` is the backend to write through
  // (the box itself or a decorator over it).
  static void Create(std::shared_ptr<BoxBackend> box, std::shared_ptr<Backend> storage,
                     const Secret& secret, int jobs);
  static std::unique_ptr<Box> Open(std::shared_ptr<BoxBackend> box,
                                   std::shared_ptr<Backend> storage, const Secret& secret,
                                   int jobs);

  // SOURCE (a file or directory tree) stored at `dest` in the box ("" = "/" + its name),
  // replacing what was there.
  ChangeResult Add(const std::string& source, const std::string& dest, const AddOptions& o);
  ChangeResult Remove(const std::string& path);
  // `from` moved to `to`; into `to` when that is a directory.
  ChangeResult Move(const std::string& from, const std::string& to);

  // The entries at and below `path` (all when "" or "/"), in tree order.
  std::vector<Entry> List(const std::string& path);
  // One file's bytes, blob by blob (only that file's blobs are read).
  void Cat(const std::string& path, const std::function<void(ByteView)>& out);
  // `path` (a file or directory; "" = everything) under opts.target, as target/<name>.
  ExtractResult Extract(const std::string& path, const ExtractOptions& opts);
  // The snapshots, oldest first.
  std::vector<LogEntry> Log();

  // The repository's files copied into a new directory repository at `dir` (restic opens
  // it with the same password).
  void Export(const std::string& dir);
  // A directory repository copied into a new box (one transaction).
  static void Import(const std::string& dir, std::shared_ptr<BoxBackend> box);

  IndexedRepository& repo() { return *repo_; }
  // The newest snapshot (nullopt for a box without one) and its tree.
  const std::optional<FileId>& head() const { return head_; }

 private:
  Box() = default;
  BlobId HeadTree(WriteSession& s);
  ChangeResult Commit(WriteSession& s, const BlobId& tree, const std::string& action,
                      std::vector<std::string> paths, size_t trees_written);

  std::shared_ptr<BoxBackend> box_;
  std::unique_ptr<IndexedRepository> repo_;
  int jobs_ = 1;
  std::optional<FileId> head_;
  BlobId head_tree_;
};

}  // namespace haven::box
