// The SFTP v3 codec: request encodings byte for byte, reply decoding, and refusal of
// malformed or oversized packets (kCorrupt, no huge allocation).
#include "backend/sftp_protocol.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace haven::sftp {
namespace {

void Put32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
}
void PutStr(Bytes& b, std::string_view s) {
  Put32(b, static_cast<uint32_t>(s.size()));
  b.insert(b.end(), s.begin(), s.end());
}
// A reply packet without its length prefix.
Bytes Reply(Type t, uint32_t id) {
  Bytes b{static_cast<uint8_t>(t)};
  Put32(b, id);
  return b;
}

ErrorCode CodeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return ErrorCode::kFatal;
}

TEST(SftpProtocol, EncodesRequestsByteForByte) {
  Bytes init = EncodeInit();
  EXPECT_EQ(init, (Bytes{0, 0, 0, 5, 1, 0, 0, 0, 3}));
  Bytes read = EncodeRead(7, "h1", 0x0102030405060708ull, 32768);
  EXPECT_EQ(read, (Bytes{0, 0, 0, 23, 5, 0, 0, 0, 7, 0, 0, 0, 2, 'h', '1', 1, 2, 3, 4, 5, 6, 7, 8,
                         0, 0, 0x80, 0}));
  Bytes open = EncodeOpen(1, "a", kOpenWrite | kOpenCreate | kOpenExclusive,
                          Attrs{.permissions = 0600});
  EXPECT_EQ(open, (Bytes{0, 0, 0, 22, 3, 0, 0, 0, 1, 0, 0, 0, 1, 'a', 0, 0, 0, 0x2a, 0, 0, 0, 4, 0,
                         0, 1, 0x80}));
  Bytes rn = EncodePosixRename(2, "a", "b");
  ASSERT_EQ(rn.size(), 4u + 1 + 4 + 4 + 24 + 5 + 5);
  EXPECT_EQ(std::string(rn.begin() + 13, rn.begin() + 37), "posix-rename@openssh.com");
  Bytes w = EncodeWrite(3, "h", 10, AsBytes("xyz"));
  EXPECT_EQ(w.size(), 4u + 1 + 4 + 5 + 8 + 7);
  EXPECT_EQ(w.back(), 'z');
}

TEST(SftpProtocol, DecodesVersionWithExtensions) {
  Bytes v{2};
  Put32(v, 3);
  PutStr(v, "posix-rename@openssh.com");
  PutStr(v, "1");
  Version ver = ParseVersion(v);
  EXPECT_EQ(ver.version, 3u);
  ASSERT_EQ(ver.extensions.size(), 1u);
  EXPECT_EQ(ver.extensions[0].first, "posix-rename@openssh.com");
  Bytes banner(AsBytes("Welcome!\n").begin(), AsBytes("Welcome!\n").end());
  try {
    ParseVersion(banner);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("login banner"), std::string::npos) << e.what();
  }
}

TEST(SftpProtocol, DecodesReplies) {
  Bytes st = Reply(Type::kStatus, 9);
  Put32(st, kNoSuchFile);
  PutStr(st, "No such\x01 file");
  PutStr(st, "");
  auto r = ParseReply(st);
  EXPECT_EQ(r.id, 9u);
  EXPECT_EQ(r.status, kNoSuchFile);
  EXPECT_EQ(r.message, "No such? file");  // control bytes made printable

  Bytes data = Reply(Type::kData, 4);
  PutStr(data, "abc");
  r = ParseReply(data);
  EXPECT_EQ(std::string(AsChars(r.data)), "abc");

  Bytes name = Reply(Type::kName, 5);
  Put32(name, 1);
  PutStr(name, "ff");
  PutStr(name, "drwx------ ff");
  AppendAttrs(name, Attrs{.size = 4096, .permissions = 040700, .atime = 1, .mtime = 2});
  r = ParseReply(name);
  ASSERT_EQ(r.names.size(), 1u);
  EXPECT_EQ(r.names[0].name, "ff");
  EXPECT_TRUE(r.names[0].attrs.IsDir());
  EXPECT_EQ(r.names[0].attrs.size, 4096u);
  EXPECT_EQ(r.names[0].attrs.mtime, 2u);

  Bytes lim = Reply(Type::kExtendedReply, 6);
  for (uint32_t v : {0u, 1u << 18, 0u, 261120u, 0u, 261120u, 0u, 64u}) Put32(lim, v);
  r = ParseReply(lim);
  Limits l = ParseLimits(r.data);
  EXPECT_EQ(l.max_packet_length, 1u << 18);
  EXPECT_EQ(l.max_read_length, 261120u);
  EXPECT_EQ(l.max_open_handles, 64u);
}

