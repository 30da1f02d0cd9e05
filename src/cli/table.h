// restic's text table (internal/ui/table): columns as wide as their widest line, cells
// joined by two spaces, trailing blanks cut, a dashed rule under the header and above the
// footer; a cell may hold several lines. Used by `snapshots` and `forget`.
#pragma once

#include <string>
#include <vector>

namespace haven::cli {

struct Table {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;  // cells may contain '\n'
  std::vector<std::string> footer;
  bool blank_between_rows = false;

  std::string Render() const;
};

// "a\nb" -> {"a", "b"} ("" -> {""}).
std::vector<std::string> SplitLines(const std::string& s);

std::string Join(const std::vector<std::string>& v, const char* sep);

}  // namespace haven::cli
