#include "capture/packages.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <set>

#include "core/error.h"

extern char** environ;

namespace haven::capture {

namespace {

constexpr size_t kMaxOutput = 64 << 20;

std::vector<std::string_view> Lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string_view::npos) end = s.size();
    std::string_view l = s.substr(start, end - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.push_back(l);
    start = end + 1;
  }
  return out;
}

std::vector<std::string_view> Fields(std::string_view l, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t end = l.find(sep, start);
    if (end == std::string_view::npos) {
      out.push_back(l.substr(start));
      return out;
    }
    out.push_back(l.substr(start, end - start));
    start = end + 1;
  }
}

std::vector<std::string_view> Words(std::string_view l) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < l.size()) {
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
    size_t j = i;
    while (j < l.size() && l[j] != ' ' && l[j] != '\t') ++j;
    if (j > i) out.push_back(l.substr(i, j - i));
    i = j;
  }
  return out;
}

// Keeps a field printable and free of the separators of the list format.
std::string Clean(std::string_view f) {
  std::string s;
  for (char c : f)
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) s.push_back(c);
  return s;
}

std::string Join(std::initializer_list<std::string_view> f) {
  std::string s;
  for (auto x : f) {
    if (!s.empty()) s.push_back('\t');
    s += Clean(x);
  }
  return s;
}

struct Source {
  std::string manager, file;
  std::vector<std::string> exes;  // first found on PATH is used
  std::vector<std::string> args;
  std::vector<std::string> (*parse)(std::string_view);
  bool output_despite_failure = false;  // npm ls exits 1 on "extraneous" but lists fine
};

const std::vector<Source>& Sources() {
  static const std::vector<Source> s = {
      {"dpkg", "dpkg.txt", {"dpkg-query"},
       {"-W", "-f=${binary:Package}\\t${Version}\\t${db:Status-Status}\\n"}, ParseDpkgQuery},
      {"apt", "apt-manual.txt", {"apt-mark"}, {"showmanual"}, ParseNameList},
      {"pip", "pip.txt", {"pip3", "pip"},
       {"list", "--format=freeze", "--disable-pip-version-check", "--no-input"}, ParsePipFreeze},
      {"pip", "pip-user.txt", {"pip3", "pip"},
       {"list", "--user", "--format=freeze", "--disable-pip-version-check", "--no-input"},
       ParsePipFreeze},
      {"npm", "npm.txt", {"npm"}, {"ls", "-g", "--depth=0", "--parseable", "--long"},
       ParseNpmParseable, true},
      {"flatpak", "flatpak.txt", {"flatpak"},
       {"list", "--app", "--columns=application,version,origin"}, ParseFlatpakColumns},
      {"snap", "snap.txt", {"snap"}, {"list"}, ParseSnapList},
  };
  return s;
}

std::string FirstLine(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  if (l.size() > 200) l = l.substr(0, 200) + "...";
  return Clean(l);
}

}  // namespace

const std::vector<std::string>& SupportedManagers() {
  static const std::vector<std::string> m = {"dpkg", "apt", "pip", "npm", "flatpak", "snap"};
  return m;
}

std::string ManagerOfFile(std::string_view file) {
  for (const Source& s : Sources())
    if (s.file == file) return s.manager;
  return "";
}

std::string FindOnPath(const std::string& exe) {
  if (exe.find('/') != std::string::npos) return access(exe.c_str(), X_OK) == 0 ? exe : "";
  const char* path = std::getenv("PATH");
  if (!path) return "";
  for (std::string_view dir : Fields(path, ':')) {
    if (dir.empty()) continue;
    std::string full = std::string(dir) + "/" + exe;
    struct stat st;
    if (stat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(full.c_str(), X_OK) == 0)
      return full;
  }
  return "";
}

