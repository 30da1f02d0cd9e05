#include "repo/host_info.h"

#include <grp.h>
#include <pwd.h>
#include <sys/time.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/mutex.h"

namespace haven {

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

std::string CurrentUserName() { return UserNameOf(getuid()); }

gojson::Timestamp NowLocal() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return gojson::LocalTime(ts.tv_sec, static_cast<int32_t>(ts.tv_nsec));
}

namespace {
Mutex g_mu;
std::map<uint32_t, std::string> g_users GUARDED_BY(g_mu);
std::map<uint32_t, std::string> g_groups GUARDED_BY(g_mu);

std::string UserNameUncached(uint32_t uid) {
  MutexLock lock(g_mu);
  auto it = g_users.find(uid);
  if (it != g_users.end()) return it->second;
  struct passwd pw, *res = nullptr;
  std::vector<char> buf(16384);
  std::string name;
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &res) == 0 && res) name = pw.pw_name;
  g_users[uid] = name;
  return name;
}

std::string GroupNameUncached(uint32_t gid) {
  MutexLock lock(g_mu);
  auto it = g_groups.find(gid);
  if (it != g_groups.end()) return it->second;
  struct group gr, *res = nullptr;
  std::vector<char> buf(16384);
  std::string name;
  if (getgrgid_r(gid, &gr, buf.data(), buf.size(), &res) == 0 && res) name = gr.gr_name;
  g_groups[gid] = name;
  return name;
}

}  // namespace

// Each thread remembers its last answer: an entry of g_users/g_groups never changes once
// made, so this is the global cache's answer without its lock (a backup asks per entry).
std::string UserNameOf(uint32_t uid) {
  thread_local std::optional<std::pair<uint32_t, std::string>> last;
  if (last && last->first == uid) return last->second;
  std::string name = UserNameUncached(uid);
  last.emplace(uid, name);
  return name;
}

std::string GroupNameOf(uint32_t gid) {
  thread_local std::optional<std::pair<uint32_t, std::string>> last;
  if (last && last->first == gid) return last->second;
  std::string name = GroupNameUncached(gid);
  last.emplace(gid, name);
  return name;
}

}  // namespace haven
