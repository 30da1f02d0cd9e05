// Fuzz target: the folder state's plaintext parser (folder_state.h). A parsed state encodes
// back to the same bytes, its folders are in strictly ascending key order and its blobs in
// strictly ascending (type, id) order, each with a sealed length of at least 32.
#include <cstdint>
#include <algorithm>
#include <cstdlib>

#include "archiver/folder_state.h"
#include "crypto/seal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven;
  auto s = ParseFolderState(ByteView(data, size));
  if (!s) return 0;
  Bytes back = EncodeFolderState(*s);
  if (back.size() != size || !std::equal(back.begin(), back.end(), data)) std::abort();
  for (size_t i = 1; i < s->dirs.size(); ++i)
    if (!(s->dirs[i - 1].key < s->dirs[i].key)) std::abort();
  for (size_t i = 0; i < s->blobs.size(); ++i) {
    if (s->blobs[i].where.length < crypto::kOverhead) std::abort();
    if (i == 0) continue;
    const KnownBlob& a = s->blobs[i - 1];
    const KnownBlob& b = s->blobs[i];
    if (a.type > b.type || (a.type == b.type && !(a.id < b.id))) std::abort();
  }
  return 0;
}
