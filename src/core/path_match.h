// restic-compatible path patterns for --exclude/--include: a pattern is split on '/',
// each part is a glob (* ? [..] \), "**" matches any number of components, a leading
// '/' anchors the pattern at the root; otherwise it matches any run of components
// (so "foo" matches /a/foo and everything below it). A leading '!' negates.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace haven {

class PatternList {
 public:
  PatternList() = default;
  explicit PatternList(std::vector<std::string> patterns);
  bool empty() const { return patterns_.empty(); }
  // True when the last pattern that matches `path` is not negated.
  bool Matches(std::string_view path) const;
  // True when a descendant of the directory `path` could match (for include filters).
  bool ChildCouldMatch(std::string_view path) const;

 private:
  struct Pattern {
    std::vector<std::string> parts;  // first part "/" when anchored; "" for "**"
    bool negated = false;
  };
  std::vector<Pattern> patterns_;
};

// Reads patterns from a file, one per line, as restic's --exclude-file: surrounding
// whitespace is trimmed, blank lines and lines starting with '#' are skipped, then
// environment variables are expanded ($NAME, ${NAME}; "$$" is a literal '$').
// Throws kInvalidArgument naming the file.
std::vector<std::string> ReadPatternFile(const std::string& file);

// Go's os.Expand(s, getenv) with restic's exclude-file mapping ("$$" -> "$"): $NAME and
// ${NAME} are replaced by the variable's value ("" when unset).
std::string ExpandEnv(std::string_view s);

// Go's strings.ToLower: every valid UTF-8 character is mapped to its lower case, each
// invalid byte becomes U+FFFD. --iexclude lower-cases its patterns and the paths with it.
std::string FoldCase(std::string_view s);

}  // namespace haven
