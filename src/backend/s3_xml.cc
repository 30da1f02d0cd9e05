#include "backend/s3_xml.h"

#include <charconv>

#include "core/error.h"

namespace haven {
namespace {

constexpr int kMaxDepth = 16;

[[noreturn]] void Bad(const std::string& what, const std::string& why) {
  Fail(ErrorCode::kIo, what + ": malformed XML response (" + why + ")", true);
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes one entity starting after '&' in s; returns the position after ';'.
size_t DecodeEntity(std::string_view s, size_t i, std::string& out, const std::string& what) {
  size_t semi = s.find(';', i);
  if (semi == std::string_view::npos || semi - i > 10) Bad(what, "unterminated entity");
  std::string_view name = s.substr(i, semi - i);
  if (name == "amp") out += '&';
  else if (name == "lt") out += '<';
  else if (name == "gt") out += '>';
  else if (name == "quot") out += '"';
  else if (name == "apos") out += '\'';
  else if (name.size() >= 2 && name[0] == '#') {
    bool hex = name[1] == 'x';
    std::string_view digits = name.substr(hex ? 2 : 1);
    uint32_t cp = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cp, hex ? 16 : 10);
    if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size() || cp == 0 ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      Bad(what, "bad character reference");
    AppendUtf8(out, cp);
  } else {
    Bad(what, "unknown entity");
  }
  return semi + 1;
}

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == ':';
}

// Skips "<?...?>" and "<!--...-->" at i (which points at '<'); returns the new position
// or npos when there is none.
size_t SkipProlog(std::string_view s, size_t i, const std::string& what) {
  if (s.substr(i, 2) == "<?") {
    size_t e = s.find("?>", i + 2);
    if (e == std::string_view::npos) Bad(what, "unterminated declaration");
    return e + 2;
  }
  if (s.substr(i, 4) == "<!--") {
    size_t e = s.find("-->", i + 4);
    if (e == std::string_view::npos) Bad(what, "unterminated comment");
    return e + 3;
  }
  if (s.substr(i, 2) == "<!") Bad(what, "DTDs and CDATA are not accepted");
  return std::string_view::npos;
}

}  // namespace

void WalkXml(std::string_view s, const std::string& what,
             const std::function<void(const std::string& path, std::string text)>& on_element) {
  std::vector<std::string> stack;  // element names
  std::vector<size_t> path_len;    // length of `path` before each element was opened
  std::vector<std::string> texts;
  std::string path;
  bool root_done = false;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c != '<') {
      if (stack.empty()) {
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') Bad(what, "text outside the root");
        i++;
      } else if (c == '&') {
        i = DecodeEntity(s, i + 1, texts.back(), what);
      } else {
        texts.back() += c;
        i++;
      }
      continue;
    }
    if (size_t next = SkipProlog(s, i, what); next != std::string_view::npos) {
      i = next;
      continue;
    }
    size_t close = s.find('>', i);
    if (close == std::string_view::npos) Bad(what, "unterminated tag");
    std::string_view tag = s.substr(i + 1, close - i - 1);
    i = close + 1;
    if (!tag.empty() && tag[0] == '/') {
      std::string_view name = tag.substr(1);
      while (!name.empty() && (name.back() == ' ' || name.back() == '\n')) name.remove_suffix(1);
      if (stack.empty() || name != stack.back()) Bad(what, "mismatched closing tag");
      on_element(path, std::move(texts.back()));
      texts.pop_back();
      stack.pop_back();
      path.resize(path_len.back());
      path_len.pop_back();
      if (stack.empty()) root_done = true;
      continue;
    }
    bool self_closing = !tag.empty() && tag.back() == '/';
    if (self_closing) tag.remove_suffix(1);
    size_t n = 0;
    while (n < tag.size() && NameChar(tag[n])) n++;
    if (n == 0 || (n < tag.size() && tag[n] != ' ' && tag[n] != '\n' && tag[n] != '\t' && tag[n] != '\r'))
      Bad(what, "bad tag name");
    if (root_done) Bad(what, "more than one root element");
    if (stack.size() >= kMaxDepth) Bad(what, "nested too deeply");
    path_len.push_back(path.size());
    if (!path.empty()) path += '/';
    path += tag.substr(0, n);
    if (self_closing) {
      on_element(path, "");
      path.resize(path_len.back());
      path_len.pop_back();
      if (stack.empty()) root_done = true;
      continue;
    }
    stack.emplace_back(tag.substr(0, n));
    texts.emplace_back();
  }
  if (!stack.empty()) Bad(what, "document ends inside <" + stack.back() + ">");
  if (!root_done) Bad(what, "no root element");
}

S3ListPage ParseListObjectsV2(std::string_view xml, const std::string& what) {
  S3ListPage page;
  S3Object cur;
  bool have_key = false, have_size = false, root = false;
  WalkXml(xml, what, [&](const std::string& path, std::string text) {
    if (path == "ListBucketResult") {
      root = true;
    } else if (path == "ListBucketResult/Contents/Key") {
      cur.key = std::move(text);
      have_key = true;
    } else if (path == "ListBucketResult/Contents/Size") {
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), cur.size);
      if (text.empty() || ec != std::errc() || p != text.data() + text.size())
        Bad(what, "bad object size \"" + text.substr(0, 32) + "\"");
      have_size = true;
    } else if (path == "ListBucketResult/Contents") {
      if (!have_key || !have_size) Bad(what, "an object without Key or Size");
      page.objects.push_back(std::move(cur));
      cur = S3Object{};
      have_key = have_size = false;
    } else if (path == "ListBucketResult/IsTruncated") {
      if (text != "true" && text != "false") Bad(what, "bad IsTruncated");
      page.truncated = text == "true";
    } else if (path == "ListBucketResult/NextContinuationToken") {
      page.next_token = std::move(text);
    }
  });
  if (!root) Bad(what, "not a ListBucketResult");
  if (page.truncated && page.next_token.empty())
    Bad(what, "a truncated listing without NextContinuationToken");
  return page;
}

}  // namespace haven
