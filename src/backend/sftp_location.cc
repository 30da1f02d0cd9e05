#include "backend/sftp_location.h"

#include "core/error.h"

namespace haven {
namespace {

[[noreturn]] void Bad(std::string_view location, const std::string& why) {
  Fail(ErrorCode::kInvalidArgument, "invalid sftp location \"" + std::string(location) + "\": " + why);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX escapes of a URL path or user name, as Go's url.Parse decodes them.
std::string PercentDecode(std::string_view s, std::string_view location) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) Bad(location, "bad % escape");
    int hi = HexValue(s[i + 1]), lo = HexValue(s[i + 2]);
    if (hi < 0 || lo < 0) Bad(location, "bad % escape");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// sftp://[user[:password]@]host[:port]/path
void ParseUrlForm(std::string_view location, SftpLocation& loc) {
  std::string_view rest = location.substr(7);
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) Bad(location, "no folder given (sftp://HOST/PATH)");
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = rest.substr(slash + 1);
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    loc.user = PercentDecode(userinfo.substr(0, userinfo.find(':')), location);  // a password is ignored
    authority = authority.substr(at + 1);
  }
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) Bad(location, "unterminated [ in the host");
    loc.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after[0] == ':') loc.port = std::string(after.substr(1));
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    loc.host = std::string(authority.substr(0, colon));
    loc.port = std::string(authority.substr(colon + 1));
  } else {
    loc.host = std::string(authority);
  }
  for (char c : loc.port) {
    if (c < '0' || c > '9') Bad(location, "the port must be a number");
  }
  loc.path = PercentDecode(path, location);
  loc.display = "sftp://" + (loc.user.empty() ? "" : loc.user + "@") + std::string(authority) + "/" +
                std::string(path);
}

// sftp:[user@]host:path
void ParseShortForm(std::string_view location, SftpLocation& loc) {
  std::string_view rest = location.substr(5);
  size_t colon = rest.find(':');
  if (colon == std::string_view::npos) Bad(location, "hostname or path not found (sftp:[user@]HOST:PATH)");
  std::string_view host = rest.substr(0, colon);
  loc.path = std::string(rest.substr(colon + 1));
  // As restic: with two '@', the user is everything up to the second one.
  size_t at1 = host.find('@');
  if (at1 != std::string_view::npos) {
    size_t at2 = host.find('@', at1 + 1);
    size_t split = at2 == std::string_view::npos ? at1 : at2;
    loc.user = std::string(host.substr(0, split));
    host = host.substr(split + 1);
  }
  loc.host = std::string(host);
  loc.display = std::string(location);
}

}  // namespace

std::string CleanSftpPath(std::string_view path) {
  bool abs = !path.empty() && path[0] == '/';
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view part = path.substr(i, j - i);
    if (part.empty() || part == ".") {
    } else if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!abs) {
        parts.emplace_back("..");
      }
    } else {
      parts.emplace_back(part);
    }
    i = j + 1;
  }
  std::string out = abs ? "/" : "";
  for (size_t k = 0; k < parts.size(); ++k) out += (k ? "/" : "") + parts[k];
  return out.empty() ? "." : out;
}

SftpLocation ParseSftpLocation(std::string_view location) {
  SftpLocation loc;
  if (location.starts_with("sftp://")) {
    ParseUrlForm(location, loc);
  } else if (location.starts_with("sftp:")) {
    ParseShortForm(location, loc);
  } else {
    Bad(location, "does not start with \"sftp:\"");
  }
  loc.path = CleanSftpPath(loc.path);
  if (loc.host.starts_with("-")) {
    Bad(location, "the host must not start with '-' (ssh would take it for an option)");
  }
  if (loc.path.starts_with("~")) {
    Bad(location, "the path starts with '~', which most sftp servers do not expand; use a relative "
                  "path, which they take as relative to the login folder");
  }
  return loc;
}

std::vector<std::string> SplitShellWords(std::string_view s) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < s.size()) {
        cur += s[++i];
      } else {
        cur += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < s.size()) {
      cur += s[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (quote) {
    Fail(ErrorCode::kInvalidArgument, std::string(quote == '"' ? "double" : "single") +
                                          "-quoted string not terminated in \"" + std::string(s) + "\"");
  }
  if (in_word) words.push_back(std::move(cur));
  if (words.empty()) Fail(ErrorCode::kInvalidArgument, "the sftp command is empty");
  return words;
}

std::vector<std::string> SftpCommand(const SftpLocation& loc, const std::string& command,
                                     const std::string& args) {
  if (!command.empty()) return SplitShellWords(command);
  if (loc.host.empty()) Fail(ErrorCode::kInvalidArgument, "sftp location " + loc.display + " has no host");
  std::vector<std::string> argv{"ssh", loc.host};
  if (!loc.port.empty()) argv.insert(argv.end(), {"-p", loc.port});
  if (!loc.user.empty()) argv.insert(argv.end(), {"-l", loc.user});
  if (!args.empty()) {
    for (std::string& a : SplitShellWords(args)) argv.push_back(std::move(a));
  }
  argv.insert(argv.end(), {"-s", "sftp"});
  return argv;
}

}  // namespace haven
