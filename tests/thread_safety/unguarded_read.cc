// The negative check of `make thread-safety` (scripts/check-thread-safety): with
// HAVEN_TSA_EXPECT_ERROR defined this file reads a GUARDED_BY field and calls a REQUIRES
// helper without the lock, and clang's -Wthread-safety -Werror must reject it. Without the
// macro the same code holds the lock and must compile, so a rejection above is the
// analysis at work, not a broken include. If the first stops failing, the check has gone
// blind (e.g. the attributes expand to nothing) and `make thread-safety` fails.
#include "core/mutex.h"

namespace haven {

class Counter {
 public:
  int Read() {
#ifdef HAVEN_TSA_EXPECT_ERROR
    return value_;  // no lock held: -Wthread-safety-analysis
#else
    MutexLock lock(mu_);
    return value_;
#endif
  }
  void Bump() {
#ifdef HAVEN_TSA_EXPECT_ERROR
    BumpLocked();  // REQUIRES(mu_) without mu_
#else
    MutexLock lock(mu_);
    BumpLocked();
#endif
  }

 private:
  void BumpLocked() REQUIRES(mu_) { ++value_; }

  Mutex mu_;
  int value_ GUARDED_BY(mu_) = 0;
};

int Use() {
  Counter c;
  c.Bump();
  return c.Read();
}

}  // namespace haven
