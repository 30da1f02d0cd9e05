// mount: the repository as a read-only FUSE file system (restic 0.14's mount): snapshots/,
// ids/, hosts/, tags/ (or --path-template's layout), files read blob by blob. The model is
// mount/mount_fs, the kernel side mount/fuse_mount. Holds a non-exclusive lock while
// mounted (restic's lockRepo). Ends when the mountpoint is unmounted (exit 0) or on
// SIGINT/SIGTERM (unmounts, then exits 130 like every interrupted command).
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/common.h"
#include "cli/mount_commands.h"
#include "cli/snapshot_filter.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "mount/fuse_mount.h"
#include "mount/mount_fs.h"

namespace haven::cli {

namespace {

struct MountCmdOptions {
  std::vector<std::string> args;
  bool owner_root = false, allow_other = false, no_default_permissions = false;
  SnapshotFilter filter;
  std::vector<std::string> path_templates;
  std::string time_template = mount::kRfc3339;
};

void CheckTemplates(const MountCmdOptions& o) {
  if (o.time_template.empty()) Fail(ErrorCode::kInvalidArgument, "time template string cannot be empty");
  if (o.time_template.front() == '/' || o.time_template.back() == '/')
    Fail(ErrorCode::kInvalidArgument, "time template string cannot start or end with '/'");
  if (o.args.size() != 1) Fail(ErrorCode::kInvalidArgument, "wrong number of parameters");
}

// True when a file system is mounted at `path` (a field of /proc/self/mountinfo, whose
// spaces, tabs, newlines and backslashes are written as \ooo).
bool IsMountPoint(const std::string& path) {
  char real[PATH_MAX];
  if (!realpath(path.c_str(), real)) return false;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    std::string decoded;
    for (size_t i = 0; i < point.size(); i++) {
      if (point[i] == '\\' && i + 3 < point.size()) {
        decoded += static_cast<char>(std::stoi(point.substr(i + 1, 3), nullptr, 8));
        i += 3;
      } else {
        decoded += point[i];
      }
    }
    if (decoded == real) return true;
  }
  return false;
}

// restic stats the mountpoint after loading the index and stops on a missing one. haven
// also refuses a file and a mountpoint where a file system is mounted already (restic
// mounts over it, hiding the other one).
void CheckMountpoint(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) Fail(ErrorCode::kFatal, "mountpoint " + path + " is not a directory");
    if (IsMountPoint(path))
      Fail(ErrorCode::kFatal, "mountpoint " + path +
                                  " is busy: a file system is mounted there already (unmount it "
                                  "first: umount " + path + ")");
    return;
  }
  const int err = errno;
  if (err == ENOENT) Verbose("Mountpoint " + path + " doesn't exist");
  Fail(ErrorCode::kFatal, "stat " + path + ": " + std::strerror(err));
}

mount::MountConfig Config(const MountCmdOptions& o) {
  mount::MountConfig cfg;
  cfg.owner_root = o.owner_root;
  if (!o.owner_root) {
    cfg.uid = getuid();
    cfg.gid = getgid();
  }
  if (!o.path_templates.empty()) cfg.path_templates = o.path_templates;
  cfg.time_template = o.time_template;
  cfg.start = gojson::Timestamp{static_cast<int64_t>(time(nullptr)), 0, 0};
  return cfg;
}

void RunMount(const MountCmdOptions& o) {
  CheckTemplates(o);
  auto repo = OpenRepository({.prefetch_index = true});
  auto lock = LockRepository(*repo, false);
  std::shared_ptr<IndexedRepository> indexed = IndexedRepository::Load(*repo);
  const std::string mountpoint = o.args[0];
  CheckMountpoint(mountpoint);
  auto snapshots = o.filter.Apply(repo->LoadSnapshots());
  mount::RepositorySource source(indexed);
  size_t count = snapshots.size();
  // restic's updateSnapshots: a changed number of snapshots reloads the index too.
  auto reload = [&]() -> std::optional<mount::MountFs::SnapshotList> {
    auto fresh = o.filter.Apply(repo->LoadSnapshots());
    if (fresh.size() == count) return std::nullopt;
    count = fresh.size();
    source.Replace(IndexedRepository::Load(*repo));
    return fresh;
  };
  mount::MountFs fs(source, std::move(snapshots), Config(o), reload);
  mount::FuseOptions fo;
  fo.mountpoint = mountpoint;
  fo.allow_other = o.allow_other;
  // restic: with --allow-other the kernel checks permissions unless told not to.
  fo.default_permissions = o.allow_other && !o.no_default_permissions;
  mount::FuseMount fuse(fs, fo);
  interrupt::Cleanup unmount([&fuse] { fuse.Stop(); }, [&fuse] {
    fuse.Mount();
    return true;
  });
  std::cout << "Now serving the repository at " << mountpoint << "\n"
            << "Use another terminal or tool to browse the contents of this folder.\n"
            << "When finished, quit with Ctrl-c here or umount the mountpoint.\n"
            << std::flush;
  fuse.Loop();
  Verbose("mount: " + std::to_string(fs.LiveNodes()) + " nodes held at unmount, at most " +
          std::to_string(fs.PeakNodes()) + " at once");
}

}  // namespace

void RegisterMount(CLI::App& app) {
  static MountCmdOptions o;
  auto* cmd = app.add_subcommand("mount", "mount the repository");
  cmd->add_option("mountpoint", o.args, "directory to mount the repository at");
  cmd->add_flag("--owner-root", o.owner_root, "use 'root' as the owner of files and dirs");
  cmd->add_flag("--allow-other", o.allow_other,
                "allow other users to access the data in the mounted directory");
  cmd->add_flag("--no-default-permissions", o.no_default_permissions,
                "for 'allow-other', ignore Unix permissions and allow users to read all snapshot files");
  cmd->add_option("-H,--host", o.filter.hosts, "only consider snapshots for this host (repeatable)");
  cmd->add_option("--tag", o.filter.tags, "only consider snapshots which include this taglist");
  cmd->add_option("--path", o.filter.paths, "only consider snapshots which include this (absolute) path");
  cmd->add_option("--path-template", o.path_templates,
                  "set template for path names (repeatable)");
  cmd->add_option("--time-template,--snapshot-template", o.time_template,
                  "set template to use for times (--snapshot-template: deprecated name)");
  cmd->callback([] { RunMount(o); });
}

}  // namespace haven::cli
