#include "core/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include <map>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/mutex.h"

namespace haven::interrupt {

namespace {

struct Registry {
  Mutex mu;
  unsigned long next GUARDED_BY(mu) = 1;
  std::map<unsigned long, std::function<void()>> fns GUARDED_BY(mu);
  bool exiting GUARDED_BY(mu) = false;  // the cleanup pass has taken its list
};

Registry& Reg() {
  static Registry* r = new Registry();  // never destroyed: the signal thread may outlive main
  return *r;
}

}  // namespace

Cleanup::Cleanup(std::function<void()> fn) : Cleanup(std::move(fn), {}) {}

Cleanup::Cleanup(std::function<void()> fn, const std::function<bool()>& first) : id_(0) {
  Registry& r = Reg();
  MutexLock lk(r.mu);
  // Once the pass has its list, nothing new starts: the caller unwinds (releasing what it
  // holds, which a cleanup may need) while the process exits.
  if (r.exiting) Fail(ErrorCode::kInterrupted, "interrupted");
  if (first && !first()) return;
  id_ = r.next++;
  r.fns.emplace(id_, std::move(fn));
}

Cleanup::~Cleanup() {
  if (id_ == 0) return;
  Registry& r = Reg();
  MutexLock lk(r.mu);
  r.fns.erase(id_);
}

void CleanupAndExit(int code) {
  Registry& r = Reg();
  std::vector<std::function<void()>> fns;
  {
    MutexLock lk(r.mu);
    if (r.exiting) {  // another thread is cleaning up and will exit
      lk.Unlock();
      for (;;) pause();
    }
    // From here on no Cleanup registers and no `first` runs (they fail with kInterrupted),
    // so the list is complete: a temp file created through `first` is in it.
    r.exiting = true;
    for (auto it = r.fns.rbegin(); it != r.fns.rend(); ++it) fns.push_back(it->second);
  }
  for (auto& fn : fns) {
    try {
      fn();
    } catch (...) {
    }
  }
  _exit(code);
}

namespace {
int g_pipe[2] = {-1, -1};
std::atomic<int> g_signals{0};

// Async-signal-safe: hands the signal to the waiting thread; a second one ends at once.
void OnSignal(int sig) {
  if (g_signals.fetch_add(1) > 0) _exit(130);
  unsigned char b = static_cast<unsigned char>(sig);
  ssize_t n = write(g_pipe[1], &b, 1);
  (void)n;
}
}  // namespace

void ExitIfInterrupted() {
  if (g_signals.load() > 0) CleanupAndExit(130);
}

void Install() {
  // A handler, not a blocked mask and sigwait: a blocked mask would be inherited by every
  // program started later (password command, package managers), which could then not be
  // interrupted; caught signals are reset to the default on exec.
  if (pipe2(g_pipe, O_CLOEXEC) != 0) return;  // without it, the default action applies
  std::thread([] {
    unsigned char b = 0;
    for (;;) {
      ssize_t n = read(g_pipe[0], &b, 1);
      if (n == 1) break;
      if (n < 0 && errno == EINTR) continue;
      return;
    }
    CleanupAndExit(130);
  }).detach();
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

}  // namespace haven::interrupt
