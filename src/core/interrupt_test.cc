#include "core/interrupt.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "core/error.h"

namespace haven::interrupt {
namespace {

// Runs `body` in a forked child (CleanupAndExit ends the process) and returns what the
// child wrote to `out` and its exit status.
std::pair<std::string, int> InChild(void (*body)(int out)) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    body(fds[1]);
    _exit(99);  // the body should have exited through CleanupAndExit
  }
  close(fds[1]);
  std::string got;
  char buf[256];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) got.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {got, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

void Say(int out, const char* s) {
  ssize_t n = write(out, s, std::char_traits<char>::length(s));
  (void)n;
}

TEST(Interrupt, CleanupsRunNewestFirstThenExit) {
  auto [got, code] = InChild([](int out) {
    static int fd;
    fd = out;
    Cleanup a([] { Say(fd, "a"); });
    Cleanup b([] { Say(fd, "b"); });
    {
      Cleanup gone([] { Say(fd, "x"); });  // unregistered before the pass
    }
    CleanupAndExit(130);
  });
  EXPECT_EQ(got, "ba");
  EXPECT_EQ(code, 130);
}

TEST(Interrupt, FirstFalseRegistersNothing) {
  auto [got, code] = InChild([](int out) {
    static int fd;
    fd = out;
    Cleanup c([] { Say(fd, "c"); }, [] { return false; });
    Say(fd, c.registered() ? "R" : "-");
    CleanupAndExit(130);
  });
  EXPECT_EQ(got, "-");
  EXPECT_EQ(code, 130);
}

// The race of a temp file created while the cleanup pass runs: once the pass has taken
// its list, a registration does not run its `first` (the file is never created) and
// fails with kInterrupted, so no file is left that no cleanup knows.
TEST(Interrupt, NoRegistrationOnceThePassStarted) {
  auto [got, code] = InChild([](int out) {
    static int fd;
    static std::atomic<bool> in_pass{false};
    fd = out;
    Cleanup slow([] {
      in_pass = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      Say(fd, "slow;");
    });
    std::thread pass([] { CleanupAndExit(130); });
    while (!in_pass) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    try {
      Cleanup late([] { Say(fd, "late-cleanup;"); }, [] {
        Say(fd, "created;");
        return true;
      });
      Say(fd, "registered;");
    } catch (const Error& e) {
      Say(fd, e.code() == ErrorCode::kInterrupted ? "refused;" : "other;");
    }
    pass.join();  // never returns: the pass exits the process
  });
  EXPECT_EQ(got, "refused;slow;");
  EXPECT_EQ(code, 130);
}

}  // namespace
}  // namespace haven::interrupt
