// Facts about the running process that the format records: host name, user name, the
// local time with its zone offset, and uid/gid -> name lookups (cached, thread-safe).
#pragma once

#include <cstdint>
#include <string>

#include "repo/gojson.h"

namespace haven {

std::string HostName();
std::string CurrentUserName();
gojson::Timestamp NowLocal();
std::string UserNameOf(uint32_t uid);   // "" when unknown
std::string GroupNameOf(uint32_t gid);  // "" when unknown

}  // namespace haven
