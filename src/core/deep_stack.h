// Runs a deeply recursive walk on a thread with a large stack. Walks of untrusted trees
// (restore, apply) recurse once per directory level and refuse to go deeper than a fixed
// limit (4096 levels); the limit must be reachable without overflowing the stack in every
// build, including sanitizer builds whose frames are several times larger. The stack is
// reserved address space; only the pages a walk touches are ever backed by memory.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace haven {

// How deep a recursive walk of an untrusted tree goes before it refuses a subtree (restore,
// apply, ls, dump, find, diff, stats, rewrite, repair snapshots, copy's re-chunk, box list):
// one recursion per level, on RunOnDeepStack's stack.
inline constexpr int kMaxTreeDepth = 4096;

// One level of a recursive walk of an untrusted tree, for its scope: `depth` is the
// walker's counter (0 at the root). Throws kCorrupt naming `path` when the walk would go
// deeper than kMaxTreeDepth, leaving the counter as it was. Walkers that skip such a
// subtree with a warning instead (restore, apply) check the depth themselves.
class TreeLevel {
 public:
  TreeLevel(int& depth, std::string_view path);
  ~TreeLevel() { --depth_; }
  TreeLevel(const TreeLevel&) = delete;
  TreeLevel& operator=(const TreeLevel&) = delete;

 private:
  int& depth_;
};

// The stack RunOnDeepStack gives: 1 GiB of address space (about 250 KiB per level at the
// 4096-level limit, ample even under AddressSanitizer).
inline constexpr size_t kDeepStackBytes = size_t{1} << 30;

// Calls fn on a new thread with a stack of `stack_bytes` and waits for it; an exception
// thrown by fn is rethrown in the caller. Throws haven::Error if the thread cannot start.
void RunOnDeepStack(const std::function<void()>& fn, size_t stack_bytes = kDeepStackBytes);

}  // namespace haven
