// Fuzz target: the folder state's plaintext parser (folder_state.h). A parsed state encodes
// back to the same bytes, and its folders are in strictly ascending key order.
#include <cstdint>
#include <algorithm>
#include <cstdlib>

#include "archiver/folder_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven;
  auto s = ParseFolderState(ByteView(data, size));
  if (!s) return 0;
  Bytes back = EncodeFolderState(*s);
  if (back.size() != size || !std::equal(back.begin(), back.end(), data)) std::abort();
  for (size_t i = 1; i < s->dirs.size(); ++i)
    if (!(s->dirs[i - 1].key < s->dirs[i].key)) std::abort();
  return 0;
}
