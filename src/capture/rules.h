// The secret-scan rule table: content rules (one Hyperscan database, one pass per file)
// and path rules (file names that are secrets by themselves). kScanVersion names this
// table; a capture records it in its snapshot and trusts a parent capture's unread files
// only when the parent was scanned with the same version (rules_test.cc pins the table's
// digest to the version, so a rule change without a version bump fails the build's tests).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace haven::capture {

// Bump whenever a rule, a threshold, the example list or the matching logic changes.
inline constexpr int kScanVersion = 15;

// A check on a match beyond its expression and entropy.
enum class Verify {
  kNone,
  kBase64Pem,  // the secret starts a base64 run that decodes to a PEM private key block
  kBasicAuth,  // the secret is base64 of "user:password" with a real password
  kUrlDecode,  // the secret is percent-decoded before the entropy and placeholder checks
  kLineEnd,    // only a closing quote and blanks may follow the secret on its line
  // A short password (8-11 characters): the value ends there (a quote, a tag or the line's
  // end follows; it does not end in = or :), mixes 3 of lower case, upper case, digits and
  // symbols, and repeats few characters.
  kShortPassword,
  // The secret is drawn from all printable characters: < > $ { } % in it mark no template.
  kAnyPrintable,
  // fish's \xHH escapes (fish_variables) are decoded before the entropy and placeholder checks.
  kFishUnescape,
  // A value named in prose (a note's "the wifi password is X"): 10 or more characters that
  // mix 3 of lower case, upper case, digits and symbols, or both cases reading as random
  // letters; the line holds nothing else after it but punctuation.
  kStrongValue,
  // A value under an environment variable's name that ends in _KEY or _AUTH
  // (named-key-assignment): the name holds no word of a public or structural key (PUBLIC,
  // SITE, SORT, PRIMARY, CACHE, GPG, SSH, ...) and the value mixes upper case, lower case and
  // digits without a '.'.
  kNamedKey,
  // A Google API key outside a Firebase web app's configuration (authDomain,
  // *.firebaseapp.com or messagingSenderId within 600 characters): that key is public by
  // design (it names the project to Google; the project's rules guard the data).
  kNotWebConfig,
  // A Bitcoin WIF key: base58 that decodes to 0x80, 32 key bytes (and 0x01 when
  // compressed), and the first four bytes of the double SHA-256 of those.
  kBase58Check,
  // A value drawn from all printable characters (a quoted password holding < > ( ) { } [ ]
  // ; , $ % \): not a template's form (${...}, {{...}}, $(...), %(name)s, <name>, an
  // environment reference), code, a hash, a placeholder's word, and random as a password
  // is: 6 to 11 characters of 3 classes (lower case, upper case, digits, symbols) with few
  // repeats, or 12 or more of 2 classes at 3.0 bits; the rule's entropy threshold applies.
  // In a password's own place (password_value rules) 8 or more characters of 2 classes,
  // words and a number, a passphrase of words also count.
  kOddValue,
  // The same, and only a closing quote and blanks may follow on its line (kLineEnd).
  kOddValueLineEnd,
  // Recovery words: three quarters of them distinct (not Hardhat's "test test ... junk" or
  // BIP39's "abandon ... about", published test mnemonics).
  kSeedWords,
  // base64 that decodes to text holding a URL with a password or an env file's line whose
  // name says password, secret or token, with a value that is one.
  kBase64Credentials,
  // Scan version 13. A passphrase of words between blanks, a number after them allowed
  // (kestrel sierra basalt 67), ending its line: PassphraseWords' test on the words (three or
  // more of 3-12 letters with a vowel, no setting's, reference's or stop word).
  kSpacedPassphrase,
  // Scan version 14. An Algolia key outside a search client (algoliasearch/lite, a
  // searchClient, a search-only key named within 600 characters before it): a search-only
  // key is public by design, the admin key an indexer holds is not.
  kNotSearchOnly,
  // Scan version 15. base64 of a minisign or signify secret key ("Ed", its algorithms, then
  // the KDF's salt and limits and the key): the last 64 bytes vary as random ones do (32 or
  // more distinct byte values). An unencrypted key's KDF fields are zeros (a run of A's in
  // its base64), so the filler test does not apply.
  kSignifyKey,
};

struct ContentRule {
  const char* id;
  // One regular expression in the common subset of Hyperscan and ECMAScript (std::regex),
  // so the same text drives the one-pass scan and the extraction of the secret.
  const char* pattern;
  bool caseless;
  int secret_group;    // capture group holding the secret; 0 = the whole match
  double min_entropy;  // Shannon bits per byte the secret needs; 0 = no check
  bool generic;        // keyword rules: placeholder values (paths, variables...) do not count
  bool binary;         // also applied to binary files (key blocks only)
  Verify verify = Verify::kNone;
  // The value is a password by its place (a URL's password, htpasswd's, curl -u's, a Wi-Fi
  // passphrase, a note's password): words and a number count there as they do under a
  // password key (pickle_monkey.20); elsewhere they are a name.
  bool password_value = false;
};

struct PathRule {
  const char* id;
  const char* glob;          // matched against the last components of the path (fnmatch)
  const char* unless_glob;   // file name glob that exempts a match ("" = none)
  const char* content_need;  // substring the content must hold to count ("" = none)
  // The file must be one secret and nothing else: one line (a final newline allowed) of 8 to
  // 200 characters without blanks that passes the keyword rules' placeholder checks and
  // 3.0 bits of entropy per byte (a password file: borg's BORG_PASSCOMMAND target, pgAdmin's,
  // a Docker secret).
  bool whole_file_secret = false;
  // The file must be a short text: not binary, at most 512 bytes and 4 lines (a credentials
  // file of a line or two, not a plugin or a script of that name).
  bool short_text = false;
  // The file must be a raw private key: one line of 64 or 128 hex digits (0x before them
  // allowed) that vary as random ones do (an Ethereum account's key, a node key, a seed).
  bool raw_key = false;
  // The file must be a small table of accounts (passwords.txt: "gmail  bob@x.org  Pw4!..."):
  // a text of at most 8 KiB with a row whose password column (the one a header names
  // "password", else the last) holds a chosen password.
  bool password_table = false;
  // Scan version 13. The file must hold `password` and a value that is not an e-mail address
  // (a .netrc of anonymous FTP logins holds none).
  bool netrc_password = false;
};

std::span<const ContentRule> ContentRules();
std::span<const PathRule> PathRules();
// Published example credentials (documentation keys): never a finding.
std::span<const char* const> ExampleSecrets();
// Prefixes that mark a file as already encrypted (after leading whitespace).
std::span<const char* const> EncryptedMarkers();

// SHA-256 (hex) over every field of the tables above and kScanVersion.
std::string RuleTableDigest();

}  // namespace haven::capture
