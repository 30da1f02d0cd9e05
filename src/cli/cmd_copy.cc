// copy: restic 0.14's `copy --from-repo LOC [--from-password-file F | --from-password-command
// C] [--from-key-hint K] [SNAPSHOT...]` (also the RESTIC_FROM_* / HAVEN_FROM_* variables):
// snapshots of the source repository into -r's (maintenance/copy_snapshots), skipping those
// already copied; files re-chunked when the chunker parameters differ, unless --no-rechunk.
// Both repositories are locked (shared); the destination even with --no-lock, as restic;
// both are read while their locks' checks run, and confirmed before anything is copied.
#include "cli/common.h"
#include "cli/more_commands.h"
#include "cli/restic_format.h"
#include "cli/snapshot_args.h"
#include "cli/snapshot_filter.h"
#include "core/error.h"
#include "maintenance/copy_snapshots.h"
#include "repo/lock.h"

namespace haven::cli {

namespace {

struct CopyCmdOptions {
  std::vector<std::string> snapshots;
  std::string from_repo, from_repository_file, from_password_file, from_password_command,
      from_key_hint;
  SnapshotFilter filter;
  bool no_rechunk = false;
};

void RunCopy(const CopyCmdOptions& o) {
  auto src = OpenFromRepository({o.from_repo, o.from_repository_file, o.from_password_file,
                                  o.from_password_command, o.from_key_hint},
                                 "");
  auto dst = OpenRepository({.prefetch_index = true});
  if (src->config().id == dst->config().id)
    Fail(ErrorCode::kInvalidArgument, "source and destination are the same repository (id " +
                                          src->config().id.substr(0, 10) + "), nothing to copy");
  // Both locks' checks run while the snapshots and indexes of both are read; nothing is
  // copied before both are confirmed.
  auto src_lock = LockRepositoryOverlapped(*src, false);
  auto dst_lock = Lock::AcquireOverlapped(*dst, false);
  std::vector<std::pair<FileId, Snapshot>> src_all, dst_all;
  std::unique_ptr<IndexedRepository> src_indexed, dst_indexed;
  std::vector<Repository::SnapshotFailure> src_failed, dst_failed;  // warned once both confirmed
  auto warn_failed = [&] {
    src->WarnIgnored(src_failed);
    dst->WarnIgnored(dst_failed);
  };
  ReadThenWarn(src_lock, warn_failed, [&] {
    return ReadThenConfirm(dst_lock, [&] {
      src_all = src->LoadSnapshots(&src_failed);
      dst_all = dst->LoadSnapshots(&dst_failed);
      src_indexed = IndexedRepository::Load(*src);
      dst_indexed = IndexedRepository::Load(*dst);
      return true;
    });
  });
  WriteSession session(*dst_indexed, GlobalWriteOptions());
  CopySnapshotsOptions co;
  co.threads = Jobs();
  co.rechunk = !o.no_rechunk;
  co.progress = [](const std::string& s) { Print(s); };
  co.begin = [](const FileId& id, const Snapshot& s) {
    std::string paths;
    for (const auto& p : s.paths) paths += (paths.empty() ? "" : " ") + p;
    Print("\nsnapshot " + id.Short() + " of [" + paths + "] at " + GoTimeString(s.time) + ")");
  };
  auto warn = [](const std::string& m) { Warn(m); };
  CopySnapshots(*src_indexed, session, SelectSnapshots(src_all, o.snapshots, o.filter, warn),
                o.filter.Apply(dst_all), co);
}

}  // namespace

void RegisterCopy(CLI::App& app) {
  static CopyCmdOptions o;
  auto* cmd = app.add_subcommand("copy", "copy snapshots from one repository to another");
  cmd->add_option("snapshot", o.snapshots, "snapshot ids (default: all, under the filter)");
  cmd->add_option("--from-repo", o.from_repo,
                  "source repository to copy snapshots from (env HAVEN_FROM_REPOSITORY, RESTIC_FROM_REPOSITORY)");
  cmd->add_option("--from-repository-file", o.from_repository_file,
                  "file with the source repository location (env *_FROM_REPOSITORY_FILE)");
  cmd->add_option("--from-password-file", o.from_password_file,
                  "file with the source repository's password (env *_FROM_PASSWORD_FILE)");
  cmd->add_option("--from-password-command", o.from_password_command,
                  "command printing the source repository's password (env *_FROM_PASSWORD_COMMAND)");
  cmd->add_option("--from-key-hint", o.from_key_hint, "key id to try first in the source repository");
  cmd->add_flag("--no-rechunk", o.no_rechunk,
               "copy blobs as they are although the chunker parameters differ (restic's copy)");
  cmd->add_option("-H,--host", o.filter.hosts, "only consider snapshots for this host, when no snapshot id is given");
  cmd->add_option("--tag", o.filter.tags, "only consider snapshots which include this taglist");
  cmd->add_option("--path", o.filter.paths, "only consider snapshots which include this path");
  cmd->callback([] { RunCopy(o); });
}

}  // namespace haven::cli
