#include "capture/scanner.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <hs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <locale>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <span>
#include <unordered_map>
#include <utility>

#include "capture/fs.h"
#include "capture/rules.h"
#include "capture/text_encoding.h"
#include "core/bytes.h"
#include "core/error.h"
#include "core/id.h"
#include "core/mutex.h"
#include "core/sha256.h"

namespace haven::capture {

namespace {

constexpr size_t kBinaryProbe = 8192;
constexpr size_t kMaxRawMatches = 1 << 20;  // bound on the run table of one window
// How far the checks look around a match (the same in every window and in a whole-buffer
// scan, so a streamed scan finds exactly what a whole-file scan finds):
constexpr size_t kLineBack = 16384;     // a text rule's regex: its line, at most this far back
constexpr size_t kKeyBlockBack = 4096;  // a key-block rule's regex (spans lines)
constexpr size_t kLinesBack = 8192;     // a text rule whose match spans lines (scan version 15)
constexpr size_t kPemForward = 64 << 10;  // a base64-wrapped key block after its match
constexpr size_t kLineLook = 16384;     // blanks after a value, `haven:allow` on the line
constexpr size_t kMaxMatchWidth = 8192;  // the longest text a rule matches (scanner_test checks)
// A window's margins: a match owned by the window (its Hyperscan run ends inside it) and
// every match whose secret could overlap it are found and judged exactly as in one pass
// over the whole file: back 2 x kLineBack + 2 x kMaxMatchWidth + kLineLook, forward
// kPemForward + kMaxMatchWidth + kLineLook, rounded up.
constexpr size_t kScanMargin = 128 << 10;
constexpr size_t kMinScanWindow = 64 << 10;

std::string Hex16(std::string_view a, std::string_view b) {
  std::string in(a);
  in.push_back('\0');
  in.append(b);
  return Sha256(AsBytes(in)).Hex().substr(0, 16);
}

// The last non-empty component of s[0, end) ('/' separates); `end` moves before it.
// False when there is none.
bool PrevComponent(std::string_view s, size_t& end, std::string_view* out) {
  while (end > 0 && s[end - 1] == '/') --end;
  if (end == 0) return false;
  size_t start = s.rfind('/', end - 1);
  start = start == std::string_view::npos ? 0 : start + 1;
  *out = s.substr(start, end - start);
  end = start;
  return true;
}

// Calls f with each literal run of a glob component (the text between its wildcards and
// bracket expressions) while f returns true; false when f returned false. A glob with an
// escape, and the rest of a glob from a class, collating element or equivalence class
// ([[:digit:]], [[.x.]], [[=x=]]) or an unclosed '[' on, give no runs: fnmatch judges them.
template <class F>
bool EachLiteralRun(std::string_view glob, F&& f) {
  if (glob.find('\\') != std::string_view::npos) return true;
  for (size_t i = 0; i < glob.size();) {
    if (glob[i] == '*' || glob[i] == '?') {
      ++i;
    } else if (glob[i] == '[') {
      // A bracket expression: an optional ! or ^, a ']' first is a member, then up to the
      // next ']'.
      size_t j = i + 1;
      if (j < glob.size() && (glob[j] == '!' || glob[j] == '^')) ++j;
      if (j < glob.size() && glob[j] == ']') ++j;
      const size_t close = glob.find(']', j);
      if (close == std::string_view::npos ||
          glob.substr(i + 1, close - i - 1).find('[') != std::string_view::npos)
        return true;
      i = close + 1;
    } else {
      size_t end = glob.find_first_of("*?[", i);
      if (end == std::string_view::npos) end = glob.size();
      if (!f(glob.substr(i, end - i))) return false;
      i = end;
    }
  }
  return true;
}

// False when `name` lacks one of the glob component's literal runs, so it cannot match:
// most file names fail here without fnmatch (which took 9 % of `haven scan`'s CPU over
// /usr/share/doc).
bool HasLiteralRuns(std::string_view glob, std::string_view name) {
  return EachLiteralRun(
      glob, [&](std::string_view run) { return name.find(run) != std::string_view::npos; });
}

// The glob's components match the path's last components. Compared from the end without
// splitting either into strings: this runs for every path rule on every scanned file,
// and a glob component without wildcards (most) is a plain comparison.
bool TailMatches(std::string_view glob, std::string_view path) {
  size_t g_end = glob.size(), p_end = path.size();
  std::string_view g, p;
  std::string g_z, p_z;  // NUL-terminated copies for fnmatch
  bool any = false;
  while (PrevComponent(glob, g_end, &g)) {
    any = true;
    if (!PrevComponent(path, p_end, &p)) return false;
    if (g.find_first_of("*?[\\") == std::string_view::npos) {
      if (g != p) return false;
      continue;
    }
    if (!HasLiteralRuns(g, p)) return false;
    g_z.assign(g);
    p_z.assign(p);
    if (fnmatch(g_z.c_str(), p_z.c_str(), 0) != 0) return false;
  }
  return any;
}

// Where `needle` first occurs in `hay` from `from`, ASCII case folded, or npos.
size_t FindCaseless(std::string_view hay, std::string_view needle, size_t from = 0) {
  if (from > hay.size()) return std::string_view::npos;
  auto it = std::search(hay.begin() + static_cast<std::ptrdiff_t>(from), hay.end(), needle.begin(),
                        needle.end(), [](char a, char b) {
                          return std::tolower(static_cast<unsigned char>(a)) ==
                                 std::tolower(static_cast<unsigned char>(b));
                        });
  return it == hay.end() ? std::string_view::npos : static_cast<size_t>(it - hay.begin());
}

bool ContainsCaseless(std::string_view hay, std::string_view needle) {
  return FindCaseless(hay, needle) != std::string_view::npos;
}

bool IsExample(std::string_view secret) {
  if (ContainsCaseless(secret, "example")) return true;
  for (const char* e : ExampleSecrets())
    if (secret.find(e) != std::string_view::npos) return true;
  return false;
}

// Which of the four character classes a value holds (other: anything not a letter or digit).
struct CharClasses {
  bool lower = false, upper = false, digit = false, other = false;
  int Count() const { return int(lower) + int(upper) + int(digit) + int(other); }
};

CharClasses ClassesOf(std::string_view v) {
  CharClasses c;
  for (char ch : v) {
    if (ch >= 'a' && ch <= 'z') c.lower = true;
    else if (ch >= 'A' && ch <= 'Z') c.upper = true;
    else if (ch >= '0' && ch <= '9') c.digit = true;
    else c.other = true;
  }
  return c;
}

size_t CountVowels(std::string_view v) {
  size_t n = 0;
  for (char c : v)
    if (std::string_view("aeiouAEIOU").find(c) != std::string_view::npos) n++;
  return n;
}

// Letter pairs common in English words and identifiers: bit b of row a is set when the pair
// (a, b) makes at least 2 in 10,000 of the letter pairs inside words of the manual pages
// (sections 1 and 5) and C headers of a Debian system (scripts/gen-letter-pairs.py prints
// the table; 337 of the 676 pairs are common).
constexpr uint32_t kCommonPairs[26] = {
    0x1bebd6e, 0x1164b15, 0x11efd97, 0x096c919, 0x1eff97f, 0x11e6939, 0x01e6995,
    0x01ac111, 0x2aef87f, 0x0000010, 0x0140114, 0x13cc9fb, 0x134d93b, 0x13cfd7d,
    0x0feff6f, 0x11eedbd, 0x0100000, 0x17efd7f, 0x13efdf5, 0x1defdbd, 0x08eb97f,
    0x0b6d937, 0x0026191, 0x00c9115, 0x00cf100, 0x0004010};

// Letters that read as random text, not as words: by default 3 or more uncommon pairs, and 30 % or
// more of the pairs inside words (split at case changes, HTTPServer -> HTTP Server, and at any
// character not a letter). Random letters of 12-24 characters pass 87 % of the time
// (QaAZHafTucxgaEnj, CTSARMnoCXjjv); identifiers made of words seldom do (ClientSecretValue,
// KeePassXC, PostgresPassword: none; 0.8 % of the 40,154 names of 8-30 letters in the
// Python modules installed here, mostly abbreviations such as gslcdfgammaPinv).
bool LooksRandomLetters(std::string_view v, size_t min_uncommon = 3, size_t min_percent = 30) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto up = [](char c) { return c >= 'A' && c <= 'Z'; };
  size_t pairs = 0, uncommon = 0;
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    const char a = v[i], b = v[i + 1];
    if (!letter(a) || !letter(b)) continue;
    if (!up(a) && up(b)) continue;  // myName: a new word
    if (up(a) && up(b) && i + 2 < v.size() && v[i + 2] >= 'a' && v[i + 2] <= 'z')
      continue;  // HTTPServer: S starts a word
    pairs++;
    const int x = (a | 0x20) - 'a', y = (b | 0x20) - 'a';
    if (!((kCommonPairs[x] >> y) & 1)) uncommon++;
  }
  return uncommon >= min_uncommon && uncommon * 100 >= pairs * min_percent;
}

// A stored password hash, not a password: crypt's $id$ forms, Django's, Jupyter's, LDAP's,
// PostgreSQL's (SCRAM-SHA-256$..., md5 and 32 hex digits).
bool LooksHash(std::string_view v) {
  if (v.size() > 4 && v[0] == '$') {  // crypt: $2b$, $6$, $argon2id$, $y$, $pbkdf2-sha256$
    size_t k = 1;
    while (k < v.size() && k <= 14 && (std::islower(static_cast<unsigned char>(v[k])) ||
                                       std::isdigit(static_cast<unsigned char>(v[k])) || v[k] == '-'))
      ++k;
    if (k > 1 && k < v.size() && v[k] == '$') return true;
  }
  for (std::string_view p :
       {"pbkdf2_sha256$", "pbkdf2_sha1$", "bcrypt$",       "bcrypt_sha256$", "argon2$", "argon2:",
        "scrypt:",        "sha1:",        "sha256:",       "sha512:",        "md5$",    "sha1$",
        "{ssha}",         "{sha}",        "{ssha256}",     "{ssha512}",      "{crypt}", "{pbkdf2}",
        "{bcrypt}",       "{argon2}",     "SCRAM-SHA-256$"})
    if (v.size() > p.size() && ContainsCaseless(v.substr(0, p.size()), p)) return true;
  // PostgreSQL's MD5 form (PgBouncer's userlist.txt, pg_authid): md5 and 32 hex digits.
  return v.size() == 35 && v.starts_with("md5") &&
         v.find_first_not_of("0123456789abcdef", 3) == std::string_view::npos;
}

// A file named where a password may be given (az login -p certs/sp-cert.pem, ssl_key:
// server.key): a name or path of plain characters with a key, certificate or text file's
// extension. Or an address, a port mapping or a version (docker's -p
// 127.0.0.1:27017:27017): digits, '.' and ':'.
bool LooksFileNameOrAddress(std::string_view v) {
  if (v.find_first_not_of("0123456789.:") == std::string_view::npos &&
      v.find_first_of(".:") != std::string_view::npos)
    return true;
  const size_t dot = v.rfind('.');
  if (dot == std::string_view::npos || dot == 0 ||
      v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-") !=
          std::string_view::npos)
    return false;
  std::string ext(v.substr(dot + 1));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view e :
       {"pem", "crt",  "cer", "key", "p12",  "pfx", "jks", "der", "csr",  "json",
        "txt", "conf", "cfg", "yml", "yaml", "env", "asc", "gpg", "kdbx", "keystore"})
    if (ext == e) return true;
  return false;
}

// Letters whose case changes at every other letter or more often, as random letters' does
// (ClWDfSuYOlYC: 8 changes in 12; ClientSecretValue 5 in 17). CamelCase of short words
// changes as often (GetElementById, isUpToDateFlag): the callers reject those first by the
// CamelCase test of LooksPlaceholder. Digits and symbols are skipped.
bool SwitchesCase(std::string_view v) {
  size_t letters = 0, switches = 0;
  int prev = 0;
  for (char c : v) {
    const int cls = (c >= 'A' && c <= 'Z') ? 1 : (c >= 'a' && c <= 'z') ? 2 : 0;
    if (!cls) continue;
    letters++;
    if (prev && cls != prev) switches++;
    prev = cls;
  }
  return letters >= 8 && switches * 2 >= letters;
}

bool LooksPlaceholder(std::string_view v);
bool MixedLowerDigits(std::string_view v);
bool RunTogetherWords(std::string_view v);

// The letter a digit or symbol stands for in leet spelling (4 and @ a, 0 o, 1 i, 3 e, 5 and
// $ s, 7 t), or 0.
char LeetLetter(char c) {
  static constexpr std::string_view kFrom = "4@0135$7", kTo = "aaoiesst";
  const size_t k = kFrom.find(c);
  return k == std::string_view::npos ? 0 : kTo[k];
}

// The symbols a chosen password ends in (Planet2018!, lion1990.).
constexpr std::string_view kTailSymbols = "!.#@$&*?%+-_";

// v[from..] is at most two of kTailSymbols.
bool SymbolTail(std::string_view v, size_t from) {
  if (v.size() - from > 2) return false;
  for (size_t k = from; k < v.size(); ++k)
    if (kTailSymbols.find(v[k]) == std::string_view::npos) return false;
  return true;
}

// A placeholder's or a name's word in a value (changeme, password, secret, your, dummy,
// hunter2, foobar, ...), also written with digits for letters (p4ssw0rd) and the XKCD
// example passphrase (correct horse battery staple) in any spelling.
bool HasPlaceholderWord(std::string_view v) {
  std::string leet(v);
  for (char& c : leet)
    if (const char l = LeetLetter(c)) c = l;
  // (hunter2, the famous example, first or not followed by a digit: Hunter2024 is one,
  // Velvet.hunter21& is chosen; scan version 14)
  for (size_t at = 0; (at = FindCaseless(leet, "hunter2", at)) != std::string::npos; ++at)
    if (at == 0 || at + 7 == leet.size() || !std::isdigit(static_cast<unsigned char>(v[at + 7])))
      return true;
  for (std::string_view w :
       {"changeme",   "change_me",   "change-me",   "changeit",   "password",  "passwd",
        "secret",     "your",        "placeholder", "dummy",      "redacted",  "sample",
        "insert",     "replace",     "token",       "foobar",     "notreal",   "fake",
        "privatekey", "private_key", "apikey",      "api_key",    "accesskey", "access_key",
        "credential", "passphrase",  "not-a-real",  "not_a_real", "notareal"})
    if (ContainsCaseless(leet, w)) return true;
  std::string letters;
  for (char c : v)
    if (std::isalpha(static_cast<unsigned char>(c))) letters.push_back(c);
  return ContainsCaseless(letters, "correcthorsebattery");
}

// A CamelCase name ending in a word that names a kind of code (SimpleTextWatcher,
// MinLengthValidator): a type's name, not a passphrase.
bool EndsInCodeWord(std::string_view v) {
  for (std::string_view w :
       {"Watcher",   "Validator", "Handler",  "Manager", "Provider",   "Factory", "Service",
        "Helper",    "Builder",   "Listener", "Adapter", "Controller", "Model",   "View",
        "Type",      "Class",     "Text",     "Input",   "Field",      "Box",     "Error",
        "Exception", "Config",    "Options",  "Request", "Response"})
    if (v.ends_with(w)) return true;
  return false;
}

// A default's or a test fixture's password word (admin123, Test1234!, Welcome1!).
bool HasDefaultPasswordWord(std::string_view v) {
  for (std::string_view w : {"test", "admin", "demo", "welcome", "qwerty", "letmein", "default",
                             "guest", "root", "changeit", "example"})
    if (ContainsCaseless(v, w)) return true;
  return false;
}

// CamelCase words, short ones too (GetUserById2, GpioChip0IsUp): three quarters of the
// letters in runs of a capital and lower case letters, and 30 % vowels (y counted).
bool CamelWords(std::string_view v) {
  size_t letters = 0, in_words = 0, vowels = 0;
  bool word = false;  // in a run that a capital started
  for (size_t i = 0; i < v.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(v[i]);
    if (!std::isalpha(c)) {
      word = false;
      continue;
    }
    ++letters;
    if (std::string_view("aeiouyAEIOUY").find(static_cast<char>(c)) != std::string_view::npos)
      ++vowels;
    if (std::isupper(c))
      word = i + 1 < v.size() && std::islower(static_cast<unsigned char>(v[i + 1]));
    in_words += word;
  }
  return letters > 0 && in_words * 4 >= letters * 3 && vowels * 10 >= letters * 3;
}

constexpr std::string_view kBase64Chars =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";

// Whether `pred` holds for a piece of v between '/' (the first and last pieces included).
template <typename Pred>
bool AnyPiece(std::string_view v, Pred pred) {
  for (size_t from = 0; from <= v.size();) {
    const size_t to = std::min(v.find('/', from), v.size());
    if (pred(v.substr(from, to - from))) return true;
    from = to + 1;
  }
  return false;
}

// A piece of a base64 value between '/' (its leading '+' and '=' dropped) that reads as
// random: not a placeholder or CamelCase words, and its letters' pairs or case changes as
// random text's.
bool RandomPiece(std::string_view piece) {
  while (!piece.empty() && (piece[0] == '+' || piece[0] == '=')) piece.remove_prefix(1);
  return !piece.empty() && !LooksPlaceholder(piece) && !CamelWords(piece) &&
         (LooksRandomLetters(piece, 3, 25) || SwitchesCase(piece));
}

// A base64 value holding '/' or starting with '+' or '/' (a key's bytes, not a path or a
// reference): base64's alphabet only, and a piece between '/' of 12 or more characters that
// mixes upper case, lower case and digits and whose letters read as random
// (/X/Dngl7FqaKIoh7W4XnpF, +f5npOMjzXd32/Rv1OV9; not /usr/share/X11/xkb, ~/MyApplication2).
// 3 % of random base64 values of 16 characters start with '+' or '/' and 22 % hold a '/'.
bool LooksBase64Secret(std::string_view v) {
  return v.size() >= 16 && v.find_first_not_of(kBase64Chars) == std::string_view::npos &&
         AnyPiece(v, [](std::string_view piece) {
           const CharClasses c = ClassesOf(piece);
           return piece.size() >= 12 && c.upper && c.lower && c.digit && RandomPiece(piece);
         });
}

