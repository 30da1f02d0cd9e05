#include "core/sha256.h"

#include <gtest/gtest.h>

#include <string>

#include "core/bytes.h"
#include "core/id.h"

namespace haven {
namespace {

TEST(Sha256, KnownAnswers) {
  EXPECT_EQ(Sha256(AsBytes("")).Hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256(AsBytes("abc")).Hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Stream, PiecesHashLikeTheWholeAndFinishStartsOver) {
  Bytes data(100000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 131 + (i >> 9));
  const RawId whole = Sha256(data);
  Sha256Stream s;
  for (size_t cut : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{4097},
                     size_t{99999}}) {
    s.Update(ByteView(data).first(cut));
    s.Update(ByteView(data).subspan(cut));
    EXPECT_EQ(s.Finish(), whole) << cut;
  }
  EXPECT_EQ(s.Finish(), Sha256(AsBytes("")));
  s.Update(AsBytes("ab"));
  s.Update(AsBytes("c"));
  EXPECT_EQ(s.Finish(), Sha256(AsBytes("abc")));
}

}  // namespace
}  // namespace haven
