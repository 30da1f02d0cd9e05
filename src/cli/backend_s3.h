// `s3:` repository locations for the CLI: options, credentials and the decorators around
// an S3Backend (docs/backends.md, "S3"). MakeBackend (common.cc) dispatches here.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "backend/backend.h"

namespace haven::cli {

// common.cc's ApplyBackendOptions: calls apply(key, value) for each `-o SCHEME.key=value`.
using BackendOptionApplier =
    std::function<void(const std::string& scheme,
                       const std::function<bool(const std::string&, const std::string&)>& apply)>;

// The backend for an "s3:..." location: S3Backend configured from -o s3.region=,
// s3.bucket-lookup=, s3.storage-class=, s3.connections=, AWS_* variables, --cacert; behind
// --limit-upload/--limit-download and a RetryBackend (exponential backoff with jitter,
// 8 attempts, at most 8 s apart, so an unreachable host fails after about half a minute).
std::shared_ptr<Backend> MakeS3Backend(const std::string& location,
                                       const BackendOptionApplier& apply_options);

}  // namespace haven::cli