// LooksPlaceholder's test of a value whose first character marks it (v not empty).
bool MarkedReference(std::string_view v) {
  // A reference, path, anchor or tag ($VAR, ${X}, %APPDATA%, ~/x, /run/x, ./x, &a, *a, @file,
  // !secret x, #fff): its first character marks it and the rest is plain. A value whose rest
  // holds other symbols is a password that happens to start with one (!zaF-LcB3%).
  static constexpr std::string_view kStarts = "$/~%.&*#^+@!";
  if (kStarts.find(v[0]) == std::string_view::npos) return false;
  bool plain = true;
  // Up to a comment or an anchor ($dir/cakey.pem# ..., /docs/api#authentication,
  // $DB_PASS#prod, server.key#L12): a '#' at the end or before a symbol, after a path or a
  // name with a '.', or before a lower-case word or a line number; a '#' between letters
  // of both cases is part of a password (!uScrCth#GKw, @BiR6#xI%s7l29I!).
  size_t hash = v.find('#', 1);
  if (hash != std::string_view::npos && hash + 1 < v.size() &&
      std::isalnum(static_cast<unsigned char>(v[hash + 1]))) {
    const std::string_view before = v.substr(0, hash), after = v.substr(hash + 1);
    const bool anchor = before.find_first_of("/.") != std::string_view::npos ||
                        after.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") ==
                            std::string_view::npos ||
                        (after.size() > 1 && after[0] == 'L' &&
                         after.find_first_not_of("0123456789", 1) == std::string_view::npos);
    if (!anchor) hash = std::string_view::npos;
  }
  for (char c : v.substr(1, hash == std::string_view::npos ? hash : hash - 1))
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("_.-/:{}()~$%\\").find(c) == std::string_view::npos)
      plain = false;
  // ... unless the rest mixes upper case, lower case and digits, holds no '/' and is no
  // placeholder itself (!kZtvxv7JqQShYY837aR, $X5kraj7QCWu: a generated password with a
  // symbol first; not %AppData%, ~/Notes1, &defaultSettings1).
  const std::string_view rest = v.substr(1);
  const CharClasses rc = ClassesOf(rest);
  return plain &&
         !(rc.upper && rc.lower && rc.digit && rest.find('/') == std::string_view::npos &&
           !LooksPlaceholder(rest)) &&
         !LooksBase64Secret(v);
}

// LooksPlaceholder's test of a value holding "%s".
bool PrintfFormat(std::string_view v) {
  // A printf format (%s@%s, user_%s, Signature=%s&Timestamp=%d), not a generated password
  // that holds one "%s" among letters of both cases, digits and other symbols
  // (@BiR6#xI%s7l29I!; from scan version 15 also 12 or more characters with "%s" between
  // letters or digits, bVL1No%sWxUZXlu): a format has it twice, or beside a separator, or
  // with another conversion.
  const size_t f = v.find("%s");
  if (f == std::string_view::npos) return false;
  const CharClasses c = ClassesOf(v);
  static constexpr std::string_view kSeparators = "=&:@/_.-,;|";
  auto alnum = [&](size_t i) { return std::isalnum(static_cast<unsigned char>(v[i])) != 0; };
  const bool inside = v.size() >= 12 && f > 0 && f + 2 < v.size() && alnum(f - 1) && alnum(f + 2);
  bool format = !(c.upper && c.lower && c.digit &&
                  (v.find_first_of("!#&*+=?@^~") != std::string_view::npos || inside)) ||
                v.find("%s", f + 2) != std::string_view::npos ||
                (f > 0 && kSeparators.find(v[f - 1]) != std::string_view::npos) ||
                (f + 2 < v.size() && kSeparators.find(v[f + 2]) != std::string_view::npos);
  for (size_t k = v.find('%'); !format && k != std::string_view::npos; k = v.find('%', k + 1))
    if (k != f && k + 1 < v.size() &&
        std::string_view("diuxXfcp%").find(v[k + 1]) != std::string_view::npos)
      format = true;
  return format;
}

// Values of keyword rules that are not secrets: references, paths, identifiers, words.
// An e-mail address in lower case (anonymous FTP's password by convention: .netrc's "login
// anonymous password bob@h.test"; scan version 13).
bool LooksEmailAddress(std::string_view v) {
  const size_t at = v.find('@');
  return at != std::string_view::npos && at > 0 && v.find('.', at) != std::string_view::npos &&
         v.back() != '.' && v.find('@', at + 1) == std::string_view::npos &&
         v.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789._+-@") == std::string_view::npos;
}

bool LooksPlaceholder(std::string_view v) {
  if (v.empty()) return true;
  if (MarkedReference(v)) return true;
  // An Ethereum address (public); a sealed-secrets ciphertext (meant to be committed).
  if (v.size() == 42 && v.starts_with("0x") &&
      v.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string_view::npos)
    return true;
  if (v.starts_with("pk.eyJ")) return true;  // a Mapbox public token (sk.: secret)
  // LiteLLM's reference to an environment variable (os.environ/NAME; scan version 14).
  if (v.starts_with("os.environ")) return true;
  // PostHog's project key (phc_; phx_ is a personal key) and Datadog's client token (pub and
  // 32 hex digits): made for browsers' code (scan version 13).
  if (v.starts_with("phc_")) return true;
  if (v.size() == 35 && v.starts_with("pub") &&
      v.find_first_not_of("0123456789abcdef", 3) == std::string_view::npos)
    return true;
  if (v.size() >= 200 && v.starts_with("Ag") &&
      v.find_first_not_of(kBase64Chars) == std::string_view::npos)
    return true;
  if (LooksHash(v)) return true;
  if (LooksFileNameOrAddress(v)) return true;
  if (LooksEmailAddress(v)) return true;

  for (std::string_view s :
       {"${", "{{", "$(", "%(", "://", "xxxx", "XXXX", "****", "...", "----", "____"})
    if (v.find(s) != std::string_view::npos) return true;
  if (PrintfFormat(v)) return true;
  // A path of lower case words (prod/api/key, secret/data/app: a secret's name in a store),
  // not random letters with a '/' (2yvwg/3owbfk, base64 of one case).
  if (v.find('/') != std::string_view::npos &&
      v.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_./-") == std::string_view::npos &&
      !LooksRandomLetters(v, 3, 30))
    return true;
  // A list of words (read,write,admin; en;de;fr): lower case letters, '_' and '-' between
  // ',' or ';'.
  if (v.find_first_of(",;") != std::string_view::npos &&
      v.find_first_not_of("abcdefghijklmnopqrstuvwxyz_-,; ") == std::string_view::npos)
    return true;
  {
    // An expression over a constant (SCRAMBLE_LENGTH*2+1, ERROR_BASE+185).
    size_t k = 0;
    while (k < v.size() && (std::isupper(static_cast<unsigned char>(v[k])) ||
                            std::isdigit(static_cast<unsigned char>(v[k])) || v[k] == '_'))
      ++k;
    if (k >= 4 && k < v.size() && v.substr(0, k).find('_') != std::string_view::npos &&
        std::string_view("+-*/|").find(v[k]) != std::string_view::npos)
      return true;
  }
  if (v.find('%') != std::string_view::npos) {
    // Percent-escaped (URLs): judge the decoded length.
    size_t n = 0;
    for (size_t k = 0; k < v.size(); ++k, ++n)
      if (v[k] == '%' && k + 2 < v.size() && std::isxdigit(static_cast<unsigned char>(v[k + 1])) &&
          std::isxdigit(static_cast<unsigned char>(v[k + 2])))
        k += 2;
    if (n < 8) return true;
  }
  if (HasPlaceholderWord(v)) return true;
  // A validation rule (required|min:8), a regular expression (^[a-zA-Z0-9!@#]{6,16}$).
  if (v.starts_with("required|") || v.find("|min:") != std::string_view::npos ||
      (v.front() == '^' && (v.back() == '$' || v.find("]{") != std::string_view::npos)))
    return true;
  if (v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") ==
          std::string_view::npos &&
      std::isupper(static_cast<unsigned char>(v.front())) && EndsInCodeWord(v))
    return true;                                               // a type's name (SimpleTextWatcher)
  while (v.size() > 1 && v.back() == '=') v.remove_suffix(1);  // base64 padding or a "k=" list
  if (v.find('=') != std::string_view::npos &&
      v.find_first_of("0123456789") == std::string_view::npos && !LooksRandomLetters(v))
    return true;  // a=b lists of words
  bool upper = false, lower = false, other = false;
  size_t digits = 0;
  int upper_n = 0, lower_n = 0, switches = 0, prev = 0;
  for (char c : v) {
    int cls = 0;
    if (c >= '0' && c <= '9') {
      digits++;
    } else if (c >= 'A' && c <= 'Z') {
      upper = true, upper_n++, cls = 1;
    } else if (c >= 'a' && c <= 'z') {
      lower = true, lower_n++, cls = 2;
    } else if (c != '_' && c != '-' && c != '.') {
      other = true;
    }
    if (cls && prev && cls != prev) switches++;
    if (cls) prev = cls;
  }
  const bool digit = digits > 0;
  if (!upper && !other) {
    // lower-case words joined by - _ . with digits (scram-sha-256, aes-256-cbc): a setting;
    // not 4 or more words over 20 characters (a diceware passphrase: lunar-fossil-rewire-...).
    size_t seg = 0, longest = 0, parts = 1;
    for (char c : v) {
      if (c == '-' || c == '_' || c == '.') {
        parts++, seg = 0;
      } else {
        longest = std::max(longest, ++seg);
      }
    }
    if (parts >= 4 && v.size() >= 20 && !digit && v.find('.') == std::string_view::npos)
      return false;  // a passphrase of words
    if (parts >= 2 && longest <= 8) return true;
  }
  if (upper && !lower && !other && v.find('_') != std::string_view::npos) return true;  // CONST_NAME
  if (digits <= 2 && !other) {
    // CamelCase words (Ec2InstanceMetadata too): most letters sit in "Xyyy" runs (an upper
    // case letter, then 2+ lower) and read like words: 30 % or more vowels (ClientSecretValue
    // 41 %). Random letters hold 10 vowels in 52 (19 %) and form such runs too, half of the
    // time over half the value.
    size_t in_words = 0;
    for (size_t i = 0; i < v.size();) {
      size_t j = i + 1;
      if (std::isupper(static_cast<unsigned char>(v[i])))
        while (j < v.size() && std::islower(static_cast<unsigned char>(v[j]))) ++j;
      if (j - i >= 3) in_words += j - i;
      i = j;
    }
    const size_t vowels = CountVowels(v);
    // With a digit or two, three quarters in words (Ec2InstanceMetadata; random text with a
    // digit, such as aUnArl63XykWZeiNNCii, reaches half).
    const size_t need = digits ? v.size() * 3 : v.size();
    // ... unless the letter pairs read as random: CamelCase words of random letters hold
    // uncommon pairs even when short (IFItouBkPEwj: bk, wj), so 2 and a fifth of the pairs
    // suffice here, 3 and a quarter below (mixed-case identifiers of 8-30 letters in the
    // installed Python modules and headers: 1.1 % more taken for random, random letters of
    // 12-20: 1.9 -> 0.8 % taken for names).
    if (in_words * (digits ? 4 : 2) >= need && vowels * 10 >= v.size() * 3 &&
        !LooksRandomLetters(v, 2, 20))
      return true;
  }
  if (digit || other) return false;
  // Letters only (and _ - .): a word or identifier unless the case changes like random text,
  // or, in lower case, 14 or more letters with under a third vowels (a Gmail app password,
  // 19 % on average; words hold about 40 %).
  if (lower && !upper && v.size() >= 14 && v.find_first_of("_-.") == std::string_view::npos &&
      CountVowels(v) * 3 < v.size() && Entropy(v) >= 3.0)
    return false;
  // ... or 10 or more lower case letters whose pairs read as random, by a stricter measure
  // than mixed case (words run together, bobwillknow, meet at uncommon pairs): 4 or more
  // uncommon pairs, 34 % of them (40 % in scan version 9; 2 % of 12 random letters and
  // digits have no digit; random lower case letters average 50 % uncommon pairs; 2,000 run-
  // together words of a licence's 600 commonest under "password:": 217 found at 40 %, 218
  // at 34 %, none of the corpus's files more).
  if (lower && !upper && v.size() >= 10 && v.find_first_of("_-.") == std::string_view::npos &&
      LooksRandomLetters(v, 4, 34))
    return false;
  if (!(upper && lower)) return true;
  return (upper_n < 3 || lower_n < 3 || switches * 4 < static_cast<int>(v.size())) &&
         !LooksRandomLetters(v, 3, 25);
}

// The word a match names its value by: the text of [from, secret_from) after its last blank,
// less the quotes and operators before the value (`"nextPageToken": "` -> `"nextPageToken`).
std::string_view KeyBefore(std::string_view content, size_t from, size_t secret_from) {
  size_t end = secret_from;
  while (end > from && std::string_view(" \t\"'=:>,").find(content[end - 1]) != std::string_view::npos)
    --end;
  size_t begin = end;
  while (begin > from && !std::isspace(static_cast<unsigned char>(content[begin - 1]))) --begin;
  return content.substr(begin, end - begin);
}

// A value passed in the query of a status badge's image URL (`…/project.svg?style=svg&
// circle-token=…`, `…/badge.svg?token=…`): badge tokens are read-only and made to be
// published in READMEs (CircleCI's and Codecov's docs say so), and a README is where they
// are. The URL is the run of non-blank characters around the key; its path, before the
// `?`, ends in .svg or .png or holds a `badge` part.
bool InBadgeUrl(std::string_view content, size_t secret_from) {
  size_t begin = secret_from;
  while (begin > 0 && !std::isspace(static_cast<unsigned char>(content[begin - 1])) &&
         content[begin - 1] != '(' && content[begin - 1] != '"' && content[begin - 1] != '\'' &&
         secret_from - begin < 2048)
    --begin;
  const std::string_view url = content.substr(begin, secret_from - begin);
  const size_t scheme = url.find("://");
  const size_t query = url.find('?');
  if (scheme == std::string_view::npos || query == std::string_view::npos || query < scheme)
    return false;
  const std::string_view path = url.substr(scheme + 3, query - scheme - 3);
  auto ends = [&](std::string_view x) {
    return path.size() >= x.size() && ContainsCaseless(path.substr(path.size() - x.size()), x);
  };
  return ends(".svg") || ends(".png") || ContainsCaseless(path, "/badge");
}

// A Python mapping placeholder, %(name) (of "%(name)s"): a bare "%(" is two characters that
// a random secret may hold (Django's keys are drawn from an alphabet that has both).
bool HasPercentMapping(std::string_view v) {
  for (size_t at = v.find("%("); at != std::string_view::npos; at = v.find("%(", at + 1)) {
    size_t i = at + 2;
    while (i < v.size() && (std::isalnum(static_cast<unsigned char>(v[i])) || v[i] == '_')) ++i;
    if (i > at + 2 && i < v.size() && v[i] == ')') return true;
  }
  return false;
}

// Half the value or more in runs of 4 or more of a sequence (three quarters in runs of 3:
// abc123def456): ascending letters or digits (abcdef, 123456), a keyboard row (qwerty,
// asdfgh, zxcvbn), or such a run in every other character (a1b2c3d4, 1a2b3c4d). Values of
// 8 to 255 characters (longer ones are not judged). Made-up values:
// random text seldom holds even one such run (a 64-digit hex key, 1 time in 1,000 a run of 5).
bool MostlySequences(std::string_view v) {
  if (v.size() < 8 || v.size() > 255) return false;
  static constexpr std::string_view kRows[] = {"qwertyuiop", "asdfghjkl", "zxcvbnm"};
  auto follows = [](char a, char b) {
    a = static_cast<char>(std::tolower(static_cast<unsigned char>(a)));
    b = static_cast<char>(std::tolower(static_cast<unsigned char>(b)));
    if (b == a + 1 && ((a >= 'a' && a < 'z') || (a >= '0' && a < '9'))) return true;
    for (std::string_view row : kRows) {
      const size_t k = row.find(a);
      if (k != std::string_view::npos && k + 1 < row.size() && row[k + 1] == b) return true;
    }
    return false;
  };
  // in4: in a run of 4 or more; in3: of 3 or more (abc123def456: runs of 3 making three
  // quarters of the value or more count too).
  std::array<bool, 256> in4{}, in3{};
  std::array<uint8_t, 256> len{};
  for (size_t stride = 1; stride <= 2; ++stride) {
    for (size_t i = 0; i < v.size(); ++i) {
      len[i] = i >= stride && follows(v[i - stride], v[i]) ? len[i - stride] + 1 : 1;
      // A run reaching 3 (4) marks its earlier members once; each later one marks itself.
      const size_t back3 = len[i] == 3 ? 3 : len[i] > 3 ? 1 : 0;
      const size_t back4 = len[i] == 4 ? 4 : len[i] > 4 ? 1 : 0;
      for (size_t k = 0; k < back3; ++k) in3[i - k * stride] = true;
      for (size_t k = 0; k < back4; ++k) in4[i - k * stride] = true;
    }
  }
  size_t n4 = 0, n3 = 0;
  for (size_t i = 0; i < v.size(); ++i) n4 += in4[i], n3 += in3[i];
  return n4 * 2 >= v.size() || n3 * 4 >= v.size() * 3;
}

// Filler that stands in for a secret in templates and documentation, whatever the rule:
// runs of x/X/*, a character repeated 6 times or making half of the value, <...>, ${...},
// {{...}}, %(name), the words of "put yours here", and
// sequences (MostlySequences). `markers` false: the value is drawn
// from an alphabet that holds < > $ { } % (WordPress's keys), so those mark nothing.
bool LooksFiller(std::string_view v, bool markers = true) {
  std::array<uint32_t, 256> counts{};
  size_t run = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(v[i]);
    counts[c]++;
    run = (i > 0 && v[i - 1] == v[i]) ? run + 1 : 1;
    if (run >= 6 || (run >= 4 && (c == 'x' || c == 'X' || c == '*'))) return true;
  }
  if (v.size() >= 8)
    for (uint32_t n : counts)
      if (n * 2 >= v.size()) return true;
  if (MostlySequences(v)) return true;
  if (markers) {
    // A template's or a document's placeholder: <your-token>, <%= ENV['X'] %>, ${X}, {{x}};
    // a lone '<' or '>' inside is a symbol of a generated password (V<PzoU0xCB8bP2h1, scan
    // version 13).
    if (!v.empty() && (v.front() == '<' || v.back() == '>')) return true;
    if (const size_t lt = v.find('<');
        lt != std::string_view::npos && v.find('>', lt) != std::string_view::npos)
      return true;
    for (std::string_view s : {"${", "{{"})
      if (v.find(s) != std::string_view::npos) return true;
    if (HasPercentMapping(v)) return true;
  }
  for (std::string_view w : {"changeme", "change_me", "change-me", "your_", "your-", "yourkey",
                             "yourtoken", "_here", "-here", "placeholder", "replace_me",
                             "replaceme", "dummy"})
    if (ContainsCaseless(v, w)) return true;
  return false;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