TEST(SftpProtocol, RefusesMalformedAndOversizedPackets) {
  const uint8_t huge[4] = {0x7f, 0xff, 0xff, 0xff};
  EXPECT_EQ(CodeOf([&] { ParseLength(huge); }), ErrorCode::kCorrupt);
  const uint8_t zero[4] = {0, 0, 0, 0};
  EXPECT_EQ(CodeOf([&] { ParseLength(zero); }), ErrorCode::kCorrupt);
  const uint8_t ok[4] = {0, 4, 0, 0};
  EXPECT_EQ(ParseLength(ok), kMaxPacketLength);

  // A NAME reply claiming four billion entries in a few bytes: refused before any reserve.
  Bytes name = Reply(Type::kName, 1);
  Put32(name, 0xffffffffu);
  Put32(name, 0);
  EXPECT_EQ(CodeOf([&] { ParseReply(name); }), ErrorCode::kCorrupt);
  // A string longer than what is left.
  Bytes data = Reply(Type::kData, 1);
  Put32(data, 1000);
  data.push_back('x');
  EXPECT_EQ(CodeOf([&] { ParseReply(data); }), ErrorCode::kCorrupt);
  // Truncated id, trailing junk, an oversized handle, a request type sent as a reply.
  EXPECT_EQ(CodeOf([&] { ParseReply(Bytes{101, 0, 0}); }), ErrorCode::kCorrupt);
  Bytes attrs = Reply(Type::kAttrs, 1);
  Put32(attrs, 0);
  attrs.push_back(0);
  EXPECT_EQ(CodeOf([&] { ParseReply(attrs); }), ErrorCode::kCorrupt);
  Bytes handle = Reply(Type::kHandle, 1);
  PutStr(handle, std::string(300, 'h'));
  EXPECT_EQ(CodeOf([&] { ParseReply(handle); }), ErrorCode::kCorrupt);
  EXPECT_EQ(CodeOf([&] { ParseReply(Reply(Type::kOpen, 1)); }), ErrorCode::kCorrupt);
  // Extended attributes whose count exceeds the packet.
  Bytes ext = Reply(Type::kAttrs, 1);
  Put32(ext, kAttrExtended);
  Put32(ext, 1000000);
  EXPECT_EQ(CodeOf([&] { ParseReply(ext); }), ErrorCode::kCorrupt);
  EXPECT_EQ(CodeOf([&] { ParseReply(Bytes{}); }), ErrorCode::kCorrupt);
}

TEST(SftpProtocol, AttrsRoundTrip) {
  Attrs a{.size = 1ull << 40, .uid = 1, .gid = 2, .permissions = 0100400, .atime = 3, .mtime = 4};
  Bytes b = Reply(Type::kAttrs, 3);
  AppendAttrs(b, a);
  auto r = ParseReply(b);
  EXPECT_EQ(r.attrs.size, a.size);
  EXPECT_EQ(r.attrs.uid, 1u);
  EXPECT_EQ(r.attrs.gid, 2u);
  EXPECT_TRUE(r.attrs.IsRegular());
  EXPECT_EQ(r.attrs.mtime, 4u);
}

}  // namespace
}  // namespace haven::sftp
