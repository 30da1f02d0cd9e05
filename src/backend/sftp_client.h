// One SFTP session over a spawned command's pipes (`ssh HOST -s sftp`, or any command that
// speaks SFTP on its stdin/stdout, such as /usr/lib/openssh/sftp-server).
//
// The command runs without a shell (posix_spawnp, PATH lookup), in its own process group so
// that Ctrl-C reaches haven only and haven's cleanups (lock removal) can still use the
// connection; when haven owns the terminal, the child gets it for the handshake so ssh can
// ask for a password, and haven takes it back afterwards (as restic does). The child's
// stderr is haven's: ssh's own messages are shown as they are.
//
// Requests are pipelined: Send() writes a packet with a fresh id and returns at once; a
// reader thread reads replies and hands each to the call with its id; Wait() blocks until
// that reply arrives. Any number of threads may send and wait at the same time (writes are
// serialized whole packets).
//
// Failure: when the child exits, closes its stdout, or sends a malformed packet, the
// session is dead. The child is reaped, every waiting and later call throws kIo (not
// retryable) with the reason and the child's exit status, and nothing hangs. The destructor
// closes the child's stdin (the server exits on EOF), waits up to 5 s, then kills it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "backend/sftp_protocol.h"
#include "core/bytes.h"
#include "core/mutex.h"

namespace haven {

class SftpClient {
 public:
  // A reply and the packet it points into.
  struct Response {
    Bytes packet;
    sftp::Reply reply;
  };
  struct Slot;  // one outstanding request (sftp_client.cc)
  // A request in flight; pass it to Wait() once.
  struct Call {
    uint32_t id = 0;
    std::shared_ptr<Slot> slot;
  };

  // Starts argv and runs INIT/VERSION. Throws kIo naming the command when it cannot be
  // started or exits (or says something other than VERSION) before the handshake ends.
  explicit SftpClient(std::vector<std::string> argv);
  ~SftpClient();
  SftpClient(const SftpClient&) = delete;
  SftpClient& operator=(const SftpClient&) = delete;

  // True when the server's VERSION listed the extension (e.g. "posix-rename@openssh.com").
  bool HasExtension(std::string_view name) const;
  // Bytes per READ / WRITE request: 32 KiB, or the server's limits@openssh.com up to
  // sftp::kMaxReadLength.
  uint32_t read_chunk() const { return read_chunk_; }
  uint32_t write_chunk() const { return write_chunk_; }
  // The command line, for messages.
  const std::string& command() const { return command_; }

  // Sends the packet make(id) builds for a fresh id.
  Call Send(const std::function<Bytes(uint32_t id)>& make);
  // Sends a request whose reply nobody waits for (a CLOSE after an error).
  void SendAndForget(const std::function<Bytes(uint32_t id)>& make);
  // The reply of `call`; throws kIo when the session died first, kCorrupt for a
  // malformed reply.
  Response Wait(Call& call);
  // Send + Wait.
  Response Roundtrip(const std::function<Bytes(uint32_t id)>& make) {
    Call c = Send(make);
    return Wait(c);
  }

  // The reason the session ended, or nullopt while it is alive.
  std::optional<std::string> DeadReason() const;

 private:
  void Spawn();
  void Handshake();
  void QueryLimits();
  void ReaderLoop();
  // Ends the session: EOF to the child, wait for the reader (5 s), kill, join.
  void Shutdown();
  // Marks the session dead (first reason wins) and wakes every waiter.
  void Die(const std::string& reason);
  // Waits for the child to exit (SIGKILL after timeout_ms); "exited with status N" etc.
  std::string Reap(int timeout_ms);
  Call Register(bool discard);
  void WritePacket(ByteView packet, uint32_t id);
  [[noreturn]] void ThrowDead(const std::string& reason) const;

  std::vector<std::string> argv_;
  std::string command_;
  pid_t pid_ = -1;
  int to_child_ = -1;    // the child's stdin
  int from_child_ = -1;  // the child's stdout
  std::vector<std::pair<std::string, std::string>> extensions_;
  uint32_t read_chunk_ = 32 * 1024;
  uint32_t write_chunk_ = 32 * 1024;

  Mutex write_mu_;  // whole packets on to_child_

  Mutex reap_mu_;
  bool reaped_ GUARDED_BY(reap_mu_) = false;
  std::string exit_text_ GUARDED_BY(reap_mu_);

  mutable Mutex mu_;
  CondVar cv_;
  uint32_t next_id_ GUARDED_BY(mu_) = 1;
  std::map<uint32_t, std::shared_ptr<Slot>> pending_ GUARDED_BY(mu_);
  std::optional<std::string> dead_ GUARDED_BY(mu_);
  bool reader_done_ GUARDED_BY(mu_) = false;

  std::thread reader_;
};

}  // namespace haven