// Standard or URL-safe base64 up to the first byte outside the alphabet (padding ends it).
std::string DecodeBase64(std::string_view s) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    int v = Base64Value(c);
    if (v < 0) break;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

// s with every `intro` followed by two hex digits replaced by that byte: percent-encoding
// (intro "%"), fish's escapes in fish_variables (intro "\\x").
std::string DecodeHexEscapes(std::string_view s, std::string_view intro) {
  auto hex = [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (c | 0x20) - 'a' + 10;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const size_t d = i + intro.size();
    if (s.substr(i, intro.size()) == intro && d + 1 < s.size() &&
        std::isxdigit(static_cast<unsigned char>(s[d])) &&
        std::isxdigit(static_cast<unsigned char>(s[d + 1]))) {
      out.push_back(static_cast<char>(hex(s[d]) * 16 + hex(s[d + 1])));
      i = d + 1;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// A base64 run starting at `from` that decodes to "-----BEGIN ... PRIVATE KEY...-----"
// and a body: its end, or 0 when it is something else (a certificate, a public key).
size_t Base64PemEnd(std::string_view content, size_t from) {
  size_t end = from;
  while (end < content.size() && end - from < kPemForward &&
         (Base64Value(content[end]) >= 0 || content[end] == '='))
    ++end;
  std::string pem = DecodeBase64(content.substr(from, std::min<size_t>(end - from, 1024)));
  if (!pem.starts_with("-----BEGIN ")) return 0;
  size_t close = pem.find("-----", 11);
  if (close == std::string::npos || close > 60) return 0;
  if (pem.substr(11, close - 11).find("PRIVATE KEY") == std::string::npos) return 0;
  size_t body = 0;
  for (size_t i = close + 5; i < pem.size() && body < 40; ++i)
    if (Base64Value(pem[i]) >= 0 && pem[i] != '-' && pem[i] != '_') ++body;
  return body >= 40 ? end : 0;
}

// The line `from` lies on is a full line of a wrapped base64 body (PEM 64, OpenSSH 70,
// MIME 76: 60 to 80 characters of the alphabet) and the line before it is one of the same
// width.
bool InBase64Body(std::string_view content, size_t from) {
  size_t width = 0;
  auto full_line = [&](size_t start, size_t end) {
    if (end > start && content[end - 1] == '\r') --end;
    if (end - start < 60 || end - start > 80 || (width && end - start != width)) return false;
    for (size_t i = start; i < end; ++i)
      if (Base64Value(content[i]) < 0 || content[i] == '-' || content[i] == '_') return false;
    width = end - start;
    return true;
  };
  size_t start = content.rfind('\n', from);
  if (start == std::string_view::npos || start == 0) return false;
  size_t end = content.find('\n', from);
  if (end == std::string_view::npos) end = content.size();
  if (!full_line(start + 1, end)) return false;
  size_t prev = content.rfind('\n', start - 1);
  return full_line(prev == std::string_view::npos ? 0 : prev + 1, start);
}

bool PassphraseWords(std::string_view v);
bool HumanPassword(std::string_view v);
bool WordsPassword(std::string_view v);

// Base64 of "user:password" whose password is not a placeholder.
bool RealBasicAuth(std::string_view secret) {
  std::string plain = DecodeBase64(secret);
  size_t colon = plain.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  for (unsigned char c : plain)
    if (c < 0x20 || c >= 0x7f) return false;
  std::string_view pw = std::string_view(plain).substr(colon + 1);
  return pw.size() >= 6 && !LooksFiller(pw) &&
         (PassphraseWords(pw) || WordsPassword(pw) || HumanPassword(pw) ||
          (Entropy(pw) >= 2.3 && !LooksPlaceholder(pw)));
}

// 8-4-4-4-12 hex digits.
bool LooksUuid(std::string_view v) {
  if (v.size() != 36) return false;
  for (size_t i = 0; i < v.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? v[i] != '-' : !std::isxdigit(static_cast<unsigned char>(v[i]))) return false;
  }
  return true;
}

// A file name that marks a template to copy (api_key.example, token.sample, secret.dist).
bool TemplateName(std::string_view base) {
  for (std::string_view t : {".example", ".sample", ".dist", ".template", ".tmpl", ".default"})
    if (ContainsCaseless(base, t)) return true;
  return false;
}

// A one-line file's text without its final newline (\n or \r\n).
std::string_view WithoutLineEnd(std::string_view head) {
  if (!head.empty() && head.back() == '\n') head.remove_suffix(1);
  if (!head.empty() && head.back() == '\r') head.remove_suffix(1);
  return head;
}

// A whole file that is one secret (PathRule::whole_file_secret): `head` is the file when it
// is shorter than the head read. One line, a final newline allowed; two classes of
// characters at least (digits alone are a counter or an id).
bool OneLineSecret(std::string_view head) {
  if (head.size() > 202) return false;
  head = WithoutLineEnd(head);
  if (head.size() < 8 || head.size() > 200) return false;
  for (unsigned char c : head)
    if (c <= 0x20 || c >= 0x7f) return false;
  // A record of fields (a passwd line, root:x:0:0:...), not a password.
  if (std::count(head.begin(), head.end(), ':') >= 3) return false;
  if (ClassesOf(head).Count() < 2) return false;
  // user:hash (an .htpasswd line) and a UUID (an instance or device id) hold no secret.
  if (const size_t colon = head.find(':');
      colon != std::string_view::npos && LooksHash(head.substr(colon + 1)))
    return false;
  if (LooksUuid(head)) return false;
  // (Scan version 12: or a chosen password of a word and a number, Bridge88 in restic's
  // password file, whose repeats keep it under 3.0 bits; a file's name makes it one.)
  return (Entropy(head) >= 3.0 || HumanPassword(head)) && !LooksPlaceholder(head) &&
         !LooksFiller(head) && !LooksHash(head) && !IsExample(head);
}

bool WholeFileSecret(std::string_view head) {
  if (OneLineSecret(head)) return true;
  // (Scan version 14: or two lines of 16 or more characters each, each a token at 3.5
  // bits: an API key's id and its secret, Kraken's kraken.key.)
  const size_t nl = head.find('\n');
  if (nl == std::string_view::npos || nl + 1 >= head.size() || head.size() > 404) return false;
  const std::string_view first = WithoutLineEnd(head.substr(0, nl + 1)),
                         second = WithoutLineEnd(head.substr(nl + 1));
  if (second.find('\n') != std::string_view::npos) return false;
  for (std::string_view line : {first, second})
    if (line.size() < 16 || Entropy(line) < 3.5 || !OneLineSecret(line)) return false;
  return true;
}

// A whole file that is a raw private key (PathRule::raw_key): one line of 64 or 128 hex
// digits, 0x before them allowed, at 3.0 bits per digit or more (random hex digits average
// 3.8; 0101... or a run of one digit do not pass), not filler (0123456789abcdef...) and
// not a published example. `name`: the file's name; a checksum's (key.sha256,
// signing-key.checksum) holds a digest, not a key.
bool RawHexKey(std::string_view name, std::string_view head) {
  for (std::string_view w : {"sha1", "sha224", "sha256", "sha384", "sha512", "md5", ".sum",
                             "checksum", "digest", "hash"})
    if (ContainsCaseless(name, w)) return false;
  if (head.size() > 132) return false;
  head = WithoutLineEnd(head);
  if (head.starts_with("0x") || head.starts_with("0X")) head.remove_prefix(2);
  if (head.size() != 64 && head.size() != 128) return false;
  if (head.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos) return false;
  return Entropy(head) >= 3.0 && !LooksFiller(head) && !IsExample(head);
}

bool WordsPassword(std::string_view v);
bool WordsAndDigits(std::string_view v);

// PathRule::netrc_password: `password` followed by a value that is not an e-mail address
// (anonymous FTP's convention) among the head's blank-separated tokens, comments left out.
bool NetrcPassword(std::string_view head) {
  bool after_password = false;
  for (size_t i = 0; i < head.size();) {
    while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
    size_t j = i;
    while (j < head.size() && !std::isspace(static_cast<unsigned char>(head[j]))) ++j;
    const std::string_view token = head.substr(i, j - i);
    if (token.empty()) break;
    if (token[0] == '#') {  // a comment, to the line's end
      j = std::min(head.find('\n', i), head.size());
      after_password = false;
      i = j;
      continue;
    }
    if (after_password && !LooksEmailAddress(token) && !LooksFiller(token)) return true;
    after_password = token == "password";
    i = j;
  }
  return false;
}

// A table's cell that holds a chosen password (PasswordTable): 8 to 64 printable
// characters without blanks (quotes around them dropped), not an address, a URL or a path,
// 3 classes of characters, words and a number, or a generated run of one case's letters and
// digits, within a bit of log2 of its length, not
// filler, an example, a hash or a placeholder.
bool PasswordCell(std::string_view v) {
  while (!v.empty() && (v.front() == '"' || v.front() == '\'')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '"' || v.back() == '\'')) v.remove_suffix(1);
  if (v.size() < 8 || v.size() > 64) return false;
  for (unsigned char c : v)
    if (c <= 0x20 || c >= 0x7f) return false;
  if (v.find('/') != std::string_view::npos) return false;  // a path or a URL
  if (const size_t eq = v.find('=');                        // key=value (ip=10.0.0.17)
      eq != std::string_view::npos && eq > 0 &&
      v.substr(0, eq).find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string_view::npos)
    return false;
  if (const size_t at = v.find('@');
      at != std::string_view::npos && v.find('.', at) != std::string_view::npos)
    return false;  // an address
  const bool words = WordsPassword(v) || PassphraseWords(v);  // (passphrases: scan version 13)
  // (or, scan version 13, 16 or more letters of one case and digits that read as generated:
  // PgBouncer's d30302d84a961b6ac19e31a9a56)
  const CharClasses cls = ClassesOf(v);
  const bool generated =
      v.size() >= 16 && cls.digit && cls.lower != cls.upper && !cls.other && !WordsAndDigits(v);
  if (cls.Count() < 3 && !words && !generated) return false;
  // (a generated run of 16 symbols or fewer cannot reach log2(n) - 1 when long: 3 bits)
  const double n = static_cast<double>(v.size());
  // (words are judged by their test, not by entropy: pepper.orbit.igloo.drizzle)
  const double need = words             ? 0.0
                      : cls.Count() < 3 ? std::min(3.0, std::log2(n) - 1.5)
                                        : std::log2(n) - 1.0;
  return Entropy(v) >= need && !LooksFiller(v) && !IsExample(v) && !LooksHash(v) &&
         (words || !LooksPlaceholder(v));
}

// A line's fields: split at tabs, '|', ',' or ';' when it holds one, else at blanks; each
// trimmed, empty ones dropped.
std::vector<std::string_view> TableFields(std::string_view line) {
  const bool marked = line.find_first_of("\t|,;") != std::string_view::npos;
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i <= line.size()) {
    size_t j = marked ? line.find_first_of("\t|,;", i) : line.find_first_of(" \t", i);
    if (j == std::string_view::npos) j = line.size();
    std::string_view f = line.substr(i, j - i);
    while (!f.empty() && (f.front() == ' ' || f.front() == '\r')) f.remove_prefix(1);
    while (!f.empty() && (f.back() == ' ' || f.back() == '\r')) f.remove_suffix(1);
    if (!f.empty()) out.push_back(f);
    i = j + 1;
  }
  return out;
}

// A note's or a table's file name: no extension, or .txt, .md, .csv, .tsv, .org, .log (not
// a source file, a completion script or a configuration format, which have rules of their
// own).
bool NoteName(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return true;
  std::string ext(name.substr(dot + 1));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view e : {"txt", "md", "csv", "tsv", "org", "log"})
    if (ext == e) return true;
  return false;
}

// PathRule::password_table: the complete lines of `head` (a file's first 12 KiB) hold a row
// of two or more fields whose password column (the one a header row names password, else
// the last; with `need_header`, only a named one) is a PasswordCell (passwords.txt: "gmail
// bob@x.org  Sat33Walrus?"; a browser's or KeePass's CSV export: name,url,username,password).
bool PasswordTable(std::string_view head, bool need_header) {
  long column = -1;
  for (size_t i = 0; i < head.size();) {
    size_t nl = head.find('\n', i);
    if (nl == std::string_view::npos) break;  // (a line the head cut short)
    const std::string_view line = head.substr(i, nl - i);
    i = nl + 1;
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string_view> fields = TableFields(line);
    if (fields.size() < 2) continue;
    bool header = false;
    for (size_t k = 0; k < fields.size(); ++k)
      for (std::string_view h : {"password", "passwd", "pass", "\"password\""})
        if (fields[k].size() == h.size() && ContainsCaseless(fields[k], h))
          column = static_cast<long>(k), header = true;
    if (header) continue;
    if (need_header && column < 0) return false;
    const std::string_view cell = column >= 0 && static_cast<size_t>(column) < fields.size()
                                      ? fields[static_cast<size_t>(column)]
                                      : fields.back();
    if (PasswordCell(cell)) return true;
  }
  return false;
}

// The words that name a password in prose-password's lead (languages other than English
// from scan version 14 as its expression has them; ContainsCaseless folds ASCII only).
// clang-format off
constexpr std::string_view kPasswordWords[] = {
    "pass", "pw", "psk", "pre-shared", "kennwort", "contrase", "senha", "wachtwoord", "parol",
    "has\xc5\x82o", "schl\xc3\xbcssel", "l\xc3\xb6senord", "losenord", "adgangskode", "salasana",
    "heslo", "jelsz", "sifre", "\xc5\x9fifre", "lozinka", "geslo",
    "\xd0\xbf\xd0\xb0\xd1\x80\xd0\xbe\xd0\xbb\xd1\x8c",
    "\xd0\x9f\xd0\xb0\xd1\x80\xd0\xbe\xd0\xbb\xd1\x8c", "\xe5\xaf\x86\xe7\xa0\x81",
    "\xe3\x83\x91\xe3\x82\xb9\xe3\x83\xaf\xe3\x83\xbc\xe3\x83\x89",
    "\xeb\xb9\x84\xeb\xb0\x80\xeb\xb2\x88\xed\x98\xb8"};
// clang-format on

// A value named in prose (Verify::kStrongValue): 10 or more characters mixing 3 of lower
// case, upper case, digits and symbols (a sentence's final '.' or ':' left out: `v` is
// trimmed, the caller moves the match's end), or both cases reading as random letters, not
// an address or a path, and nothing after it on its line but punctuation (a note's line,
// not a sentence that goes on: "the password is stored in ..."). `from`: the match's start.