RunResult RunWithTimeout(const std::vector<std::string>& argv, int timeout_ms,
                         const std::atomic<bool>* cancel) {
  RunResult r;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) Fail(ErrorCode::kIo, std::string("pipe: ") + strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]), close(out_pipe[1]);
    Fail(ErrorCode::kIo, std::string("pipe: ") + strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group: a timeout kills its children too
  sigset_t none, def;
  sigemptyset(&none);
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  sigaddset(&def, SIGINT);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &def);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0].c_str(), &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]), close(err_pipe[0]);
    Fail(ErrorCode::kIo, "cannot run " + argv[0] + ": " + strerror(rc));
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* bufs[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (cancel && cancel->load()) {
      r.cancelled = true;
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    int n = poll(fds, 2, static_cast<int>(std::min<long long>(left, 100)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[i].fd, buf, sizeof(buf));
      if (got <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        open_fds--;
      } else if (bufs[i]->size() < kMaxOutput) {
        bufs[i]->append(buf, static_cast<size_t>(got));
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  if (r.timed_out || r.cancelled) kill(-pid, SIGKILL);
  int status = 0;
  // The output is closed (or the group killed): the child ends at once, unless it closed
  // its output early and kept running; then the deadline still holds.
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline || (cancel && cancel->load())) {
      r.timed_out = !(cancel && cancel->load());
      r.cancelled = !r.timed_out;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    usleep(5000);
  }
  if (!r.timed_out && !r.cancelled && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

std::vector<std::string> ParseDpkgQuery(std::string_view out) {
  std::vector<std::string> v;
  for (auto l : Lines(out)) {
    auto f = Fields(l, '\t');
    if (f.size() < 3 || f[0].empty() || f[2] != "installed") continue;
    v.push_back(Join({f[0], f[1]}));
  }
  return v;
}

std::vector<std::string> ParseNameList(std::string_view out) {
  std::vector<std::string> v;
  for (auto l : Lines(out)) {
    auto w = Words(l);
    if (w.size() == 1) v.push_back(Clean(w[0]));
  }
  return v;
}

std::vector<std::string> ParsePipFreeze(std::string_view out) {
  std::vector<std::string> v;
  for (auto l : Lines(out)) {
    if (l.empty() || l[0] == '#' || l[0] == '-' || l[0] == ' ') continue;
    size_t eq = l.find("==");
    size_t at = l.find(" @ ");
    if (eq != std::string_view::npos) {
      v.push_back(Join({l.substr(0, eq), l.substr(eq + 2)}));
    } else if (at != std::string_view::npos) {
      v.push_back(Join({l.substr(0, at), "@ " + std::string(l.substr(at + 3))}));
    }
  }
  return v;
}

std::vector<std::string> ParseNpmParseable(std::string_view out) {
  std::vector<std::string> v;
  for (auto l : Lines(out)) {
    auto f = Fields(l, ':');
    if (f.size() < 2) continue;
    std::string_view nv = f[1];
    size_t at = nv.rfind('@');
    if (at == 0 || at == std::string_view::npos) continue;
    std::string_view name = nv.substr(0, at), version = nv.substr(at + 1);
    if (name == "undefined" || name.empty()) continue;
    v.push_back(Join({name, version}));
  }
  return v;
}

std::vector<std::string> ParseFlatpakColumns(std::string_view out) {
  std::vector<std::string> v;
  for (auto l : Lines(out)) {
    auto f = Fields(l, '\t');
    if (f.empty() || f[0].empty() || f[0] == "Application ID" || f[0].find(' ') != std::string_view::npos)
      continue;
    v.push_back(Join({f[0], f.size() > 1 ? f[1] : "", f.size() > 2 ? f[2] : ""}));
  }
  return v;
}

std::vector<std::string> ParseSnapList(std::string_view out) {
  std::vector<std::string> v;
  for (auto l : Lines(out)) {
    auto w = Words(l);
    if (w.size() < 4 || w[0] == "Name") continue;
    v.push_back(Join({w[0], w[1], w[3]}));
  }
  return v;
}

std::string RenderPackageList(std::vector<std::string> lines) {
  std::erase_if(lines, [](const std::string& l) { return l.empty() || l[0] == '#'; });
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

std::vector<std::string> ParsePackageList(std::string_view text) {
  std::vector<std::string> v;
  for (auto l : Lines(text)) {
    std::string c;
    for (char ch : l)
      if (ch == '\t' || (static_cast<unsigned char>(ch) >= 0x20 && ch != 0x7f)) c.push_back(ch);
    if (!c.empty() && c[0] != '#') v.push_back(std::move(c));
  }
  return v;
}

std::string InstallCommand(std::string_view file, const std::vector<std::string>& lines) {
  std::string m = ManagerOfFile(file), cmd;
  for (const auto& l : lines) {
    auto f = Fields(l, '\t');
    std::string name(f[0]), version(f.size() > 1 ? f[1] : "");
    if (m == "dpkg" || m == "apt") {
      cmd += " " + name;
    } else if (m == "pip") {
      cmd += " '" + name + (version.empty() || version[0] == '@' ? "" : "==" + version) + "'";
    } else if (m == "npm") {
      cmd += " " + name + (version.empty() ? "" : "@" + version);
    } else if (m == "flatpak") {
      cmd += " " + name;
    } else if (m == "snap") {
      // One install per snap: the channel it tracked (third field) is per snap.
      std::string channel(f.size() > 2 ? f[2] : "");
      bool plain = !channel.empty() && channel != "-" &&
                   channel.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789./_-") ==
                       std::string::npos;
      cmd += std::string(cmd.empty() ? "" : " && ") + "sudo snap install " + name +
             (plain ? " --channel=" + channel : "");
    }
  }
  if (cmd.empty()) return "";
  if (m == "dpkg" || m == "apt") return "sudo apt-get install -y" + cmd;
  if (m == "pip") return file == "pip-user.txt" ? "pip3 install --user" + cmd : "pip3 install" + cmd;
  if (m == "npm") return "npm install -g" + cmd;
  if (m == "flatpak") return "flatpak install -y" + cmd;
  if (m == "snap") return cmd;
  return "";
}

DiscoveryResult DiscoverPackages(const DiscoveryOptions& opts) {
  std::set<std::string> wanted;
  if (opts.managers) {
    for (const auto& m : *opts.managers) {
      if (std::find(SupportedManagers().begin(), SupportedManagers().end(), m) ==
          SupportedManagers().end())
        Fail(ErrorCode::kInvalidArgument, "unknown package manager \"" + m +
                                              "\" (supported: dpkg apt pip npm flatpak snap)");
      wanted.insert(m);
    }
  } else {
    wanted.insert(SupportedManagers().begin(), SupportedManagers().end());
  }
  struct Out {
    std::optional<PackageList> list;
    std::string warning;
  };
  std::vector<std::future<Out>> jobs;
  for (const Source& src : Sources()) {
    if (!wanted.count(src.manager)) continue;
    std::string exe;
    for (const auto& e : src.exes)
      if (exe.empty()) exe = FindOnPath(e);
    if (exe.empty()) continue;  // not installed here: skipped quietly
    jobs.push_back(std::async(std::launch::async, [&src, exe, &opts] {
      Out o;
      std::vector<std::string> argv = {exe};
      argv.insert(argv.end(), src.args.begin(), src.args.end());
      RunResult r;
      try {
        r = RunWithTimeout(argv, opts.timeout_ms, opts.cancel);
      } catch (const Error& e) {
        o.warning = "packages: " + src.file + ": " + e.what();
        return o;
      }
      if (r.cancelled) return o;
      if (r.timed_out) {
        o.warning = "packages: " + src.file + ": " + exe + " timed out after " +
                    std::to_string(opts.timeout_ms / 1000.0).substr(0, 5) + " s (left out)";
        return o;
      }
      if (r.exit_code != 0 && !(src.output_despite_failure && !r.out.empty())) {
        o.warning = "packages: " + src.file + ": " + exe + " failed (exit " +
                    std::to_string(r.exit_code) + ")" +
                    (r.err.empty() ? "" : ": " + FirstLine(r.err)) + " (left out)";
        return o;
      }
      o.list = PackageList{src.manager, src.file, src.parse(r.out)};
      return o;
    }));
  }
  DiscoveryResult res;
  for (auto& j : jobs) {
    Out o = j.get();
    if (o.list) res.lists.push_back(std::move(*o.list));
    if (!o.warning.empty()) res.warnings.push_back(o.warning);
  }
  std::sort(res.lists.begin(), res.lists.end(),
            [](const PackageList& a, const PackageList& b) { return a.file < b.file; });
  std::sort(res.warnings.begin(), res.warnings.end());
  return res;
}

}  // namespace haven::capture
