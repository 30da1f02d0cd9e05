// The kernel side of a mount: a FUSE 3 low-level session (libfuse3) answering the kernel's
// requests from a MountFs on libfuse's multi-threaded loop (reads run in parallel).
// Read-only; entries and attributes are cached by the kernel (snapshot contents never
// change; the virtual directories for a minute, restic's reload interval).
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "core/mutex.h"
#include "mount/mount_fs.h"

struct fuse_session;  // libfuse3

namespace haven::mount {

struct FuseOptions {
  std::string mountpoint;
  bool allow_other = false;          // --allow-other
  bool default_permissions = false;  // the kernel checks modes (with allow_other, as restic)
  std::string fsname = "restic";     // what mount(8) shows as the source (restic's name)
};

// Mount() mounts `fs` at o.mountpoint; Loop() serves it until the file system is unmounted
// (umount, fusermount3 -u) or Stop() is called, then unmounts. Interrupts (SIGINT,
// SIGTERM): the caller mounts inside an interrupt::Cleanup that calls Stop, so no signal
// can come between the mount and the registration.
class FuseMount {
 public:
  FuseMount(MountFs& fs, FuseOptions o);
  ~FuseMount();
  FuseMount(const FuseMount&) = delete;
  FuseMount& operator=(const FuseMount&) = delete;
  // Throws haven::Error when the mount fails (naming the mountpoint; libfuse has printed
  // the reason on stderr).
  void Mount() EXCLUDES(mu_);
  // Throws haven::Error when the session fails other than by being unmounted.
  void Loop() EXCLUDES(mu_);
  // Leaves the loop and unmounts (lazily: a shell inside the mount does not keep it).
  // Safe from another thread; does nothing before Mount or a second time.
  void Stop() EXCLUDES(mu_);

 private:
  MountFs& fs_;
  FuseOptions o_;
  Mutex mu_;  // Stop (signal thread) against Loop's own unmount
  ::fuse_session* se_ GUARDED_BY(mu_) = nullptr;
  bool mounted_ GUARDED_BY(mu_) = false;
};

}  // namespace haven::mount
