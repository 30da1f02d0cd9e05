// SFTP version 3 packets (draft-ietf-secsh-filexfer-02, plus OpenSSH's extensions
// posix-rename@openssh.com, fsync@openssh.com and limits@openssh.com): the requests the
// SFTP backend sends and a strict decoder of the replies (docs/sftp.md).
//
// Framing: every packet is `uint32 length` (big endian, not counting itself), then
// `byte type`, then the type's fields; integers are big endian, strings are `uint32
// length` + bytes. The encoders below return whole packets, length included.
//
// The server is untrusted: the decoders check every length against the bytes that are
// there, never allocate more than the packet's size, and throw kCorrupt (naming the
// packet type and the field) for anything malformed. A packet longer than
// kMaxPacketLength is refused before it is read (ParseLength).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/bytes.h"

namespace haven::sftp {

constexpr uint32_t kProtocolVersion = 3;
// Largest packet accepted from the server (OpenSSH's SFTP_MAX_MSG_LENGTH); a READ asks
// for at most kMaxReadLength so its DATA reply always fits.
constexpr uint32_t kMaxPacketLength = 256 * 1024;
constexpr uint32_t kMaxReadLength = 255 * 1024;
constexpr uint32_t kMaxHandleLength = 256;  // the draft's limit

enum class Type : uint8_t {
  kInit = 1,
  kVersion = 2,
  kOpen = 3,
  kClose = 4,
  kRead = 5,
  kWrite = 6,
  kLstat = 7,
  kFstat = 8,
  kSetstat = 9,
  kFsetstat = 10,
  kOpendir = 11,
  kReaddir = 12,
  kRemove = 13,
  kMkdir = 14,
  kRmdir = 15,
  kRealpath = 16,
  kStat = 17,
  kRename = 18,
  kStatus = 101,
  kHandle = 102,
  kData = 103,
  kName = 104,
  kAttrs = 105,
  kExtended = 200,
  kExtendedReply = 201,
};

// Name of a packet type for messages ("STATUS", "OPEN", "type 77").
std::string TypeName(uint8_t type);

constexpr uint32_t kOk = 0;
constexpr uint32_t kEof = 1;
constexpr uint32_t kNoSuchFile = 2;
constexpr uint32_t kPermissionDenied = 3;
constexpr uint32_t kFailure = 4;
constexpr uint32_t kBadMessage = 5;
constexpr uint32_t kNoConnection = 6;
constexpr uint32_t kConnectionLost = 7;
constexpr uint32_t kOpUnsupported = 8;

// Text of a status code ("no such file", "status 42").
std::string StatusName(uint32_t code);

// OPEN's pflags.
constexpr uint32_t kOpenRead = 0x01;
constexpr uint32_t kOpenWrite = 0x02;
constexpr uint32_t kOpenAppend = 0x04;
constexpr uint32_t kOpenCreate = 0x08;
constexpr uint32_t kOpenTruncate = 0x10;
constexpr uint32_t kOpenExclusive = 0x20;

// ATTRS flags.
constexpr uint32_t kAttrSize = 0x01;
constexpr uint32_t kAttrUidGid = 0x02;
constexpr uint32_t kAttrPermissions = 0x04;
constexpr uint32_t kAttrAcModTime = 0x08;
constexpr uint32_t kAttrExtended = 0x80000000u;

// File attributes; a field is set when the server sent it. Extended pairs are checked and
// skipped.
struct Attrs {
  std::optional<uint64_t> size;
  std::optional<uint32_t> uid, gid;
  std::optional<uint32_t> permissions;  // st_mode, file type bits included
  std::optional<uint32_t> atime, mtime;

  bool IsDir() const { return permissions && (*permissions & 0170000) == 0040000; }
  bool IsRegular() const { return permissions && (*permissions & 0170000) == 0100000; }
};

struct NameEntry {
  std::string name;  // the file name (the "longname" is dropped)
  Attrs attrs;
};

// A decoded reply. `data` (DATA, EXTENDED_REPLY) points into the packet that was parsed,
// which must outlive it.
struct Reply {
  Type type = Type::kStatus;
  uint32_t id = 0;
  uint32_t status = kOk;  // STATUS
  std::string message;    // STATUS (the server's text, made printable)
  std::string handle;     // HANDLE
  ByteView data;          // DATA, EXTENDED_REPLY
  std::vector<NameEntry> names;  // NAME
  Attrs attrs;            // ATTRS
};

struct Version {
  uint32_t version = 0;
  std::vector<std::pair<std::string, std::string>> extensions;  // name, data
};

// limits@openssh.com's reply (0 = no limit given).
struct Limits {
  uint64_t max_packet_length = 0;
  uint64_t max_read_length = 0;
  uint64_t max_write_length = 0;
  uint64_t max_open_handles = 0;
};

// ---- Decoding (untrusted bytes) ---------------------------------------------------------

// The packet length from its 4-byte prefix; kCorrupt when 0 or above kMaxPacketLength.
uint32_t ParseLength(const uint8_t prefix[4]);
// `packet` is one packet without its length prefix (type byte first). VERSION (the reply
// to INIT) has no request id, so it has its own parser; ParseReply refuses it.
Version ParseVersion(ByteView packet);
Reply ParseReply(ByteView packet);
// The request id of a reply packet (bytes 1..4), kCorrupt when too short.
uint32_t ReplyId(ByteView packet);
Limits ParseLimits(ByteView data);

// ---- Encoding (whole packets, length prefix included) -----------------------------------

Bytes EncodeInit(uint32_t version = kProtocolVersion);
Bytes EncodeOpen(uint32_t id, std::string_view path, uint32_t pflags, const Attrs& attrs = {});
Bytes EncodeClose(uint32_t id, std::string_view handle);
Bytes EncodeRead(uint32_t id, std::string_view handle, uint64_t offset, uint32_t length);
Bytes EncodeWrite(uint32_t id, std::string_view handle, uint64_t offset, ByteView data);
// One path argument: LSTAT, STAT, OPENDIR, REMOVE, RMDIR, REALPATH.
Bytes EncodePathRequest(Type type, uint32_t id, std::string_view path);
// One handle argument: FSTAT, READDIR (CLOSE too).
Bytes EncodeHandleRequest(Type type, uint32_t id, std::string_view handle);
Bytes EncodeMkdir(uint32_t id, std::string_view path, const Attrs& attrs = {});
Bytes EncodeRename(uint32_t id, std::string_view from, std::string_view to);
Bytes EncodePosixRename(uint32_t id, std::string_view from, std::string_view to);
Bytes EncodeFsync(uint32_t id, std::string_view handle);
Bytes EncodeLimits(uint32_t id);
// The ATTRS encoding of `a` (flags from the fields that are set; extended never sent).
void AppendAttrs(Bytes& out, const Attrs& a);

}  // namespace haven::sftp
