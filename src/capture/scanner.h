// The secret scanner: every content rule of rules.h in one Hyperscan pass over a file's
// bytes (binary files, those with a NUL in their first 8 KiB, only against the key-block
// rules), then per match: the secret is extracted with the same expression, checked
// against its entropy threshold, the published examples and placeholder shapes, and an
// inline `haven:allow` on its line. Path rules name files that are secrets by their path.
// Files that start with an encryption header (age, armored PGP message, ansible-vault)
// have no findings. A Scanner is immutable after construction and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace haven::capture {

struct Finding {
  std::string path;         // as given to the scanner
  uint64_t line = 0;        // 1-based; path rules report line 1, column 1
  uint64_t column = 0;      // 1-based byte column
  std::string rule;
  std::string fingerprint;  // 16 hex of SHA-256(rule, secret): stable, reveals nothing useful
  std::string excerpt;      // the match with the secret redacted, printable ASCII only

  // "path:line:col: rule: excerpt" (the path printed as is).
  std::string Text() const;
  // {"path":..,"line":..,"column":..,"rule":..,"fingerprint":..} without a newline.
  std::string Json() const;
};

// Path bytes, then line, column, rule: the order every report uses.
bool FindingLess(const Finding& a, const Finding& b);

// What a scan lets through besides the rules (the profile's [secrets] allowlists).
struct ScanAllow {
  std::vector<std::string> path_globs;    // fnmatch on the whole path, or on its tail
  std::vector<std::string> rules;         // rule ids
  std::vector<std::string> fingerprints;  // Finding::fingerprint values
  bool Allows(const Finding& f) const;
  std::string Digest() const;  // 8 hex over the lists (sorted), for the scan-version tag
};

class Scanner {
 public:
  // Compiles the Hyperscan databases (about 0.6 s), or loads them from `cache_dir` when a
  // copy for this rule table, Hyperscan version and CPU is there (a few ms); a fresh
  // compile is written back. "" = no cache. kFatal if Hyperscan refuses the rules.
  explicit Scanner(const std::string& cache_dir = "");
  ~Scanner();
  Scanner(const Scanner&) = delete;
  Scanner& operator=(const Scanner&) = delete;

  // Findings for `content` of the file `path` (path rules included), sorted by FindingLess.
  std::vector<Finding> Scan(std::string_view path, std::string_view content) const;
  // Reads the file (no symlink following) and scans it. The bytes read are returned in
  // *content when it is not null. Throws kIo when the file cannot be read.
  std::vector<Finding> ScanFile(const std::string& path, std::string* content = nullptr) const;

  // Only the content rules over a buffer, for benchmarks: number of raw matches.
  uint64_t CountMatches(std::string_view content, bool binary) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when the first 8 KiB of `content` hold a NUL byte.
bool LooksBinary(std::string_view content);
// Shannon entropy in bits per byte.
double Entropy(std::string_view s);
// "path:" prefixed text where bytes outside printable ASCII are escaped as \xNN.
std::string SanitizeForTerminal(std::string_view s);

}  // namespace haven::capture
