#include "capture/rules.h"

#include <cstdio>

#include "core/bytes.h"
#include "core/id.h"

namespace haven::capture {

namespace {

// Assignment of a value: `key = v`, `key: v`, `key := v`, `key => v`, `"key": "v"`.
#define HV_ASSIGN R"re(["']?\s{0,4}(?::=|=>|=|:)\s{0,4}["']?)re"

// clang-format off
const ContentRule kContentRules[] = {
  // id, pattern, caseless, secret group, min entropy, generic, binary
  {"aws-access-key-id", R"re(\b((?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b)re", false, 1, 2.5, false, false},
  {"aws-secret-access-key",
   R"re(aws_?secret_?(?:access_?)?key)re" HV_ASSIGN R"re(([A-Za-z0-9/+]{40}))re", true, 1, 3.5, false, false},
  {"github-token", R"re(\b(gh[pousr]_[A-Za-z0-9]{36,251})\b)re", false, 1, 3.0, false, false},
  {"github-fine-grained-token", R"re(\b(github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})\b)re", false, 1, 3.0, false, false},
  {"gitlab-token",
   R"re(\b(gl(?:pat|dt|rt|ptt|ft|imt|cbt|soat|oas)-[A-Za-z0-9_\-]{20,64}))re", false, 1, 3.0, false, false},
  {"slack-token", R"re(\b(xox[abposre]-(?:[0-9]{6,14}|[0-9])-[A-Za-z0-9\-]{10,250}))re", false, 1, 3.0, false, false},
  {"slack-app-token", R"re(\b(xapp-[0-9]-[A-Z0-9]{8,14}-[0-9]{8,14}-[a-f0-9]{32,80}))re", false, 1, 3.0, false, false},
  {"slack-webhook",
   R"re((https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,14}/[A-Z0-9]{6,14}/[A-Za-z0-9]{16,40}))re",
   false, 1, 0, false, false},
  {"stripe-live-key", R"re(\b((?:sk|rk)_live_[A-Za-z0-9]{20,247}))re", false, 1, 3.0, false, false},
  {"google-api-key", R"re(\b(AIza[0-9A-Za-z_\-]{35}))re", false, 1, 3.0, false, false},
  {"openai-key",
   R"re(\b(sk-(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_\-]{16,200}T3BlbkFJ[A-Za-z0-9_\-]{16,200}))re",
   false, 1, 3.0, false, false},
  {"openai-project-key", R"re(\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,200}))re", false, 1, 3.5, false, false},
  {"openai-legacy-key", R"re(\b(sk-[A-Za-z0-9]{48})\b)re", false, 1, 3.5, false, false},
  {"anthropic-key", R"re(\b(sk-ant-(?:api|admin|sid)[0-9]{2}-[A-Za-z0-9_\-]{40,160}))re", false, 1, 3.5, false, false},
  {"npm-token", R"re(\b(npm_[A-Za-z0-9]{36})\b)re", false, 1, 3.0, false, false},
  {"npm-auth-token", R"re(_authToken\s{0,4}=\s{0,4}["']?([A-Za-z0-9_\-.+/=]{20,200}))re", false, 1, 3.0, true, false},
  {"pypi-token", R"re(\b(pypi-AgE[A-Za-z0-9_\-]{50,400}))re", false, 1, 3.0, false, false},
  {"azure-storage-key", R"re(AccountKey\s{0,2}=\s{0,2}([A-Za-z0-9+/]{86}==))re", true, 1, 3.5, false, false},
  {"azure-storage-key-assignment",
   R"re((?:azure|storage)[A-Za-z0-9_\-]{0,30}key)re" HV_ASSIGN R"re(([A-Za-z0-9+/]{86}==))re", true, 1, 3.5, false, false},
  {"private-key",
   R"re((-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |SSH2 ENCRYPTED )?PRIVATE KEY-----\s{1,4}(?:[A-Za-z\-]{2,40}:[^\r\n]{0,200}\s{1,4}){0,6}([A-Za-z0-9+/=]{40})))re",
   false, 2, 0, false, true},
  {"pgp-private-key",
   R"re((-----BEGIN PGP PRIVATE KEY BLOCK-----\s{1,4}(?:[A-Za-z\-]{2,40}:[^\r\n]{0,200}\s{1,4}){0,6}([A-Za-z0-9+/=]{40})))re",
   false, 2, 0, false, true},
  {"age-secret-key", R"re(\b(AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58})\b)re", false, 1, 0, false, false},
  {"jwt", R"re(\b(eyJ[A-Za-z0-9_\-]{10,2000}\.eyJ[A-Za-z0-9_\-]{10,4000}\.[A-Za-z0-9_\-]{16,1000}))re", false, 1, 3.0, false, false},
  {"sendgrid-key", R"re(\b(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})\b)re", false, 1, 3.0, false, false},
  {"huggingface-token", R"re(\b(hf_[A-Za-z]{34})\b)re", false, 1, 3.0, false, false},
  {"vault-token", R"re(\b(hv[sb]\.[A-Za-z0-9_\-]{90,300}))re", false, 1, 3.5, false, false},
  {"digitalocean-token", R"re(\b(do[opr]_v1_[a-f0-9]{64})\b)re", false, 1, 3.0, false, false},
  {"shopify-token", R"re(\b(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})\b)re", false, 1, 3.0, false, false},
  {"dockerhub-token", R"re(\b(dckr_pat_[A-Za-z0-9_\-]{27,40}))re", false, 1, 3.0, false, false},
  {"telegram-bot-token", R"re((?:^|[^0-9])([0-9]{8,10}:AA[A-Za-z0-9_\-]{33}))re", false, 1, 3.0, false, false},
  {"azure-ad-client-secret", R"re((?:^|[^A-Za-z0-9_~.\-])([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}))re",
   false, 1, 3.0, false, false},
  {"putty-private-key", R"re((PuTTY-User-Key-File-[0-9]: [A-Za-z0-9\-@.]{3,40}\s{1,4}Encryption: [A-Za-z0-9\-]{3,20}))re",
   false, 1, 0, false, true},
  {"netrc-credentials",
   R"re(\bmachine\s{1,8}[^\s]{1,253}\s{1,8}login\s{1,8}[^\s]{1,128}\s{1,8}password\s{1,8}([^\s]{6,200}))re",
   false, 1, 2.3, true, false},
  {"secret-xml-element",
   R"re(<((?:[A-Za-z0-9]{1,20}[_\-.:])?(?:password|passwd|secret|token|api_?key|apikey|access_?key|client_?secret))>([^<\s]{12,200})</)re",
   true, 2, 3.2, true, false},
  {"url-credentials",
   R"re(\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@"'<>]{1,64}:([^\s/@"'<>]{6,128})@[A-Za-z0-9][A-Za-z0-9.\-_]{0,253})re",
   false, 1, 2.3, true, false},
  // key = a keyword at a word start, optionally inside a name of _ - . separated parts
  // (DB_PASSWORD, api.token, client-secret-2); `=` may be followed by a bare value, `:`
  // needs white space or a quote after it (not a selector or a type), and `:=` / `=>`
  // need a quoted value (code assigns expressions).
  {"secret-assignment",
   R"re((?:^|[^A-Za-z0-9])(?:[A-Za-z0-9]{1,20}[_\-.]){0,3}(?:password|passwd|passphrase|secret|token|api_?key|apikey|access_?key|private_?key|auth_?key|credentials?)(?:[_\-.][A-Za-z0-9]{1,20}){0,3}["']?(?:\s{0,4}=\s{0,4}["']?|\s{0,4}(?::=|=>|:)\s{0,4}["']|:\s{1,4}["']?)([^\s"'`;,<>(){}\[\]\\]{12,200}))re",
   true, 1, 3.2, true, false},
};
// clang-format on

#undef HV_ASSIGN

const PathRule kPathRules[] = {
    {"ssh-private-key-file", ".ssh/id_*", "*.pub", ""},
    {"aws-credentials-file", ".aws/credentials", "", ""},
    {"netrc-file", ".netrc", "", ""},
    {"pgpass-file", ".pgpass", "", ""},
    {"git-credentials-file", ".git-credentials", "", ""},
    {"docker-config-auths", ".docker/config.json", "", "\"auth\""},
    {"gnupg-private-keys", ".gnupg/private-keys-v1.d/*", "", ""},
    {"gnupg-secring", ".gnupg/secring.gpg", "", ""},
};

// Values that documentation publishes as examples (AWS's, jwt.io's). They are examples
// by definition, so they are listed as text; they grant nothing.
const char* const kExampleSecrets[] = {
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
};

const char* const kEncryptedMarkers[] = {
    "-----BEGIN PGP MESSAGE-----",
    "-----BEGIN AGE ENCRYPTED FILE-----",
    "age-encryption.org/v1",
    "$ANSIBLE_VAULT;",
};

}  // namespace

std::span<const ContentRule> ContentRules() { return kContentRules; }
std::span<const PathRule> PathRules() { return kPathRules; }
std::span<const char* const> ExampleSecrets() { return kExampleSecrets; }
std::span<const char* const> EncryptedMarkers() { return kEncryptedMarkers; }

std::string RuleTableDigest() {
  std::string all = "haven-scan-rules\n" + std::to_string(kScanVersion) + "\n";
  char num[64];
  for (const ContentRule& r : kContentRules) {
    std::snprintf(num, sizeof(num), "%d %d %.3f %d %d", r.caseless ? 1 : 0, r.secret_group,
                  r.min_entropy, r.generic ? 1 : 0, r.binary ? 1 : 0);
    all += std::string("C\0", 2) + r.id + '\0' + r.pattern + '\0' + num + '\n';
  }
  for (const PathRule& r : kPathRules)
    all += std::string("P\0", 2) + r.id + '\0' + r.glob + '\0' + r.unless_glob + '\0' +
           r.content_need + '\n';
  for (const char* e : kExampleSecrets) all += std::string("E\0", 2) + e + '\n';
  for (const char* e : kEncryptedMarkers) all += std::string("M\0", 2) + e + '\n';
  return Sha256(AsBytes(all)).Hex();
}

}  // namespace haven::capture
