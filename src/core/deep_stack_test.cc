#include "core/deep_stack.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "core/error.h"

namespace haven {
namespace {

// A recursion that needs far more than the default 8 MiB stack: 20,000 frames of 4 KiB.
int Recurse(int depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  if (depth == 0) return frame[0];
  return Recurse(depth - 1) + frame[0] - static_cast<char>(depth) + 1;
}

TEST(DeepStackTest, RecursionPastTheDefaultStackCompletes) {
  int result = -1;
  RunOnDeepStack([&] { result = Recurse(20000); });
  EXPECT_EQ(result, 20000);
}

TEST(DeepStackTest, ExceptionsReachTheCaller) {
  EXPECT_THROW(RunOnDeepStack([] { Fail(ErrorCode::kCorrupt, "bad tree"); }), Error);
  try {
    RunOnDeepStack([] { throw std::runtime_error("plain"); });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "plain");
  }
}

}  // namespace
}  // namespace haven
