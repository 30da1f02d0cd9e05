#include "backend/rest_listing.h"

#include <cstdint>
#include <optional>

#include "core/error.h"

namespace haven {
namespace {

constexpr int kMaxDepth = 32;

class JsonReader {
 public:
  JsonReader(std::string_view s, const std::string& what) : s_(s), what_(what) {}

  [[noreturn]] void Bad(const std::string& why) const {
    Fail(ErrorCode::kIo, what_ + ": the server's listing is not valid (" + why + " at byte " +
                             std::to_string(pos_) + ")");
  }
  void Space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  // Skips whitespace and consumes c when it is next.
  bool Eat(char c) {
    Space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Eat(c)) Bad(std::string("expected '") + c + "'");
  }
  void End() {
    Space();
    if (pos_ != s_.size()) Bad("trailing bytes");
  }
  std::string String();
  uint64_t Unsigned();
  void SkipValue(int depth);
  // Calls item() for each element of an array; the reader stands at '['.
  template <typename F>
  void Array(F&& item) {
    Expect('[');
    if (Eat(']')) return;
    do item(); while (Eat(','));
    Expect(']');
  }

 private:
  void AppendUtf8(std::string& out, uint32_t cp);
  uint32_t Hex4();

  std::string_view s_;
  const std::string& what_;
  size_t pos_ = 0;
};

uint32_t JsonReader::Hex4() {
  if (s_.size() - pos_ < 4) Bad("short \\u escape");
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    char c = s_[pos_++];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= static_cast<uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f') v |= static_cast<uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= static_cast<uint32_t>(c - 'A' + 10);
    else Bad("bad \\u escape");
  }
  return v;
}

void JsonReader::AppendUtf8(std::string& out, uint32_t cp) {
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

std::string JsonReader::String() {
  Expect('"');
  std::string out;
  for (;;) {
    if (pos_ >= s_.size()) Bad("unterminated string");
    char c = s_[pos_++];
    if (c == '"') return out;
    if (static_cast<unsigned char>(c) < 0x20) Bad("control character in a string");
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos_ >= s_.size()) Bad("unterminated escape");
    char e = s_[pos_++];
    switch (e) {
      case '"': case '\\': case '/': out += e; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cp = Hex4();
        if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
          if (s_.size() - pos_ < 2 || s_[pos_] != '\\' || s_[pos_ + 1] != 'u') Bad("lone surrogate");
          pos_ += 2;
          uint32_t lo = Hex4();
          if (lo < 0xDC00 || lo >= 0xE000) Bad("bad surrogate pair");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          Bad("lone surrogate");
        }
        AppendUtf8(out, cp);
        break;
      }
      default: Bad("bad escape");
    }
  }
}

uint64_t JsonReader::Unsigned() {
  Space();
  size_t start = pos_;
  uint64_t v = 0;
  while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
    uint64_t d = static_cast<uint64_t>(s_[pos_] - '0');
    if (v > (UINT64_MAX - d) / 10) Bad("size out of range");
    v = v * 10 + d;
    ++pos_;
  }
  if (pos_ == start) Bad("expected a size (a non-negative integer)");
  if (pos_ - start > 1 && s_[start] == '0') Bad("leading zero");
  if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E')) Bad("size is not an integer");
  return v;
}

void JsonReader::SkipValue(int depth) {
  if (depth > kMaxDepth) Bad("nested too deeply");
  Space();
  if (pos_ >= s_.size()) Bad("unexpected end");
  char c = s_[pos_];
  if (c == '"') {
    String();
  } else if (c == '[') {
    Array([&] { SkipValue(depth + 1); });
  } else if (c == '{') {
    Expect('{');
    if (Eat('}')) return;
    do {
      Space();
      String();
      Expect(':');
      SkipValue(depth + 1);
    } while (Eat(','));
    Expect('}');
  } else {
    // A number or a literal: a run of the characters they are made of.
    size_t start = pos_;
    while (pos_ < s_.size() && std::string_view("0123456789+-.eEtruefalsn").find(s_[pos_]) != std::string_view::npos)
      ++pos_;
    std::string_view tok = s_.substr(start, pos_ - start);
    if (tok.empty()) Bad("unexpected character");
    if (tok == "true" || tok == "false" || tok == "null") return;
    const bool number = (tok[0] == '-' || (tok[0] >= '0' && tok[0] <= '9')) &&
                        tok.find_first_of("trufalsn") == std::string_view::npos;
    if (!number) Bad("bad literal");
  }
}

}  // namespace

std::vector<std::string> ParseRestListV1(std::string_view json, const std::string& what) {
  JsonReader r(json, what);
  std::vector<std::string> names;
  r.Array([&] { names.push_back(r.String()); });
  r.End();
  return names;
}

std::vector<FileInfo> ParseRestListV2(std::string_view json, const std::string& what) {
  JsonReader r(json, what);
  std::vector<FileInfo> items;
  r.Array([&] {
    r.Expect('{');
    std::optional<std::string> name;
    std::optional<uint64_t> size;
    if (!r.Eat('}')) {
      do {
        std::string key = r.String();
        r.Expect(':');
        if (key == "name") {
          if (name) r.Bad("two names in one entry");
          name = r.String();
        } else if (key == "size") {
          if (size) r.Bad("two sizes in one entry");
          size = r.Unsigned();
        } else {
          r.SkipValue(1);
        }
      } while (r.Eat(','));
      r.Expect('}');
    }
    if (!name || !size) r.Bad("an entry without a name or a size");
    items.push_back(FileInfo{std::move(*name), *size});
  });
  r.End();
  return items;
}

}  // namespace haven
