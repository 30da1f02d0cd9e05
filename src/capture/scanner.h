// The secret scanner: every content rule of rules.h in one Hyperscan pass over a file's
// bytes (binary files, LooksBinary, only against the key-block rules), then per match: the secret is extracted with the same expression, checked
// against its entropy threshold, the published examples and placeholder shapes, and an
// inline `haven:allow` on its line. Path rules name files that are secrets by their path.
// Files that start with an encryption header (age, armored PGP message, ansible-vault)
// have no findings. A Scanner is immutable after construction and thread-safe.
#pragma once

#include <sys/stat.h>

#include <cstddef>
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

// Files are scanned in windows of this many bytes (plus margins), so memory does not grow
// with the file; the findings equal those of one pass over the whole file.
inline constexpr size_t kDefaultScanWindow = 4 << 20;

class ByteSource;

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
  // The same in windows of `window` bytes (tests compare it with the above).
  std::vector<Finding> Scan(std::string_view path, std::string_view content, size_t window) const;
  // Reads the file (no symlink following) and scans it. With `content`, the whole file is
  // read into *content first; without, it is read window by window (memory stays about
  // kDefaultScanWindow + 256 KiB whatever the file's size). *size gets the bytes read,
  // *after the file's stat once the read reached its end. size_hint: the size the caller
  // expects (ReadWholeFile's; 0: unknown). Throws kIo when the file cannot be read.
  std::vector<Finding> ScanFile(const std::string& path, std::string* content = nullptr,
                                uint64_t* size = nullptr, struct stat* after = nullptr,
                                uint64_t size_hint = 0) const;

  // Only the content rules over a buffer, for benchmarks: number of raw matches.
  uint64_t CountMatches(std::string_view content, bool binary) const;

 private:
  std::vector<Finding> ScanSource(std::string_view path, ByteSource& src, size_t window) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when the first 8 KiB of `content` hold a NUL byte and more than 10% of bytes that
// text does not hold (control characters other than \t \n \v \f \r ESC, bytes outside
// valid UTF-8): a text file with a stray NUL is still text.
bool LooksBinary(std::string_view content);
// Which rules a file's content gets (scan version 14): text gets every rule; a binary file
// the key-block rules and the fixed token formats (a token in a SQLite database, a LevelDB
// log, a binary property list); an opaque one (OpaqueFormat) the key-block rules alone.
enum class ScanKind { kText, kBinary, kOpaque };
// True when a binary file's first bytes are those of an executable (ELF, Mach-O, PE),
// compressed data or an archive (gzip, xz, zstd, bzip2, zip, 7z), an image, a font or media.
bool OpaqueFormat(std::string_view head);
// Shannon entropy in bits per byte.
double Entropy(std::string_view s);
// "path:" prefixed text where bytes outside printable ASCII are escaped as \xNN.
std::string SanitizeForTerminal(std::string_view s);

}  // namespace haven::capture
