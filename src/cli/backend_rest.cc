#include "cli/backend_rest.h"

#include "backend/rclone_backend.h"
#include "backend/rest_backend.h"
#include "cli/common.h"
#include "core/error.h"

namespace haven::cli {
namespace {

int ParseConnections(const std::string& v, const std::string& option) {
  int n = 0;
  bool ok = !v.empty() && v.size() <= 3;
  for (char c : v) ok = ok && c >= '0' && c <= '9';
  if (ok) n = std::stoi(v);
  if (!ok || n < 1 || n > 128)
    Fail(ErrorCode::kInvalidArgument, "invalid value \"" + v + "\" for " + option + " (want 1..128)");
  return n;
}

std::shared_ptr<Backend> MakeRcloneBackend(const std::string& location,
                                           const BackendOptionApplier& apply_options) {
  std::string remote = ParseRcloneLocation(location);
  RcloneOptions o;
  apply_options("rclone", [&](const std::string& key, const std::string& value) {
    if (key == "program") o.program = value;
    else if (key == "args") o.args = value;
    else if (key == "connections") o.connections = ParseConnections(value, "rclone.connections");
    else return false;
    return true;
  });
  return DecorateRemote(OpenRcloneBackend(remote, o));
}

}  // namespace

std::shared_ptr<Backend> MakeRestBackend(const std::string& location,
                                         const BackendOptionApplier& apply_options) {
  if (location.rfind("rclone:", 0) == 0) return MakeRcloneBackend(location, apply_options);
  RestLocation loc = ParseRestLocation(location);
  RestOptions o;
  apply_options("rest", [&](const std::string& key, const std::string& value) {
    if (key != "connections") return false;
    o.connections = ParseConnections(value, "rest.connections");
    return true;
  });
  o.user = loc.user;
  o.password = loc.password;
  if (o.user.empty() && o.password.empty()) {
    o.user = Env("REST_USERNAME");
    o.password = Env("REST_PASSWORD");
  }
  if (!Globals().cacert.empty()) o.ca_file = Globals().cacert.front();
  return DecorateRemote(std::make_shared<RestBackend>(loc.base_url, o));
}

}  // namespace haven::cli