bool StrongProseValue(std::string_view content, size_t from, size_t end, std::string_view& v) {
  while (!v.empty() && (v.back() == '.' || v.back() == ':')) v.remove_suffix(1);
  if (v.size() < 10) return false;
  // An address (jsmith1987@gmail.com) or a path of lower case words (tests/t0001-basic.sh).
  if (const size_t at = v.find('@');
      at != std::string_view::npos && v.find('.', at) != std::string_view::npos &&
      v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@._+-") ==
          std::string_view::npos)
    return false;
  if (v.find('/') != std::string_view::npos &&
      v.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789/._-") == std::string_view::npos)
    return false;
  // (A remark in parentheses may follow: "pw is X (rotate after)"; from scan version 13 any
  // remark after a value in quotes or backticks ("`admin` / `X` until SSO is ready") or
  // after a dash ("password to X - must not forget it").)
  size_t i = end;
  const bool quoted = v.data() > content.data() && i < content.size() &&
                      std::string_view("\"'`").find(content[i]) != std::string_view::npos &&
                      v.data()[-1] == content[i];
  if (quoted) ++i;
  while (i < content.size() && (content[i] == ' ' || content[i] == '\t')) ++i;
  if (i < content.size() && content[i] == '(') {
    const size_t close = content.find(')', i);
    const size_t eol = content.find('\n', i);
    if (close != std::string_view::npos && close < eol && close - i <= 80) i = close + 1;
  }
  const std::string_view rest = content.substr(std::min(i, content.size()));
  const bool remark = (quoted && i > end + 1) || rest.starts_with("\xe2\x80\x94") ||
                      rest.starts_with("\xe2\x80\x93") || rest.starts_with("- ");
  for (; !remark && i < content.size() && content[i] != '\n' && content[i] != '\r'; ++i)
    if (std::string_view(" \t.,:!?)\"'`").find(content[i]) == std::string_view::npos) return false;
  const CharClasses c = ClassesOf(v);
  // (a date, a time or a number: 2024-01-15T10:00)
  if (std::count_if(v.begin(), v.end(),
                    [](char ch) { return std::isalpha(static_cast<unsigned char>(ch)) != 0; }) < 2)
    return false;
  // Named by login or wifi and ':' alone (no password word, no "user / password"): a
  // network's or a user's name unless it reads as random (wifi home: jiaG29JzxYmO, not
  // WiFi: MyHomeNetwork5G).
  const std::string_view lead =
      content.substr(from, static_cast<size_t>(v.data() - content.data()) - from);
  bool named =
      lead.find(" /") != std::string_view::npos || lead.find("\t/") != std::string_view::npos;
  for (std::string_view w : kPasswordWords) named = named || ContainsCaseless(lead, w);
  // (scan version 13: where a password word names it and ':', "is" or "to" gives it, words
  // joined by . - _ are a passphrase, "wifi password: shadow.glacier.pebble", and words and a
  // number a chosen password, as under a password key; not after the word alone: "password
  // gssapi-with-mic" lists methods)
  const bool password_word =
      named && lead.find(" /") == std::string_view::npos &&
      lead.find("\t/") == std::string_view::npos &&
      (lead.find(':') != std::string_view::npos || lead.find(" is ") != std::string_view::npos ||
       lead.find(" to ") != std::string_view::npos);
  if (password_word && (PassphraseWords(v) || WordsPassword(v))) return true;
  // (scan version 14: lower-case letters and digits mixed as generated ones are, where a
  // password word names them: "пароль : tbb8betta9k6au6e")
  if (named && lead.find(" /") == std::string_view::npos && MixedLowerDigits(v)) return true;
  if (!(c.Count() >= 3 || (c.upper && c.lower && !c.digit && !c.other && LooksRandomLetters(v))))
    return false;
  if (!named) return LooksRandomLetters(v);
  return true;
}

// A short value (8-11 characters; 6 or 7 from scan version 14, a chosen password's shape
// alone) that ends at `end` of content and reads like a chosen
// password: closed by a quote or a tag or alone at the end of its line (more of it, or code
// after it, is for the other rules: `Password: UTF8String;`, `password= scmVersion= $(...)`),
// 3 of the 4 character classes, and at most a couple of repeats (its entropy within half a
// bit of log2 of its length, the most its length allows).
bool ShortPasswordLike(std::string_view content, size_t key, size_t end, std::string_view v) {
  if (v.back() == '=' || v.back() == ':') return false;  // the next key of a list
  for (char c : v)
    if (static_cast<unsigned char>(c) >= 0x80) return false;  // "Contraseña": a translation
  const char before = key > 0 ? content[key - 1] : '\n';
  const std::string_view lead = content.substr(0, key);
  size_t i = end;
  char after = i < content.size() ? content[i] : '\n';
  // An escaped quote closes a value inside a JSON string (\"password\": \"X\").
  if (after == '\\' && i + 1 < content.size() && (content[i + 1] == '"' || content[i + 1] == '\''))
    after = content[i + 1];
  // In a list of key=value pairs (User Id=x;Password=y; and mount's user=x,password=y,uid=0)
  // the list's separator ends the value; after docker's -e / --env a blank does.
  const bool in_list = (before == ';' || before == ',') && after == before;
  const bool env_option = (lead.ends_with("-e ") || lead.ends_with("--env ") ||
                           lead.ends_with("--env=")) && (after == ' ' || after == '\t');
  // On a command line of name=value pairs (MikroTik's /ppp secret add name=x password=y
  // profile=z; scan version 13) a blank ends the value when a pair came before and one follows.
  bool pairs = false;
  if (after == ' ' && before == ' ') {
    size_t j = i;
    while (j < content.size() && j < end + kLineLook && content[j] == ' ') ++j;
    size_t k = j;
    while (k < content.size() && k < j + 64 &&
           (std::isalnum(static_cast<unsigned char>(content[k])) || content[k] == '-' ||
            content[k] == '_' || content[k] == '.'))
      ++k;
    const size_t nl = lead.rfind('\n');
    const std::string_view line_lead = lead.substr(nl == std::string_view::npos ? 0 : nl + 1);
    pairs = k > j && k < content.size() && content[k] == '=' &&
            line_lead.find('=') != std::string_view::npos;
  }
  if (!in_list && !env_option && !pairs &&
      std::string_view("\"'`<").find(after) == std::string_view::npos) {
    while (i < content.size() && i < end + kLineLook && (content[i] == ' ' || content[i] == '\t'))
      ++i;
    if (i < content.size() && content[i] != '\n' && content[i] != '\r') return false;
  }
  // (Or upper and lower case letters that read as random letters: pQmZrtKwbX.)
  const CharClasses cls = ClassesOf(v);
  if (HumanPassword(v)) return true;
  // 6 or 7 characters (scan version 14) only as a word and a number (Coco45, Nala76!).
  if (v.size() < 8) return false;
  // Hex digits of one case, 9-11, letters and digits both (openssl rand -hex 5).
  if (v.size() >= 9 && cls.digit && cls.lower != cls.upper && !cls.other &&
      v.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos &&
      Entropy(v) >= std::log2(static_cast<double>(v.size())) - 1.0)
    return true;
  // (Or, scan version 13, 10 or 11 lower-case letters and digits mixed as generated ones are.)
  if (MixedLowerDigits(v)) return true;
  if (cls.Count() < 3 &&
      !(cls.upper && cls.lower && !cls.digit && !cls.other && LooksRandomLetters(v)))
    return false;
  // Test fixtures' and defaults' passwords (Test1234!, Admin@123, Welcome1!).
  for (std::string_view w : {"test", "admin", "demo", "welcome", "qwerty", "letmein", "default",
                             "guest", "user", "root", "pass"})
    if (ContainsCaseless(v, w)) return false;
  // (All four classes, as a chosen Pepper@7799 is: a repeat or two more, log2(n) - 1; three,
  // 1gl001988!, 3@gl35283, s2Wzum2xWs, one repeat more than before scan version 13.)
  const double slack = cls.Count() == 4 ? 1.0 : 0.75;
  return Entropy(v) >= std::log2(static_cast<double>(v.size())) - slack;
}

void AppendRedacted(std::string& out, std::string_view secret) {
  size_t keep = std::min<size_t>(4, secret.size() / 4);
  out.append(secret.substr(0, keep));
  out.append("****");
}

bool IsEncrypted(std::string_view content) {
  size_t i = 0;
  while (i < content.size() && i < 4096 &&
         (content[i] == ' ' || content[i] == '\n' || content[i] == '\r' || content[i] == '\t'))
    ++i;
  std::string_view head = content.substr(i);
  for (const char* m : EncryptedMarkers())
    if (head.starts_with(m)) return true;
  return false;
}

struct RawMatch {
  unsigned rule;
  unsigned long long from, to;                // the whole match
  unsigned long long secret_from, secret_to;  // the secret inside it
  unsigned long long last;                    // the end of Hyperscan's run it came from
  // Where the report's column and excerpt start when not at `from`: a second value of a
  // command line whose match starts at the command (ExtractRun) shows the text after the
  // first value, never the first value itself.
  unsigned long long shown = 0;
};

// A keyword rule's key that names a public value or a paging cursor (publicKeyToken, a .NET
// strong name; public_key; nextPageToken, NextContinuationToken, sync tokens), or something
// about a secret rather than the secret: password_hash, SECRET_KEY_ALGORITHM, token_id,
// credential_source, TOKEN_TTL (not HASH_SECRET, a key for hashing, nor Vault's secret_id).
bool KeyNamesNoSecret(std::string_view key) {
  for (std::string_view w : {"public", "pagetoken", "page_token", "continuation", "nexttoken",
                             "next_token", "synctoken", "sync_token", "cursor", "hashed"})
    if (ContainsCaseless(key, w)) return true;
  while (!key.empty() && !std::isalnum(static_cast<unsigned char>(key.back()))) key.remove_suffix(1);
  for (std::string_view w :
       {"hash",     "algorithm", "_alg",     "type",   "length",   "_len",       "size",
        "_file",    "path",      "_name",    "format", "version",  "expiry",     "expires",
        "sha256",   "sha512",    "sha1",     "md5",    "digest",   "bcrypt",     "_ttl",
        "timeout",  "source",    "provider", "_mode",  "method",   "_url",       "_uri",
        "endpoint", "header",    "prefix",   "policy", "rotation", "fingerprint"})
    if (key.size() >= w.size() && ContainsCaseless(key.substr(key.size() - w.size()), w))
      return true;
  return key.size() > 3 && (key.ends_with("_id") || key.ends_with("Id") || key.ends_with("ID")) &&
         !ContainsCaseless(key, "secret");
}

// Lower case words and digits (ubuntu2204lts, debian12bookworm): a run of 4 or more letters
// and no uncommon letter pair (LooksRandomLetters).
bool WordsAndDigits(std::string_view v) {
  size_t run = 0, longest = 0;
  for (char c : v) {
    run = (c >= 'a' && c <= 'z') ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest >= 4 && !LooksRandomLetters(v, 1, 0);
}

// Text a person can type: no control character but blanks and line ends (a match the
// regular expression could not place again is kept with the line before it: ExtractRun), no
// DEL, and few bytes outside UTF-8's sequences (a Latin-1 or cp1252 letter or three,
// Passwort=C7v64jO1_X7lmvT81\xfc: at most 3, and under a quarter of the value).
bool TypedText(std::string_view v) {
  size_t stray = 0;
  for (size_t i = 0; i < v.size();) {
    const auto c = static_cast<unsigned char>(v[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return false;
      ++i;
      continue;
    }
    size_t n = c >= 0xc2 && c < 0xe0   ? 2
               : c >= 0xe0 && c < 0xf0 ? 3
               : c >= 0xf0 && c < 0xf5 ? 4
                                       : 0;
    for (size_t k = 1; n > 0 && k < n; ++k)
      if (i + k >= v.size() || (static_cast<unsigned char>(v[i + k]) & 0xc0) != 0x80) n = 0;
    if (n == 0) {
      ++stray, ++i;
    } else {
      i += n;
    }
  }
  return stray <= 3 && stray * 4 < v.size();
}

// An encrypted value in braces: Jenkins' {AQAAAB...=} (credentials.xml), Maven's {...=}
// (mvn --encrypt-password); the key that opens it is kept elsewhere (scan version 14).
bool BracedCiphertext(std::string_view v) {
  return v.size() >= 22 && v.front() == '{' && v.back() == '}' &&
         v.substr(1, v.size() - 2).find_first_not_of(kBase64Chars) == std::string_view::npos;
}

// Scan version 14. Lower-case words run together (igloohazelwalnut): 15 to 64 letters a to z
// that read as words (not random letters, 25 to 55 % vowels), no placeholder's word, not
// one long word (a suffix such as -tion, -ment, -ness, -ability ends those).
bool RunTogetherWords(std::string_view v) {
  if (v.size() < 15 || v.size() > 64 ||
      v.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string_view::npos)
    return false;
  const size_t vowels = CountVowels(v);
  if (vowels * 100 < v.size() * 25 || vowels * 100 > v.size() * 55) return false;
  for (std::string_view s : {"tion", "sion", "ment", "ness", "ity", "able", "ible", "ing", "ings",
                             "ally", "ized", "ised", "ism", "ist", "ful", "less", "ous", "ive"})
    if (v.ends_with(s)) return false;
  return !LooksRandomLetters(v) && !HasPlaceholderWord(v) && !HasDefaultPasswordWord(v);
}

// 10 or more lower-case letters and digits mixed as generated ones are (bnv1j4t5h2): four or
// more changes between a letter and a digit, not words and digits.
bool MixedLowerDigits(std::string_view v) {
  const CharClasses cls = ClassesOf(v);
  if (v.size() < 10 || !cls.lower || !cls.digit || cls.upper || cls.other || WordsAndDigits(v))
    return false;
  size_t changes = 0;
  for (size_t k = 1; k < v.size(); ++k)
    changes += (std::isdigit(static_cast<unsigned char>(v[k])) != 0) !=
               (std::isdigit(static_cast<unsigned char>(v[k - 1])) != 0);
  return changes >= 4;
}

// The entropy a rule's secret needs: the rule's threshold, or for a keyword rule's value
// of hex digits (letters and digits both, 9 or more: a token_hex key; 12 or more before scan
// version 11) 2.7, and from 9 to 19 of them log2(n) - 1.5 (2.08 for 12, 2.5 for 16: 12 random hex
// digits fall under 2.7 one time in 7, 16 of them one time in 80, under these 1 in 500; scan
// version 9) unless they repeat a unit. 16 random hex digits hold 3.25 bits per character on
// average (at most 4, from 16 symbols), so the keyword rules' 3.2 let half of such keys through.
double EntropyNeeded(const ContentRule& rule, std::string_view secret) {
  if (!rule.generic) return rule.min_entropy;
  // A short value cannot reach much entropy: n characters hold at most log2(n) bits each
  // (3.58 for 12), and 9 % of random 12-character passwords of letters and digits fall
  // under 3.2 (a repeated character or two). From 8 to 18 characters, when the value mixes
  // upper case, lower case and digits as a generated password does, a keyword rule asks for
  // log2(n) - 1 at most (scan version 10; log2(n) - 0.75 to 15 characters from version 8):
  // under 1 in 10,000 random ones of 12 fall under it (13 in 10,000 under - 0.75); so does
  // a value that reads as random letters, not words (LooksRandomLetters, or its case
  // changing at every other letter, SwitchesCase), of both cases with or without symbols
  // (XzesHCwNzezC: 2.86 bits; Cbb!evG_fbDk; ClWDfSuYOlYC) or of lower case alone by the
  // stricter measure, and a value of lower case letters and digits (12 random ones fall
  // under 3.2 one time in 4, 16 of them 16 times in 1,000 and under log2(16) - 1 twice).
  // Other values (type names such as ConstStringPtr, ARNs, docstring tokens, escapes such as
  // \xa1\xa2) keep the threshold.
  const CharClasses cls = ClassesOf(secret);
  const bool mixed =
      (cls.lower && cls.upper &&
       (cls.digit || LooksRandomLetters(secret) || SwitchesCase(secret))) ||
      (cls.lower && cls.digit && !cls.upper && !cls.other && secret.size() >= 12 &&
       !WordsAndDigits(secret)) ||
      (cls.lower && !cls.upper && !cls.digit && !cls.other && LooksRandomLetters(secret, 4, 34));
  const double need =
      mixed && secret.size() >= 8 && secret.size() < 19
          ? std::min(rule.min_entropy, std::log2(static_cast<double>(secret.size())) - 1.0)
          : rule.min_entropy;
  if (secret.size() < 9) return need;
  bool letter = false, digit = false;
  for (char c : secret) {
    if (c >= '0' && c <= '9') digit = true;
    else if ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) letter = true;
    else return need;
  }
  if (!letter || !digit) return need;
  const double low = std::log2(static_cast<double>(secret.size())) - 1.5;  // under 2.7 to 18
  if (low >= 2.7) return std::min(need, 2.7);
  // A repeated unit (9e4f9a9e4f9a, deadbeefdeadbe) keeps 2.7.
  for (size_t unit = 1; unit <= secret.size() / 2; ++unit)
    if (secret.substr(unit) == secret.substr(0, secret.size() - unit)) return std::min(need, 2.7);
  return std::min(need, low);
}

// A password of words and a number (pickle_monkey.20, willow-tiger-90, Coffee-Monkey25): two
// or more words of 4 or more letters (lower case, the first letter of either case, a vowel
// among them) and a final run of 2 or more digits, 10 or more characters, joined by nothing
// but - _ . (settings such as aes-256-cbc, scram-sha-256, python-3.11 hold one such word at
// most; random text's letter runs mix cases: lmfYzSl_HpgDG570).
bool WordsPassword(std::string_view v) {
  if (v.size() < 10) return false;
  size_t words = 0, digits = 0, i = 0;
  while (i < v.size()) {
    const unsigned char c = static_cast<unsigned char>(v[i]);
    if (std::isalpha(c)) {
      if (digits) return false;  // the number ends the value
      size_t j = i + 1;
      while (j < v.size() && std::islower(static_cast<unsigned char>(v[j]))) ++j;
      if (j < v.size() && std::isupper(static_cast<unsigned char>(v[j]))) return false;
      const std::string_view word = v.substr(i, j - i);
      if (word.size() >= 4 && word.find_first_of("aeiouyAEIOUY") != std::string_view::npos) ++words;
      i = j;
    } else if (std::isdigit(c)) {
      ++digits, ++i;
    } else if (std::string_view("-_.").find(static_cast<char>(c)) != std::string_view::npos &&
               !digits) {
      ++i;
    } else {
      return false;
    }
  }
  // (scan version 11: three or more words and one final digit, falcon-canyon-oyster1)
  return (words >= 2 && digits >= 2) || (words >= 3 && digits == 1);
}

// Only a closing quote and blanks follow `to` on its line (at most kLineLook blanks are
// looked at, so a streamed scan finds what a whole-file scan finds).
bool EndsLine(std::string_view content, size_t to) {
  size_t i = to;
  if (i < content.size() && (content[i] == '"' || content[i] == '\'')) ++i;
  const size_t stop = std::min<size_t>(content.size(), i + kLineLook);
  while (i < stop && (content[i] == ' ' || content[i] == '\t' || content[i] == '\r')) ++i;
  if (i == stop && stop < content.size()) return false;  // kLineLook blanks: not a line end
  return i >= content.size() || content[i] == '\n';
}

// Scan version 11. A passphrase of words (turtle.dragon.lightning.violin, koala-rainbow-mango,
// OrangePianoSummer): three or more words of 3 to 12 letters with a vowel each, lower case
// or capitalised, joined by one of - . _ or a blank throughout, or run together with a
// capital at each word; 12 or more characters; no word of a setting's or a reference's name
// (pass, secret, token, key, env, config, value, field, default, example, user, admin...),
// so db.user.password and DefaultPasswordField stay names.
bool PassphraseWords(std::string_view v) {
  if (v.size() < 12 || v.size() > 64) return false;
  const size_t first_sep = v.find_first_of("-._ ");
  const char sep = first_sep == std::string_view::npos ? '\0' : v[first_sep];
  size_t words = 0, i = 0;
  while (i < v.size()) {
    size_t j = i;
    if (std::isupper(static_cast<unsigned char>(v[j]))) ++j;
    while (j < v.size() && std::islower(static_cast<unsigned char>(v[j]))) ++j;
    const std::string_view word = v.substr(i, j - i);
    if (word.size() < 3 || word.size() > 12 ||
        word.find_first_of("aeiouyAEIOUY") == std::string_view::npos)
      return false;
    std::string lower(word);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (std::string_view stem :
         {"pass", "secret", "token", "key", "cred", "auth", "conf", "setting", "param", "option",
          "default", "example", "sample", "dummy", "change", "placeholder", "encrypt", "hash"})
      if (lower.starts_with(stem)) return false;
    for (std::string_view w :
         {"env",     "value",   "values",   "field",    "input",   "form",    "vault", "your",
          "here",    "none",    "null",     "true",     "false",   "string",  "test",  "demo",
          "admin",   "root",    "user",     "prod",     "dev",     "staging", "local", "host",
          "server",  "name",    "file",     "path",     "data",    "self",    "this",  "get",
          "set",     "var",     "arg",      "args",     "secure",  "salt",    "type",  "mode",
          "enable",  "disable", "required", "optional", "api",     "app",     "svc",   "service",
          "account", "login",   "session",  "client",   "cluster", "new",     "old",   "current",
          "the",     "and",     "for",      "not"})
      if (lower == w) return false;
    ++words;
    if (j == v.size()) break;
    if (sep != '\0' && v[j] == sep) {
      ++j;
      if (j == v.size()) return false;
    } else if (sep != '\0' || !std::isupper(static_cast<unsigned char>(v[j]))) {
      return false;
    }
    i = j;
  }
  if (words < 3 || HasPlaceholderWord(v)) return false;
  // A type's name (SimpleTextWatcher, MinLengthValidator): a CamelCase run ending in a
  // word that names a kind of code.
  return sep != '\0' || !EndsInCodeWord(v);
}

// A chosen password of a word and a number (galaxy6185, Bear5204, lion1990., Planet2018!):
// a word of 4 to 12 letters with a vowel (lower case or capitalised), 2 to 6 digits (one
// after two words or more: TigerLagoon3_), at most two symbols at the end; not a default's
// word (test, admin, demo, welcome, password...).
bool PlainHumanPassword(std::string_view v) {
  if (v.size() < 6 || v.size() > 32) return false;
  // Letters first: one to three words (Lantern, GranitePepper, Hana_raven, ROCpuzzle_), each
  // of 3+ letters with a vowel, joined by nothing, '_', '-' or '.'; then 2-6 digits (or
  // digits before the words: 2018Lantern is not taken); then at most two symbols.
  size_t i = 0, words = 0, longest = 0;
  while (i < v.size() && std::isalpha(static_cast<unsigned char>(v[i]))) {
    size_t j = i;
    while (j < v.size() && std::isupper(static_cast<unsigned char>(v[j]))) ++j;
    while (j < v.size() && std::islower(static_cast<unsigned char>(v[j]))) ++j;
    const std::string_view word = v.substr(i, j - i);
    if (word.size() < 4 || word.find_first_of("aeiouyAEIOUY") == std::string_view::npos)
      return false;
    longest = std::max(longest, word.size());
    ++words;
    i = j;
    if (i < v.size() && std::string_view("_-.").find(v[i]) != std::string_view::npos &&
        i + 1 < v.size() && std::isalpha(static_cast<unsigned char>(v[i + 1])))
      ++i;
  }
  if (words == 0 || words > 3 || longest < 4) return false;
  if (i < v.size() && std::string_view("_-.").find(v[i]) != std::string_view::npos) ++i;
  size_t d = i;
  while (d < v.size() && std::isdigit(static_cast<unsigned char>(v[d]))) ++d;
  // (scan version 13: one digit after two or more words, TigerLagoon3_, as WordsPassword
  // takes three words and one digit, or after one word of 8 letters or more, Noodleiris9)
  if (d - i < (words >= 2 || longest >= 8 ? 1u : 2u) || d - i > 6 || !SymbolTail(v, d))
    return false;
  for (std::string_view w :
       {"user", "pass", "secret", "sample", "change", "python", "ubuntu", "debian", "version",
        "release", "build", "node", "java", "postgres", "mysql", "redis", "server", "client"})
    if (ContainsCaseless(v.substr(0, i), w)) return false;
  return !HasDefaultPasswordWord(v) && !HasPlaceholderWord(v);
}

// Scan version 13. Capitalised words run together and a number (ILoveMaxPumpkin38,
// BlueHorseStaple7!): a chosen password where the place says password, a name elsewhere
// (ServerName2). The letters first, 8 or more, two capitals or more, reading as words
// (CamelWords; not a type's name), then 1 to 6 digits and at most two symbols.
bool CamelWordsPassword(std::string_view v) {
  size_t i = 0, capitals = 0;
  while (i < v.size() && std::isalpha(static_cast<unsigned char>(v[i])))
    capitals += std::isupper(static_cast<unsigned char>(v[i++])) != 0;
  if (i < 8 || capitals < 2 || !std::isupper(static_cast<unsigned char>(v[0]))) return false;
  size_t d = i;
  while (d < v.size() && std::isdigit(static_cast<unsigned char>(v[d]))) ++d;
  if (d == i || d - i > 6 || !SymbolTail(v, d)) return false;
  const std::string_view letters = v.substr(0, i);
  return CamelWords(letters) && !EndsInCodeWord(letters) && !HasDefaultPasswordWord(v) &&
         !HasPlaceholderWord(v);
}

// Scan version 13. The same with the word's letters written as digits or symbols (leet:
// K3ttl31999, S4ffr0n1988, H@rb0r2021!): each split of the final digits into the word's last
// letters and a number is tried; the word, read back (0 o, 1 i, 3 e, 4 a, 5 s, 7 t, @ a,
// $ s), must keep two of its letters as written.
bool LeetHumanPassword(std::string_view v) {
  // (a letter first, or from scan version 14 a digit for one: 1gl002001)
  if (v.size() < 8 || v.size() > 32 ||
      !(std::isalpha(static_cast<unsigned char>(v[0])) ||
        (std::isdigit(static_cast<unsigned char>(v[0])) && LeetLetter(v[0]))))
    return false;
  size_t end = v.size();
  while (end > 0 && kTailSymbols.find(v[end - 1]) != std::string_view::npos && v.size() - end < 2)
    --end;
  size_t digits = end;
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(v[digits - 1]))) --digits;
  for (size_t split = digits; split + 2 <= end; ++split) {
    std::string word(v.substr(0, split));
    size_t leet = 0, letters = 0;
    for (char& c : word) {
      if (std::isalpha(static_cast<unsigned char>(c))) {
        ++letters;
      } else if (const char l = LeetLetter(c)) {
        c = l, ++leet;
      } else if (c != '_' && c != '-' && c != '.') {
        return false;
      }
    }
    if (leet == 0 || letters < 2) continue;
    if (PlainHumanPassword(word + std::string(v.substr(split)))) return true;
  }
  return false;
}

