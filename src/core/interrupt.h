// Ctrl-C and termination (SIGINT, SIGTERM, SIGHUP), as restic handles them: one thread
// waits for the signal, runs the registered cleanups (newest first: remove this process's
// lock files and half-written temp files) and exits with 130, so no lock is left for the
// next command to trip over and no temp file is left in the repository.
#pragma once

#include <functional>

namespace haven::interrupt {

// Catches the three signals and starts the thread that runs the cleanups when one comes.
// Call first in main(), once. A second signal during the cleanup exits at once.
void Install();

// Registers a cleanup for as long as the object lives. Cleanups must be quick and must
// not throw (exceptions are swallowed); they run on the signal thread while the other
// threads may still be working, so they take their own locks.
class Cleanup {
 public:
  explicit Cleanup(std::function<void()> fn);
  // Runs `first` and, when it returns true, registers `fn`, as one step that the cleanup
  // pass cannot split: the pass runs either before `first` (which then never runs: the
  // process exits) or after `fn` is registered. For files that must not outlive an
  // interrupt, `first` creates the file (a temp file created just before a plain
  // registration could be missed by a pass running in between).
  Cleanup(std::function<void()> fn, const std::function<bool()>& first);
  // False when `first` returned false (nothing registered).
  bool registered() const { return id_ != 0; }
  ~Cleanup();
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;

 private:
  unsigned long id_;
};

// Exits with 130 (after the cleanups) when a signal came: called when a command ends, so
// one interrupted just before its end does not report success.
void ExitIfInterrupted();

// Runs the registered cleanups and _exit(code) (used by the signal thread; tests).
[[noreturn]] void CleanupAndExit(int code);

}  // namespace haven::interrupt
