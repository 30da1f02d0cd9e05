#include "backend/sftp_client.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>
#include <utility>

#include "backend/posix_io.h"
#include "core/error.h"

extern char** environ;

namespace haven {

struct SftpClient::Slot {
  bool done = false;
  bool discard = false;
  Bytes packet;
};

namespace {

// Reads exactly n bytes; false on EOF before the first byte, throws kIo on a read error or
// EOF in the middle.
bool ReadFull(int fd, uint8_t* out, size_t n, const char* what) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, out + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      Fail(ErrorCode::kIo, std::string("sftp: reading ") + what + " from the server: " +
                               std::strerror(errno));
    }
    if (r == 0) {
      if (got == 0) return false;
      Fail(ErrorCode::kIo, std::string("sftp: the server closed the connection in the middle of ") + what);
    }
    got += static_cast<size_t>(r);
  }
  return true;
}

// One packet without its length prefix; nullopt on a clean EOF between packets.
std::optional<Bytes> ReadPacket(int fd) {
  uint8_t len[4];
  if (!ReadFull(fd, len, 4, "a packet length")) return std::nullopt;
  Bytes p(sftp::ParseLength(len));
  if (!ReadFull(fd, p.data(), p.size(), "a packet")) {
    Fail(ErrorCode::kIo, "sftp: the server closed the connection in the middle of a packet");
  }
  return p;
}

std::string JoinArgs(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

// The terminal handed to the child for the handshake (ssh may prompt on it) and taken
// back afterwards; nothing when haven has no controlling terminal in the foreground.
class TerminalHandoff {
 public:
  TerminalHandoff() {
    tty_ = posix::OpenNoIntr("/dev/tty", O_RDWR);
    if (tty_ >= 0 && ::tcgetpgrp(tty_) != ::getpgrp()) {
      ::close(tty_);
      tty_ = -1;
    }
  }
  ~TerminalHandoff() {
    Restore();
    if (tty_ >= 0) ::close(tty_);
  }
  void GiveTo(pid_t child) {
    if (tty_ >= 0 && ::tcsetpgrp(tty_, child) == 0) given_ = true;
  }
  // Back to haven's group. We are in the background now, so SIGTTOU is blocked around it.
  void Restore() {
    if (!given_) return;
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTTOU);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    ::tcsetpgrp(tty_, ::getpgrp());
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    given_ = false;
  }

 private:
  int tty_ = -1;
  bool given_ = false;
};

}  // namespace

