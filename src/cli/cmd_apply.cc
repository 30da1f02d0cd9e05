// `haven apply [SNAPSHOT] [--target DIR] [--home DIR] [--dry-run] [--no-backup]`: puts a
// capture's tracked files back (capture/apply.h). SNAPSHOT defaults to the newest capture
// of this host.
#include <cstdlib>

#include "capture/apply.h"
#include "capture/capture.h"
#include "capture/package_diff.h"
#include "cli/common.h"
#include "cli/snapshot_filter.h"
#include "core/error.h"
#include "repo/host_info.h"

namespace haven::cli {

// The newest capture of this host (or SNAPSHOT when given); shared with `packages diff`.
std::pair<FileId, Snapshot> ResolveCapture(Repository& repo, const std::string& arg,
                                           const std::string& host) {
  auto snaps = repo.LoadSnapshots();
  if (!arg.empty() && arg != "latest") {
    FileId id = ResolveSnapshot(arg, snaps);
    for (auto& [sid, s] : snaps)
      if (sid == id) return {sid, s};
  }
  std::string h = host.empty() ? HostName() : host;
  for (auto it = snaps.rbegin(); it != snaps.rend(); ++it)
    if (it->second.HasTag(capture::kCaptureTag) && it->second.hostname == h) return *it;
  Fail(ErrorCode::kNotFound, "no capture snapshot of host " + h + " found");
}

void RegisterApply(CLI::App& app) {
  static std::string snapshot, target = "/", home, host;
  static bool dry_run = false, no_backup = false;
  auto* cmd = app.add_subcommand("apply", "put a capture's tracked files back in place");
  cmd->add_option("snapshot", snapshot, "capture snapshot (default: the newest of this host)");
  cmd->add_option("-t,--target", target, "root to apply under (default /)");
  cmd->add_option("--home", home, "where the captured home goes (default $HOME)");
  cmd->add_option("-H,--host", host, "host whose newest capture is used");
  cmd->add_flag("-n,--dry-run", dry_run, "only show what would change");
  cmd->add_flag("--no-backup", no_backup, "do not keep .haven-orig copies of replaced files");
  cmd->callback([] {
    auto repo = OpenRepository();
    auto lock = LockRepository(*repo, false);
    auto [id, snap] = ResolveCapture(*repo, snapshot, host);
    auto indexed = IndexedRepository::Load(*repo);
    capture::ApplyOptions o;
    o.target = target;
    if (!home.empty()) {
      o.home = home;
    } else if (const char* h = std::getenv("HOME"); h && *h == '/') {
      o.home = h;
    }
    while (o.home.size() > 1 && o.home.back() == '/') o.home.pop_back();
    if (o.home == "/") o.home.clear();
    o.dry_run = dry_run;
    o.no_backup = no_backup;
    o.action = [](const std::string& s) { Print((dry_run ? "would " : "") + s); };
    o.warn = [](const std::string& s) { Warn(s); };
    // The profile the capture used: its tracked paths say what the snapshot covers.
    if (auto text = capture::LoadStoredProfile(*indexed, snap)) {
      try {
        capture::Profile p = capture::Profile::Parse(*text, capture::CapturedHome(snap),
                                                     "/" + std::string(capture::kProfileFile));
        std::string tracked;
        for (const auto& t : p.track) tracked += (tracked.empty() ? "" : " ") + t;
        Verbose("capture profile: tracks " + tracked);
      } catch (const Error& e) {
        Warn(std::string("warning: stored profile ignored: ") + e.what());
      }
    }
    capture::ApplyResult r = capture::RunApply(*indexed, snap, o);
    Print("capture " + id.Short() + ": " + std::to_string(r.created) + " created, " +
          std::to_string(r.updated) + " updated, " + std::to_string(r.unchanged) +
          " unchanged" + (r.refused ? ", " + std::to_string(r.refused) + " refused" : "") +
          (dry_run ? " (dry run: nothing written)" : ""));
    if (r.errors || r.refused) g_exit_code = 1;
  });
}

}  // namespace haven::cli
