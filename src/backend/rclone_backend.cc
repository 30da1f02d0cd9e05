#include "backend/rclone_backend.h"

#include "backend/rclone_process.h"
#include "backend/rest_backend.h"
#include "backend/sftp_location.h"
#include "core/error.h"

namespace haven {

std::string ParseRcloneLocation(std::string_view location) {
  if (location.rfind("rclone:", 0) != 0) Fail(ErrorCode::kInvalidArgument, "not an rclone: location");
  std::string remote(location.substr(7));
  if (remote.empty())
    Fail(ErrorCode::kInvalidArgument, "rclone: no remote in the location (want rclone:REMOTE:PATH)");
  if (remote[0] == '-')  // would reach rclone as an option, not a remote
    Fail(ErrorCode::kInvalidArgument, "rclone: the remote may not start with '-' (want rclone:REMOTE:PATH)");
  return remote;
}

std::vector<std::string> RcloneCommand(const std::string& remote, const RcloneOptions& options) {
  if (options.program.empty()) Fail(ErrorCode::kInvalidArgument, "rclone.program must not be empty");
  std::vector<std::string> argv{options.program};
  if (!options.args.empty())
    for (std::string& w : SplitShellWords(options.args)) argv.push_back(std::move(w));
  argv.push_back(remote);
  return argv;
}

std::unique_ptr<Backend> OpenRcloneBackend(const std::string& remote, const RcloneOptions& options) {
  if (options.connections < 1) Fail(ErrorCode::kInvalidArgument, "rclone.connections must be at least 1");
  auto process = std::make_shared<RcloneProcess>(RcloneCommand(remote, options));
  RestOptions o;
  o.connections = options.connections;
  o.http.multiplex = options.connections > 1;
  o.display = "rclone:" + remote;
  o.http.unix_socket_path = process->socket_path();
  o.http.http2_prior_knowledge = true;
  o.transport_failure = [p = process.get()] { return p->Failure(); };
  o.transport_owner = process;
  return std::make_unique<RestBackend>("http://127.0.0.1/", std::move(o));
}

}  // namespace haven
