// Incremental SHA-256 for data that arrives in pieces (a pack read in segments by
// check --read-data). Sha256() in core/id.h hashes one contiguous range.
#pragma once

#include "core/bytes.h"
#include "core/id.h"

struct evp_md_ctx_st;

namespace haven {

class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;

  void Update(ByteView data);
  // The digest of everything given since construction or the last Finish; the stream then
  // starts over empty.
  RawId Finish();

 private:
  evp_md_ctx_st* ctx_;
};

}  // namespace haven
