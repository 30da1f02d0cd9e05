// Key files (docs/format.md §4): plain JSON holding scrypt parameters, a 64-byte salt and the
// master key sealed with the key derived from a password. Several key files may wrap the
// same master key (one per password).
#pragma once

#include <cstdint>
#include <string>

#include "core/bytes.h"
#include "crypto/crypto_key.h"
#include "crypto/kdf.h"

namespace haven {

struct KeyFile {
  std::string created;  // RFC 3339
  std::string username;
  std::string hostname;
  std::string kdf = "scrypt";
  crypto::ScryptParams params{};
  Bytes salt;  // 64 bytes
  Bytes data;  // Seal(user key, master-key JSON)

  std::string ToJson() const;
  // Parses the JSON and validates kdf, salt length and the scrypt parameters (hostile
  // values are refused before any derivation). `name` is used in messages.
  static KeyFile Parse(std::string_view json, std::string_view name);

  // Derives the user key and opens the master key. nullopt when the password does not
  // fit this key file (MAC failure); throws on malformed content.
  std::optional<crypto::CryptoKey> Open(std::string_view password, std::string_view name,
                                        int threads) const;

  // A new key file wrapping `master` for `password`, with fresh salt.
  static KeyFile Create(const crypto::CryptoKey& master, std::string_view password,
                        const crypto::ScryptParams& params, int threads);
};

std::string MasterKeyToJson(const crypto::CryptoKey& k);
crypto::CryptoKey MasterKeyFromJson(std::string_view json, std::string_view name);

}  // namespace haven
