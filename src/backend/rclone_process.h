// A spawned `rclone serve restic --stdio REMOTE:PATH` (or any program that serves restic's
// REST protocol as HTTP/2 without TLS on its stdin/stdout), as restic's rclone backend runs it.
//
// The child's stdin and stdout are one AF_UNIX stream socket, the server end of the one
// HTTP/2 connection. haven's HTTP client connects to it by path (socket_path(), a socket in a
// fresh 0700 folder under $TMPDIR): the child is started when that connection is accepted,
// with the accepted socket as its stdin and stdout; the listening socket and its folder are
// removed at once, so the connection cannot be made twice and no one else can reach the
// child. (Handing curl one end of a socketpair as an already-connected socket would avoid
// the listener, but Debian 12's libcurl 7.88 still calls connect() on such a socket and
// fails: curl issue 10626, fixed in 8.0.) A connecting process other than haven itself
// (SO_PEERCRED) is refused.
//
// The child's stderr is haven's, so rclone's own messages appear as they are. It runs
// without a shell (posix_spawnp, PATH lookup), in its own process group, so that Ctrl-C
// reaches haven only and haven's cleanups (lock removal) still reach the repository; RCLONE_*
// variables and the rest of the environment are passed on.
//
// Failure(): after a failed transfer, why the transport is gone: the program could not be
// started, or the child exited (its exit status, waiting up to a second for it to end);
// nullopt while it still runs (the request's own error stands). Messages name the program
// and pid, never its arguments (they may hold secrets). The destructor (after the HTTP client closed its connection: rclone exits
// on EOF) waits up to 5 s, then kills the child; it is always reaped.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"

namespace haven {

class RcloneProcess {
 public:
  // Throws kIo naming the program when it is not found or not executable, or when the
  // socket cannot be made.
  explicit RcloneProcess(std::vector<std::string> argv);
  ~RcloneProcess();
  RcloneProcess(const RcloneProcess&) = delete;
  RcloneProcess& operator=(const RcloneProcess&) = delete;

  // Where the HTTP client connects (once).
  const std::string& socket_path() const { return path_; }
  // Why requests fail (see above). Never nullopt.
  std::optional<std::string> Failure() EXCLUDES(mu_);
  // The command line, for messages.
  const std::string& command() const { return command_; }

 private:
  void AcceptAndSpawn() EXCLUDES(mu_);
  void CloseListener() REQUIRES(mu_);
  // Reaps the child if it has ended, waiting up to timeout_ms (then, with kill, SIGKILL).
  void ReapLocked(int timeout_ms, bool kill) REQUIRES(mu_);

  const std::vector<std::string> argv_;
  const std::string command_;
  std::string dir_, path_;
  Mutex mu_;
  int listener_ GUARDED_BY(mu_) = -1;
  pid_t pid_ GUARDED_BY(mu_) = -1;
  std::optional<std::string> spawn_error_ GUARDED_BY(mu_);
  std::optional<std::string> exit_text_ GUARDED_BY(mu_);  // set once reaped
  std::thread acceptor_;
};

}  // namespace haven