SftpClient::SftpClient(std::vector<std::string> argv)
    : argv_(std::move(argv)), command_(JoinArgs(argv_)) {
  if (argv_.empty() || argv_[0].empty()) Fail(ErrorCode::kInvalidArgument, "sftp: empty command");
  // A write to a child that has exited must be an error (EPIPE), not the end of haven.
  // The CLI ignores SIGPIPE already; tests and other users of this class get the same.
  struct sigaction sa;
  if (::sigaction(SIGPIPE, nullptr, &sa) == 0 && sa.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
  TerminalHandoff tty;
  Spawn();
  tty.GiveTo(pid_);
  try {
    Handshake();
  } catch (...) {
    tty.Restore();
    ::close(to_child_);
    ::close(from_child_);
    Reap(2000);
    throw;
  }
  tty.Restore();
  reader_ = std::thread([this] { ReaderLoop(); });
  try {
    if (HasExtension("limits@openssh.com")) QueryLimits();
  } catch (...) {
    Shutdown();  // no destructor runs for a constructor that throws
    throw;
  }
}

void SftpClient::Spawn() {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) Fail(ErrorCode::kIo, std::string("sftp: pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(in[0]);
    ::close(in[1]);
    Fail(ErrorCode::kIo, std::string("sftp: pipe: ") + std::strerror(err));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
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
  for (std::string& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  int rc = ::posix_spawnp(&pid_, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    Fail(ErrorCode::kIo, "sftp: cannot run " + argv_[0] + ": " + std::strerror(rc));
  }
  to_child_ = in[1];
  from_child_ = out[0];
}

void SftpClient::Handshake() {
  Bytes init = sftp::EncodeInit();
  if (int err = posix::WriteAll(to_child_, init); err != 0) {
    std::string status = Reap(2000);
    Fail(ErrorCode::kIo, "sftp: cannot start the SFTP session: `" + command_ + "` " + status +
                             " (its message, if any, is above)");
  }
  std::optional<Bytes> p;
  try {
    p = ReadPacket(from_child_);
  } catch (const Error& e) {
    Fail(ErrorCode::kIo, std::string(e.what()) + " at the start of the session: is `" + command_ +
                             "` an SFTP server? (a login banner or shell output on stdout breaks SFTP)");
  }
  if (!p) {
    std::string status = Reap(2000);
    Fail(ErrorCode::kIo, "sftp: cannot start the SFTP session: `" + command_ + "` " + status +
                             " before answering (its message, if any, is above)");
  }
  sftp::Version v = sftp::ParseVersion(*p);
  if (v.version != sftp::kProtocolVersion) {
    Fail(ErrorCode::kIo, "sftp: the server speaks SFTP version " + std::to_string(v.version) +
                             ", haven needs version 3");
  }
  extensions_ = std::move(v.extensions);
}

void SftpClient::QueryLimits() {
  Response r = Roundtrip([](uint32_t id) { return sftp::EncodeLimits(id); });
  if (r.reply.type != sftp::Type::kExtendedReply) return;
  sftp::Limits l = sftp::ParseLimits(r.reply.data);
  // WRITE carries the handle and 25 bytes of header besides the data.
  auto clamp = [](uint64_t v, uint64_t slack) {
    if (v <= slack) return uint32_t{32 * 1024};
    v -= slack;
    return static_cast<uint32_t>(std::min<uint64_t>(v, sftp::kMaxReadLength));
  };
  if (l.max_read_length) read_chunk_ = clamp(l.max_read_length, 0);
  if (l.max_write_length) write_chunk_ = clamp(l.max_write_length, 0);
  if (l.max_packet_length) {
    write_chunk_ = std::min(write_chunk_, clamp(l.max_packet_length, 1024));
    read_chunk_ = std::min(read_chunk_, clamp(l.max_packet_length, 1024));
  }
}

SftpClient::~SftpClient() { Shutdown(); }

void SftpClient::Shutdown() {
  ::close(to_child_);  // the server sees EOF and exits
  {
    MutexLock l(mu_);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!reader_done_) {
      if (!cv_.WaitUntil(mu_, deadline) && !reader_done_) break;
    }
  }
  {
    MutexLock r(reap_mu_);
    if (!reaped_) ::kill(pid_, SIGKILL);  // unblocks the reader (its read sees EOF)
  }
  if (reader_.joinable()) reader_.join();
  ::close(from_child_);
}

bool SftpClient::HasExtension(std::string_view name) const {
  for (const auto& [n, d] : extensions_) {
    if (n == name) return true;
  }
  return false;
}

std::string SftpClient::Reap(int timeout_ms) {
  MutexLock r(reap_mu_);
  if (reaped_) return exit_text_;
  int status = 0;
  pid_t got = 0;
  for (int waited = 0;; waited += 10) {
    got = ::waitpid(pid_, &status, WNOHANG);
    if (got != 0 && !(got < 0 && errno == EINTR)) break;
    if (waited >= timeout_ms) {
      ::kill(pid_, SIGKILL);
      do {
        got = ::waitpid(pid_, &status, 0);
      } while (got < 0 && errno == EINTR);
      break;
    }
    ::usleep(10000);
  }
  reaped_ = true;
  if (got < 0) {
    exit_text_ = "could not be waited for";
  } else if (WIFEXITED(status)) {
    exit_text_ = "exited with status " + std::to_string(WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    exit_text_ = std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  } else {
    exit_text_ = "ended";
  }
  return exit_text_;
}

void SftpClient::Die(const std::string& reason) {
  MutexLock l(mu_);
  if (!dead_) dead_ = reason;
  cv_.NotifyAll();
}

std::optional<std::string> SftpClient::DeadReason() const {
  MutexLock l(mu_);
  return dead_;
}

void SftpClient::ThrowDead(const std::string& reason) const {
  Fail(ErrorCode::kIo, "sftp: the connection is gone: " + reason);
}

void SftpClient::ReaderLoop() {
  std::string reason;
  try {
    for (;;) {
      std::optional<Bytes> p = ReadPacket(from_child_);
      if (!p) {
        reason = "the server closed the connection";
        break;
      }
      uint32_t id = sftp::ReplyId(*p);
      MutexLock l(mu_);
      auto it = pending_.find(id);
      if (it == pending_.end()) {
        reason = "the server answered request " + std::to_string(id) + ", which was never sent";
        break;
      }
      if (!it->second->discard) {
        it->second->packet = std::move(*p);
        it->second->done = true;
      }
      pending_.erase(it);
      cv_.NotifyAll();
    }
  } catch (const Error& e) {
    reason = e.what();
  }
  // A protocol error leaves the child running: stop it before waiting for it.
  if (!reason.empty() && reason.find("closed the connection") == std::string::npos) {
    MutexLock r(reap_mu_);
    if (!reaped_) ::kill(pid_, SIGTERM);
  }
  std::string status = Reap(5000);
  Die(reason + "; `" + command_ + "` " + status + " (its message, if any, is above)");
  MutexLock l(mu_);
  reader_done_ = true;
  cv_.NotifyAll();
}

SftpClient::Call SftpClient::Register(bool discard) {
  auto slot = std::make_shared<Slot>();
  slot->discard = discard;
  MutexLock l(mu_);
  if (dead_) ThrowDead(*dead_);
  uint32_t id = next_id_++;
  pending_[id] = slot;
  return Call{id, std::move(slot)};
}

void SftpClient::WritePacket(ByteView packet, uint32_t id) {
  int err;
  {
    MutexLock w(write_mu_);
    err = posix::WriteAll(to_child_, packet);
  }
  if (err == 0) return;
  {
    MutexLock l(mu_);
    pending_.erase(id);
  }
  // The reader sees the EOF that goes with a broken pipe and records the exit status.
  {
    MutexLock l(mu_);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(6);
    while (!dead_) {
      if (!cv_.WaitUntil(mu_, deadline) && !dead_) break;
    }
    if (dead_) ThrowDead(*dead_);
  }
  Fail(ErrorCode::kIo, "sftp: writing to `" + command_ + "`: " + std::strerror(err));
}

SftpClient::Call SftpClient::Send(const std::function<Bytes(uint32_t id)>& make) {
  Call c = Register(false);
  Bytes p = make(c.id);
  WritePacket(p, c.id);
  return c;
}

void SftpClient::SendAndForget(const std::function<Bytes(uint32_t id)>& make) {
  Call c = Register(true);
  Bytes p = make(c.id);
  WritePacket(p, c.id);
}

SftpClient::Response SftpClient::Wait(Call& call) {
  Response r;
  {
    MutexLock l(mu_);
    while (!call.slot->done && !dead_) cv_.Wait(mu_);
    if (!call.slot->done) {
      pending_.erase(call.id);
      ThrowDead(*dead_);
    }
    r.packet = std::move(call.slot->packet);
  }
  r.reply = sftp::ParseReply(r.packet);
  return r;
}

}  // namespace haven
