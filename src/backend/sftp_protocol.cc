#include "backend/sftp_protocol.h"

#include <cstring>

#include "core/error.h"

namespace haven::sftp {
namespace {

constexpr const char* kPosixRename = "posix-rename@openssh.com";
constexpr const char* kFsync = "fsync@openssh.com";
constexpr const char* kLimits = "limits@openssh.com";

// ---- Reading ------------------------------------------------------------------------------

class Cursor {
 public:
  Cursor(ByteView b, const char* what) : b_(b), what_(what) {}

  uint8_t U8() {
    Need(1, "a byte");
    return b_[pos_++];
  }
  uint32_t U32() {
    Need(4, "a 32-bit integer");
    uint32_t v = uint32_t(b_[pos_]) << 24 | uint32_t(b_[pos_ + 1]) << 16 |
                 uint32_t(b_[pos_ + 2]) << 8 | uint32_t(b_[pos_ + 3]);
    pos_ += 4;
    return v;
  }
  uint64_t U64() {
    uint64_t hi = U32();
    return hi << 32 | U32();
  }
  ByteView Blob(const char* field) {
    uint32_t n = U32();
    if (n > Remaining()) {
      Bad(std::string(field) + " of " + std::to_string(n) + " bytes runs past the end (" +
          std::to_string(Remaining()) + " left)");
    }
    ByteView v = b_.subspan(pos_, n);
    pos_ += n;
    return v;
  }
  std::string String(const char* field) {
    ByteView v = Blob(field);
    return std::string(reinterpret_cast<const char*>(v.data()), v.size());
  }
  size_t Remaining() const { return b_.size() - pos_; }
  void End() {
    if (Remaining() != 0) Bad(std::to_string(Remaining()) + " bytes of trailing junk");
  }
  [[noreturn]] void Bad(const std::string& why) const {
    Fail(ErrorCode::kCorrupt, std::string("sftp: malformed ") + what_ + " packet from the server: " + why);
  }

 private:
  void Need(size_t n, const char* field) {
    if (Remaining() < n) Bad(std::string("truncated, ") + field + " is missing");
  }

  ByteView b_;
  size_t pos_ = 0;
  const char* what_;
};

// Server text for messages: control bytes and non-ASCII become '?', at most 200 bytes.
std::string Printable(std::string s) {
  if (s.size() > 200) s.resize(200);
  for (char& c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = '?';
  }
  return s;
}

Attrs ReadAttrs(Cursor& c) {
  Attrs a;
  uint32_t flags = c.U32();
  if (flags & kAttrSize) a.size = c.U64();
  if (flags & kAttrUidGid) {
    a.uid = c.U32();
    a.gid = c.U32();
  }
  if (flags & kAttrPermissions) a.permissions = c.U32();
  if (flags & kAttrAcModTime) {
    a.atime = c.U32();
    a.mtime = c.U32();
  }
  if (flags & kAttrExtended) {
    uint32_t count = c.U32();
    // Each pair takes at least 8 bytes: a count above that is a lie, refused before looping.
    if (count > c.Remaining() / 8) c.Bad("extended attribute count " + std::to_string(count) + " exceeds the packet");
    for (uint32_t i = 0; i < count; ++i) {
      c.Blob("extended attribute name");
      c.Blob("extended attribute data");
    }
  }
  return a;
}

void ReadName(Cursor& c, Reply& r) {
  uint32_t count = c.U32();
  // Each entry is at least 12 bytes (two empty strings and the attribute flags).
  if (count > c.Remaining() / 12) c.Bad("name count " + std::to_string(count) + " exceeds the packet");
  r.names.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    NameEntry e;
    e.name = c.String("file name");
    c.Blob("long name");
    e.attrs = ReadAttrs(c);
    r.names.push_back(std::move(e));
  }
}

// ---- Writing ------------------------------------------------------------------------------

void PutU32(Bytes& out, uint32_t v) {
  out.push_back(static_cast<uint8_t>(v >> 24));
  out.push_back(static_cast<uint8_t>(v >> 16));
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}
void PutU64(Bytes& out, uint64_t v) {
  PutU32(out, static_cast<uint32_t>(v >> 32));
  PutU32(out, static_cast<uint32_t>(v));
}
void PutString(Bytes& out, std::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}
void PutBlob(Bytes& out, ByteView b) {
  PutU32(out, static_cast<uint32_t>(b.size()));
  out.insert(out.end(), b.begin(), b.end());
}

// A packet being built: room for the length, the type, and the id when there is one.
Bytes Start(Type t, std::optional<uint32_t> id, size_t reserve = 64) {
  Bytes out;
  out.reserve(reserve);
  PutU32(out, 0);
  out.push_back(static_cast<uint8_t>(t));
  if (id) PutU32(out, *id);
  return out;
}
Bytes Finish(Bytes out) {
  uint32_t len = static_cast<uint32_t>(out.size() - 4);
  out[0] = static_cast<uint8_t>(len >> 24);
  out[1] = static_cast<uint8_t>(len >> 16);
  out[2] = static_cast<uint8_t>(len >> 8);
  out[3] = static_cast<uint8_t>(len);
  return out;
}

}  // namespace