bool HumanPassword(std::string_view v) { return PlainHumanPassword(v) || LeetHumanPassword(v); }

// Scan version 13. Lower-case words with a digit or a few between or after them
// (marble6ravenforever, river2zephyrforever): 12 to 32 letters and digits, 1 to 4 digits,
// every run of letters 3 or more long with a vowel, two runs or more; not a placeholder's or a
// default's word. A chosen password in a password's place only (its entropy is a word's).
bool WordsDigitPassword(std::string_view v) {
  if (v.size() < 12 || v.size() > 32) return false;
  size_t digits = 0, runs = 0;
  for (size_t i = 0; i < v.size();) {
    if (std::isdigit(static_cast<unsigned char>(v[i]))) {
      ++digits, ++i;
      continue;
    }
    size_t j = i;
    while (j < v.size() && std::islower(static_cast<unsigned char>(v[j]))) ++j;
    const std::string_view run = v.substr(i, j - i);
    if (run.size() < 3 || run.find_first_of("aeiouy") == std::string_view::npos) return false;
    ++runs, i = j;
  }
  return digits >= 1 && digits <= 4 && runs >= 2 && !HasPlaceholderWord(v) &&
         !HasDefaultPasswordWord(v);
}

// A generated password of three groups of six letters and digits joined by '-' (Safari's
// and iCloud Keychain's strong passwords: gu8gzx-56kx5w-h84z5v), digits and letters in it.
bool GroupedGeneratedPassword(std::string_view v) {
  if (v.size() != 20 || v[6] != '-' || v[13] != '-') return false;
  size_t digits = 0, letters = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i == 6 || i == 13) continue;
    const unsigned char c = static_cast<unsigned char>(v[i]);
    if (std::isdigit(c))
      ++digits;
    else if (std::isalpha(c))
      ++letters;
    else
      return false;
  }
  return digits >= 2 && letters >= 6;
}

// Bitcoin's base58check for a WIF private key: 0x80, 32 bytes, 0x01 for a compressed key,
// then the first four bytes of SHA-256(SHA-256(the rest)).
bool Base58CheckWif(std::string_view v) {
  static constexpr std::string_view kAlphabet =
      "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  std::vector<uint8_t> bytes;  // big-endian
  for (char c : v) {
    const size_t d = kAlphabet.find(c);
    if (d == std::string_view::npos) return false;
    uint32_t carry = static_cast<uint32_t>(d);
    for (auto it = bytes.rbegin(); it != bytes.rend(); ++it) {
      carry += static_cast<uint32_t>(*it) * 58;
      *it = static_cast<uint8_t>(carry & 0xff);
      carry >>= 8;
    }
    while (carry) {
      bytes.insert(bytes.begin(), static_cast<uint8_t>(carry & 0xff));
      carry >>= 8;
    }
  }
  if (bytes.size() != 37 && bytes.size() != 38) return false;
  if (bytes[0] != 0x80 || (bytes.size() == 38 && bytes[33] != 0x01)) return false;
  const size_t body = bytes.size() - 4;
  const RawId once = Sha256(ByteView(bytes.data(), body));
  const RawId twice = Sha256(ByteView(once.bytes.data(), once.bytes.size()));
  return std::equal(twice.bytes.begin(), twice.bytes.begin() + 4, bytes.begin() + body);
}

// A text rule whose expression matches across lines (HexChat's network block, OpenVPN's
// <auth-user-pass>): a newline in its pattern other than in a negated class ([^\r\n]) or a
// line start ((?:^|\n), (?:^|[\n;])).
bool SpansLines(unsigned rule) {
  static const std::vector<bool> spans = [] {
    std::vector<bool> v;
    for (const ContentRule& r : ContentRules()) {
      std::string p = r.pattern;
      for (std::string_view start : {"(?:^|\\n)", "(?:^|[\\n;])"})
        for (size_t at; (at = p.find(start)) != std::string::npos;) p.erase(at, start.size());
      std::string rest;
      for (size_t i = 0; i < p.size();) {
        const size_t close = p.compare(i, 2, "[^") == 0 ? p.find(']', i + 2) : std::string::npos;
        if (close != std::string::npos) {
          i = close + 1;
        } else {
          rest += p[i++];
        }
      }
      v.push_back(rest.find("\\n") != std::string::npos);
    }
    return v;
  }();
  return spans[rule];
}

// Verify::kOddValue: a value of any printable characters that is no template's form and
// reads as a chosen or generated password.
bool OddValue(std::string_view v, bool password_place) {
  if (v.size() < 6) return false;
  for (std::string_view t : {"${", "$(", "{{", "{%", "%(", "#{", "<%", "}}", "://", "::", "->",
                             "</", "\\u00", "\\(", "{$", "required|", "|min:", "|max:"})
    if (v.find(t) != std::string_view::npos) return false;
  if (v.starts_with("ENC[") || LooksHash(v) || HasPlaceholderWord(v)) return false;
  // A regular expression (^[a-zA-Z0-9!@#]{6,16}$), a mechanism's or a constant's name
  // (CRAM-MD5, SCRAM-SHA-256).
  if (v.front() == '^' && v.back() == '$') return false;
  // (in a password's place, 10 or more upper-case letters and digits mixed as generated ones
  // are, RGNQE7FENL61BX5, are a password; scan version 13)
  if (v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == std::string_view::npos &&
      !(password_place && v.size() >= 10 &&
        v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == std::string_view::npos &&
        std::count_if(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }) >= 2 &&
        Entropy(v) >= 3.0))
    return false;
  if (v.front() == '+' && v.back() == '+') return false;      // a string concatenated in code
  if (PrintfFormat(v) || HasPercentMapping(v)) return false;  // Signature=%s&Timestamp=%d
  // A list of words (read,write,delete,admin); in a password's place (scan version 12) words
  // joined by '-' or '_' are a passphrase (ipsec.secrets' EAP "silver-violin-rocket").
  if (v.find_first_not_of("abcdefghijklmnopqrstuvwxyz_-,; ") == std::string_view::npos &&
      !(password_place && v.find_first_of(",; ") == std::string_view::npos && PassphraseWords(v)))
    return false;
  // Code: a name called, indexed or typed (str(uuid4()), keypair[:32], Nullable<string>), or
  // passed on (is_password=is_password, key_password=key_password;). A call or an index is
  // closed after it or goes on on the next lines (scan version 15: KpGD(7z8Akf9:1R+v2gu?fKI]
  // is a password).
  const size_t name =
      v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.");
  // (a call continued on the next line: only names, dots, brackets, '=' and ',' after its name:
  // b64encode(hmac.new(, getpass(prompt.format()
  auto closed = [&](char close) {
    return v.find(close, name) != std::string_view::npos ||
           v.find_first_not_of(
               "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.([{=,", name) ==
               std::string_view::npos;
  };
  if (name > 0 && name != std::string_view::npos &&
      ((v[name] == '(' && closed(')')) || (v[name] == '[' && closed(']')) ||
       (v[name] == '<' && v.back() == '>')) &&
      (std::isalpha(static_cast<unsigned char>(v[0])) || v[0] == '_'))
    return false;
  if (name != std::string_view::npos && name + 1 >= v.size() - 1 &&
      v.find_first_not_of(",;)", name) == std::string_view::npos)
    return false;
  // A hash in braces ({SSHA}..., transmission's {40 hex digits and a salt}).
  if (v[0] == '{' &&
      v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=.}",
                          1) == std::string_view::npos)
    return false;
  if (v.starts_with("/") || v.starts_with("~/") || v.starts_with("./") || v.starts_with("../"))
    return false;
  if (v[0] == '$' && v.size() > 1 &&
      (std::isalpha(static_cast<unsigned char>(v[1])) || v[1] == '_'))
    return false;  // $PASS, $env:PASS
  // A name in brackets (<password>, [PASSWORD], {secret}, %PASS%, (none)).
  const std::string_view open = "<[{(%", close = ">]})%";
  if (const size_t o = open.find(v.front());
      o != std::string_view::npos && v.back() == close[o] &&
      v.substr(1, v.size() - 2)
              .find_first_not_of(
                  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_ .-:") ==
          std::string_view::npos)
    return false;
  if (LooksFiller(v, /*markers=*/false)) return false;
  if (password_place &&
      (WordsPassword(v) || PassphraseWords(v) || GroupedGeneratedPassword(v) || HumanPassword(v)))
    return true;
  const int classes = ClassesOf(v).Count();
  // In a password's own place (db.auth's second argument, AUTH's) 8 or more characters of
  // two classes are one (krqowfxm42, galaxy6185).
  if (password_place && v.size() >= 8 && classes >= 2) return !HasDefaultPasswordWord(v);
  if (v.size() < 12) {
    std::array<uint8_t, 256> seen{};
    size_t distinct = 0;
    for (unsigned char ch : v) distinct += seen[ch]++ == 0;
    return classes >= 3 && distinct * 10 >= v.size() * 7;
  }
  return classes >= 2 && Entropy(v) >= 3.0;
}

// Verify::kBase64Credentials: the value decodes to text that holds a URL's password or an env
// file's line naming a password, a secret or a token, with a value that reads as one.
bool Base64Credentials(std::string_view secret) {
  const std::string plain = DecodeBase64(secret);
  if (plain.size() < 8) return false;
  for (unsigned char c : plain)
    if ((c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c >= 0x7f) return false;
  const std::string_view text(plain);
  auto chosen = [](std::string_view pw) {
    const CharClasses c = ClassesOf(pw);
    return pw.size() >= 6 && c.Count() >= 2 && !LooksFiller(pw) && !HasPlaceholderWord(pw) &&
           pw[0] != '$' && pw[0] != '<' && pw[0] != '{';
  };
  // scheme://user:password@host
  for (size_t at = text.find("://"); at != std::string_view::npos; at = text.find("://", at + 3)) {
    const size_t user = at + 3;
    const size_t end = text.find_first_of("@/ \t\r\n", user);
    if (end == std::string_view::npos || text[end] != '@') continue;
    const size_t colon = text.find(':', user);
    if (colon == std::string_view::npos || colon >= end) continue;
    if (chosen(text.substr(colon + 1, end - colon - 1))) return true;
  }
  // NAME=value lines
  for (size_t from = 0; from < text.size();) {
    const size_t to = std::min(text.find('\n', from), text.size());
    std::string_view line = text.substr(from, to - from);
    from = to + 1;
    if (line.starts_with("export ")) line.remove_prefix(7);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    const std::string_view name = line.substr(0, eq);
    if (name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string_view::npos)
      continue;
    bool secret_name = false;
    for (std::string_view w : {"PASSWORD", "PASSWD", "SECRET", "TOKEN", "API_KEY", "PRIVATE_KEY"})
      secret_name = secret_name || name.find(w) != std::string_view::npos;
    if (!secret_name) continue;
    std::string_view value = line.substr(eq + 1);
    while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.remove_suffix(1);
    if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'') && value.back() == value[0])
      value = value.substr(1, value.size() - 2);
    if (chosen(value) && (value.size() >= 8 || ClassesOf(value).Count() >= 3)) return true;
  }
  return false;
}

// The value of a Bitnami SealedSecret's encryptedData (ciphertext made to be committed): the
// document's last `kind:` before the value names a SealedSecret, and its encryptedData:
// section began after it (a plain Secret in the same rendered manifest is not one).
bool InSealedSecret(std::string_view content, size_t from) {
  const size_t lo = from > 8192 ? from - 8192 : 0;
  const std::string_view before = content.substr(lo, from - lo);
  const size_t kind = before.rfind("kind:");
  if (kind == std::string_view::npos) return false;
  std::string_view rest = before.substr(kind + 5);
  while (!rest.empty() && (rest[0] == ' ' || rest[0] == '\t')) rest.remove_prefix(1);
  return rest.starts_with("SealedSecret") && rest.find("encryptedData:") != std::string_view::npos;
}

// The checks after a rule's expression matched: its decoding, the published examples, its
// entropy threshold, template filler and (keyword rules) placeholder values. A decoding
// rule may widen the secret to what it decoded (m.secret_to).
// Verify::kUrlDecode's test of a URL's password before it is decoded.
bool UrlPasswordRejected(std::string_view content, const RawMatch& m, std::string_view secret) {
  // An empty user ("redis://:pw@host") takes a password without ':': cvs's
  // ":pserver:anoncvs@host" is a method and a user, not a password.
  if (m.secret_from >= 4 && content.substr(m.secret_from - 4, 4) == "://:" &&
      secret.find(':') != std::string_view::npos)
    return true;
  // A '/' cannot stand in a URL's password unescaped, yet base64 passwords are pasted so
  // (postgres://app:PqiPlU/Oeyeu4G2P@db): such a value is taken when it is base64's
  // alphabet, of both cases, with digits or letters that read as random, and does not
  // start with a port; otherwise the match is a host, a port and a path before an '@'
  // (https://host:8080/users/@me).
  if (const size_t slash = secret.find('/'); slash != std::string_view::npos) {
    const CharClasses c = ClassesOf(secret);
    const bool port = slash > 0 && secret.substr(0, slash).find_first_not_of("0123456789") ==
                                       std::string_view::npos;
    // (a piece of 8 or more between '/' that reads as random)
    const bool random = AnyPiece(secret, [](std::string_view piece) {
      const CharClasses pc = ClassesOf(piece);
      return piece.size() >= 8 && pc.upper && pc.lower &&
             (pc.digit ? !LooksPlaceholder(piece) && !CamelWords(piece) : RandomPiece(piece));
    });
    if (secret.size() < 12 || port || !c.upper || !c.lower || !random ||
        secret.find_first_not_of(kBase64Chars) != std::string_view::npos)
      return true;
  }
  return false;
}

