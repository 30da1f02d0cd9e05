#include "cli/backend_s3.h"

#include <cstdlib>

#include "backend/s3_backend.h"
#include "cli/common.h"
#include "core/error.h"

namespace haven::cli {
namespace {

int ParseConnections(const std::string& v) {
  int n = 0;
  bool ok = !v.empty() && v.size() <= 3;
  for (char c : v) ok = ok && c >= '0' && c <= '9';
  if (ok) n = std::stoi(v);
  if (!ok || n < 1 || n > 128)
    Fail(ErrorCode::kInvalidArgument, "invalid value \"" + v + "\" for s3.connections (want 1..128)");
  return n;
}

S3Options OptionsFromEnvironment(const BackendOptionApplier& apply_options) {
  S3Options o;
  for (const char* var : {"AWS_DEFAULT_REGION", "AWS_REGION"}) {
    const char* r = std::getenv(var);
    if (r && *r) {
      o.region = r;
      break;
    }
  }
  apply_options("s3", [&](const std::string& key, const std::string& value) {
    if (key == "region") {
      if (value.empty()) Fail(ErrorCode::kInvalidArgument, "s3.region must not be empty");
      o.region = value;
    } else if (key == "bucket-lookup") {
      o.bucket_lookup = ParseBucketLookup(value);
    } else if (key == "storage-class") {
      o.storage_class = value;
    } else if (key == "connections") {
      o.connections = ParseConnections(value);
    } else {
      return false;
    }
    return true;
  });
  if (!Globals().cacert.empty()) o.ca_file = Globals().cacert.front();
  o.credentials = LoadAwsCredentials([](const char* name) { return std::getenv(name); });
  return o;
}

}  // namespace

std::shared_ptr<Backend> MakeS3Backend(const std::string& location,
                                       const BackendOptionApplier& apply_options) {
  S3Location loc = ParseS3Location(location);
  std::shared_ptr<Backend> be = std::make_shared<S3Backend>(loc, OptionsFromEnvironment(apply_options));
  return DecorateRemote(std::move(be));
}

}  // namespace haven::cli
