#include "core/error.h"

namespace haven {

int ExitCodeFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNoRepository: return 10;
    case ErrorCode::kLocked: return 11;
    case ErrorCode::kWrongPassword: return 12;
    case ErrorCode::kInterrupted: return 130;
    case ErrorCode::kSecretsFound: return 4;
    default: return 1;
  }
}

}  // namespace haven