std::string TypeName(uint8_t type) {
  switch (static_cast<Type>(type)) {
    case Type::kInit: return "INIT";
    case Type::kVersion: return "VERSION";
    case Type::kOpen: return "OPEN";
    case Type::kClose: return "CLOSE";
    case Type::kRead: return "READ";
    case Type::kWrite: return "WRITE";
    case Type::kLstat: return "LSTAT";
    case Type::kFstat: return "FSTAT";
    case Type::kSetstat: return "SETSTAT";
    case Type::kFsetstat: return "FSETSTAT";
    case Type::kOpendir: return "OPENDIR";
    case Type::kReaddir: return "READDIR";
    case Type::kRemove: return "REMOVE";
    case Type::kMkdir: return "MKDIR";
    case Type::kRmdir: return "RMDIR";
    case Type::kRealpath: return "REALPATH";
    case Type::kStat: return "STAT";
    case Type::kRename: return "RENAME";
    case Type::kStatus: return "STATUS";
    case Type::kHandle: return "HANDLE";
    case Type::kData: return "DATA";
    case Type::kName: return "NAME";
    case Type::kAttrs: return "ATTRS";
    case Type::kExtended: return "EXTENDED";
    case Type::kExtendedReply: return "EXTENDED_REPLY";
  }
  return "type " + std::to_string(type);
}

std::string StatusName(uint32_t code) {
  switch (code) {
    case kOk: return "ok";
    case kEof: return "end of file";
    case kNoSuchFile: return "no such file";
    case kPermissionDenied: return "permission denied";
    case kFailure: return "failure";
    case kBadMessage: return "bad message";
    case kNoConnection: return "no connection";
    case kConnectionLost: return "connection lost";
    case kOpUnsupported: return "operation unsupported";
  }
  return "status " + std::to_string(code);
}

uint32_t ParseLength(const uint8_t prefix[4]) {
  uint32_t n = uint32_t(prefix[0]) << 24 | uint32_t(prefix[1]) << 16 | uint32_t(prefix[2]) << 8 |
               uint32_t(prefix[3]);
  if (n == 0 || n > kMaxPacketLength) {
    Fail(ErrorCode::kCorrupt, "sftp: the server sent a packet of " + std::to_string(n) +
                                  " bytes (allowed: 1.." + std::to_string(kMaxPacketLength) + ")");
  }
  return n;
}

Version ParseVersion(ByteView packet) {
  Cursor c(packet, "VERSION");
  uint8_t type = c.U8();
  if (type != static_cast<uint8_t>(Type::kVersion)) {
    c.Bad("expected VERSION, got " + TypeName(type) +
          " (is the command an SFTP server? a login banner or shell output on stdout breaks SFTP)");
  }
  Version v;
  v.version = c.U32();
  while (c.Remaining() > 0) {
    std::string name = c.String("extension name");
    std::string data = c.String("extension data");
    v.extensions.emplace_back(std::move(name), std::move(data));
  }
  return v;
}

uint32_t ReplyId(ByteView packet) {
  Cursor c(packet, "reply");
  c.U8();
  return c.U32();
}

Reply ParseReply(ByteView packet) {
  uint8_t type = packet.empty() ? 0 : packet[0];
  std::string what = TypeName(type);
  Cursor c(packet, what.c_str());
  c.U8();
  Reply r;
  r.type = static_cast<Type>(type);
  r.id = c.U32();
  switch (r.type) {
    case Type::kStatus:
      r.status = c.U32();
      // Version 3 servers send message and language tag; some old ones send neither.
      if (c.Remaining() > 0) {
        r.message = Printable(c.String("status message"));
        c.Blob("language tag");
      }
      break;
    case Type::kHandle:
      r.handle = c.String("handle");
      if (r.handle.size() > kMaxHandleLength) c.Bad("handle of " + std::to_string(r.handle.size()) + " bytes");
      break;
    case Type::kData:
      r.data = c.Blob("data");
      break;
    case Type::kName:
      ReadName(c, r);
      break;
    case Type::kAttrs:
      r.attrs = ReadAttrs(c);
      break;
    case Type::kExtendedReply:
      r.data = packet.subspan(5);
      return r;
    default:
      c.Bad("unexpected reply type " + what);
  }
  c.End();
  return r;
}

