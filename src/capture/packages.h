// Package discovery: what the native package managers say is installed, as stable text
// (one package a line, "name<TAB>version[<TAB>extra]", sorted bytewise, unique), one file
// per list under /.haven/packages/ of a capture. Each manager runs as a child process in
// its own process group with a timeout (then the group is killed): a missing manager is
// skipped quietly, a failing or hanging one is a warning, never a hang.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace haven::capture {

struct PackageList {
  std::string manager;  // "dpkg", "apt", "pip", "npm", "flatpak", "snap"
  std::string file;     // "dpkg.txt", "apt-manual.txt", "pip.txt", "pip-user.txt", ...
  std::vector<std::string> lines;
};

// Every supported manager name, in output order.
const std::vector<std::string>& SupportedManagers();
// The manager a list file belongs to ("" when unknown).
std::string ManagerOfFile(std::string_view file);

struct DiscoveryOptions {
  std::optional<std::vector<std::string>> managers;  // nullopt = every supported one on PATH
  int timeout_ms = 120000;
  const std::atomic<bool>* cancel = nullptr;  // set: kill running managers and return
};

struct DiscoveryResult {
  std::vector<PackageList> lists;     // sorted by file name
  std::vector<std::string> warnings;  // sorted
};

// Runs the managers concurrently (one thread each). Unknown names in opts.managers throw
// kInvalidArgument.
DiscoveryResult DiscoverPackages(const DiscoveryOptions& opts);

struct RunResult {
  int exit_code = -1;  // -1: killed by a signal or the timeout
  bool timed_out = false, cancelled = false;
  std::string out, err;
};
// Runs argv[0] (an absolute path) with stdin from /dev/null; output is capped at 64 MiB.
RunResult RunWithTimeout(const std::vector<std::string>& argv, int timeout_ms,
                         const std::atomic<bool>* cancel = nullptr);
// The executable's absolute path on $PATH, or "".
std::string FindOnPath(const std::string& exe);

// Parsers of each manager's output (untrusted: fuzzed in packages_fuzz.cc).
std::vector<std::string> ParseDpkgQuery(std::string_view out);  // name \t version \t status
std::vector<std::string> ParseNameList(std::string_view out);   // apt-mark showmanual
std::vector<std::string> ParsePipFreeze(std::string_view out);
std::vector<std::string> ParseNpmParseable(std::string_view out);
std::vector<std::string> ParseFlatpakColumns(std::string_view out);
std::vector<std::string> ParseSnapList(std::string_view out);

// A list file's text (sorted unique lines, each ending in \n) and back.
std::string RenderPackageList(std::vector<std::string> lines);
std::vector<std::string> ParsePackageList(std::string_view text);

// "sudo apt-get install -y a b" etc. for the missing package lines of one list file.
std::string InstallCommand(std::string_view file, const std::vector<std::string>& lines);

}  // namespace haven::capture
