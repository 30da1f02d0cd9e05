#include "core/deep_stack.h"

#include <pthread.h>

#include <cstring>
#include <exception>
#include <string>

#include "core/error.h"

namespace haven {
namespace {

struct Job {
  const std::function<void()>* fn;
  std::exception_ptr error;
};

void* RunJob(void* arg) {
  auto* job = static_cast<Job*>(arg);
  try {
    (*job->fn)();
  } catch (...) {
    job->error = std::current_exception();
  }
  return nullptr;
}

}  // namespace

TreeLevel::TreeLevel(int& depth, std::string_view path) : depth_(depth) {
  if (depth_ >= kMaxTreeDepth)
    Fail(ErrorCode::kCorrupt, "the tree at \"" + std::string(path.empty() ? "/" : path) +
                                  "\" is nested deeper than " + std::to_string(kMaxTreeDepth) +
                                  " levels (a damaged or hostile repository)");
  ++depth_;
}

void RunOnDeepStack(const std::function<void()>& fn, size_t stack_bytes) {
  Job job{&fn, nullptr};
  pthread_attr_t attr;
  int rc = pthread_attr_init(&attr);
  if (rc == 0) rc = pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  if (rc == 0) rc = pthread_create(&thread, &attr, RunJob, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0)
    Fail(ErrorCode::kFatal, std::string("cannot start a walker thread: ") + strerror(rc));
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace haven
