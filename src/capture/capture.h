// `haven capture`: one snapshot tagged `capture` of the profile's tracked paths plus the
// package lists under /.haven/packages/, gated by the secret scanner.
//
//   1. package discovery starts (its own threads, concurrent with the rest);
//   2. parent = the newest `capture` snapshot of this host; it is trusted only when it
//      carries this scan's tag (ScanTag: rule version + allowlist/mode digest);
//   3. plan: walk the tracked paths (sorted, excludes applied, symlinks not followed);
//      a file unchanged against a trusted parent (size, mtime, ctime, inode, blobs
//      present) is neither read nor scanned (--verify-content re-reads and re-chunks it
//      and compares content ids); every other file is read once and scanned;
//   4. findings not allowed by the profile, sorted by path, line, column: in block mode
//      nothing is written and the result says blocked; in warn mode they are reported;
//   5. the archiver stores exactly the scanned bytes (content_for), reuses the rest, and
//      adds the package lists and the profile (/.haven/profile.toml); the snapshot gets
//      the tags capture, ScanTag, home.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "archiver/archiver.h"
#include "capture/profile.h"
#include "capture/scanner.h"
#include "repo/repository.h"
#include "repo/write_session.h"

namespace haven::capture {

struct CaptureOptions {
  Profile profile;
  std::string home;      // what ~ meant (recorded as the tag haven-home:<home>)
  std::string host;      // "" = this host
  int jobs = 0;
  bool verify_content = false;
  // No snapshot when the tree equals the trusted parent capture's (backup's
  // --skip-if-unchanged); CaptureResult::backup->skipped says so.
  bool skip_if_unchanged = false;
  std::string program_version;
  // Where the capture keeps its state (archiver/folder_state.h: the tree of each directory
  // that the last capture stored, by a key over its entries' stats), normally the repository's
  // folder in the local cache; "" = none (every unchanged file is looked up in the
  // parent's trees and every tree encoded again). Never set for a dry run.
  std::string state_dir;
  std::optional<gojson::Timestamp> time;  // tests
  std::string scan_tag_override;          // tests: record another scan version
  std::function<void()> after_scan;       // tests: called between the scan and the store
  std::function<void(const std::string&)> warn;  // warnings, in a stable order
};

struct CaptureResult {
  bool blocked = false;
  std::vector<Finding> findings;  // not allowed by the profile, sorted (FindingLess)
  std::optional<BackupResult> backup;  // absent when blocked
  std::optional<FileId> parent;
  bool parent_trusted = false;
  uint64_t files = 0;          // regular files tracked
  uint64_t files_scanned = 0;  // read and scanned
  uint64_t files_verified = 0; // re-read by --verify-content
  uint64_t files_read = 0;     // every read of file contents (scan, verify, archiver)
  uint64_t verify_mismatches = 0;
  // Directories whose tree was taken from the state (neither listed by the archiver nor
  // encoded); every file below them counts as unchanged and unread.
  uint64_t dirs_reused = 0;
  bool state_used = false;  // a state of the trusted parent capture was found and opened
  std::vector<std::string> package_files;  // stored under /.haven/packages/
  // The tree id of the home directory inside the snapshot: equal for equal homes, unlike
  // the root tree, which also holds the metadata of the home's parent directories.
  std::optional<BlobId> home_tree;
};

// "haven-scan:<kScanVersion>/<8 hex of the allowlists and mode>".
std::string ScanTag(const Profile& p);
inline constexpr const char* kCaptureTag = "capture";
inline constexpr const char* kHomeTagPrefix = "haven-home:";
inline constexpr const char* kPackagesDir = ".haven/packages";
// The profile the capture used, stored byte for byte (it is scanned like a tracked file).
inline constexpr const char* kProfileFile = ".haven/profile.toml";

// Runs a capture through `session` (into its indexed repository). For a dry run, open the
// repository with a DryRunBackend (cli does, as for backup).
CaptureResult RunCapture(WriteSession& session, const Scanner& scanner, const CaptureOptions& opts);

}  // namespace haven::capture
