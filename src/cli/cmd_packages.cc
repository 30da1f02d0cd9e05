// `haven packages diff [SNAPSHOT]`: a capture's package lists against this machine.
// `haven packages list`: what the managers report here (the text a capture stores).
#include <unistd.h>

#include <cstdio>
#include <set>

#include "capture/apply.h"
#include "capture/capture.h"
#include "capture/package_diff.h"
#include "capture/packages.h"
#include "capture/profile.h"
#include "cli/common.h"
#include "core/error.h"

namespace haven::cli {

std::pair<FileId, Snapshot> ResolveCapture(Repository& repo, const std::string& arg,
                                           const std::string& host);

void RegisterPackages(CLI::App& app) {
  static std::string snapshot, host;
  static int timeout_s = 120;
  auto* cmd = app.add_subcommand("packages", "package lists of captures");
  cmd->require_subcommand(1);
  auto* diff = cmd->add_subcommand("diff", "packages missing or extra here, per manager");
  diff->add_option("snapshot", snapshot, "capture snapshot (default: the newest of this host)");
  diff->add_option("-H,--host", host, "host whose newest capture is used");
  auto* diff_timeout = diff->add_option("--timeout", timeout_s, "seconds per package manager (default: the stored profile's [packages] timeout, else 120)")
                           ->check(CLI::Range(1, 3600));
  diff->callback([diff_timeout] {
    auto repo = OpenRepository();
    auto lock = LockRepository(*repo, false);
    auto [id, snap] = ResolveCapture(*repo, snapshot, host);
    auto indexed = IndexedRepository::Load(*repo);
    auto recorded = capture::LoadPackageFiles(*indexed, snap);
    std::set<std::string> managers;
    for (const auto& [file, bytes] : recorded) {
      std::string m = capture::ManagerOfFile(file);
      if (!m.empty()) managers.insert(m);
    }
    capture::DiscoveryOptions d;
    d.managers = std::vector<std::string>(managers.begin(), managers.end());
    d.timeout_ms = timeout_s * 1000;
    // The profile the capture used: its [packages] timeout, unless --timeout is given.
    if (auto text = capture::LoadStoredProfile(*indexed, snap)) {
      try {
        capture::Profile p = capture::Profile::Parse(*text, capture::CapturedHome(snap),
                                                     "/" + std::string(capture::kProfileFile));
        if (diff_timeout->count() == 0) d.timeout_ms = p.package_timeout_s * 1000;
        Verbose("using the capture's profile (/" + std::string(capture::kProfileFile) + ")");
      } catch (const Error& e) {
        Warn(std::string("warning: stored profile ignored: ") + e.what());
      }
    }
    capture::DiscoveryResult here = capture::DiscoverPackages(d);
    for (const auto& w : here.warnings) Warn("warning: " + w);
    Print("capture " + id.Short() + " vs. this machine:");
    for (const auto& [file, bytes] : recorded) {
      const capture::PackageList* now = nullptr;
      for (const auto& l : here.lists)
        if (l.file == file) now = &l;
      auto rec = capture::ParsePackageList(bytes);
      if (!now) {
        Print(file + ": not available here (manager missing or failed); " +
              std::to_string(rec.size()) + " recorded");
        continue;
      }
      capture::PackageDiff pd = capture::DiffPackageList(file, rec, now->lines);
      Print(file + ": " + std::to_string(pd.missing_here.size()) + " missing here, " +
            std::to_string(pd.extra_here.size()) + " extra here, " +
            std::to_string(pd.other_version.size()) + " other version here");
      for (const auto& l : pd.missing_here) Print("  - " + l);
      for (const auto& l : pd.extra_here) Print("  + " + l);
      for (const auto& [was, now] : pd.other_version) Print("  ~ " + was + " -> " + now);
      if (!pd.install.empty()) Print("  install: " + pd.install);
    }
  });
  static std::string profile_file;
  auto* list = cmd->add_subcommand("list", "what the package managers report here");
  auto* list_timeout = list->add_option("--timeout", timeout_s, "seconds per package manager")
                           ->check(CLI::Range(1, 3600));
  list->add_option("--profile", profile_file,
                   "capture profile whose [packages] managers and timeout apply (default "
                   "~/.config/haven/capture.toml when it exists)");
  list->callback([list_timeout] {
    // The managers a capture would ask: the profile's [packages], as `capture` reads it.
    capture::DiscoveryOptions d;
    d.timeout_ms = timeout_s * 1000;
    std::string file = profile_file;
    if (file.empty()) {
      std::string def = capture::DefaultProfilePath(HomeDir());
      if (access(def.c_str(), F_OK) == 0) file = def;
    }
    if (!file.empty()) {
      capture::Profile p = capture::Profile::Load(file, HomeDir());
      d.managers = p.managers;
      if (list_timeout->count() == 0) d.timeout_ms = p.package_timeout_s * 1000;
    }
    capture::DiscoveryResult here = capture::DiscoverPackages(d);
    for (const auto& w : here.warnings) Warn("warning: " + w);
    for (const auto& l : here.lists) {
      std::printf("# %s (%zu)\n%s", l.file.c_str(), l.lines.size(),
                  capture::RenderPackageList(l.lines).c_str());
    }
  });
}

}  // namespace haven::cli