// Verify::kNamedKey's test of a value under a name ending in _KEY or _AUTH.
bool NamedKeyRejected(std::string_view content, const RawMatch& m, std::string_view secret) {
  const std::string_view key = KeyBefore(content, m.from, m.secret_from);
  for (std::string_view w :
       {"PUBLIC",  "PUBLISHABLE", "PUBKEY",   "SITE",        "SORT",    "PARTITION", "PRIMARY",
        "FOREIGN", "CACHE",       "INDEX",    "GPG",         "PGP",     "SSH",       "HOST",
        "LOOKUP",  "HOTKEY",      "SHORTCUT", "IDEMPOTENCY", "ROUTING", "GROUP",     "OBJECT",
        "BUCKET",  "PREFIX",      "COLUMN",   "FIELD",       "MAP"})
    if (key.find(w) != std::string_view::npos) return true;
  // Upper case, lower case and digits; or (scan version 10) 32 or more hex digits of
  // one case (JWT_SIGNING_KEY=a345c7be..., a key made by openssl rand -hex 32).
  const CharClasses c = ClassesOf(secret);
  const bool hex = secret.size() >= 32 && c.digit && c.lower != c.upper &&
                   secret.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
  return !hex && (!c.upper || !c.lower || !c.digit);
}

// Verify::kNotWebConfig's and kNotSearchOnly's test: within 600 characters of the key (a web
// app's Firebase configuration around it; a search-only client before it), a word that says
// the key is public by design.
bool InPublicContext(Verify verify, std::string_view content, const RawMatch& m) {
  const size_t lo = m.secret_from > 600 ? m.secret_from - 600 : 0;
  if (verify == Verify::kNotWebConfig) {
    const std::string_view around = content.substr(lo, m.secret_to + 600 - lo);
    for (std::string_view w : {"authDomain", ".firebaseapp.com", "messagingSenderId", "current_key",
                               "mobilesdk_app_id", "GOOGLE_APP_ID", "GCM_SENDER_ID"})
      if (around.find(w) != std::string_view::npos) return true;
    return false;
  }
  const std::string_view before = content.substr(lo, m.secret_from - lo);
  for (std::string_view w :
       {"algoliasearch/lite", "searchClient", "search_client", "searchOnly", "search_only",
        "SEARCH_ONLY", "search-only", "searchKey", "search_key", "SEARCH_KEY", "liteClient"})
    if (before.find(w) != std::string_view::npos) return true;
  return false;
}

bool Rejected(const ContentRule& rule, std::string_view content, RawMatch& m) {
  std::string_view secret = content.substr(m.secret_from, m.secret_to - m.secret_from);
  std::string decoded;
  switch (rule.verify) {
    case Verify::kBase64Pem: {
      size_t end = Base64PemEnd(content, m.secret_from);
      if (end == 0) return true;
      m.secret_to = m.to = end;
      return false;  // a whole key block: no entropy or filler test applies
    }
    case Verify::kBasicAuth:
      if (!RealBasicAuth(secret)) return true;
      break;
    case Verify::kUrlDecode:
      if (UrlPasswordRejected(content, m, secret)) return true;
      decoded = DecodeHexEscapes(secret, "%");
      secret = decoded;
      break;
    case Verify::kFishUnescape:
      decoded = DecodeHexEscapes(secret, "\\x");
      secret = decoded;
      break;
    case Verify::kLineEnd:
      if (!EndsLine(content, m.secret_to)) return true;
      break;
    case Verify::kAnyPrintable:
      break;
    case Verify::kNamedKey:
      if (NamedKeyRejected(content, m, secret)) return true;
      break;
    case Verify::kStrongValue:
      if (!StrongProseValue(content, m.from, m.secret_to, secret)) return true;
      m.secret_to = m.secret_from + secret.size();  // (the trimmed value is reported)
      break;
    case Verify::kShortPassword:
      if (!ShortPasswordLike(content, m.from, m.secret_to, secret)) return true;
      break;
    case Verify::kNotWebConfig:
    case Verify::kNotSearchOnly:
      if (InPublicContext(rule.verify, content, m)) return true;
      break;
    case Verify::kBase58Check:
      if (!Base58CheckWif(secret)) return true;
      break;
    case Verify::kSignifyKey: {
      const std::string key = DecodeBase64(secret);
      if (key.size() < 100 || !key.starts_with("Ed")) return true;
      std::array<bool, 256> seen{};
      int distinct = 0;
      for (size_t i = key.size() - 64; i < key.size(); ++i)
        distinct += !std::exchange(seen[static_cast<unsigned char>(key[i])], true);
      return distinct < 32 || IsExample(secret);
    }
    case Verify::kOddValue:
    case Verify::kOddValueLineEnd: {
      if (rule.verify == Verify::kOddValueLineEnd) {
        if (!EndsLine(content, m.secret_to)) return true;
        // a statement or a list's item (Pascal's X:=Y; C's X = Y,)
        if (secret.ends_with(";") || secret.ends_with(",")) return true;
      }
      const std::string_view key = KeyBefore(content, m.from, m.secret_from);
      if (KeyNamesNoSecret(key) || InSealedSecret(content, m.secret_from)) return true;
      return IsExample(secret) || (rule.min_entropy > 0 && Entropy(secret) < rule.min_entropy) ||
             !OddValue(secret, rule.password_value);
    }
    case Verify::kBase64Credentials:
      if (!Base64Credentials(secret)) return true;
      return false;  // (the decoded text was judged; the base64 itself is not filler)
    case Verify::kSpacedPassphrase: {
      if (!EndsLine(content, m.secret_to)) return true;
      std::string_view words = secret;  // (a number after the words is left out)
      if (const size_t sp = words.rfind(' ');
          sp != std::string_view::npos &&
          words.substr(sp + 1).find_first_not_of("0123456789") == std::string_view::npos)
        words = words.substr(0, sp);
      return !PassphraseWords(words);  // (words are judged here, not by entropy or filler)
    }
    case Verify::kSeedWords: {
      std::set<std::string_view> distinct;
      size_t words = 0;
      for (size_t from = 0; from < secret.size();) {
        const size_t to = std::min(secret.find(' ', from), secret.size());
        distinct.insert(secret.substr(from, to - from));
        ++words;
        from = to + 1;
      }
      if (distinct.size() * 4 < words * 3) return true;
      break;
    }
    case Verify::kNone:
      break;
  }
  if (IsExample(secret)) return true;
  // (an exporter's mark, "Bearer <redacted by exporter>" in a HAR file; scan version 14)
  if (ContainsCaseless(secret, "redacted")) return true;
  if (!rule.generic && !rule.binary && InBase64Body(content, m.secret_from)) return true;
  // (A keyword rule's words and a number or passphrase is judged by its place below, not by
  // its entropy: velvet.river.velvet.93 holds 3.1 bits.)
  // Where the key says password (a key holding pass, pwd or psk, or the rule's own place).
  auto password_place_of = [&](std::string_view key) {
    return rule.password_value || ContainsCaseless(key, "pass") || ContainsCaseless(key, "pwd") ||
           ContainsCaseless(key, "psk");
  };
  if (rule.min_entropy > 0 && Entropy(secret) < EntropyNeeded(rule, secret) &&
      !(rule.generic && (WordsPassword(secret) || PassphraseWords(secret) ||
                         RunTogetherWords(secret) || HumanPassword(secret) ||
                         (WordsDigitPassword(secret) &&
                          password_place_of(KeyBefore(content, m.from, m.secret_from))))))
    return true;
  if (!rule.binary && LooksFiller(secret, rule.verify != Verify::kAnyPrintable)) return true;
  if (!rule.generic) return false;
  // A keyword rule's value is typed text (not the bytes of a binary that happen to follow
  // "pw="), not ciphertext (scan version 14).
  if (!TypedText(secret) || BracedCiphertext(secret)) return true;
  // The key is the word right before the value (a command's match also spans its
  // arguments: `docker login public.ecr.aws -p X` names no public value).
  const std::string_view key = KeyBefore(content, m.from, m.secret_from);
  if (KeyNamesNoSecret(key) || InSealedSecret(content, m.secret_from)) return true;
  if (ContainsCaseless(key, "token") && InBadgeUrl(content, m.secret_from)) return true;
  // A keyword rule's value that is called (`token = base64.b64encode(...)`) is code.
  if (rule.verify == Verify::kNone && m.secret_to < content.size() && content[m.secret_to] == '(')
    return true;
  // Words and a number are a chosen password where the value is one by its place (a
  // password or secret key, ContentRule::password_value), and a name elsewhere (api_key:
  // release-candidate-12).
  if (GroupedGeneratedPassword(secret)) return false;
  const bool password_place = password_place_of(key);
  // A value holding a non-ASCII letter and no digit is text (a translation's label:
  // "settings.api_key": "API-Schl\u00fcssel"; scan version 13).
  if (std::any_of(secret.begin(), secret.end(),
                  [](char c) { return static_cast<unsigned char>(c) >= 0x80; }) &&
      secret.find_first_of("0123456789") == std::string_view::npos)
    return true;
  // (not a placeholder's words: not-a-real-password-42, your-secret-here-1; scan version 13)
  if (WordsPassword(secret))
    return HasPlaceholderWord(secret) || !(password_place || ContainsCaseless(key, "secret"));
  // A word and a number is taken where a password is named; elsewhere it is judged below.
  if (password_place &&
      (HumanPassword(secret) || CamelWordsPassword(secret) || WordsDigitPassword(secret)))
    return false;
  // A passphrase of words only where the place says password (not under secret: Kubernetes
  // names a secret's object so); so are words run together (scan version 14) that end the
  // line or meet a closing tag (not a declaration's type, `pw: pcompilerwidestring;`).
  if (PassphraseWords(secret)) return !password_place;
  if (RunTogetherWords(secret))
    return !password_place || !(EndsLine(content, m.secret_to) ||
                                (m.secret_to < content.size() && content[m.secret_to] == '<'));
  return LooksPlaceholder(secret);
}

}  // namespace

double Entropy(std::string_view s) {
  if (s.empty()) return 0;
  std::array<uint32_t, 256> counts{};
  for (unsigned char c : s) counts[c]++;
  double h = 0, n = static_cast<double>(s.size());
  for (uint32_t c : counts)
    if (c) {
      double p = c / n;
      h -= p * std::log2(p);
    }
  return h;
}

bool LooksBinary(std::string_view content) {
  std::string_view head = content.substr(0, std::min(content.size(), kBinaryProbe));
  // (memchr of an empty view's data(), which may be null, is undefined: UBSan)
  if (head.empty() || std::memchr(head.data(), 0, head.size()) == nullptr) return false;
  // A NUL alone does not make a file binary (a log or a config with a stray NUL): count the
  // bytes text does not hold, control characters other than \t \n \v \f \r ESC and
  // bytes outside valid UTF-8 sequences.
  // Stops as soon as the count is past 10 % (it never falls): a compressed file is decided
  // within its first 2 KiB or so, not 8.
  constexpr uint32_t kTextControls = 1u << '\t' | 1u << '\n' | 1u << '\v' | 1u << '\f' |
                                     1u << '\r' | 1u << 0x1b;
  const size_t limit = head.size() / 10;
  size_t odd = 0;
  for (size_t i = 0; i < head.size() && odd <= limit;) {
    unsigned char c = static_cast<unsigned char>(head[i]);
    if (c < 0x80) {
      if ((c < 0x20 && !(kTextControls >> c & 1u)) || c == 0x7f) odd++;
      ++i;
      continue;
    }
    size_t n = c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
    bool ok = n > 0;
    for (size_t k = 1; ok && k < n && i + k < head.size(); ++k)
      ok = (static_cast<unsigned char>(head[i + k]) & 0xc0) == 0x80;
    if (ok) {
      i += n;  // (a sequence cut by the probe's end counts as text)
    } else {
      odd++, ++i;
    }
  }
  return odd > limit;  // more than 10% (odd * 10 > size, in integers)
}

bool OpaqueFormat(std::string_view head) {
  // Executables (ELF, Mach-O, PE), compressed data and archives (gzip, xz, zstd, bzip2, zip,
  // 7z), images, fonts and media: no plain text to find but a key block by chance.
  // clang-format off
  static constexpr std::string_view kMagic[] = {
      "\x7f" "ELF", "\xcf\xfa\xed\xfe", "\xce\xfa\xed\xfe", "\xca\xfe\xba\xbe", "MZ",
      "\x1f\x8b", "\xfd" "7zXZ", "\x28\xb5\x2f\xfd", "BZh", "PK\x03\x04", "7z\xbc\xaf\x27\x1c",
      "\x89PNG", "\xff\xd8\xff", "GIF8", "RIFF", "wOFF", "wOF2", "OTTO",
      std::string_view("\x00\x01\x00\x00\x00", 5), "ID3", "OggS", "fLaC", "\x1a\x45\xdf\xa3"};
  // clang-format on
  for (std::string_view m : kMagic)
    if (head.starts_with(m)) return true;
  return head.size() >= 12 && head.substr(4, 4) == "ftyp";  // MP4, MOV, HEIC
}

