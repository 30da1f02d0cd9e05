// `haven apply`: puts a capture's tracked files back. Paths under the captured home
// (tag haven-home:<dir>) go under `home` (default: $HOME); others keep their absolute path.
// Everything lands under `target` ("/" = in place). Each entry is created through
// directory file descriptors opened component by component with O_NOFOLLOW, so a symlink
// on the way (or a name like "..") cannot lead outside the target: such paths are refused.
// Files are written to a temporary name, given their metadata (mode, owner when allowed,
// xattrs, times), fsynced and renamed over the old file: a reader sees the old or the new file,
// never a mix. A replaced file is kept as <name>.haven-orig (unless no_backup; an existing
// .haven-orig is never overwritten). Files not in the snapshot are never touched, and an
// existing directory is never replaced by a file. /.haven (the package lists) is skipped.
// A tracked directory gets its xattrs and times after its entries are written (the
// directories above the tracked paths, stored with zero times, are left as they are).
#pragma once

#include <functional>
#include <string>

#include "repo/indexed_repository.h"
#include "repo/repository.h"
#include "repo/snapshot.h"

namespace haven::capture {

struct ApplyOptions {
  std::string target = "/";
  std::string home;  // where the captured home goes; "" = the captured home itself
  bool dry_run = false;
  bool no_backup = false;
  // One line per change, in path order: "create P", "update P", "create dir P",
  // "update P (was a symlink)"... P is the destination path.
  std::function<void(const std::string&)> action;
  std::function<void(const std::string&)> warn;
};

struct ApplyResult {
  uint64_t created = 0, updated = 0, unchanged = 0, refused = 0, errors = 0;
};

ApplyResult RunApply(IndexedRepository& repo, const Snapshot& snap, const ApplyOptions& opts);

// The captured home recorded in a capture snapshot's tags ("" when none).
std::string CapturedHome(const Snapshot& snap);

}  // namespace haven::capture
