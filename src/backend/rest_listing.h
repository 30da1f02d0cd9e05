// The bodies of a REST server's directory listing (restic's REST protocol, docs/backends.md
// "REST"): v1 is a JSON array of names, `["ab12..", ...]`; v2 (Content-Type
// application/vnd.x.restic.rest.v2) an array of objects, `[{"name": "ab12..", "size": 42}, ...]`.
// The body is untrusted: anything that is not one of these shapes is kIo (not retryable),
// naming `what`; nesting deeper than 32 levels in unknown members is refused. Unknown members of
// a v2 object are skipped; a v2 object without a name or a size is an error. Strings with
// \u escapes outside ASCII are kept as UTF-8; names are not validated here (the backend skips
// names that are not repository names).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"

namespace haven {

std::vector<std::string> ParseRestListV1(std::string_view json, const std::string& what);
std::vector<FileInfo> ParseRestListV2(std::string_view json, const std::string& what);

}  // namespace haven