std::string SanitizeForTerminal(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  static const char kHex[] = "0123456789abcdef";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

namespace {
void AppendJsonString(std::string& out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c >= 0x7f) {
      // Bytes outside ASCII are escaped one by one (\u00XX), so any path round-trips as
      // Latin-1 code points and the output is always valid UTF-8.
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
}
}  // namespace

std::string Finding::Text() const {
  return SanitizeForTerminal(path) + ":" + std::to_string(line) + ":" + std::to_string(column) +
         ": " + rule + ": " + excerpt;
}

std::string Finding::Json() const {
  std::string out = "{\"path\":";
  AppendJsonString(out, path);
  out += ",\"line\":" + std::to_string(line) + ",\"column\":" + std::to_string(column) +
         ",\"rule\":";
  AppendJsonString(out, rule);
  out += ",\"fingerprint\":";
  AppendJsonString(out, fingerprint);
  out += ",\"excerpt\":";
  AppendJsonString(out, excerpt);
  out += "}";
  return out;
}

bool FindingLess(const Finding& a, const Finding& b) {
  if (a.path != b.path) return a.path < b.path;
  if (a.line != b.line) return a.line < b.line;
  if (a.column != b.column) return a.column < b.column;
  if (a.rule != b.rule) return a.rule < b.rule;
  return a.fingerprint < b.fingerprint;
}

bool ScanAllow::Allows(const Finding& f) const {
  for (const auto& r : rules)
    if (r == f.rule) return true;
  for (const auto& fp : fingerprints)
    if (fp == f.fingerprint) return true;
  for (const auto& g : path_globs)
    if (fnmatch(g.c_str(), f.path.c_str(), 0) == 0 || TailMatches(g, f.path)) return true;
  return false;
}

std::string ScanAllow::Digest() const {
  std::string all;
  for (const auto* list : {&path_globs, &rules, &fingerprints}) {
    std::vector<std::string> v = *list;
    std::sort(v.begin(), v.end());
    for (const auto& s : v) all += s + '\0';
    all += '\n';
  }
  return Sha256(AsBytes(all)).Hex().substr(0, 8);
}

struct Scanner::Impl {
  // Two databases: every rule (text, and binary files, whose keyword rules' matches the
  // scan drops: ScanKind::kBinary), and the key-block rules alone (executables, compressed
  // and media files). A third database of the token formats for binary files made every
  // first scan on a machine compile 14.1-15.5 s instead of 10.2-10.4 s and every later one
  // load 2.98 MB instead of 2.13 MB (66 against 58 ms a process start).
  std::array<hs_database_t*, 2> dbs{};
  // Per rule: a keyword rule that is no key-block rule (dropped in binary files).
  std::vector<char> text_only;
  hs_scratch_t* proto = nullptr;
  // Compiled on first use (all of them take ~25 ms; most scans need none).
  mutable std::vector<std::regex> regex;
  std::unique_ptr<std::once_flag[]> regex_once;
  const std::regex& Regex(unsigned rule) const {
    std::call_once(regex_once[rule], [&] { regex[rule] = Compiled(rule, ""); });
    return regex[rule];
  }
  // The rule's expression anchored at the end of the searched text, "(?:...)$": one search
  // finds the match that ends there and starts first (FirstMatchEndingAt).
  mutable std::vector<std::regex> anchored;
  std::unique_ptr<std::once_flag[]> anchored_once;
  const std::regex& Anchored(unsigned rule) const {
    std::call_once(anchored_once[rule], [&] { anchored[rule] = Compiled(rule, "$"); });
    return anchored[rule];
  }
  static std::regex Compiled(unsigned rule, const char* tail) {
    const ContentRule& r = ContentRules()[rule];
    auto flags = std::regex::ECMAScript | std::regex::optimize;
    if (r.caseless) flags |= std::regex::icase;
    return *tail ? std::regex("(?:" + std::string(r.pattern) + ")" + tail, flags)
                 : std::regex(r.pattern, flags);
  }
  Mutex mu;
  std::vector<hs_scratch_t*> free_scratch GUARDED_BY(mu);

  ~Impl() {
    for (hs_scratch_t* s : free_scratch) hs_free_scratch(s);
    if (proto) hs_free_scratch(proto);
    for (hs_database_t* db : dbs)
      if (db) hs_free_database(db);
  }

  // Every rule, or (key_blocks_only) the key-block rules alone.
  static hs_database_t* Compile(bool key_blocks_only) {
    std::vector<const char*> exprs;
    std::vector<unsigned> flags, ids;
    auto rules = ContentRules();
    for (unsigned i = 0; i < rules.size(); ++i) {
      if (key_blocks_only && !rules[i].binary) continue;
      exprs.push_back(rules[i].pattern);
      flags.push_back(rules[i].caseless ? HS_FLAG_CASELESS : 0u);
      ids.push_back(i);
    }
    hs_database_t* db = nullptr;
    hs_compile_error_t* err = nullptr;
    if (hs_compile_multi(exprs.data(), flags.data(), ids.data(),
                         static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK, nullptr, &db,
                         &err) != HS_SUCCESS) {
      std::string msg = "hyperscan: cannot compile secret rules";
      if (err) {
        msg += std::string(": ") + (err->message ? err->message : "?");
        if (err->expression >= 0) msg += std::string(" (rule ") + rules[ids[err->expression]].id + ")";
        hs_free_compile_error(err);
      }
      Fail(ErrorCode::kFatal, msg);
    }
    return db;
  }

  hs_scratch_t* Take() EXCLUDES(mu) {
    MutexLock lock(mu);
    if (!free_scratch.empty()) {
      hs_scratch_t* s = free_scratch.back();
      free_scratch.pop_back();
      return s;
    }
    hs_scratch_t* s = nullptr;
    if (hs_clone_scratch(proto, &s) != HS_SUCCESS) Fail(ErrorCode::kFatal, "hyperscan: no scratch");
    return s;
  }
  void Give(hs_scratch_t* s) EXCLUDES(mu) {
    MutexLock lock(mu);
    free_scratch.push_back(s);
  }

  // Hyperscan reports only where matches end. Ends of one rule that follow each other
  // byte by byte are one match growing (e.g. a value of 10..200 characters): the last end
  // of such a run is searched back with the rule's std::regex over its line (key blocks,
  // which span lines: over the 4 KiB before it), which yields the start and the secret.
  // Offsets are relative to `buf` (one window of a file). Runs are collapsed as Hyperscan reports them, so the table
  // holds one entry per run; *overflow is set (and nothing returned) when a window holds
  // more than kMaxRawMatches runs: the caller scans it again in halves.
  std::vector<RawMatch> Match(std::string_view buf, ScanKind kind, bool* overflow) const {
    struct Run {
      unsigned rule;
      unsigned long long first, last;  // ends first, first+1, ..., last
      bool operator<(const Run& o) const {
        return rule != o.rule ? rule < o.rule : first != o.first ? first < o.first : last < o.last;
      }
    };
    struct Ends {
      std::vector<Run> list;
      std::vector<size_t> newest;  // per rule: index into list of its newest run + 1
      const std::vector<char>* drop;  // per rule: its matches are not kept (or null)
    } ends;
    ends.newest.assign(ContentRules().size(), 0);
    ends.drop = kind == ScanKind::kBinary ? &text_only : nullptr;
    auto on_match = [](unsigned id, unsigned long long, unsigned long long to, unsigned,
                       void* p) -> int {
      auto* e = static_cast<Ends*>(p);
      if (e->drop && (*e->drop)[id]) return 0;
      if (size_t k = e->newest[id]) {
        Run& r = e->list[k - 1];
        if (to + 1 >= r.first && to <= r.last + 1) {  // grows the run, or lies inside it
          r.first = std::min(r.first, to);
          r.last = std::max(r.last, to);
          return 0;
        }
      }
      e->list.push_back(Run{id, to, to});
      e->newest[id] = e->list.size();
      return e->list.size() >= kMaxRawMatches ? 1 : 0;
    };
    *overflow = false;
    if (buf.empty()) return {};  // (no rule matches nothing; hs_scan refuses a null buffer)
    hs_scratch_t* s = const_cast<Impl*>(this)->Take();
    hs_error_t rc = hs_scan(dbs[kind == ScanKind::kOpaque ? 1 : 0], buf.data(),
                            static_cast<unsigned>(buf.size()), 0, s, on_match, &ends);
    const_cast<Impl*>(this)->Give(s);
    *overflow = rc == HS_SCAN_TERMINATED;
    if (*overflow) return {};
    if (rc != HS_SUCCESS)
      Fail(ErrorCode::kFatal, "hyperscan: scan failed (" + std::to_string(rc) + ")");
    // Ends reported out of order make several runs of one: merge those that touch.
    auto& list = ends.list;
    std::sort(list.begin(), list.end());
    std::vector<Run> runs;
    for (const Run& r : list) {
      if (!runs.empty() && runs.back().rule == r.rule && r.first <= runs.back().last + 1) {
        runs.back().last = std::max(runs.back().last, r.last);
      } else {
        runs.push_back(r);
      }
    }
    std::vector<RawMatch> out;
    unsigned long long covered = 0;  // of the current rule
    unsigned cur_rule = ~0u;
    Retries retries;
    for (const Run& r : runs) {
      if (r.rule != cur_rule) cur_rule = r.rule, covered = 0;
      if (r.last <= covered) continue;
      ExtractRun(buf, r.rule, r.last, covered, retries, out);
      covered = r.last;
    }
    std::sort(out.begin(), out.end(), [](const RawMatch& a, const RawMatch& b) {
      return a.from != b.from ? a.from < b.from : a.rule < b.rule;
    });
    return out;
  }

  // FirstMatchEndingAt's searches in one buffer: a crafted line of thousands of second
  // values (ssh-keygen -N a -N b ...) or of blocks of a rule that spans lines costs at most
  // this many of each kind, then falls back. Two budgets: the block search is tried only for
  // a rule that spans lines (SpansLines) and only when no second-value search was, so a
  // crafted line of second values leaves the block rules' budget alone.
  static constexpr size_t kMaxRetries = 256;
  static constexpr size_t kRetryBack = 512;  // a second value's search back to its command
  struct Retries {
    size_t second_values = kMaxRetries;
    size_t blocks = kMaxRetries;
  };

  // The regex matches of `rule` in the text before the run's last end `last`, from the end
  // of the rule's previous run (`covered`) or, when the match starts before it (a second
  // value of one command line: ssh-keygen -P old -N new; bank login: bob@x.org / pw), the
  // match that ends at `last` and starts first on the line (FirstMatchEndingAt, while
  // `retries` last); for a text rule that spans lines, the match that ends at `last` within
  // kLinesBack, reported from its secret's line (RawMatch::shown).
  void ExtractRun(std::string_view buf, unsigned rule, unsigned long long last,
                  unsigned long long covered, Retries& retries, std::vector<RawMatch>& out) const {
    auto rules = ContentRules();
    size_t line_ws;
    if (rules[rule].binary) {
      line_ws = last > kKeyBlockBack ? last - kKeyBlockBack : 0;
    } else {
      size_t nl = last > 0 ? buf.rfind('\n', last - 1) : std::string_view::npos;
      line_ws = nl == std::string_view::npos ? 0 : nl;  // the newline itself: "not a word char"
      if (last - line_ws > kLineBack) line_ws = last - kLineBack;
    }
    const size_t ws = std::max<size_t>(line_ws, covered);
    if (ExtractFrom(buf, rule, ws, last, out)) return;
    const bool second_value = ws > line_ws;
    if (second_value && retries.second_values > 0) {
      --retries.second_values;
      if (FirstMatchEndingAt(buf, rule, line_ws, last, covered, kRetryBack, out)) return;
    }
    // A text rule whose match spans lines (HexChat's network block, OpenVPN's
    // <auth-user-pass> lines): the match that ends at `last` within kLinesBack, reported
    // from its secret's line (scan version 15; before, the text stood in as below).
    if (!second_value && !rules[rule].binary && SpansLines(rule) && retries.blocks > 0) {
      --retries.blocks;
      const size_t block_ws = last > kLinesBack ? last - kLinesBack : 0;
      if (FirstMatchEndingAt(buf, rule, block_ws, last, covered, kLinesBack, out)) {
        RawMatch& m = out.back();
        const size_t nl = m.secret_from > 0 ? buf.rfind('\n', m.secret_from - 1) : buf.npos;
        if (nl != buf.npos) m.shown = std::max<unsigned long long>(m.shown, nl + 1);
        return;
      }
    }
    // The two engines disagree on this text: keep the match (never lose a finding),
    // taking the line up to the end as its text.
    size_t from = std::max<size_t>(ws, last > 64 ? last - 64 : 0);
    out.push_back(RawMatch{rule, from, last, from, last, last});
  }

  // ExtractRun's regex pass over buf[ws, last): appends its matches; false when none.
  bool ExtractFrom(std::string_view buf, unsigned rule, size_t ws, unsigned long long last,
                   std::vector<RawMatch>& out) const {
    // At a window's first byte the text before is not in memory: such a run is never the
    // window's own (the margin is far wider than any check looks back).
    auto flags = ws > 0 ? std::regex_constants::match_prev_avail
                        : std::regex_constants::match_default;
    const char* b = buf.data();
    bool found = false;
    for (std::cregex_iterator it(b + ws, b + last, Regex(rule), flags), e; it != e; ++it) {
      if (it->length(0) == 0) continue;
      out.push_back(MatchOf(buf, rule, *it, last));
      found = true;
    }
    return found;
  }

  // The match of `rule` that ends exactly at `last` and starts first in buf[ws, last) (one
  // search with the rule's end-anchored expression, over the last `back` bytes), when
  // its secret ends past `after`, the previous run's end. Its report starts at `after`
  // (RawMatch::shown), or at its secret if that starts sooner: the text before `after` is
  // the previous match's and is not shown again.
  bool FirstMatchEndingAt(std::string_view buf, unsigned rule, size_t ws, unsigned long long last,
                          unsigned long long after, size_t back, std::vector<RawMatch>& out) const {
    ws = std::max<size_t>(ws, last > back ? last - back : 0);
    auto flags =
        ws > 0 ? std::regex_constants::match_prev_avail : std::regex_constants::match_default;
    const char* b = buf.data();
    std::cmatch m;
    if (!std::regex_search(b + ws, b + last, m, Anchored(rule), flags)) return false;
    RawMatch r = MatchOf(buf, rule, m, last);
    if (r.secret_to <= after) return false;
    if (r.from < after) r.shown = std::min(after, r.secret_from);
    out.push_back(r);
    return true;
  }

  static RawMatch MatchOf(std::string_view buf, unsigned rule, const std::cmatch& m,
                          unsigned long long last) {
    const char* b = buf.data();
    RawMatch r;
    r.rule = rule;
    r.last = last;
    r.from = static_cast<unsigned long long>(m[0].first - b);
    r.to = static_cast<unsigned long long>(m[0].second - b);
    const int g = ContentRules()[rule].secret_group;
    if (m[g].matched) {
      r.secret_from = static_cast<unsigned long long>(m[g].first - b);
      r.secret_to = static_cast<unsigned long long>(m[g].second - b);
    } else {
      r.secret_from = r.from, r.secret_to = r.to;
    }
    return r;
  }
};

namespace {

// Cache file: "HVSC" + SHA-256(rest) + each database (Impl::dbs' order) as a u32 length and
// its hs_serialize_database bytes. A file that fails its hash or does not deserialize is ignored.
// The name covers everything a compiled database depends on: the rules, the Hyperscan
// version and this CPU's features (a home directory may be shared between machines).
std::string CacheFile(const std::string& dir) {
  hs_platform_info_t plat{};
  hs_populate_platform(&plat);
  // ("all, key blocks": the databases and which rules each holds)
  std::string key = RuleTableDigest() + "\nall, key blocks\n" + hs_version() + "\n" +
                    std::to_string(plat.tune) + "/" + std::to_string(plat.cpu_features);
  return dir + "/scan-v" + std::to_string(kScanVersion) + "-" +
         Sha256(AsBytes(key)).Hex().substr(0, 16) + ".hsdb";
}

bool LoadCached(const std::string& file, std::span<hs_database_t*> dbs) {
  int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string data;
  char buf[1 << 16];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) data.append(buf, static_cast<size_t>(n));
  close(fd);
  if (n < 0 || data.size() < 40 || data.compare(0, 4, "HVSC") != 0) return false;
  std::string_view rest(data.data() + 36, data.size() - 36);
  if (std::memcmp(Sha256(AsBytes(rest)).bytes.data(), data.data() + 4, 32) != 0) return false;
  // Each database as a u32 length and its serialized bytes, in order.
  size_t loaded = 0;
  for (; loaded < dbs.size(); ++loaded) {
    uint32_t len;
    if (rest.size() < 4) break;
    std::memcpy(&len, rest.data(), 4);
    if (len > rest.size() - 4 ||
        hs_deserialize_database(rest.data() + 4, len, &dbs[loaded]) != HS_SUCCESS)
      break;
    rest.remove_prefix(4 + len);
  }
  if (loaded == dbs.size() && rest.empty()) return true;
  for (size_t k = 0; k < loaded; ++k) {
    hs_free_database(dbs[k]);
    dbs[k] = nullptr;
  }
  return false;
}
void StoreCached(const std::string& dir, const std::string& file,
                 std::span<hs_database_t* const> dbs) {
  std::string rest;
  for (hs_database_t* db : dbs) {
    char* bytes = nullptr;
    size_t len = 0;
    if (hs_serialize_database(db, &bytes, &len) != HS_SUCCESS) return;
    const uint32_t len32 = static_cast<uint32_t>(len);
    rest.append(reinterpret_cast<const char*>(&len32), 4);
    rest.append(bytes, len);
    free(bytes);
  }
  auto h = Sha256(AsBytes(rest));
  std::string data = "HVSC" + std::string(reinterpret_cast<const char*>(h.bytes.data()), 32) + rest;
  std::error_code ec;  // the cache base may not exist yet; a failure shows in open()
  std::filesystem::create_directories(dir, ec);
  std::string tmp = file + ".tmp-" + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;  // the cache is an optimisation: a read-only home still scans
  bool ok = write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp.c_str(), file.c_str()) != 0) unlink(tmp.c_str());
}

}  // namespace

Scanner::Scanner(const std::string& cache_dir) : impl_(std::make_unique<Impl>()) {
  // libstdc++ builds the regex class-name table (\\b, \\w) on first use: done here, before
  // any scanning thread, so that threads only read it (ThreadSanitizer saw the first use
  // race when two ScanPaths workers matched a word boundary at once).
  // Likewise std::ctype<char>'s narrow() cache, filled one character at a time by whichever
  // thread compiles a regex holding it first (a lazily compiled rule on two workers at
  // once raced there): every entry filled now, so later calls only read it.
  {
    static const std::regex kPrime("\\b\\w+\\b[[:alpha:]]*");
    std::cmatch m;
    std::regex_search("a b", m, kPrime);
    const auto& ctype = std::use_facet<std::ctype<char>>(std::locale());
    for (int c = 1; c < 256; ++c) ctype.narrow(static_cast<char>(c), '\0');
    ctype.widen('a');
  }
  std::string file = cache_dir.empty() ? "" : CacheFile(cache_dir);
  if (file.empty() || !LoadCached(file, impl_->dbs)) {
    impl_->dbs[0] = Impl::Compile(false);
    impl_->dbs[1] = Impl::Compile(true);
    if (!file.empty()) StoreCached(cache_dir, file, impl_->dbs);
  }
  for (hs_database_t* db : impl_->dbs)
    if (hs_alloc_scratch(db, &impl_->proto) != HS_SUCCESS)
      Fail(ErrorCode::kFatal, "hyperscan: cannot allocate scratch");
  for (const ContentRule& r : ContentRules()) impl_->text_only.push_back(r.generic && !r.binary);
  impl_->regex.resize(ContentRules().size());
  impl_->regex_once = std::make_unique<std::once_flag[]>(ContentRules().size());
  impl_->anchored.resize(ContentRules().size());
  impl_->anchored_once = std::make_unique<std::once_flag[]>(ContentRules().size());
}

Scanner::~Scanner() = default;

uint64_t Scanner::CountMatches(std::string_view content, bool binary) const {
  uint64_t n = 0;
  for (size_t off = 0; off < content.size() || off == 0;) {
    size_t len = std::min(kDefaultScanWindow, content.size() - off);
    bool overflow = false;
    n += impl_
             ->Match(content.substr(off, len), binary ? ScanKind::kBinary : ScanKind::kText,
                     &overflow)
             .size();
    if (overflow) n += kMaxRawMatches;
    off += len;
    if (len == 0) break;
  }
  return n;
}

// Bytes of one file, window by window. View(from, to) gives [from, min(to, size)) and may
// forget what lies before `from` (calls come with non-decreasing `from`).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::string_view View(uint64_t from, uint64_t to) = 0;
};

namespace {

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string_view all) : all_(all) {}
  std::string_view View(uint64_t from, uint64_t to) override {
    if (from >= all_.size()) return {};
    return all_.substr(from, std::min<uint64_t>(to, all_.size()) - from);
  }

 private:
  std::string_view all_;
};

// A source that holds one window of bytes from start_ and its margins: View drops what lies
// before `from` and asks Fill for more until `to` is held or the end is reached (eof_).
class BufferedSource : public ByteSource {
 public:
  std::string_view View(uint64_t from, uint64_t to) override {
    if (from > start_) {
      size_t drop = std::min<uint64_t>(from - start_, buf_.size());
      buf_.erase(0, drop);
      start_ += drop;
    }
    while (!eof_ && start_ + buf_.size() < to) Fill(to);
    std::string_view v(buf_);
    if (from >= start_ + v.size()) return {};
    v.remove_prefix(from - start_);
    return v.substr(0, std::min<uint64_t>(to - from, v.size()));
  }

 protected:
  // Appends bytes to buf_ (or sets eof_): at least one call in a few makes progress.
  virtual void Fill(uint64_t to) = 0;
  std::string buf_;  // bytes from start_
  uint64_t start_ = 0;
  bool eof_ = false;
};

// Reads the file as the windows move: the buffer holds one window and its margins.
// The buffer grows by what is read, not by the window asked for: a window is 4 MiB and most
// files are small, and growing the buffer to the window zero-filled 4 MiB per file (the scan
// of /usr/share/doc and /usr/share/man spent a third of its time in page faults and memset).
// Reads ask for no more than the size fstat gave plus one byte (EOF seen at once); a file
// that grew since is read 64 KiB at a time.
class FileSource : public BufferedSource {
 public:
  FileSource(int fd, std::string path, uint64_t size_hint)
      : fd_(fd), path_(std::move(path)), size_hint_(size_hint) {}
  ~FileSource() override { close(fd_); }
  uint64_t bytes() const { return bytes_; }

