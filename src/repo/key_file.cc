#include "repo/key_file.h"

#include <simdjson.h>

#include <cstring>

#include "core/error.h"
#include "crypto/random.h"
#include "crypto/seal.h"
#include "repo/gojson.h"
#include "repo/host_info.h"

namespace haven {

std::string KeyFile::ToJson() const {
  std::string out = "{\"created\":";
  gojson::AppendString(out, created);
  out += ",\"username\":";
  gojson::AppendString(out, username);
  out += ",\"hostname\":";
  gojson::AppendString(out, hostname);
  out += ",\"kdf\":";
  gojson::AppendString(out, kdf);
  out += ",\"N\":" + std::to_string(params.n) + ",\"r\":" + std::to_string(params.r) +
         ",\"p\":" + std::to_string(params.p) + ",\"salt\":\"" + Base64Encode(salt) +
         "\",\"data\":\"" + Base64Encode(data) + "\"}";
  return out;
}

KeyFile KeyFile::Parse(std::string_view json, std::string_view name) {
  const std::string where = "key " + std::string(name);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (json.empty() || parser.parse(json.data(), json.size()).get(doc))
    Fail(ErrorCode::kCorrupt, where + ": invalid JSON");
  KeyFile k;
  std::string_view s;
  if (!doc["created"].get(s)) k.created = s;
  if (!doc["username"].get(s)) k.username = s;
  if (!doc["hostname"].get(s)) k.hostname = s;
  if (doc["kdf"].get(s)) Fail(ErrorCode::kCorrupt, where + ": missing kdf");
  k.kdf = s;
  if (k.kdf != "scrypt")
    Fail(ErrorCode::kCorrupt, where + ": unsupported KDF \"" + k.kdf + "\"");
  int64_t n, r, p;
  if (doc["N"].get(n) || doc["r"].get(r) || doc["p"].get(p))
    Fail(ErrorCode::kCorrupt, where + ": missing or invalid scrypt parameters N, r, p");
  if (n <= 0 || r <= 0 || p <= 0 || r > (1 << 30) || p > (1 << 30))
    Fail(ErrorCode::kCorrupt, where + ": invalid scrypt parameters N=" + std::to_string(n) +
                                  " r=" + std::to_string(r) + " p=" + std::to_string(p));
  k.params = {uint64_t(n), uint32_t(r), uint32_t(p)};
  try {
    crypto::CheckScryptParams(k.params);
  } catch (const Error& e) {
    Fail(ErrorCode::kCorrupt, where + ": " + e.what());
  }
  if (doc["salt"].get(s)) Fail(ErrorCode::kCorrupt, where + ": missing salt");
  auto salt = Base64Decode(s);
  if (!salt || salt->size() != 64)
    Fail(ErrorCode::kCorrupt, where + ": salt must be 64 bytes of base64");
  k.salt = std::move(*salt);
  if (doc["data"].get(s)) Fail(ErrorCode::kCorrupt, where + ": missing data");
  auto data = Base64Decode(s);
  if (!data || data->size() < crypto::kOverhead)
    Fail(ErrorCode::kCorrupt, where + ": invalid data");
  k.data = std::move(*data);
  return k;
}

std::optional<crypto::CryptoKey> KeyFile::Open(std::string_view password, std::string_view name,
                                               int threads) const {
  Bytes dk = crypto::Scrypt(password, salt, params, 64, threads);
  crypto::CryptoKey user = crypto::CryptoKey::FromDerived(dk);
  auto plain = crypto::Open(user, data);
  if (!plain) return std::nullopt;
  return MasterKeyFromJson(AsChars(*plain), name);
}

KeyFile KeyFile::Create(const crypto::CryptoKey& master, std::string_view password,
                        const crypto::ScryptParams& params, int threads) {
  KeyFile k;
  k.created = gojson::FormatTime(NowLocal());
  k.username = CurrentUserName();
  k.hostname = HostName();
  k.params = params;
  k.salt.resize(64);
  crypto::RandomBytes(k.salt.data(), k.salt.size());
  Bytes dk = crypto::Scrypt(password, k.salt, params, 64, threads);
  crypto::CryptoKey user = crypto::CryptoKey::FromDerived(dk);
  std::string mk = MasterKeyToJson(master);
  k.data = crypto::Seal(user, AsBytes(mk));
  return k;
}

std::string MasterKeyToJson(const crypto::CryptoKey& k) {
  return "{\"mac\":{\"k\":\"" + Base64Encode(k.mac_k) + "\",\"r\":\"" + Base64Encode(k.mac_r) +
         "\"},\"encrypt\":\"" + Base64Encode(k.encrypt) + "\"}";
}

crypto::CryptoKey MasterKeyFromJson(std::string_view json, std::string_view name) {
  const std::string where = "key " + std::string(name) + ": master key";
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (json.empty() || parser.parse(json.data(), json.size()).get(doc))
    Fail(ErrorCode::kCorrupt, where + ": invalid JSON");
  std::string_view ks, rs, es;
  if (doc["mac"]["k"].get(ks) || doc["mac"]["r"].get(rs) || doc["encrypt"].get(es))
    Fail(ErrorCode::kCorrupt, where + ": missing fields");
  auto k = Base64Decode(ks), r = Base64Decode(rs), e = Base64Decode(es);
  if (!k || !r || !e || k->size() != 16 || r->size() != 16 || e->size() != 32)
    Fail(ErrorCode::kCorrupt, where + ": invalid key sizes");
  crypto::CryptoKey key;
  std::memcpy(key.mac_k.data(), k->data(), 16);
  std::memcpy(key.mac_r.data(), r->data(), 16);
  std::memcpy(key.encrypt.data(), e->data(), 32);
  if (!key.Valid()) Fail(ErrorCode::kCorrupt, where + ": all-zero key part");
  return key;
}

}  // namespace haven
