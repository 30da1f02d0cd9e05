// The text encodings the secret scanner reads besides UTF-8 (scan version 14): UTF-16 in
// either byte order (Windows' .reg exports, PowerShell 5's scripts and profiles, some .ini
// and .txt files Windows tools write) is read as UTF-8, and a UTF-8 byte-order mark is
// skipped, so the rules see the text a person sees. docs/secret-rules.md, "Encodings".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace haven::capture {

enum class TextEncoding { kUtf8, kUtf8Bom, kUtf16Le, kUtf16Be };

// The encoding the first bytes of a file say: a byte-order mark (EF BB BF, FF FE, FE FF),
// or, without one, UTF-16 of ASCII text: in 32 bytes or more, the high byte of every code
// unit but 1 in 50 is NUL and the low bytes are text (tab, line ends, printable ASCII or
// above). `*skip` is the mark's length (0 without one). Anything else is kUtf8 (UTF-8 or
// binary: LooksBinary decides that).
TextEncoding DetectTextEncoding(std::string_view head, size_t* skip);

// Appends the UTF-8 of the UTF-16 code units in `raw` (little-endian unless `big`) to
// `out`; returns how many bytes of `raw` it used. Stops before a code unit cut by the end
// of `raw`, and before a high surrogate whose low one is cut, unless `at_end` (then those
// become U+FFFD, as does any unpaired surrogate). Never fails: every input gives text.
size_t AppendUtf16AsUtf8(std::string_view raw, bool big, bool at_end, std::string& out);

// True when `head` holds an escape AppendUnescaped reads: \uXXXX (JSON's, Java's .properties')
// or \/ (PHP's json_encode).
bool HasUnicodeEscapes(std::string_view head);

// Appends `raw` to `out` with \uXXXX read as the character it stands for, in UTF-8 (a
// surrogate pair as one), and \/ as '/': "{\u0022apiKey\u0022:\u0022sk-...", a password
// with \u00fc in a .properties file, https:\/\/hooks.slack.com. Escapes of control
// characters (\u000a keeps the line count), lone surrogates and \\ stay as written. Returns
// the bytes of `raw` used: an escape cut by the end of `raw` waits unless `at_end`.
size_t AppendUnescaped(std::string_view raw, bool at_end, std::string& out);

}  // namespace haven::capture
