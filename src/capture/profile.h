// The capture profile (TOML, default ~/.config/haven/capture.toml); docs/capture-profile.md
// is the reference. In short:
//
//   repository = "/srv/haven"          # optional; else -r / HAVEN_REPOSITORY
//   [track]
//   paths   = ["~/.bashrc", "~/.config/nvim", "~/.ssh/config", "~/.config/*.toml"]
//   exclude = ["~/.config/nvim/undo", "*.swp"]      # restic patterns
//   [secrets]
//   mode = "block"                      # or "warn"
//   allow_paths = ["~/.config/app/test-fixtures/*"]
//   allow_rules = ["jwt"]
//   allow_fingerprints = ["0123456789abcdef"]
//   [packages]
//   managers = ["dpkg", "apt", "pip", "npm", "flatpak", "snap"]   # default: all found
//   timeout = 120                       # seconds per manager
//
// Unknown keys are errors (a typo must not silently track nothing). `~` expands to the
// home directory given to Parse.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capture/scanner.h"

namespace haven::capture {

enum class SecretMode { kBlock, kWarn };

struct Profile {
  std::string repository;
  std::vector<std::string> track;    // ~ expanded, may hold globs
  std::vector<std::string> exclude;  // ~ expanded restic patterns
  SecretMode mode = SecretMode::kBlock;
  ScanAllow allow;                   // path globs ~ expanded
  std::optional<std::vector<std::string>> managers;  // nullopt = every supported one found
  int package_timeout_s = 120;
  std::string text;  // the TOML as parsed (a capture stores it as /.haven/profile.toml)
  std::string name;  // where it came from (file name), for messages

  // Throws kInvalidArgument naming `name`, the line and the column.
  static Profile Parse(std::string_view toml, const std::string& home, const std::string& name);
  static Profile Load(const std::string& file, const std::string& home);
};

// $XDG_CONFIG_HOME/haven/capture.toml, else <home>/.config/haven/capture.toml.
std::string DefaultProfilePath(const std::string& home);

// Tracked paths: globs expanded (no match = nothing), sorted, duplicates and paths inside
// another tracked directory dropped. A literal path that does not exist adds a warning.
std::vector<std::string> ExpandTracked(const std::vector<std::string>& patterns,
                                       std::vector<std::string>* warnings);

}  // namespace haven::capture
