// `rclone:REMOTE:PATH`: a repository on any of rclone's remotes, reached as restic does it:
// haven starts `rclone serve restic --stdio REMOTE:PATH` (rclone_process.h) and speaks
// restic's REST protocol (rest_backend.h) to it as HTTP/2 without TLS over the child's
// stdin/stdout (docs/backends.md, "rclone").
//
// The command is PROGRAM ARGS... REMOTE:PATH, with PROGRAM = -o rclone.program= (default
// "rclone") and ARGS = -o rclone.args= split into words (default
// "serve restic --stdio --b2-hard-delete"), as in restic 0.14.
//
// One rclone process, one HTTP/2 connection carrying up to `connections` requests at once as
// streams (HttpClient's multiplex mode). When rclone exits or the connection breaks, every
// call fails with kIo (not retryable) naming the command and its exit status.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"

namespace haven {

struct RcloneOptions {
  std::string program = "rclone";
  std::string args = "serve restic --stdio --b2-hard-delete";
  // Requests at once: HTTP/2 streams multiplexed on the one connection (restic's
  // rclone.connections); 1 sends them one at a time.
  int connections = 5;
};

// "rclone:REMOTE:PATH" -> "REMOTE:PATH"; kInvalidArgument when empty.
std::string ParseRcloneLocation(std::string_view location);

// The argv of the child (see above).
std::vector<std::string> RcloneCommand(const std::string& remote, const RcloneOptions& options);

// Starts the child and returns the backend speaking to it (Location() "rclone:REMOTE:PATH").
// Throws kIo when the program cannot be started.
std::unique_ptr<Backend> OpenRcloneBackend(const std::string& remote, const RcloneOptions& options);

}  // namespace haven
