#include "backend/writeback_pacer.h"

#include <fcntl.h>

#include <utility>

#include "core/fd.h"

namespace haven {

WritebackPacer::WritebackPacer(std::vector<std::string> paths, std::chrono::milliseconds period)
    : paths_(std::move(paths)), period_(period), thread_([this] { Run(); }) {}

WritebackPacer::~WritebackPacer() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  wake_.NotifyAll();
  thread_.join();
}

void WritebackPacer::Run() {
  std::vector<Fd> fds(paths_.size());
  MutexLock lock(mu_);
  while (!stop_) {
    lock.Unlock();
    for (size_t i = 0; i < paths_.size(); ++i) {
      if (!fds[i].valid())
        fds[i] = Fd(open(paths_[i].c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
      if (fds[i].valid() && sync_file_range(fds[i].get(), 0, 0, SYNC_FILE_RANGE_WRITE) == 0)
        requests_.fetch_add(1, std::memory_order_relaxed);
    }
    lock.Lock();
    const auto next = std::chrono::steady_clock::now() + period_;
    while (!stop_ && wake_.WaitUntil(mu_, next)) {
    }
  }
}

}  // namespace haven
