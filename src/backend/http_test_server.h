// A loopback HTTP/1.1 server for the HTTP client and S3 backend unit tests (test-only):
// keep-alive, one thread per connection; the handler returns the raw response bytes, ""
// closes the connection without answering, and a response holding "Connection: close" is
// followed by a close.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace haven::testing_http {

struct SeenRequest {
  std::string head;  // request line + headers
  std::string body;
};

// A loopback HTTP/1.1 server for tests: keep-alive, one thread per connection; `handler`
// returns the raw response bytes ("" closes the connection without answering).
class TestServer {
 public:
  using Handler = std::function<std::string(const SeenRequest&)>;
  explicit TestServer(Handler handler) : handler_(std::move(handler)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    socklen_t len = sizeof(a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 64);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~TestServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    accept_thread_.join();
    for (int c : conns_) ::shutdown(c, SHUT_RDWR);
    for (auto& t : threads_) t.join();
    for (int c : conns_) ::close(c);
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int connections() const { return accepted_.load(); }

 private:
  void AcceptLoop() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      accepted_++;
      conns_.push_back(c);
      threads_.emplace_back([this, c] { Serve(c); });
    }
  }
  void Serve(int c) {
    std::string buf;
    char tmp[65536];
    for (;;) {
      size_t end;
      while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
        ssize_t n = ::read(c, tmp, sizeof(tmp));
        if (n <= 0) return;
        buf.append(tmp, static_cast<size_t>(n));
      }
      SeenRequest r{buf.substr(0, end + 4), ""};
      size_t cl = 0;
      size_t p = r.head.find("Content-Length: ");
      if (p != std::string::npos) cl = std::stoul(r.head.substr(p + 16));
      buf.erase(0, end + 4);
      while (buf.size() < cl) {
        ssize_t n = ::read(c, tmp, sizeof(tmp));
        if (n <= 0) return;
        buf.append(tmp, static_cast<size_t>(n));
      }
      r.body = buf.substr(0, cl);
      buf.erase(0, cl);
      std::string out = handler_(r);
      if (out.empty()) {
        ::shutdown(c, SHUT_RDWR);
        return;
      }
      if (::write(c, out.data(), out.size()) < 0) return;
      if (out.find("Connection: close") != std::string::npos) {
        ::shutdown(c, SHUT_RDWR);
        return;
      }
    }
  }

  Handler handler_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread accept_thread_;
  std::vector<std::thread> threads_;  // only touched by the accept thread until joined
  std::vector<int> conns_;
};

inline std::string Reply(int status, const std::string& body, const std::string& extra = "") {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

}  // namespace haven::testing_http