 private:
  void Fill(uint64_t to) override {
    // Up to the size fstat gave plus one byte (EOF seen at once), then 64 KiB at a time.
    const uint64_t cap = bytes_ <= size_hint_ ? size_hint_ + 1 - bytes_ : 64 << 10;
    size_t want = static_cast<size_t>(std::min<uint64_t>(to - start_ - buf_.size(), cap));
    size_t old = buf_.size();
    buf_.resize(old + want);
    ssize_t n;
    do {
      n = read(fd_, buf_.data() + old, want);
    } while (n < 0 && errno == EINTR);  // (not an end of file: the read is tried again)
    if (n < 0) Fail(ErrorCode::kIo, "read " + path_ + ": " + strerror(errno));
    buf_.resize(old + static_cast<size_t>(n));
    if (n == 0) eof_ = true;
    bytes_ += static_cast<uint64_t>(n);
  }

  int fd_;
  std::string path_;
  uint64_t bytes_ = 0;
  const uint64_t size_hint_;  // the file's size when it was opened
};

// Another source's bytes after `skip` (a UTF-8 byte-order mark left out).
class SkipSource : public ByteSource {
 public:
  SkipSource(ByteSource& in, uint64_t skip) : in_(in), skip_(skip) {}
  std::string_view View(uint64_t from, uint64_t to) override {
    return in_.View(from + skip_, to + skip_);
  }

 private:
  ByteSource& in_;
  const uint64_t skip_;
};

// Another source's bytes (after `skip`) decoded as the windows move: UTF-16 as UTF-8, JSON's
// and Java's \uXXXX escapes (scan version 14; capture/text_encoding.h). `decode` appends
// what it decoded and returns the raw bytes it used (it may leave a cut sequence for the
// next call unless at the end). Offsets, lines and columns are the decoded text's.
class DecodedSource : public BufferedSource {
 public:
  using Decode = size_t (*)(std::string_view raw, bool big, bool at_end, std::string& out);
  DecodedSource(ByteSource& in, uint64_t skip, Decode decode, bool big)
      : in_(in), decode_(decode), big_(big), in_pos_(skip) {}

 private:
  void Fill(uint64_t) override {
    constexpr size_t kChunk = 64 << 10;
    const std::string_view raw = in_.View(in_pos_, in_pos_ + kChunk);
    eof_ = raw.size() < kChunk;
    in_pos_ += decode_(raw, big_, eof_, buf_);
  }

  ByteSource& in_;
  const Decode decode_;
  const bool big_;
  uint64_t in_pos_;  // the next raw byte to decode
};

// Path rules whose glob names this file: their content condition and fingerprint need
// every byte, which the windows hand over once each.
struct PathRuleState {
  const PathRule* rule;
  bool need_found;
  std::unique_ptr<Sha256Stream> hash;  // SHA-256(id, '\0', content)
};

}  // namespace

namespace {

// The per-window state of a scan: where lines start, and the findings so far.
struct WindowCursor {
  uint64_t buf_start = 0;         // global offset of the view
  uint64_t lines_before = 0;      // newlines before buf_start
  uint64_t line_start = 0;        // global offset where the line holding buf_start starts
  std::string path;
  std::vector<Finding> out;

  // Moves the view's start to `next` (<= the end of `view`), counting the lines passed.
  void Advance(std::string_view view, uint64_t next) {
    size_t n = static_cast<size_t>(next - buf_start);
    for (size_t i = 0; i < n; ++i)
      if (view[i] == '\n') lines_before++, line_start = buf_start + i + 1;
    buf_start = next;
  }
};

// The findings of the matches owned by this window: those whose Hyperscan run ends in
// (own_from, own_to] (offsets in `view`; an end is the offset after the match). The margins around it hold every byte a check
// looks at, so each match is judged as in a whole-buffer scan.
void Judge(std::string_view view, uint64_t own_from, uint64_t own_to,
           std::vector<RawMatch>& matches, WindowCursor& cur) {
  // Rules whose text starts with "the character before" report where the key starts (a
  // byte of UTF-8 beyond ASCII is a letter's: "пароль: X"; scan version 14).
  for (RawMatch& m : matches)
    while (m.from < m.secret_from && m.from + 1 < m.to &&
           !std::isalnum(static_cast<unsigned char>(view[m.from])) &&
           static_cast<unsigned char>(view[m.from]) < 0x80 && view[m.from] != '-' &&
           view[m.from] != '_')
      ++m.from;
  auto rules = ContentRules();
  // A keyword rule yields to a specific rule whose secret overlaps its own.
  std::vector<std::pair<unsigned long long, unsigned long long>> specific;
  for (const RawMatch& m : matches)
    if (!rules[m.rule].generic) specific.emplace_back(m.secret_from, m.secret_to);
  std::sort(specific.begin(), specific.end());
  auto overlaps_specific = [&](const RawMatch& m) {
    unsigned long long lo = m.secret_from > kMaxMatchWidth ? m.secret_from - kMaxMatchWidth : 0;
    auto it = std::lower_bound(specific.begin(), specific.end(), std::make_pair(lo, 0ull));
    for (; it != specific.end() && it->first < m.secret_to; ++it)
      if (m.secret_from < it->second) return true;
    return false;
  };
  // (ends are exclusive offsets)
  auto owned = [&](const RawMatch& m) { return m.last > own_from && m.last <= own_to; };
  std::vector<RawMatch> kept;
  for (const RawMatch& raw : matches) {
    const ContentRule& rule = rules[raw.rule];
    // A keyword match the window does not own is judged too: it may name an owned match's
    // secret first (one finding per secret, below) when the two runs end in different
    // windows (scan version 15; before, both windows reported the secret).
    if (!owned(raw) && !rule.generic) continue;
    if (rule.generic && overlaps_specific(raw)) continue;
    RawMatch m = raw;
    if (!Rejected(rule, view, m)) kept.push_back(m);
  }
  // One finding per secret: of keyword matches whose secrets overlap (PGPASSWORD=x is a
  // password variable and a password assignment), the first by position, then by rule.
  std::sort(kept.begin(), kept.end(), [](const RawMatch& a, const RawMatch& b) {
    return a.secret_from != b.secret_from ? a.secret_from < b.secret_from : a.rule < b.rule;
  });
  unsigned long long generic_to = 0;
  std::erase_if(kept, [&](const RawMatch& m) {
    if (!rules[m.rule].generic) return false;
    if (m.secret_from < generic_to) return true;
    generic_to = m.secret_to;
    return false;
  });
  std::erase_if(kept, [&](const RawMatch& m) { return !owned(m); });
  // Where each report starts: the match, or after a previous value (RawMatch::shown), past
  // blanks; never inside the secret. Reports are made in that order (lines are counted up
  // to each start).
  for (RawMatch& m : kept) {
    size_t from = std::min(std::max(m.from, m.shown), m.secret_from);
    while (from < m.secret_from && (view[from] == ' ' || view[from] == '\t')) ++from;
    m.shown = from;
  }
  std::sort(kept.begin(), kept.end(), [](const RawMatch& a, const RawMatch& b) {
    return a.shown != b.shown ? a.shown < b.shown : a.rule < b.rule;
  });
  uint64_t line = cur.lines_before + 1, line_start = cur.line_start;
  size_t counted = 0;
  for (const RawMatch& m : kept) {
    const ContentRule& rule = rules[m.rule];
    const size_t from = m.shown;
    for (size_t i = counted; i < from; ++i)
      if (view[i] == '\n') ++line, line_start = cur.buf_start + i + 1;
    counted = std::max<size_t>(counted, from);
    // `haven:allow` on the line, within kLineLook bytes of the match.
    size_t look_to = std::min<size_t>(view.size(), m.to + kLineLook);
    size_t line_end = view.substr(0, look_to).find('\n', from);
    if (line_end == std::string_view::npos) line_end = look_to;
    uint64_t abs_from = cur.buf_start + from;
    uint64_t look_from = std::max<uint64_t>({line_start, cur.buf_start,
                                             abs_from > kLineLook ? abs_from - kLineLook : 0});
    std::string_view line_text = view.substr(look_from - cur.buf_start, line_end - (look_from - cur.buf_start));
    if (line_text.find("haven:allow") != std::string_view::npos) continue;

    std::string_view span = view.substr(from, m.to - from);
    std::string_view secret = view.substr(m.secret_from, m.secret_to - m.secret_from);
    Finding f;
    f.path = cur.path;
    f.line = line;
    f.column = abs_from - line_start + 1;
    f.rule = rule.id;
    f.fingerprint = Hex16(rule.id, secret);
    std::string ex(span.substr(0, m.secret_from - from));
    if (ex.size() > 60) ex = ex.substr(0, 28) + "..." + ex.substr(ex.size() - 28);
    AppendRedacted(ex, secret);
    for (char& c : ex)
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    f.excerpt = SanitizeForTerminal(ex);
    cur.out.push_back(std::move(f));
  }
}

// Each path rule's last glob component, taken once: a file's name is tested against it
// (equal to a literal one, holding a wildcard one's literal runs) before TailMatches runs,
// so most of the 42 rules cost a comparison per file.
struct PathRuleHead {
  const PathRule* rule;
  std::string_view last;
  bool literal;
  std::vector<std::string_view> runs;  // of a wildcard one (EachLiteralRun)
  bool NameMayMatch(std::string_view name) const {
    if (literal) return last == name;
    for (std::string_view r : runs)
      if (name.find(r) == std::string_view::npos) return false;
    return true;
  }
};

const std::vector<PathRuleHead>& PathRuleHeads() {
  static const std::vector<PathRuleHead> heads = [] {
    std::vector<PathRuleHead> v;
    for (const PathRule& r : PathRules()) {
      const std::string_view glob = r.glob;
      size_t end = glob.size();
      std::string_view last;
      PrevComponent(glob, end, &last);
      PathRuleHead h{&r, last, last.find_first_of("*?[\\") == std::string_view::npos, {}};
      if (!h.literal)
        EachLiteralRun(last, [&](std::string_view run) {
          h.runs.push_back(run);
          return true;
        });
      v.push_back(std::move(h));
    }
    return v;
  }();
  return heads;
}

}  // namespace

std::vector<Finding> Scanner::ScanSource(std::string_view path, ByteSource& raw,
                                         size_t window) const {
  window = std::max<size_t>(window, 1);
  // UTF-16 is read as UTF-8, a UTF-8 byte-order mark is left out; then JSON's and Java's
  // \uXXXX escapes and \/ are read as what they stand for when the head holds some (scan
  // version 14).
  std::optional<DecodedSource> utf16, unescaped;
  std::optional<SkipSource> skipped;
  size_t skip = 0;
  const TextEncoding encoding = DetectTextEncoding(raw.View(0, kBinaryProbe), &skip);
  if (encoding == TextEncoding::kUtf16Le || encoding == TextEncoding::kUtf16Be)
    utf16.emplace(raw, skip, &AppendUtf16AsUtf8, encoding == TextEncoding::kUtf16Be);
  else if (encoding == TextEncoding::kUtf8Bom)
    skipped.emplace(raw, skip);
  ByteSource& text = utf16     ? static_cast<ByteSource&>(*utf16)
                     : skipped ? static_cast<ByteSource&>(*skipped)
                               : raw;
  if (HasUnicodeEscapes(text.View(0, kBinaryProbe)))
    unescaped.emplace(
        text, 0,
        [](std::string_view r, bool, bool at_end, std::string& out) {
          return AppendUnescaped(r, at_end, out);
        },
        false);
  ByteSource& src = unescaped ? static_cast<ByteSource&>(*unescaped) : text;
  // The last non-empty component, as TailMatches takes it (a path given with a final '/').
  std::string_view base;
  size_t base_end = path.size();
  PrevComponent(path, base_end, &base);
  std::vector<PathRuleState> path_rules;
  for (const PathRuleHead& h : PathRuleHeads()) {
    if (!h.NameMayMatch(base)) continue;
    const PathRule& r = *h.rule;
    if (!TailMatches(r.glob, path)) continue;
    if (*r.unless_glob && fnmatch(r.unless_glob, std::string(base).c_str(), 0) == 0) continue;
    PathRuleState st{&r, *r.content_need == 0, std::make_unique<Sha256Stream>()};
    st.hash->Update(AsBytes(std::string_view(r.id, std::strlen(r.id) + 1)));  // id and '\0'
    path_rules.push_back(std::move(st));
  }
  // The head decides: an encrypted file has no content findings, a binary one gets only
  // the key-block rules.
  std::string_view head = src.View(0, kBinaryProbe + 4096 + 64);
  const bool encrypted = IsEncrypted(head);
  const bool binary = LooksBinary(head);
  const ScanKind kind = !binary              ? ScanKind::kText
                        : OpaqueFormat(head) ? ScanKind::kOpaque
                                             : ScanKind::kBinary;
  // The path rules' conditions on the whole file, each judged once and only for a file a
  // rule's glob named (most files have none).
  if (!path_rules.empty()) {
    const bool short_text =
        !binary && head.size() <= 512 && std::count(head.begin(), head.end(), '\n') <= 4;
    std::erase_if(path_rules,
                  [&](const PathRuleState& st) { return st.rule->short_text && !short_text; });
    std::optional<bool> whole, raw, table;
    for (PathRuleState& st : path_rules) {
      if (st.rule->raw_key) {
        if (!raw) raw = !binary && !TemplateName(base) && RawHexKey(base, head);
        st.need_found = *raw;
      }
      if (st.rule->password_table) {
        if (!table) {
          // A file named for passwords (or PgBouncer's userlist) may use the last column; any
          // other CSV needs a header.
          // (scan version 14: or API keys, tokens or secrets, "openweather: X" in api-keys.md)
          const bool named =
              ContainsCaseless(base, "passw") || ContainsCaseless(base, "account") ||
              ContainsCaseless(base, "credential") || ContainsCaseless(base, "userlist") ||
              ContainsCaseless(base, "apikey") || ContainsCaseless(base, "api-key") ||
              ContainsCaseless(base, "api_key") || ContainsCaseless(base, "token") ||
              ContainsCaseless(base, "secret");
          table = !binary && !TemplateName(base) && NoteName(base) && PasswordTable(head, !named);
        }
        st.need_found = *table;
      }
      if (st.rule->netrc_password) st.need_found = !binary && NetrcPassword(head);
      if (!st.rule->whole_file_secret) continue;
      if (!whole) whole = !binary && !TemplateName(base) && WholeFileSecret(head);
      st.need_found = *whole;
    }
    // A rule whose whole-file condition failed reports nothing: the file is not hashed for
    // it (a file named *key*, *secret* or *token* of any size is otherwise read through
    // SHA-256 for a fingerprint never used).
    std::erase_if(path_rules, [](const PathRuleState& st) {
      return (st.rule->whole_file_secret || st.rule->raw_key || st.rule->password_table ||
              st.rule->netrc_password) &&
             !st.need_found;
    });
  }
  WindowCursor cur;
  cur.path = std::string(path);
  for (uint64_t own_start = 0;;) {
    size_t win = window;
    std::string_view view;
    std::vector<RawMatch> matches;
    uint64_t own_end;
    bool at_eof;
    for (;;) {  // a window with too many runs is scanned again in halves
      uint64_t want = own_start + win + kScanMargin;
      view = src.View(cur.buf_start, want);
      at_eof = cur.buf_start + view.size() < want;
      own_end = at_eof ? cur.buf_start + view.size() : own_start + win;
      if (encrypted) break;
      bool overflow = false;
      matches = impl_->Match(view, kind, &overflow);
      if (!overflow) break;
      if (win <= kMinScanWindow)
        Fail(ErrorCode::kIo, std::string(path) + ": more than " + std::to_string(kMaxRawMatches) +
                                 " candidate secrets in " + std::to_string(win) +
                                 " bytes; not scanned");
      win /= 2;
    }
    std::string_view own = view.substr(own_start - cur.buf_start, own_end - own_start);
    for (PathRuleState& st : path_rules) {
      st.hash->Update(AsBytes(own));
      if (!st.need_found && !st.rule->whole_file_secret && !st.rule->raw_key &&
          !st.rule->password_table && view.find(st.rule->content_need) != std::string_view::npos)
        st.need_found = true;
    }
    if (!encrypted)
      Judge(view, own_start - cur.buf_start, own_end - cur.buf_start, matches, cur);
    if (at_eof) break;
    cur.Advance(view, std::max<uint64_t>(cur.buf_start, own_end > kScanMargin ? own_end - kScanMargin : 0));
    own_start = own_end;
  }
  // One finding per path rule id, and a password-file finding only when no other path rule
  // named the file (.vault-token is a vault-token-file).
  bool named = false;
  for (const PathRuleState& st : path_rules) named |= st.need_found && !st.rule->whole_file_secret;
  std::set<std::string_view> reported;
  for (PathRuleState& st : path_rules) {
    if (!st.need_found || (named && st.rule->whole_file_secret) ||
        !reported.insert(st.rule->id).second)
      continue;
    Finding f;
    f.path = std::string(path);
    f.line = f.column = 1;
    f.rule = st.rule->id;
    f.fingerprint = st.hash->Finish().Hex().substr(0, 16);
    f.excerpt = "(credential file)";
    cur.out.push_back(std::move(f));
  }
  std::sort(cur.out.begin(), cur.out.end(), FindingLess);
  return std::move(cur.out);
}

std::vector<Finding> Scanner::Scan(std::string_view path, std::string_view content) const {
  return Scan(path, content, kDefaultScanWindow);
}

std::vector<Finding> Scanner::Scan(std::string_view path, std::string_view content,
                                   size_t window) const {
  MemorySource src(content);
  return ScanSource(path, src, window);
}

std::vector<Finding> Scanner::ScanFile(const std::string& path, std::string* content,
                                       uint64_t* size, struct stat* after,
                                       uint64_t size_hint) const {
  if (content) {
    *content = ReadWholeFile(path, after, size_hint);
    if (size) *size = content->size();
    return Scan(path, *content);
  }
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) Fail(ErrorCode::kIo, "open " + path + ": " + strerror(errno));
  struct stat st;
  const uint64_t hint = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  FileSource src(fd, path, hint);
  auto found = ScanSource(path, src, kDefaultScanWindow);
  if (size) *size = src.bytes();
  if (after && fstat(fd, after) != 0)
    Fail(ErrorCode::kIo, "stat " + path + ": " + strerror(errno));
  return found;
}

}  // namespace haven::capture
