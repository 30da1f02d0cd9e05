// Fuzz target: the SFTP reply decoder (src/backend/sftp_protocol.h), fed what an untrusted
// server could send: the input is a stream of length-prefixed packets, the first parsed as
// VERSION, the others as replies. Every failure must be kCorrupt; a decoded reply must lie
// inside its packet, and decoded attributes must survive an encode/decode round trip.
#include <cstdint>
#include <cstring>

#include "backend/sftp_protocol.h"
#include "core/error.h"
#include "core/fuzz_check.h"

namespace {

using namespace haven;

bool SameAttrs(const sftp::Attrs& a, const sftp::Attrs& b) {
  return a.size == b.size && a.uid == b.uid && a.gid == b.gid && a.permissions == b.permissions &&
         a.atime == b.atime && a.mtime == b.mtime;
}

void CheckReply(ByteView packet) {
  sftp::Reply r = sftp::ParseReply(packet);
  FUZZ_CHECK(r.id == sftp::ReplyId(packet));
  if (!r.data.empty()) {
    FUZZ_CHECK(r.data.data() >= packet.data());
    FUZZ_CHECK(r.data.data() + r.data.size() <= packet.data() + packet.size());
  }
  FUZZ_CHECK(r.names.size() <= packet.size() / 12);
  FUZZ_CHECK(r.handle.size() <= sftp::kMaxHandleLength);
  for (char c : r.message) FUZZ_CHECK(c >= 0x20 && c < 0x7f);
  if (r.type == sftp::Type::kAttrs) {
    Bytes again = {static_cast<uint8_t>(sftp::Type::kAttrs), 0, 0, 0, 1};
    sftp::AppendAttrs(again, r.attrs);
    sftp::Reply back = sftp::ParseReply(again);
    FUZZ_CHECK(SameAttrs(back.attrs, r.attrs));
  }
  if (r.type == sftp::Type::kExtendedReply && r.data.size() >= 32) {
    sftp::ParseLimits(r.data);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView in(data, size);
  bool first = true;
  while (in.size() >= 4) {
    uint32_t len;
    try {
      len = sftp::ParseLength(in.data());
    } catch (const Error& e) {
      FUZZ_CHECK(e.code() == ErrorCode::kCorrupt);
      return 0;
    }
    FUZZ_CHECK(len >= 1 && len <= sftp::kMaxPacketLength);
    if (in.size() - 4 < len) return 0;
    ByteView packet = in.subspan(4, len);
    in = in.subspan(4 + len);
    try {
      if (first) {
        sftp::Version v = sftp::ParseVersion(packet);
        FUZZ_CHECK(v.extensions.size() <= packet.size() / 8);
      } else {
        CheckReply(packet);
      }
    } catch (const Error& e) {
      FUZZ_CHECK(e.code() == ErrorCode::kCorrupt);
    }
    first = false;
  }
  return 0;
}