Limits ParseLimits(ByteView data) {
  Cursor c(data, "limits@openssh.com reply");
  Limits l;
  l.max_packet_length = c.U64();
  l.max_read_length = c.U64();
  l.max_write_length = c.U64();
  l.max_open_handles = c.U64();
  return l;
}

void AppendAttrs(Bytes& out, const Attrs& a) {
  uint32_t flags = (a.size ? kAttrSize : 0) | (a.uid && a.gid ? kAttrUidGid : 0) |
                   (a.permissions ? kAttrPermissions : 0) |
                   (a.atime && a.mtime ? kAttrAcModTime : 0);
  PutU32(out, flags);
  if (a.size) PutU64(out, *a.size);
  if (a.uid && a.gid) {
    PutU32(out, *a.uid);
    PutU32(out, *a.gid);
  }
  if (a.permissions) PutU32(out, *a.permissions);
  if (a.atime && a.mtime) {
    PutU32(out, *a.atime);
    PutU32(out, *a.mtime);
  }
}

Bytes EncodeInit(uint32_t version) {
  Bytes out = Start(Type::kInit, std::nullopt);
  PutU32(out, version);
  return Finish(std::move(out));
}

Bytes EncodeOpen(uint32_t id, std::string_view path, uint32_t pflags, const Attrs& attrs) {
  Bytes out = Start(Type::kOpen, id, 64 + path.size());
  PutString(out, path);
  PutU32(out, pflags);
  AppendAttrs(out, attrs);
  return Finish(std::move(out));
}

Bytes EncodeClose(uint32_t id, std::string_view handle) {
  return EncodeHandleRequest(Type::kClose, id, handle);
}

Bytes EncodeRead(uint32_t id, std::string_view handle, uint64_t offset, uint32_t length) {
  Bytes out = Start(Type::kRead, id, 32 + handle.size());
  PutString(out, handle);
  PutU64(out, offset);
  PutU32(out, length);
  return Finish(std::move(out));
}

Bytes EncodeWrite(uint32_t id, std::string_view handle, uint64_t offset, ByteView data) {
  Bytes out = Start(Type::kWrite, id, 32 + handle.size() + data.size());
  PutString(out, handle);
  PutU64(out, offset);
  PutBlob(out, data);
  return Finish(std::move(out));
}

Bytes EncodePathRequest(Type type, uint32_t id, std::string_view path) {
  Bytes out = Start(type, id, 16 + path.size());
  PutString(out, path);
  return Finish(std::move(out));
}

Bytes EncodeHandleRequest(Type type, uint32_t id, std::string_view handle) {
  return EncodePathRequest(type, id, handle);  // the same shape: one string
}

Bytes EncodeMkdir(uint32_t id, std::string_view path, const Attrs& attrs) {
  Bytes out = Start(Type::kMkdir, id, 32 + path.size());
  PutString(out, path);
  AppendAttrs(out, attrs);
  return Finish(std::move(out));
}

Bytes EncodeRename(uint32_t id, std::string_view from, std::string_view to) {
  Bytes out = Start(Type::kRename, id, 32 + from.size() + to.size());
  PutString(out, from);
  PutString(out, to);
  return Finish(std::move(out));
}

Bytes EncodePosixRename(uint32_t id, std::string_view from, std::string_view to) {
  Bytes out = Start(Type::kExtended, id, 64 + from.size() + to.size());
  PutString(out, kPosixRename);
  PutString(out, from);
  PutString(out, to);
  return Finish(std::move(out));
}

Bytes EncodeFsync(uint32_t id, std::string_view handle) {
  Bytes out = Start(Type::kExtended, id, 64 + handle.size());
  PutString(out, kFsync);
  PutString(out, handle);
  return Finish(std::move(out));
}

Bytes EncodeLimits(uint32_t id) {
  Bytes out = Start(Type::kExtended, id);
  PutString(out, kLimits);
  return Finish(std::move(out));
}

}  // namespace haven::sftp
