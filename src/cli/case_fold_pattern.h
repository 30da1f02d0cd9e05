// --iinclude / --iexclude: restic lowercases such patterns and the paths they are matched
// against. haven's pattern matcher is case-sensitive, so a case-insensitive pattern is
// rewritten into an equivalent case-sensitive glob: every ASCII letter becomes a class of
// both cases ("*.JPG" -> "*.[jJ][pP][gG]"), letters and letter ranges inside a bracket
// expression gain their other case ("[a-c]" -> "[a-cA-C]"), an escaped letter becomes its
// class. Other bytes (including non-ASCII letters) are left as they are.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace haven::cli {

std::string CaseInsensitiveGlob(std::string_view pattern);
std::vector<std::string> CaseInsensitiveGlobs(const std::vector<std::string>& patterns);

}  // namespace haven::cli
