#include "core/sha256.h"

#include <openssl/evp.h>

#include "core/error.h"
#include "core/id.h"

namespace haven {

namespace {

// Fetched once: EVP_sha256() would look the implementation up on every init.
const EVP_MD* Sha256Md() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (!md) Fail(ErrorCode::kFatal, "OpenSSL failure in EVP_MD_fetch(SHA256)");
  return md;
}

void Init(EVP_MD_CTX* ctx) {
  if (EVP_DigestInit_ex(ctx, Sha256Md(), nullptr) != 1)
    Fail(ErrorCode::kFatal, "OpenSSL failure in SHA-256 init");
}

// A thread's context for one-shot hashes, freed when the thread ends.
struct ThreadCtx {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~ThreadCtx() { EVP_MD_CTX_free(ctx); }
};

}  // namespace

// OpenSSL 3's SHA256() fetches the implementation and makes a context on every call: 0.91 µs
// for 1 KiB here against 0.67 µs with the fetched digest and a context kept per thread (a
// backup of small files hashes each one, and each tree, pack and index file).
RawId Sha256(ByteView data) {
  thread_local ThreadCtx t;
  if (!t.ctx) Fail(ErrorCode::kFatal, "OpenSSL failure in EVP_MD_CTX_new");
  RawId id;
  unsigned int n = 0;
  Init(t.ctx);
  if ((!data.empty() && EVP_DigestUpdate(t.ctx, data.data(), data.size()) != 1) ||
      EVP_DigestFinal_ex(t.ctx, id.bytes.data(), &n) != 1 || n != id.bytes.size())
    Fail(ErrorCode::kFatal, "OpenSSL failure in SHA-256");
  return id;
}

Sha256Stream::Sha256Stream() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_) Fail(ErrorCode::kFatal, "OpenSSL failure in EVP_MD_CTX_new");
  Init(ctx_);
}

Sha256Stream::~Sha256Stream() { EVP_MD_CTX_free(ctx_); }

void Sha256Stream::Update(ByteView data) {
  if (!data.empty() && EVP_DigestUpdate(ctx_, data.data(), data.size()) != 1)
    Fail(ErrorCode::kFatal, "OpenSSL failure in SHA-256 update");
}

RawId Sha256Stream::Finish() {
  RawId id;
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx_, id.bytes.data(), &n) != 1 || n != id.bytes.size())
    Fail(ErrorCode::kFatal, "OpenSSL failure in SHA-256 final");
  Init(ctx_);
  return id;
}

}  // namespace haven
