// `rest:` and `rclone:` repository locations for the CLI: options, credentials from the
// environment and the decorators around a RestBackend (docs/backends.md, "REST" and
// "rclone"). MakeBackend (common.cc) dispatches here.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "cli/backend_s3.h"  // BackendOptionApplier

namespace haven::cli {

// The backend for "rest:http(s)://[USER:PASSWORD@]HOST[:PORT]/[PATH]": basic auth from the
// URL, else HAVEN_REST_USERNAME/HAVEN_REST_PASSWORD (RESTIC_REST_USERNAME/RESTIC_REST_PASSWORD);
// -o rest.connections= (default 5); --cacert; behind --limit-upload/--limit-download and a
// RetryBackend (8 attempts, at most 8 s apart: an unreachable server fails after about half a
// minute).
//
// "rclone:REMOTE:PATH" (backend/rclone_backend.h): -o rclone.program=, -o rclone.args=; the
// same decorators.
std::shared_ptr<Backend> MakeRestBackend(const std::string& location,
                                         const BackendOptionApplier& apply_options);

}  // namespace haven::cli
