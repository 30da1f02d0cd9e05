#include "backend/rclone_process.h"

#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

extern char** environ;

namespace haven {
namespace {

std::string JoinWords(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::string StatusText(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  return "ended";
}

// 0 when `program` can be executed (a path, or found on $PATH as posix_spawnp looks), else
// the errno.
int FindProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0 ? 0 : errno;
  const char* env = std::getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  int err = ENOENT;
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (::access(candidate.c_str(), X_OK) == 0) return 0;
      err = EACCES;
    }
    start = end + 1;
  }
  return err;
}

// posix_spawnp with the child's stdin and stdout on `fd` (and no other descriptor but
// stderr), in its own process group, with default signal handling; returns the errno of a
// failed start.
int Spawn(std::vector<std::string> argv, int fd, pid_t* pid) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd, 0);
  posix_spawn_file_actions_adddup2(&fa, fd, 1);
  // Nothing else: in particular not curl's end of the connection (curl's sockets are not
  // close-on-exec), or rclone would never see EOF on its stdin when haven closes it.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, deflt;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigemptyset(&deflt);
  sigaddset(&deflt, SIGPIPE);
  sigaddset(&deflt, SIGINT);
  sigaddset(&deflt, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &deflt);
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int rc = ::posix_spawnp(pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return rc;
}

}  // namespace

RcloneProcess::RcloneProcess(std::vector<std::string> argv)
    : argv_(std::move(argv)), command_(JoinWords(argv_)) {
  if (argv_.empty() || argv_[0].empty()) Fail(ErrorCode::kInvalidArgument, "rclone: empty command");
  if (int err = FindProgram(argv_[0]); err != 0)
    Fail(ErrorCode::kIo, "rclone: cannot run " + argv_[0] + ": " + std::strerror(err) +
                             " (install rclone, or name the program with -o rclone.program=)");
  // A write to a child that has exited must be an error (EPIPE), not the end of haven.
  struct sigaction sa;
  if (::sigaction(SIGPIPE, nullptr, &sa) == 0 && sa.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/haven-rclone-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr)
    Fail(ErrorCode::kIo, "rclone: cannot make a folder for its socket in " + tmpl + ": " + std::strerror(errno));
  dir_ = tmpl;
  path_ = dir_ + "/s";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool ok = fd >= 0 && path_.size() < sizeof(addr.sun_path);
  if (ok) {
    std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
    ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 && ::listen(fd, 1) == 0;
  }
  if (!ok) {
    int err = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
    Fail(ErrorCode::kIo, "rclone: cannot make its socket " + path_ + ": " + std::strerror(err));
  }
  {
    MutexLock l(mu_);
    listener_ = fd;
  }
  acceptor_ = std::thread([this] { AcceptAndSpawn(); });
}

void RcloneProcess::CloseListener() {
  if (listener_ < 0) return;
  ::close(listener_);
  listener_ = -1;
  ::unlink(path_.c_str());
  ::rmdir(dir_.c_str());
}

void RcloneProcess::AcceptAndSpawn() {
  int listener;
  {
    MutexLock l(mu_);
    listener = listener_;
  }
  for (;;) {
    int s = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (s < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // the listener was shut down (destructor)
    }
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (::getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid != ::getpid()) {
      ::close(s);  // not our HTTP client
      continue;
    }
    MutexLock l(mu_);
    CloseListener();
    pid_t pid = -1;
    int rc = Spawn(argv_, s, &pid);
    ::close(s);
    if (rc != 0) {
      spawn_error_ = "rclone: cannot run " + argv_[0] + ": " + std::strerror(rc);
    } else {
      pid_ = pid;
    }
    return;
  }
}

RcloneProcess::~RcloneProcess() {
  {
    MutexLock l(mu_);
    if (listener_ >= 0) ::shutdown(listener_, SHUT_RDWR);  // ends a waiting accept
  }
  if (acceptor_.joinable()) acceptor_.join();
  MutexLock l(mu_);
  CloseListener();
  if (pid_ > 0) ReapLocked(5000, /*kill=*/true);
}

void RcloneProcess::ReapLocked(int timeout_ms, bool kill) {
  if (exit_text_ || pid_ <= 0) return;
  int status = 0;
  for (int waited = 0;; waited += 10) {
    pid_t got = ::waitpid(pid_, &status, WNOHANG);
    if (got == pid_) break;
    if (got < 0 && errno != EINTR) {
      exit_text_ = "could not be waited for";
      return;
    }
    if (waited >= timeout_ms) {
      if (!kill) return;
      ::kill(-pid_, SIGKILL);  // its own process group: helpers it started (ssh...) too
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    ::usleep(10000);
  }
  exit_text_ = StatusText(status);
}

std::optional<std::string> RcloneProcess::Failure() {
  MutexLock l(mu_);
  if (spawn_error_) return spawn_error_;
  // Messages name the program only: its arguments may hold secrets (-o rclone.args,
  // on-the-fly remotes with keys).
  if (pid_ <= 0) return "rclone: " + argv_[0] + " was not started (the connection to it failed)";
  ReapLocked(1000, /*kill=*/false);  // a child that just saw EOF gets a second to end
  if (exit_text_)
    return "rclone: " + argv_[0] + " (pid " + std::to_string(pid_) + ") " + *exit_text_ +
           " (its messages, if any, are above)";
  return std::nullopt;  // still running: the request's own error stands
}

}  // namespace haven
