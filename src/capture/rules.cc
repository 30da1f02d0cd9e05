#include "capture/rules.h"

#include <cstdio>

#include "core/bytes.h"
#include "core/id.h"

namespace haven::capture {

namespace {

// The words that name a secret in the keyword rules' keys (German's and Dutch's password
// words from scan version 14: Passwort=, wachtwoord:; glued prefixes too: authtoken,
// clientsecret; JWT keys, Jwt:Key, from scan version 13; not signingkey, git's GPG key id), shared by
// secret-argument, secret-assignment and shell-set-secret.
#define HV_SECRET_WORDS                                                                       \
  R"re((?:password|passwd|pass_?phrase|passwort|kennwort|wachtwoord|(?:client|app|api|shared)?secret|)re" \
  R"re((?:auth|api|access|refresh|session|bearer|bot|oauth|app)?token|api[_.\-]?key|apikey|)re" \
  R"re(access[_.\-]?key|private[_.\- ]?key|auth[_.\-]?key|secret[_.\-]?key|)re"         \
  R"re((?:master|encryption|hmac|aes|shared|app|jwt)[_.\-:]?key|credentials?))re"
// Assignment of a value: `key = v`, `key: v`, `key := v`, `key => v`, `"key": "v"`.
#define HV_ASSIGN R"re(["']?[ \t]{0,4}(?::=|=>|=|:)[ \t]{0,4}["']?)re"

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
  {"slack-token", R"re(\b(xox[abposrec]-(?:[0-9]{6,14}|[0-9])-[A-Za-z0-9\-]{10,250}))re", false, 1, 3.0, false, false},
  {"slack-app-token", R"re(\b(xapp-[0-9]-[A-Z0-9]{8,14}-[0-9]{8,14}-[a-f0-9]{32,80}))re", false, 1, 3.0, false, false},
  {"slack-webhook",
   R"re((https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,14}/[A-Z0-9]{6,14}/[A-Za-z0-9]{16,40}))re",
   false, 1, 0, false, false},
  {"stripe-live-key", R"re(\b((?:sk|rk)_live_[A-Za-z0-9]{20,247}))re", false, 1, 3.0, false, false},
  {"google-api-key", R"re(\b(AIza[0-9A-Za-z_\-]{35}))re", false, 1, 3.0, false, false, Verify::kNotWebConfig},
  {"openai-key",
   R"re(\b(sk-(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_\-]{16,200}T3BlbkFJ[A-Za-z0-9_\-]{16,200}))re",
   false, 1, 3.0, false, false},
  {"openai-project-key", R"re(\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,200}))re", false, 1, 3.5, false, false},
  // Scan version 14, from a probe of AI and developer platforms: DeepSeek's (and Moonshot's)
  // sk- and 32 hex digits; Fly.io's macaroon tokens (FlyV1 fm2_..., several joined by ','),
  // Resend's re_, Supabase's secret API keys (sb_secret_; sb_publishable_ is public).
  {"sk-hex-api-key", R"re(\b(sk-[a-f0-9]{32})\b)re", false, 1, 3.0, false, false},
  {"fly-api-token",
   R"re(\b(FlyV1[ \t]fm[12][a-z]?_[A-Za-z0-9+/=_\-]{40,800}(?:,fm[12][a-z]?_[A-Za-z0-9+/=_\-]{20,800}){0,8}))re",
   false, 1, 3.5, false, false},
  {"resend-api-key", R"re(\b(re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24})\b)re", false, 1, 3.0, false, false},
  {"supabase-secret-key", R"re(\b(sb_secret_[A-Za-z0-9_\-]{20,80}))re", false, 1, 3.0, false, false},
  {"openai-legacy-key", R"re(\b(sk-[A-Za-z0-9]{48})\b)re", false, 1, 3.5, false, false},
  {"anthropic-key", R"re(\b(sk-ant-(?:api|admin|sid)[0-9]{2}-[A-Za-z0-9_\-]{40,160}))re", false, 1, 3.5, false, false},
  {"npm-token", R"re(\b(npm_[A-Za-z0-9]{36})\b)re", false, 1, 3.0, false, false},
  {"npm-auth-token", R"re(_authToken[ \t]{0,4}=[ \t]{0,4}["']?([A-Za-z0-9_\-.+/=]{20,200}))re", false, 1, 3.0, true, false},
  // .npmrc's _auth: base64 of user:password (at a line start or after a registry's "//host/:")
  {"npm-basic-auth", R"re((?:^|\n|:)_auth\s{0,4}=\s{0,4}["']?([A-Za-z0-9+/]{8,400}={0,2}))re", false, 1, 0,
   true, false, Verify::kBasicAuth},
  {"pypi-token", R"re(\b(pypi-AgE[A-Za-z0-9_\-]{50,400}))re", false, 1, 3.0, false, false},
  {"azure-storage-key", R"re(AccountKey\s{0,2}=\s{0,2}([A-Za-z0-9+/]{86}==))re", true, 1, 3.5, false, false},
  // Scan version 10. Service Bus, Event Hubs and IoT Hub connection strings
  // (SharedAccessKey=, base64 of 32 bytes); a shared access signature's sig= in a URL with
  // the SAS version sv= before it (storage SAS URLs).
  {"azure-shared-access-key", R"re(SharedAccessKey\s{0,2}=\s{0,2}([A-Za-z0-9+/]{42,43}=))re", false, 1, 3.5, false, false},
  {"azure-sas-signature",
   R"re([?&]sv=[0-9]{4}-[0-9]{2}-[0-9]{2}&[^\s"'<>]{0,400}?&sig=([A-Za-z0-9%+/]{40,100}(?:%3[Dd]|=){0,2}))re",
   false, 1, 3.5, false, false},
  {"azure-storage-key-assignment",
   R"re((?:azure|storage)[A-Za-z0-9_\-]{0,30}key)re" HV_ASSIGN R"re(([A-Za-z0-9+/]{86}==))re", true, 1, 3.5, false, false},
  {"private-key",
   R"re((-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |SSH2 ENCRYPTED )?PRIVATE KEY-----(?:\s|\\[nr]){1,16}(?:[A-Za-z\-]{2,40}:[^\r\n]{0,200}\s{1,16}){0,6}([A-Za-z0-9+/=]{40})))re",
   false, 2, 0, false, true},
  {"pgp-private-key",
   R"re((-----BEGIN PGP PRIVATE KEY BLOCK-----\s{1,16}(?:[A-Za-z\-]{2,40}:[^\r\n]{0,200}\s{1,16}){0,6}([A-Za-z0-9+/=]{40})))re",
   false, 2, 0, false, true},
  {"age-secret-key", R"re(\b(AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58})\b)re", false, 1, 0, false, false},
  {"jwt", R"re(\b(eyJ[A-Za-z0-9_\-]{10,2000}\.ey[IJ][A-Za-z0-9_\-]{10,4000}\.[A-Za-z0-9_\-]{16,1000}))re", false, 1, 3.0, false, false},
  {"sendgrid-key", R"re(\b(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})\b)re", false, 1, 3.0, false, false},
  {"huggingface-token", R"re(\b(hf_[A-Za-z]{34})\b)re", false, 1, 3.0, false, false},
  {"vault-token", R"re(\b(hv[sb]\.[A-Za-z0-9_\-]{24,300}))re", false, 1, 3.5, false, false},
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
   R"re(<((?:[A-Za-z0-9]{1,20}[_\-.:]?)?(?:password|passwd|pass|pwd|secret|token|api_?key|apikey|access_?key|client_?secret|(?:encryption|signing|master|private|hmac|jwt)_?key))>([^<\s]{12,200})</)re",
   true, 2, 3.2, true, false},
  {"url-credentials",
   R"re(\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@"'<>]{0,64}:([^\s/@"'<>][^\s@"'<>]{5,127})@[A-Za-z0-9][A-Za-z0-9.\-_]{0,253})re",
   false, 1, 2.3, true, false, Verify::kUrlDecode, true},
  // Credentials in encodings and on command lines.
  {"base64-private-key", R"re(\b(LS0tLS1CRUdJTi[A-Za-z0-9+/]{50}))re", false, 1, 0, false, false, Verify::kBase64Pem},
  {"authorization-bearer",
   R"re((?:Authorization|Proxy-Authorization)["']?\s{0,4}[:=]\s{0,4}["']?\s{0,4}(?:Bearer|Token|Bot)\s{1,4}([A-Za-z0-9_\-.~+/]{16,2000}={0,2}))re",
   true, 1, 3.0, true, false},
  {"authorization-basic",
   R"re((?:Authorization|Proxy-Authorization)["']?\s{0,4}[:=]\s{0,4}["']?\s{0,4}Basic\s{1,4}([A-Za-z0-9+/]{8,400}={0,2}))re",
   true, 1, 0, true, false, Verify::kBasicAuth},
  {"api-key-header",
   R"re((?:X-Api-Key|Api-Key|X-Auth-Token|X-Access-Token|X-Vault-Token|Private-Token|X-Api-Token|DD-Application-Key|Fastly-Key|X-Auth-Key)["']?\s{0,4}:\s{0,4}["']?([A-Za-z0-9_\-.~+/]{16,500}={0,2}))re",
   true, 1, 3.0, true, false},
  {"ini-pass-value",
   R"re((?:^|\n)[ \t]{0,8}pass[ \t]{0,4}=[ \t]{0,4}([A-Za-z0-9_\-]{22,200}))re", false, 1, 3.5, true, false},
  {"cli-user-credentials",
   R"re(\b(?:curl|https?|xh|wget)\b[^\r\n]{0,300}\s(?:-u|--user|-U|--proxy-user|-a|--auth)(?:\s{1,4}|=)["']?[^\s:"'$]{1,128}:([^\s"']{6,128}))re",
   false, 1, 2.5, true, false, Verify::kNone, true},
  // A tool's short password option: mysql -pX, sshpass -p, docker/podman/helm login -p,
  // az login -p, redis-cli -a, ldapsearch and friends -w.
  {"cli-password-option",
   R"re(\b(?:(?:mysql|mysqldump|mysqladmin|mariadb|sshpass)\b[^\r\n;&|]{0,200}[ \t]-p[ \t]{0,2}|(?:docker|podman|buildah|skopeo|helm|oras)\s{1,4}(?:registry\s{1,4})?login\b[^\r\n;&|]{0,200}[ \t]-p[ \t]{1,4}|redis-cli\b[^\r\n;&|]{0,200}[ \t]-a[ \t]{1,4}|ldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn)\b[^\r\n;&|]{0,200}[ \t]-w[ \t]{1,4})["']?([^\s"'\-$][^\s"']{5,127}))re",
   false, 1, 2.5, true, false, Verify::kNone, true},
  // Scan version 9: more commands' password arguments (the option and the value apart unless
  // the tool wants them joined): mongo/mongosh/ncftp/cqlsh/az login -p X, sqlcmd/bcp/
  // ipmitool/mosquitto_pub -P X, zip/unzip -P X, 7z/rar -pX (rar -hpX), openssl enc -k X, ssh-keygen
  // -N/-P X, keytool -storepass/-keypass X, influx -password X, nmcli ... password X,
  // wpa_passphrase SSID X, rabbitmqctl add_user/change_password USER X; each command where a
  // command starts (not model.zip -P dir).
  {"cli-password-argument",
   R"re((?:^|[\s;&|(/])(?:(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop|ncftp|ncftpget|ncftpput|cqlsh|az\s{1,4}login)\b[^\r\n;&|]{0,200}\s-p\s{1,4}|(?:sqlcmd|bcp|ipmitool|mosquitto_pub|mosquitto_sub|mosquitto_rr)\b[^\r\n;&|]{0,200}\s-P\s{0,4}|(?:zip|zipcloak|unzip|funzip)\b[^\r\n;&|]{0,200}\s-P\s{1,4}|(?:7z|7za|7zr)\b[^\r\n;&|]{0,200}\s-p|(?:rar|unrar)\b[^\r\n;&|]{0,200}\s-h?p|openssl\s{1,4}(?:enc|aes[\w\-]{0,20}|des[\w\-]{0,20})\b[^\r\n;&|]{0,200}\s-k\s{1,4}|ssh-keygen\b[^\r\n;&|]{0,200}\s-[NP]\s{1,4}|keytool\b[^\r\n;&|]{0,200}\s-(?:storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass|new)\s{1,4}|influx\b[^\r\n;&|]{0,200}\s-password\s{1,4}|nmcli\b[^\r\n;&|]{0,200}\s(?:password|wifi-sec\.psk)\s{1,4}|wpa_passphrase\s{1,4}(?:"[^"\r\n]{1,32}"|'[^'\r\n]{1,32}'|[^\s"']{1,32})\s{1,4}|rabbitmqctl\s{1,4}(?:add_user|change_password)\s{1,4}["']?[^\s"']{1,64}["']?\s{1,4}|snmp(?:walk|bulkwalk|get|getnext|bulkget|set|table|trap|status|df|netstat)\b[^\r\n;&|]{0,200}\s-[AX]\s{1,4}|(?:cf|oc)\s{1,4}login\b[^\r\n;&|]{0,200}\s-p\s{1,4}|bw\s{1,4}unlock\s{1,4}|bw\s{1,4}login\s{1,4}[^\s@]{1,64}@[^\s]{1,200}\s{1,4})["']?([^\s"'\-$][^\s"']{5,127}))re",
   false, 1, 2.5, true, false, Verify::kNone, true},
  // A long option that takes a secret: --password X, --token=X, --oauth2-bearer X ...;
  // (scan version 11) a prefixed password's or secret's (--db-password X, --requirepass X),
  // not a prefixed token's (AWS CLI's --next-token, --idempotency-token are none).
  {"cli-secret-option",
   R"re(\s--(?:(?:[a-z0-9]{1,20}-){0,3}(?:password|passwd|pass|passphrase|secret|api-?key|requirepass|masterauth)|token|access-token|auth-token|client-secret|oauth2-bearer)(?:=|[ \t]{1,4})["']?([^\s"'$`<>{}\-][^\s"'`<>{}]{7,127}))re",
   true, 1, 2.8, true, false},
  // user and password in one argument: lftp -u user,pass; smbclient -U user%pass (a
  // password's place from scan version 13: ci-bot%Zephyr-Biscuit-Falcon32)
  {"cli-user-password",
   R"re((?:\blftp\b[^\r\n]{0,200}\s-u\s{1,4}["']?[^\s,"']{1,64},["']?|\b(?:smbclient|rpcclient|smbget|smbcacls|smbtree|winexe|net)\b[^\r\n]{0,200}\s-U\s{0,4}["']?[^\s%"']{1,64}%)([^\s"']{6,128}))re",
   false, 1, 2.5, true, false, Verify::kNone, true},
  // openssl's pass phrase arguments: -passin pass:X, -passout pass:X, -pass(word) pass:X (the
  // value quoted after pass: from scan version 14, -passout pass:'X')
  {"openssl-pass-argument", R"re(\s-pass(?:in|out|word)?\s{1,4}["']?pass:["']?([^\s"']{6,128}))re", false, 1, 2.5,
   true, false},
  // Scan version 14. Windows' cmdkey /pass:X (a stored credential), macOS's security
  // add-generic-password / add-internet-password -w X (a keychain item).
  {"cli-keychain-password",
   R"re((?:\bcmdkey(?:\.exe)?\b[^\r\n]{0,200}\s/pass(?:word)?:|\bsecurity\s{1,4}add-(?:generic|internet)-password\b[^\r\n]{0,300}[ \t]-w[ \t]{1,4})["']?([^\s"'\-$*][^\s"']{5,127}))re",
   false, 1, 2.5, true, false, Verify::kNone, true},
  // Scan version 14. A token as curl's user with an empty password (curl -u TOKEN: as
  // SonarQube, Stripe and other APIs take a token).
  {"cli-user-token",
   R"re(\b(?:curl|xh|wget)\b[^\r\n]{0,300}\s(?:-u|--user)(?:\s{1,4}|=)["']?([A-Za-z0-9_\-]{20,128}):["']?[ \t\r\n])re",
   false, 1, 3.0, true, false},
  // Scan version 14. Algolia's client made with an application id and a key of 32 hex
  // digits in code (algoliasearch('APPID', 'KEY')): the admin key unless the client is for
  // search only (Verify::kNotSearchOnly).
  {"algolia-api-key",
   R"re(\balgoliasearch\(\s{0,4}["'][A-Z0-9]{10}["']\s{0,4},\s{0,4}["']([a-f0-9]{32})["'])re",
   false, 1, 3.0, false, false, Verify::kNotSearchOnly},
  // aws configure set aws_secret_access_key X (no = between)
  {"aws-configure-secret",
   R"re(\baws(?:\s{1,4}--[a-z\-]{1,20}(?:=|\s{1,4})[^\s;&|]{1,64}){0,3}\s{1,4}configure\s{1,4}set\s{1,4}(?:[A-Za-z0-9_\-]{1,40}\.){0,2}(?:aws_secret_access_key|aws_session_token)\s{1,4}["']?([A-Za-z0-9/+=]{40,2000}))re",
   false, 1, 3.5, false, false},
  {"password-variable",
   R"re(\b(?:PGPASSWORD|MYSQL_PWD|REDISCLI_AUTH|SSHPASS|BORG_PASSPHRASE|RESTIC_PASSWORD|RUSTIC_PASSWORD|HAVEN_PASSWORD|KOPIA_PASSWORD|RCLONE_CONFIG_PASS)\s{0,4}=\s{0,4}["']?([^\s"'$`;]{6,200}))re",
   false, 1, 2.3, true, false},
  {"password-line",
   R"re((?:^|\n)[ \t]{0,8}(?:[A-Za-z0-9]{1,20}_)?(?:password|passwd|passphrase|pass)[ \t]{1,8}["']?([^\s"'=:][^\s"']{7,199}))re",
   true, 1, 3.0, true, false, Verify::kLineEnd},
  // "user X ... password "Y"" on one line (.fetchmailrc's poll entries, similar rc files).
  {"user-password-line",
   R"re(\b(?:user|username|login)\s{1,4}["']?[^\s"']{1,64}["']?[^\r\n]{0,120}\s(?:password|passwd)\s{1,4}["']([^"'\s]{6,128})["'])re",
   false, 1, 2.5, true, false},
  // Scan version 15. NetworkManager's keyfile (system-connections/*.nmconnection): a value
  // of the [vpn-secrets] section named for a password, a pass, a PSK or a secret (password=,
  // cert-pass=, Xauth password=, IPSec secret=), in a password's place. Placed before the
  // other keyword rules, which would name the same secret (one finding per secret: the rule
  // first in this table).
  {"networkmanager-vpn-secret",
   R"re(\[vpn-secrets\][ \t]{0,8}\r?\n(?:[ \t]{0,8}[A-Za-z0-9_.\- ]{1,40}=[^\n]{0,300}\n){0,12}[ \t]{0,8}[A-Za-z0-9_.\- ]{0,40}(?:password|pass|psk|secret)[A-Za-z0-9_.\-]{0,20}[ \t]{0,4}=[ \t]{0,4}([^\s][^\r\n]{3,199}))re",
   true, 1, 2.3, true, false, Verify::kOddValueLineEnd, true},
  // A password of 8-11 characters (from scan version 14, 6 or 7 that read as a chosen password:
  // Coco45, Nala76!; and under a bare pw) after a password-like key (DB_PASSWORD=, imap_pass =,
  // remotepass =, dbPassword: "x", <password>x</password>): the other keyword rules need 12
  // or more, and human-chosen passwords are often shorter. Kept apart by its own gate
  // (Verify::kShortPassword): a short value passes only when it mixes classes like a password
  // and is quoted, closed by a tag or alone at its line's end (not a type: `Password: String;`).
  // Scan version 12: also in JSON inside a JSON string, its quotes escaped (\"password\": \"X\").
  {"short-password-assignment",
   R"re((?:(?:^|[^A-Za-z0-9])(?:[A-Za-z0-9]{1,20}[_\-.]){0,3}[A-Za-z0-9]{0,20}(?:password|passwd|passphrase|pass|pwd|pw)\\?["']?(?:[ \t]{0,16}\??=[ \t]{0,4}\\?["']?|[ \t]{0,4}(?::=|=>|:)[ \t]{0,4}\\?["']|:[ \t]{1,4}\\?["']?)|<(?:[A-Za-z0-9]{1,20}[_\-.:]?)?(?:password|passwd|pass|pwd)>)([^\s"'`;,<>(){}\[\]\\]{6,11}))re",
   true, 1, 0, true, false, Verify::kShortPassword},
  // Scan version 12. The same short value under an environment variable's upper-case name
  // for a secret or a token (APP_SECRET=T3@p0t1988.; also a second assignment of a systemd
  // Environment= line): the other forms need 12 characters there. (A word and a number under
  // a token's name, BOT_TOKEN=Bronze2001#, is judged a name, as under the other token keys.)
  {"short-secret-variable",
   R"re((?:^|[\s"'])(?:[A-Z0-9]{1,20}_){0,3}[A-Z0-9]{0,20}(?:SECRET|TOKEN)=["']?([^\s"'`;,<>(){}\[\]\\]{8,11}))re",
   false, 1, 0, true, false, Verify::kShortPassword},
  // WordPress's keys and salts in wp-config.php: 64 characters from an alphabet that holds
  // the quotes, brackets and separators the keyword rules stop at.
  {"wordpress-auth-key",
   R"re(define\(\s{0,4}["'](?:AUTH|SECURE_AUTH|LOGGED_IN|NONCE)_(?:KEY|SALT)["']\s{0,4},\s{0,16}'([^'\r\n]{32,100})')re",
   false, 1, 4.0, false, false, Verify::kAnyPrintable},
  // htpasswd -b takes the password as its last argument: -b FILE USER PASS, -nb USER PASS.
  {"htpasswd-password",
   R"re(\bhtpasswd(?:\s{1,4}-[A-Za-z]{1,6}){0,3}\s{1,4}-[A-Za-z]{0,6}b[A-Za-z]{0,6}(?:\s{1,4}-[A-Za-z]{1,6}){0,3}(?:\s{1,4}-C\s{1,4}[0-9]{1,3})?(?:\s{1,4}["']?[^\s"'\-][^\s"']{0,200}["']?){1,2}\s{1,4}["']?([^\s"'$`\-][^\s"'`]{5,127}))re",
   false, 1, 2.5, true, false, Verify::kNone, true},
  // A literal piped into a command that reads a password from its input: sudo -S,
  // --password-stdin, gpg --passphrase-fd 0, passwd --stdin, chpasswd.
  {"piped-password",
   R"re(\b(?:echo|printf)\s{1,4}(?:-[ne]{1,2}\s{1,4})?["']?([^\s"'$`|;&<>\-][^\s"'$`|;&<>]{5,127})["']?\s{0,4}\|\s{0,4}(?:sudo\s{1,4}(?:-[A-Za-z]{1,4}(?:\s{1,4}[A-Za-z0-9_]{1,32})?\s{1,4}){0,3}-[A-Za-z]{0,3}S|[A-Za-z0-9_.\-]{1,40}(?:\s{1,4}[^\s|;&]{1,100}){0,6}\s{1,4}--password-stdin|gpg2?(?:\s{1,4}[^\s|;&]{1,100}){0,6}\s{1,4}--passphrase-fd\s{1,4}0|(?:sudo\s{1,4})?(?:passwd\s{1,4}--stdin|chpasswd\b|kinit\b|cryptsetup\s{1,4}(?:luksOpen|open|luksFormat|luksAddKey)\b)|sshfs(?:\s{1,4}[^\s|;&]{1,100}){0,6}?\s{1,4}-o\s{0,4}(?:[^\s|;&,]{1,60},){0,6}password_stdin))re",
   false, 1, 2.5, true, false, Verify::kNone, true},
  // (scan version 11: quoted, the value may hold | ; & < > $; chpasswd, kinit and cryptsetup
  // read it too, after sudo)
  {"piped-password",
   R"re(\b(?:echo|printf)\s{1,4}(?:-[ne]{1,2}\s{1,4})?'([^'\r\n]{6,128})'\s{0,4}\|\s{0,4}(?:sudo\s{1,4}(?:-[A-Za-z]{1,4}(?:\s{1,4}[A-Za-z0-9_]{1,32})?\s{1,4}){0,3}-[A-Za-z]{0,3}S|[A-Za-z0-9_.\-]{1,40}(?:\s{1,4}[^\s|;&]{1,100}){0,6}\s{1,4}--password-stdin|gpg2?(?:\s{1,4}[^\s|;&]{1,100}){0,6}\s{1,4}--passphrase-fd\s{1,4}0|(?:sudo\s{1,4})?(?:passwd\s{1,4}--stdin|chpasswd\b|kinit\b|cryptsetup\s{1,4}(?:luksOpen|open|luksFormat|luksAddKey)\b)|sshfs(?:\s{1,4}[^\s|;&]{1,100}){0,6}?\s{1,4}-o\s{0,4}(?:[^\s|;&,]{1,60},){0,6}password_stdin))re",
   false, 1, 2.5, true, false, Verify::kOddValue, true},
  {"piped-password",
   R"re(\b(?:echo|printf)\s{1,4}(?:-[ne]{1,2}\s{1,4})?"([^"$`\r\n]{6,128})"\s{0,4}\|\s{0,4}(?:sudo\s{1,4}(?:-[A-Za-z]{1,4}(?:\s{1,4}[A-Za-z0-9_]{1,32})?\s{1,4}){0,3}-[A-Za-z]{0,3}S|[A-Za-z0-9_.\-]{1,40}(?:\s{1,4}[^\s|;&]{1,100}){0,6}\s{1,4}--password-stdin|gpg2?(?:\s{1,4}[^\s|;&]{1,100}){0,6}\s{1,4}--passphrase-fd\s{1,4}0|(?:sudo\s{1,4})?(?:passwd\s{1,4}--stdin|chpasswd\b|kinit\b|cryptsetup\s{1,4}(?:luksOpen|open|luksFormat|luksAddKey)\b)|sshfs(?:\s{1,4}[^\s|;&]{1,100}){0,6}?\s{1,4}-o\s{0,4}(?:[^\s|;&,]{1,60},){0,6}password_stdin))re",
   false, 1, 2.5, true, false, Verify::kOddValue, true},
  // FileZilla's site manager and recent servers: <Pass>x</Pass>, <Pass encoding="base64">x</Pass>.
  {"filezilla-password", R"re(<Pass(?:\s{1,4}encoding="base64")?>([^<\s]{6,400})</Pass>)re", false, 1, 2.3,
   false, false},
  // minisign's and signify's secret key files: a comment line, then the key in base64.
  {"minisign-secret-key",
   R"re((untrusted comment: (?:minisign (?:encrypted )?|signify )secret key[^\r\n]{0,200}\r?\n([A-Za-z0-9+/]{40,300}={0,2})))re",
   false, 2, 0, false, false, Verify::kSignifyKey},
  // .NET's appSettings and NuGet.Config: <add key="SmtpPassword" value="..." />.
  {"xml-add-key-value",
   R"re(<add\s{1,4}key=["'][A-Za-z0-9_.:\-]{0,40}(?:password|passwd|pwd|secret|token|apikey|api_key|accesskey|access_key|(?:encryption|signing|master|private|hmac|jwt)_?key)[A-Za-z0-9_.:\-]{0,20}["']\s{1,4}value=["']([^"'<>\s]{8,400})["'])re",
   true, 1, 3.0, true, false},
  // A .pgpass line in any file: host:port:database:user:password, on PostgreSQL's usual
  // ports or any (*): a literal for the one-pass scan (a line start alone cost the scan of
  // a 512 MiB log a quarter more time).
  {"pgpass-line",
   R"re((?:^|\n)[A-Za-z0-9.\-_*]{1,253}:(?:5432|5433|6432|\*):[A-Za-z0-9_\-*]{1,63}:[A-Za-z0-9_.@\-*]{1,63}:([^\s:]{8,200}))re",
   false, 1, 3.0, true, false, Verify::kLineEnd, true},
  // A Docker or Podman "auth" entry (base64 of user:password) outside its usual file.
  {"docker-auth-entry", R"re("auth"\s{0,4}:\s{0,4}"([A-Za-z0-9+/]{8,400}={0,2})")re", false, 1, 0, true, false,
   Verify::kBasicAuth},
  // Backblaze B2 application keys: K, 2 digits, 28 more (31 in all).
  // (scan version 11: not right after a base64 character or a ':' — a data URI's or a
  // SOPS value's base64 holds such runs)
  {"backblaze-app-key", R"re((?:^|[^A-Za-z0-9+/:])(K[0-9]{2}[A-Za-z0-9+/]{28})\b)re", false, 1, 3.5, false, false},
  {"wireguard-private-key", R"re((?:PrivateKey|PresharedKey)\s{0,4}=\s{0,4}([A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=))re",
   false, 1, 3.5, false, false},
  {"openvpn-static-key", R"re((-----BEGIN OpenVPN Static key V1-----\s{1,16}([a-f0-9]{32})))re", false, 2, 0, false, false},
  {"crates-io-token", R"re(\b(cio[A-Za-z0-9]{32})\b)re", false, 1, 3.5, false, false},
  // Provider tokens with a fixed, recognisable shape.
  {"square-access-token", R"re((?:^|[^A-Za-z0-9+/_\-])(EAAA[A-Za-z0-9_\-]{56,200}|sq0atp-[A-Za-z0-9_\-]{22,60}))re", false, 1, 3.0, false, false},
  {"square-oauth-secret", R"re(\b(sq0csp-[A-Za-z0-9_\-]{40,60}))re", false, 1, 3.0, false, false},
  {"twilio-api-key", R"re(\b(SK[0-9a-fA-F]{32})\b)re", false, 1, 3.0, false, false},
  {"mailgun-key", R"re(\b(key-[0-9a-f]{32})\b)re", false, 1, 3.0, false, false},
  {"mailchimp-key", R"re(\b([0-9a-f]{32}-us[0-9]{1,2})\b)re", false, 1, 3.0, false, false},
  {"brevo-key", R"re(\b(x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16})\b)re", false, 1, 3.0, false, false},
  {"doppler-token", R"re(\b(dp\.(?:pt|sa|ct|scim|audit|st(?:\.[a-z0-9_\-]{2,35})?)\.[A-Za-z0-9]{40,44})\b)re", false, 1, 3.0, false, false},
  {"terraform-cloud-token", R"re(\b([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,70}))re", false, 1, 3.0, false, false},
  {"databricks-token", R"re(\b(dapi[a-f0-9]{32}(?:-[0-9])?)\b)re", false, 1, 3.0, false, false},
  {"heroku-key", R"re(\b(HRKU-AA[A-Za-z0-9_\-]{58}))re", false, 1, 3.0, false, false},
  {"heroku-key-legacy",
   R"re(heroku[A-Za-z0-9_\-.]{0,25})re" HV_ASSIGN R"re(([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}))re",
   true, 1, 3.0, false, false},
  {"linear-api-key", R"re(\b(lin_api_[A-Za-z0-9]{40})\b)re", false, 1, 3.0, false, false},
  // Okta's API tokens: 00 and 40 more, sent as "Authorization: SSWS <token>" or kept
  // beside the word okta (OKTA_API_TOKEN=, okta.client.token:).
  {"okta-api-token",
   R"re((?:\bSSWS\s{1,4}|okta[A-Za-z0-9_\-.]{0,30})re" HV_ASSIGN R"re()(00[A-Za-z0-9_\-]{40}))re",
   true, 1, 3.5, false, false},
  // Django's SECRET_KEY as startproject and get_random_secret_key() write it: 50 of
  // a-z 0-9 !@#$%^&*(-_=+), after "django-insecure-" for a generated development key. Its
  // own rule: the value may start with one of the characters that mark a reference in the
  // generic keyword rules ($, %, *, ...) and may hold a parenthesis, which ends their values.
  // The value may also be a call's default: os.environ.get("SECRET_KEY", "..."), or (scan
  // version 10, the second form) unquoted to the line's end, as in a .env file.
  {"django-secret-key",
   R"re(SECRET_KEY["']?\s{0,4}[:=][^\r\n]{0,80}["'](?:django-insecure-)?([a-z0-9!@#$%^&*(\-_=+)]{50})["'])re",
   false, 1, 4.0, false, false},
  {"django-secret-key",
   R"re(\bSECRET_KEY[ \t]{0,4}=[ \t]{0,4}((?:django-insecure-)?[a-z0-9!@#$%^&*(\-_=+)]{50}))re",
   false, 1, 4.0, false, false, Verify::kLineEnd},
  {"postman-api-key", R"re(\b(PMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34})\b)re", false, 1, 3.0, false, false},
  {"grafana-token",
   R"re(\b(glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,400}={0,2}))re",
   false, 1, 3.0, false, false},
  {"newrelic-key", R"re(\b(NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9_\-]{32}|NRJS-[a-f0-9]{19}|[a-fA-F0-9]{36}NRAL)\b)re", false, 1, 3.0, false, false},
  {"pulumi-token", R"re(\b(pul-[a-f0-9]{40})\b)re", false, 1, 3.0, false, false},
  {"atlassian-token", R"re(\b((?:ATATT3|ATCTT3)[A-Za-z0-9_\-=]{150,220}|ATBB[A-Za-z0-9_=.\-]{32,40}))re", false, 1, 3.0, false, false},
  {"discord-bot-token", R"re(\b([MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38})\b)re", false, 1, 3.5, false, false},
  {"discord-webhook",
   R"re((https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_\-]{60,68}))re",
   false, 1, 0, false, false},
  {"teams-webhook",
   R"re((https://[a-z0-9\-]{1,60}\.webhook\.office\.com/webhookb2/[a-z0-9\-]{36}@[a-z0-9\-]{36}/IncomingWebhook/[a-z0-9]{32}/[a-z0-9\-]{36}))re",
   true, 1, 0, false, false},
  {"google-oauth-secret", R"re(\b(GOCSPX-[A-Za-z0-9_\-]{28}))re", false, 1, 3.0, false, false},
  {"google-oauth-token", R"re(\b(ya29\.[A-Za-z0-9_\-]{30,500}|1//0[A-Za-z0-9_\-]{40,300}))re", false, 1, 3.5, false, false},
  {"alibaba-access-key", R"re(\b(LTAI[A-Za-z0-9]{20})\b)re", false, 1, 3.0, false, false},
  {"airtable-token", R"re(\b(pat[A-Za-z0-9]{14}\.[a-f0-9]{64})\b)re", false, 1, 3.0, false, false},
  {"clojars-token", R"re(\b(CLOJARS_[a-z0-9]{60})\b)re", false, 1, 3.0, false, false},
  {"contentful-token", R"re(\b(CFPAT-[A-Za-z0-9_\-]{43}))re", false, 1, 3.0, false, false},
  {"dynatrace-token", R"re(\b(dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64})\b)re", false, 1, 3.0, false, false},
  {"easypost-key", R"re(\b(EZ[AT]K[A-Za-z0-9]{54})\b)re", false, 1, 3.0, false, false},
  {"flyio-token", R"re(\b(fo1_[A-Za-z0-9_\-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{60,2000}={0,3}))re", false, 1, 3.5, false, false},
  {"flutterwave-key", R"re(\b(FLW(?:SECK|PUBK)(?:_TEST)?-[a-h0-9]{32}-X))re", false, 1, 3.0, false, false},
  {"infracost-key", R"re(\b(ico-[A-Za-z0-9]{32})\b)re", false, 1, 3.0, false, false},
  {"mapbox-secret-token", R"re(\b(sk\.eyJ1Ijoi[A-Za-z0-9_\-.]{10,100}\.[A-Za-z0-9_\-]{22}))re", false, 1, 3.0, false, false},
  {"notion-token", R"re(\b(ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})\b)re", false, 1, 3.5, false, false},
  {"prefect-key", R"re(\b(pnu_[A-Za-z0-9]{36})\b)re", false, 1, 3.0, false, false},
  {"readme-key", R"re(\b(rdme_[a-z0-9]{70})\b)re", false, 1, 3.0, false, false},
  {"rubygems-key", R"re(\b(rubygems_[a-f0-9]{48})\b)re", false, 1, 3.0, false, false},
  {"scalingo-token", R"re(\b(tk-us-[A-Za-z0-9_\-]{48}))re", false, 1, 3.0, false, false},
  {"sentry-token", R"re(\b(sntrys_eyJ[A-Za-z0-9+/=_]{60,400}|sntryu_[a-f0-9]{64}))re", false, 1, 3.0, false, false},
  {"shippo-key", R"re(\b(shippo_(?:live|test)_[a-fA-F0-9]{40})\b)re", false, 1, 3.0, false, false},
  {"sourcegraph-token", R"re(\b(sgp_(?:local_|[a-fA-F0-9]{16}_)?[a-fA-F0-9]{40})\b)re", false, 1, 3.0, false, false},
  {"typeform-token", R"re(\b(tfp_[A-Za-z0-9_\-.=]{59}))re", false, 1, 3.0, false, false},
  {"yandex-key", R"re(\b(AQVN[A-Za-z0-9_\-]{35,38}))re", false, 1, 3.0, false, false},
  {"planetscale-token", R"re(\b(pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.\-]{32,64}))re", false, 1, 3.0, false, false},
  {"harness-token", R"re(\b((?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20})\b)re", false, 1, 3.0, false, false},
  {"perplexity-key", R"re(\b(pplx-[A-Za-z0-9]{48})\b)re", false, 1, 3.0, false, false},
  {"groq-key", R"re(\b(gsk_[A-Za-z0-9]{52})\b)re", false, 1, 3.0, false, false},
  {"xai-key", R"re(\b(xai-[A-Za-z0-9_]{80})\b)re", false, 1, 3.0, false, false},
  {"replicate-token", R"re(\b(r8_[A-Za-z0-9_\-]{37}))re", false, 1, 3.0, false, false},
  {"openrouter-key", R"re(\b(sk-or-v1-[a-f0-9]{64})\b)re", false, 1, 3.0, false, false},
  {"stripe-webhook-secret", R"re(\b(whsec_[A-Za-z0-9+/=]{32,80}))re", false, 1, 3.0, false, false},
  {"supabase-token", R"re(\b(sbp_(?:v0_)?[a-f0-9]{40})\b)re", false, 1, 3.0, false, false},
  {"buildkite-token", R"re(\b(bkua_[a-f0-9]{40})\b)re", false, 1, 3.0, false, false},
  {"tailscale-key",
   R"re(\b(tskey-(?:api|auth|client|webhook|scim)-[A-Za-z0-9]{10,20}-[A-Za-z0-9]{20,40})\b)re", false, 1, 3.0, false, false},
  {"onepassword-token",
   R"re(\b(ops_eyJ[A-Za-z0-9+/]{200,2000}={0,3}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}))re",
   false, 1, 3.0, false, false},
  {"hubspot-token",
   R"re(\b(pat-(?:na|eu)[0-9]-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})\b)re", false, 1, 3.0, false, false},
  {"clickup-key", R"re(\b(pk_[0-9]{6,8}_[0-9A-Z]{32})\b)re", false, 1, 3.0, false, false},
  {"deno-token", R"re(\b(dd[pw]_[A-Za-z0-9]{36})\b)re", false, 1, 3.0, false, false},
  {"razorpay-key", R"re(\b(rzp_live_[A-Za-z0-9]{14})\b)re", false, 1, 3.0, false, false},
  {"braintree-token", R"re((access_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}))re", false, 1, 3.0, false, false},
  {"jfrog-token", R"re(\b(AKCp[A-Za-z0-9]{69}|cmVmdGtu[A-Za-z0-9]{56})\b)re", false, 1, 3.0, false, false},
  {"sonarqube-token", R"re(\b(sq[pua]_[a-f0-9]{40})\b)re", false, 1, 3.0, false, false},
  {"nuget-key", R"re(\b(oy2[a-z0-9]{43})\b)re", false, 1, 3.0, false, false},
  {"langsmith-key", R"re(\b(lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10})\b)re", false, 1, 3.0, false, false},
  {"figma-token", R"re(\b(figd_[A-Za-z0-9_\-]{40}))re", false, 1, 3.0, false, false},
  {"dropbox-token", R"re(\b(sl\.[A-Za-z0-9_\-=]{130,160}))re", false, 1, 3.5, false, false},
  {"cloudflare-origin-ca-key", R"re(\b(v1\.0-[a-f0-9]{24}-[a-f0-9]{146})\b)re", false, 1, 3.0, false, false},
  {"adobe-client-secret", R"re(\b(p8e-[A-Za-z0-9]{32})\b)re", false, 1, 3.0, false, false},
  {"duffel-token", R"re(\b(duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}))re", false, 1, 3.0, false, false},
  {"frameio-token", R"re(\b(fio-u-[A-Za-z0-9_\-=]{64}))re", false, 1, 3.0, false, false},
  {"gitlab-runner-token", R"re(\b(GR1348941[A-Za-z0-9_\-]{20,64}))re", false, 1, 3.0, false, false},
  {"maxmind-key", R"re(\b([A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)\b)re", false, 1, 3.0, false, false},
  {"octopus-deploy-key", R"re(\b(API-[A-Z0-9]{26})\b)re", false, 1, 3.0, false, false},
  {"intra42-secret", R"re(\b(s-s4t2(?:ud|af)-[a-f0-9]{64})\b)re", false, 1, 3.0, false, false},
  {"huggingface-org-token", R"re(\b(api_org_[A-Za-z]{34})\b)re", false, 1, 3.0, false, false},
  // key = a keyword at a word start, optionally inside a name of _ - . separated parts
  // (DB_PASSWORD, api.token, client-secret-2); `=` may be followed by a bare value, `:`
  // needs white space or a quote after it (not a selector or a type), and `:=` / `=>`
  // need a quoted value (code assigns expressions).
  // The same keywords in camelCase names (clientSecret, storePassword, accessToken), case
  // sensitive: a lower-case start, then the keyword with a capital.
  {"camel-secret-assignment",
   R"re((?:^|[^A-Za-z0-9])[a-z][a-z0-9]{0,19}(?:[A-Z][a-z0-9]{0,19}){0,2}(?:Password|Passwd|Passphrase|Pass|Pwd|Secret|Token|Api[Kk]ey|AccessKey|PrivateKey|AuthKey|SecretKey|MasterKey|EncryptionKey|HmacKey|SharedKey|Credentials?)(?:[A-Z][A-Za-z0-9]{0,19}){0,2}["']?\]?(?:[ \t]{0,4}=[ \t]{0,4}["'`]?|[ \t]{0,4}(?::=|=>|:)[ \t]{0,4}["'`]|:[ \t]{1,4}["'`]?)([^\s"'`;,<>(){}\[\]\\]{12,200}))re",
   false, 1, 3.2, true, false},
  // pass/pwd names (DB_PASS=, ROOT_PWD=, smtp.pass:, remotepass =, 'dbpassword' =>): after
  // the more specific keyword rules above, which a secret both match is reported by.
  {"pass-assignment",
   R"re((?:^|[^A-Za-z0-9])(?:(?:[A-Za-z0-9]{1,20}[_\-.]){1,3}(?:pass|pwd|pw)|(?:[A-Za-z0-9]{1,20}[_\-.]){0,3}(?:remote|local|db|smtp|imap|pop3?|mail|root|admin|ftp|sql|ldap|bind|store|key|trust|proxy|auth|user|login|rpc|web|vnc)pass(?:wd)?|(?:[A-Za-z0-9]{1,20}[_\-.]){0,3}[A-Za-z0-9]{2,20}passw(?:or)?d|["'](?:pass|pwd)["'])["']?\]?(?:[ \t]{0,16}\??=[ \t]{0,4}["']?|[ \t]{0,4}(?::=|=>|:)[ \t]{0,4}["']|:[ \t]{1,4}["']?)([^\s"'`;,<>(){}\[\]\\]{12,200}))re",
   true, 1, 3.2, true, false},
  // (Scan version 14: a bare pw and '=', the value ending its line: "moodle pw = X"; not
  // `pw: TYPE;`, a declaration.)
  {"pass-assignment",
   R"re((?:^|[^A-Za-z0-9])pw[ \t]{0,16}=[ \t]{0,4}["']?([^\s"'`;,<>(){}\[\]\\]{12,200}))re",
   true, 1, 3.2, true, false, Verify::kLineEnd},
  // The same in PascalCase names (ClientSecret, TunnelSecret, BotToken: .NET, Go, JSON), the
  // value quoted: unquoted, `CurrentToken=tjsEOF` is Pascal code.
  {"pascal-secret-assignment",
   R"re((?:^|[^A-Za-z0-9])[A-Z][a-z0-9]{0,19}(?:[A-Z][a-z0-9]{0,19}){0,2}(?:Password|Passwd|Passphrase|Pwd|Secret|Token|ApiKey|AccessKey|PrivateKey|AuthKey|SecretKey|MasterKey|EncryptionKey|HmacKey|SharedKey)["']?[ \t]{0,4}(?::=|=>|=|:)[ \t]{0,4}["']([^\s"'`;,<>(){}\[\]\\]{12,512})["'])re",
   false, 1, 3.2, true, false},
  // Scan version 14. A key passed to a function named for it: Weaviate's
  // Auth.api_key("..."), AuthApiKey(api_key=...) is secret-assignment's.
  {"api-key-call",
   R"re(\b(?:api_key|apiKey|ApiKey|api_token|apiToken)\(\s{0,4}["']([^"'\s\\]{16,200})["']\s{0,4}\))re",
   false, 1, 3.2, true, false},
  // A quoted key and a quoted value as the arguments of a call: PHP's
  // define('DB_PASSWORD', '...'), config.set("api_token", "..."); on one line (scan version
  // 14: a translation file's "Passwort",\n "login.forget" are two entries).
  {"secret-argument",
   R"re(["'](?:[A-Za-z0-9]{1,20}[_\-.]){0,3})re" HV_SECRET_WORDS R"re((?:[_\-.][A-Za-z0-9]{1,20}){0,3}["'][ \t]{0,4},[ \t]{0,4}["']([^\s"'`;,<>(){}\[\]\\]{10,2000})["'])re",
   true, 1, 3.2, true, false},
  // Scan version 10, from a third probe. A Kubernetes container's env entry whose name
  // names a secret and whose value: follows on the next line (- name: ADMIN_PASSWORD /
  // value: "..."); spans lines, so a key-block rule. Not valueFrom: (a secretKeyRef).
  {"k8s-env-secret-value",
   R"re(\bname:[ \t]{0,4}["']?[A-Za-z0-9_]{0,40}(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)[A-Za-z0-9_]{0,20}["']?[ \t]{0,4}\r?\n[ \t]{0,40}value:[ \t]{0,4}["']?([^\s"'$][^\s"']{7,199}))re",
   false, 1, 3.0, true, true},
  // Scan version 10. A password element's CDATA (<password><![CDATA[...]]></password>).
  {"secret-xml-cdata",
   R"re(<((?:[A-Za-z0-9]{1,20}[_\-.:]?)?(?:password|passwd|secret|token|api_?key|apikey|access_?key|client_?secret))>[ \t]{0,4}<!\[CDATA\[([^\]\r\n]{8,200})\]\]>)re",
   true, 2, 3.0, true, false},
  // Scan version 10. A Kubernetes image pull secret: .dockerconfigjson (or .dockercfg)
  // holding base64 of a Docker config's JSON ({"auths":...}, registry credentials).
  {"k8s-dockerconfigjson",
   R"re(\.docker(?:configjson|cfg)["']?[ \t]{0,4}:[ \t]{0,4}["']?(eyJ[A-Za-z0-9+/]{40,8000}={0,2}))re",
   false, 1, 3.0, false, false},
  // Scan version 10. PowerShell: ConvertTo-SecureString "..." -AsPlainText (a password's
  // place from scan version 13: Falcon.tundra4007).
  {"powershell-plaintext-password",
   R"re(ConvertTo-SecureString[ \t]{1,4}(?:-String[ \t]{1,4})?["']([^"'\r\n$]{6,128})["'][^\r\n]{0,40}-AsPlainText)re",
   true, 1, 2.5, true, false, Verify::kNone, true},
  // Scan version 10. A shell variable named PASS (PASS="..."; sshpass -p "$PASS" after it).
  {"shell-pass-variable",
   R"re((?:^|\n)[ \t]{0,8}(?:(?:export|local|readonly|declare|set|SET)[ \t]{1,4})?PASS=["']?([^\s"'`;$][^\s"'`;]{7,199}))re",
   false, 1, 3.0, true, false},
  // Scan version 10. An Apple app-specific password (four groups of four lower case letters)
  // under its name (fastlane's FASTLANE_APPLE_APPLICATION_SPECIFIC_PASSWORD).
  {"apple-app-specific-password",
   R"re((?:APPLICATION|APP)[_\-]SPECIFIC[_\-]PASSWORD["']?[ \t]{0,4}[=:][ \t]{0,4}["']?([a-z]{4}-[a-z]{4}-[a-z]{4}-[a-z]{4})\b)re",
   true, 1, 2.5, false, false},
  // Scan version 10. The password an expect script sends after a password prompt (expect
  // "*assword:" then send "...\r" on a following line: spans lines, so a key-block rule).
  {"expect-send-password",
   R"re(\bexpect[ \t]{1,4}(?:-[a-z]{1,4}[ \t]{1,4})?["'{][^\r\n]{0,40}(?:ass(?:word|phrase)|PIN)[^\r\n]{0,40}\r?\n(?:[^\r\n]{0,200}\r?\n){0,2}[ \t]{0,8}send[ \t]{1,4}(?:--[ \t]{1,4})?"([^"\s\\$\[]{6,128})\\r")re",
   false, 1, 2.5, true, true},
  // Scan version 10. Terraform state: a random_password (or random_string) resource's
  // generated "result", a few lines after its type.
  {"terraform-state-random-password",
   R"re("type":[ \t]{0,4}"random_password"[\s\S]{0,3000}?"result":[ \t]{0,4}"((?:[^"\\\r\n]|\\.){6,200})")re",
   false, 1, 2.5, false, true},
  // Scan version 10. A quoted value under a secret's key that holds ',' or ';', which end
  // the other form's values: to its closing quote (password: "Mustang,sunshine50!").
  {"secret-assignment",
   R"re((?:^|[^A-Za-z0-9])(?:[A-Za-z0-9]{1,20}[_\-.]){0,3})re" HV_SECRET_WORDS R"re((?:[_\-.][A-Za-z0-9]{1,20}){0,3}["']?\]?[ \t]{0,16}(?::=|=>|=|:)[ \t]{0,4}["']([^"'\s\\,;]{1,100}[,;][^"'\s\\]{1,100})["'])re",
   true, 1, 3.2, true, false},
  {"secret-assignment",
   R"re((?:^|[^A-Za-z0-9])(?:[A-Za-z0-9]{1,20}[_\-.]){0,3})re" HV_SECRET_WORDS R"re((?:[_\-.][A-Za-z0-9]{1,20}){0,3}\\?["']?\]?(?:[ \t]{0,16}\??=[ \t]{0,4}\\?["'`]?|[ \t]{0,4}(?::=|=>|:)[ \t]{0,4}\\?["'`]|:[ \t]{1,4}\\?["'`]?)([^\s"'`;,<>(){}\[\]\\]{12,200}))re",
   true, 1, 3.2, true, false},
  // A secret set by a shell's or an rc file's "set NAME VALUE" rather than NAME=VALUE: fish's
  // set -gx OPENAI_API_KEY ..., csh's setenv DB_PASSWORD ..., lftp's set ftp:password ...
  {"shell-set-secret",
   R"re((?:^|[\n;])[ \t]{0,8}(?:set(?:[ \t]{1,4}--?[A-Za-z]{1,12}){0,4}|setenv)[ \t]{1,4}(?:[A-Za-z0-9]{1,20}[_\-.:]){0,3}[A-Za-z0-9]{0,20})re" HV_SECRET_WORDS R"re((?:[_\-.][A-Za-z0-9]{1,20}){0,3}[ \t]{1,4}["']?([^\s"'`;,<>(){}\[\]\\$][^\s"'`;,<>(){}\[\]\\]{7,199}))re",
   true, 1, 3.0, true, false, Verify::kLineEnd},
  // A prefixed password key and its quoted value, blank-separated: newsboat's
  // ttrss-password "...", similar rc files.
  {"quoted-password-line",
   R"re((?:^|\n)[ \t]{0,8}[A-Za-z0-9_.]{1,30}[\-:](?:password|passwd|passphrase)[ \t]{1,8}"([^\s"]{8,200})")re",
   true, 1, 3.0, true, false, Verify::kLineEnd},
  // HexChat's servlist.conf: a network block (N=, then one-letter keys) with a server
  // password P= or (scan version 13) a NickServ password B= (stored in plain text).
  {"hexchat-server-password",
   R"re((?:^|\n)N=[^\n]{1,200}\n(?:[A-Za-z]=[^\n]{0,300}\n){0,12}[PB]=([^\s][^\n]{5,199}))re",
   false, 1, 2.3, true, false, Verify::kLineEnd},
  // Scan version 8.
  // OpenVPN's credentials given inline in a profile: <auth-user-pass> user, password lines.
  {"openvpn-inline-auth",
   R"re(<auth-user-pass>[ \t]{0,8}\r?\n[ \t]{0,8}[^\s<]{1,128}[ \t]{0,8}\r?\n[ \t]{0,8}([^\s<]{6,200}))re",
   false, 1, 2.3, true, false, Verify::kLineEnd},
  // Maven's master password (settings-security.xml): {base64}, reversible with a fixed key.
  {"maven-master-password", R"re(<master>[ \t]{0,4}(\{[A-Za-z0-9+/]{16,200}={0,2}\})[ \t]{0,4}</master>)re",
   false, 1, 3.0, false, false},
  // A secret-named upper-case variable and its value separated by blanks, alone on a line:
  // env files of tools that take NAME VALUE (SECRET_KEY_BASE abc..., podman's secret env).
  {"blank-separated-secret",
   R"re((?:^|\n)[ \t]{0,8}(?:[A-Z0-9]{1,20}_){0,4}(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|AUTH_?KEY|MASTER_?KEY)(?:_[A-Z0-9]{1,20}){0,4}[ \t]{1,8}["']?([^\s"'`;,<>(){}\[\]\\$=:#][^\s"'`;,<>(){}\[\]\\]{11,199}))re",
   false, 1, 3.2, true, false, Verify::kLineEnd},
  // curl's config file (.curlrc, curl -K): user = "name:password", -u name:password,
  // proxy-user likewise (a colon after the option only with a blank: not zsh's `user:add:`).
  // The line start is a newline (no indent), and the file's first line a rule of its own:
  // `(?:^|\n)` or `\n[ \t]{0,8}` before the short literal `user` cost the scan of a 512 MiB
  // log 8-11 % more time (every `user=` in it was a candidate), `\n` and `^` apart nothing
  // measurable.
  {"curlrc-user",
   R"re(\n(?:-u|-U|(?:--)?(?:proxy-)?user)(?:[ \t]{0,4}=[ \t]{0,4}|:[ \t]{1,4}|[ \t]{1,4})["']?[A-Za-z0-9._@+%\-]{1,64}:([^\s"']{8,128}))re",
   false, 1, 2.8, true, false, Verify::kLineEnd},
  {"curlrc-user-first-line",
   R"re(^(?:-u|-U|(?:--)?(?:proxy-)?user)(?:[ \t]{0,4}=[ \t]{0,4}|:[ \t]{1,4}|[ \t]{1,4})["']?[A-Za-z0-9._@+%\-]{1,64}:([^\s"']{8,128}))re",
   false, 1, 2.8, true, false, Verify::kLineEnd},
  // fish's universal variables (~/.config/fish/fish_variables): SETUVAR [--export] NAME:VALUE,
  // fish escaping some characters of the value (\x2d for -).
  {"fish-universal-secret",
   R"re((?:^|\n)SETUVAR(?:[ \t]{1,4}--export)?[ \t]{1,4}(?:[A-Za-z0-9]{1,20}[_\-.]){0,3}[A-Za-z0-9]{0,20})re" HV_SECRET_WORDS R"re((?:[_\-.][A-Za-z0-9]{1,20}){0,3}:([^\s]{8,400}))re",
   true, 1, 3.0, true, false, Verify::kFishUnescape},
  // Password managers' CLI sessions kept in a shell file: Bitwarden's BW_SESSION (base64 of
  // the unlocked vault's key), 1Password CLI 1's OP_SESSION_<account>.
  {"password-manager-session",
   R"re(\b(?:BW_SESSION|OP_SESSION_[A-Za-z0-9_]{1,64})[ \t]{0,4}=[ \t]{0,4}["']?([A-Za-z0-9+/_\-]{30,200}={0,2}))re",
   false, 1, 3.5, true, false},
  // cloudflared's cert.pem: beside its private key, the tunnel token block.
  {"argo-tunnel-token", R"re((-----BEGIN ARGO TUNNEL TOKEN-----\s{1,16}([A-Za-z0-9+/=]{40})))re", false, 2, 0,
   false, false},
  // A wallet's recovery words (BIP39 and Electrum seeds: 12 to 24 lower-case words, one
  // space apart) after a key that names them. Case-sensitive: prose after `seed:` starts
  // with a capital.
  {"wallet-seed-phrase",
   R"re((?:^|[^A-Za-z0-9])(?:[A-Za-z0-9]{1,20}[_\-.]){0,3}(?:[Mm]nemonic|MNEMONIC|[Ss]eed|SEED|(?:[Ss]eed|[Rr]ecovery|[Ss]ecret|[Bb]ackup|[Ww]allet)[ _\-]?(?:[Pp]hrase|[Ww]ords)|(?:SEED|RECOVERY|SECRET|BACKUP|WALLET)_?(?:PHRASE|WORDS))["']?(?:[ \t]{0,4}\([^)\r\n]{0,30}\))?[ \t]{0,4}(?:[:=]|->|=>)[ \t]{0,4}["']?((?:[a-z]{3,8} ){11,23}[a-z]{3,8}))re",
   false, 1, 0, false, false},
  // Scan version 9. A value under an environment variable's name (upper case, 2-5 parts)
  // that ends in _KEY or _AUTH, as .env and compose files name a provider's key
  // (SENDGRID_KEY=, VAULT_UNSEAL_KEY=, REDIS_AUTH=): a long random value (20+ characters
  // at 4.0 bits, upper case, lower case and digits, no '.'); not a public or structural
  // key's name (Verify::kNamedKey).
  {"named-key-assignment",
   R"re((?:^|[^A-Za-z0-9_])(?:[A-Z][A-Z0-9]{0,20}_){1,4}(?:[A-Z]{2,12})?(?:KEY|AUTH)["']?(?:[ \t]{0,4}=[ \t]{0,4}["'`]?|:[ \t]{1,4}["'`]?)([A-Za-z0-9_\-+/~]{20,200}={0,2}))re",
   false, 1, 4.0, true, false, Verify::kNamedKey},
  // Scan version 10. A Wi-Fi passphrase: wpa_supplicant's psk="..." (or 64 hex digits),
  // NetworkManager's keyfile psk=, hostapd's wpa_passphrase=, ifupdown's wpa-psk.
  {"wifi-psk",
   R"re((?:^|\n)[ \t]{0,8}(?:psk=|wpa_passphrase=|wpa-psk[ \t]{1,4})"?([^"\s]{8,64}))re",
   false, 1, 2.5, true, false, Verify::kNone, true},
  // Scan version 13: a passphrase holding blanks, quoted (wpa_supplicant's psk="indigo orbit
  // sierra 55") or not (NetworkManager's keyfile psk=indigo orbit sierra 55, to the line's end).
  {"wifi-psk", R"re((?:^|\n)[ \t]{0,8}psk="([^"\r\n]{0,62} [^"\r\n]{0,62})")re", false, 1, 2.5, true, false,
   Verify::kOddValue, true},
  {"wifi-psk", R"re((?:^|\n)[ \t]{0,8}psk=([^"\s][^"\r\n]{0,62} [^"\r\n]{0,61}[^"\s]))re", false, 1, 2.5, true, false,
   Verify::kOddValueLineEnd, true},
  // Scan version 9. A password named in a note's prose: a password word (password, passwd,
  // passphrase, passcode, pass, pw, pwd) at a line's start or after a blank, up to 40
  // characters, then "is", ":" or " /", or login or wifi and " /" (user / password, network
  // / password) or ":", then a blank and a strong value without brackets, commas, '=' or ';'
  // (Verify::kStrongValue; after login or wifi and ":" it must read as random, not as a
  // network's or a user's name) that ends its line: "wifi password is X", "bank login: bob /
  // X", "wifi home: X", "The password for the NAS is "X"." Scan version 13: "password to X",
  // a database's "db ... app / X" or an admin's "admin / X", and a remark after a quoted value
  // or after a dash. Scan version 14: the word in more languages (Swedish, Norwegian, Danish,
  // Finnish, Czech, Hungarian, Turkish, Croatian, Slovenian, Estonian, Latvian, Russian,
  // Chinese, Japanese, Korean; a full-width colon after the last three) and " - " after it.
  {"prose-password",
   R"re((?:^|\s)(?:(?:(?:password|passwd|passphrase|passcode|pass|pwd?|pre-shared key|psk|passwort|kennwort|mot de passe|contrase\xc3\xb1a|contrasena|senha|wachtwoord|parola|parole|parool|has\xc5\x82o|schl\xc3\xbcssel|l\xc3\xb6senord|losenord|passord|adgangskode|salasana|heslo|jelszo|sifre|\xc5\x9fifre|lozinka|geslo)\b|jelsz\xc3\xb3|\xd0\xbf\xd0\xb0\xd1\x80\xd0\xbe\xd0\xbb\xd1\x8c|\xd0\x9f\xd0\xb0\xd1\x80\xd0\xbe\xd0\xbb\xd1\x8c|\xe5\xaf\x86\xe7\xa0\x81|\xe3\x83\x91\xe3\x82\xb9\xe3\x83\xaf\xe3\x83\xbc\xe3\x83\x89|\xeb\xb9\x84\xeb\xb0\x80\xeb\xb2\x88\xed\x98\xb8)[^\r\n]{0,40}?(?:[ \t](?:is|es|ist|est)|:|[ \t]/|[ \t]-|[ \t]\(currently)|(?:password|passphrase)[ \t]to|(?:login|wifi|wi-fi|wlan|anmeldung|zugang|identifiant|usuario|utente|db|database|admin|root)\b[^\r\n]{0,40}?(?:[ \t]/|:)|password|passwort|kennwort|pwd?)[ \t]{1,4}["'`]?([^\s"'`()\[\]{}<>,=;]{10,64}))re",
   true, 1, 3.0, true, false, Verify::kStrongValue, true},
  // (The same after the word in Chinese, Japanese or Korean and a colon, full-width or not,
  // with or without a blank: "密码：X".)
  {"prose-password",
   R"re((?:\xe5\xaf\x86\xe7\xa0\x81|\xe3\x83\x91\xe3\x82\xb9\xe3\x83\xaf\xe3\x83\xbc\xe3\x83\x89|\xeb\xb9\x84\xeb\xb0\x80\xeb\xb2\x88\xed\x98\xb8)[^\r\n:]{0,40}?(?:\xef\xbc\x9a|:)[ \t]{0,4}["'`]?([^\s"'`()\[\]{}<>,=;]{10,64}))re",
   false, 1, 3.0, true, false, Verify::kStrongValue, true},
  // Scan version 9. A BIP32 extended private key (xprv, tprv and the SegWit forms yprv,
  // zprv, Yprv, Zprv, uprv, vprv): 111 base58 characters, the whole wallet's keys.
  {"bip32-extended-private-key",
   R"re(\b((?:[xyzt]prv|[YZuvUV]prv)[1-9A-HJ-NP-Za-km-z]{107,108})\b)re",
   false, 1, 3.5, false, false},
  // A borg repository key (`borg key export`, ~/.config/borg/keys/*): BORG_KEY, the
  // repository id, then the encrypted key in base64; its paper form too.
  // (A key block, as the PEM rules are: its two lines are looked for as one match.)
  {"borg-key",
   R"re((BORG_KEY [0-9a-f]{64}\r?\n[A-Za-z0-9+/=]{40}|BORG PAPER KEY v1\r?\nid: [0-9]{1,4} / [0-9a-f]{6} [0-9a-f]{6} [0-9a-f]{6} / [0-9a-f]{6} [0-9a-f]{6} - [0-9a-f]{2}\r?\n {0,2}1: [0-9a-f]{6} [0-9a-f]{6} [0-9a-f]{6} ))re",
   false, 1, 0, false, true},
  // Scan version 11, from a fourth and a fifth outsider probe (provider formats; the
  // application files of a power user's home).
  // A Bitcoin private key in wallet import format (base58check: a compressed key's K or L
  // and 51 characters, an uncompressed one's 5 and 50), its checksum verified.
  {"bitcoin-wif-key", R"re(\b([KL][1-9A-HJ-NP-Za-km-z]{51}|5[HJK][1-9A-HJ-NP-Za-km-z]{49})\b)re", false, 1, 0,
   false, false, Verify::kBase58Check},
  // A raw private key (64 hex digits, an Ethereum account's) after a key that names it.
  {"hex-private-key-assignment",
   R"re(\bpriv(?:ate)?[ _\-]?key[ \t]{0,4}(?:\([^)\r\n]{0,20}\))?["'`]?[ \t]{0,4}[:=][ \t]{0,4}["'`]?(?:0x)?([0-9a-fA-F]{64})\b)re",
   true, 1, 3.0, false, false},
  // A WireGuard or X25519 private key (base64 of 32 bytes) under privkey (a note's).
  {"privkey-base64", R"re(\bprivkey[ \t]{0,4}[:=][ \t]{0,4}["'`]?([A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=))re", true, 1,
   3.5, false, false},
  // DeepL's API keys for its free plan: a UUID and ":fx".
  {"deepl-api-key", R"re(\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:fx)\b)re", false, 1, 0,
   false, false},
  // Firebase Cloud Messaging's legacy server key.
  {"fcm-server-key", R"re(\b(AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{120,160}))re", false, 1, 3.5, false, false},
  // X/Twitter's app bearer token: 22 A's, then URL-encoded base64 (a %2B or %3D in it: a
  // base64 blob's run of A's never holds one).
  // (A key-block rule only so that its run of A's is not taken for filler.)
  {"twitter-bearer-token", R"re(\b(A{20,24}[A-Za-z0-9]{10,100}%[0-9A-F]{2}[A-Za-z0-9%]{20,120}))re", false, 1, 3.5, false,
   true},
  // A Salesforce session or access token: the org id (00D...), '!', then the session part.
  {"salesforce-access-token", R"re(\b(00D[A-Za-z0-9]{12,15}![A-Za-z0-9_.]{80,200}))re", false, 1, 3.5, false, false},
  // ElevenLabs' API keys: sk_ and 48 hex digits.
  {"elevenlabs-api-key", R"re(\b(sk_[0-9a-f]{48})\b)re", false, 1, 3.0, false, false},
  // RapidAPI's application keys (msh and jsn inside).
  {"rapidapi-key", R"re(\b([A-Za-z0-9]{8,12}msh[A-Za-z0-9]{12,18}p[A-Za-z0-9]{4,9}jsn[A-Za-z0-9]{10,14})\b)re", false, 1, 3.0,
   false, false},
  // Asana's personal access tokens (1/ or 2/, numeric ids, ':' and 32 hex digits) after a
  // name that says Asana on its line.
  {"asana-token",
   R"re((?:asana|ASANA|Asana)[^\r\n]{0,60}?\b([0-9]/[0-9]{10,20}(?:/[0-9]{10,20})?:[0-9a-f]{32})\b)re", false, 1, 3.0,
   false, false},
  // CircleCI's personal API tokens.
  {"circleci-token", R"re(\b(CCIPAT_[A-Za-z0-9]{20,24}_[0-9a-f]{40})\b)re", false, 1, 3.0, false, false},
  // Loggly's customer token in its input URL.
  {"loggly-token-url",
   R"re(\.loggly\.com/(?:inputs|bulk)/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}))re", false, 1,
   3.0, false, false},
  // An Azure Function's key in its URL (?code=).
  {"azure-function-key-url",
   R"re(\.azurewebsites\.net/api/[^\s"'?]{0,200}\?(?:[^\s"'#]{0,200}&)?code=([A-Za-z0-9_\-]{30,100}={0,2}))re", false,
   1, 3.5, false, false},
  // Splunk's HTTP Event Collector token in its header.
  {"splunk-hec-token",
   R"re(\bSplunk[ \t]{1,4}([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\b)re", false,
   1, 3.0, false, false},
  // Honeycomb's key in its header (X-Honeycomb-Team).
  {"honeycomb-key", R"re(X-Honeycomb-Team["']?[ \t]{0,4}[:=][ \t]{0,4}["']?([A-Za-z0-9_]{22,64}))re", true, 1, 3.0,
   false, false},
  // Elastic's API key header: ApiKey and base64 of id:key.
  {"elastic-api-key-header", R"re(Authorization["']?[ \t]{0,4}[:=,][ \t]{0,4}["']?ApiKey[ \t]{1,4}([A-Za-z0-9+/]{20,400}={0,2}))re",
   true, 1, 3.0, false, false, Verify::kBasicAuth},
  // Kaggle's kaggle.json: {"username": ..., "key": 32 hex digits} (over two lines too, from
  // scan version 13).
  {"kaggle-key", R"re("username"[ \t]{0,4}:[ \t]{0,4}"[^"\r\n]{1,64}"[ \t]{0,4},\s{0,40}"key"[ \t]{0,4}:[ \t]{0,4}"([0-9a-f]{32})")re",
   false, 1, 3.0, false, true},
  // An HTTP Basic credential in a quoted header value (HAR files, JSON configs), verified
  // to decode to user:password.
  {"quoted-basic-auth", R"re(["']Basic[ \t]{1,4}([A-Za-z0-9+/]{8,400}={0,2})["'])re", false, 1, 0, true, false,
   Verify::kBasicAuth},
  // A Microsoft account's refresh token (OneDrive, Outlook clients): M.C or M.R, a number,
  // the data centre, then the token.
  {"microsoft-refresh-token", R"re(\b(M\.[CR][0-9]{1,3}_[A-Z]{2,4}\.[A-Za-z0-9!*$_\-.]{100,2000}))re", false, 1, 4.0,
   false, false},
  // A session cookie in a Netscape cookie jar (curl's, yt-dlp's, a browser export): domain,
  // flag, path, secure, expiry, a session-like name, its value.
  {"cookie-jar-session",
   R"re((?:^|\n)(?:#HttpOnly_)?\.?[A-Za-z0-9.\-]{1,253}\t(?:TRUE|FALSE)\t[^\t\r\n]{1,200}\t(?:TRUE|FALSE)\t[0-9]{1,12}\t[A-Za-z0-9_.\-]{0,40}(?:sess|sid|auth|token|login|jwt|remember)[A-Za-z0-9_.\-]{0,40}\t([^\s]{16,4096}))re",
   true, 1, 3.0, false, false},
  // The mongo shell's db.auth("user", "password").
  {"mongo-shell-auth",
   R"re(\b[A-Za-z_][A-Za-z0-9_]{0,30}\.auth\([ \t]{0,4}["'][^"'\r\n]{1,64}["'][ \t]{0,4},[ \t]{0,4}["']([^"'\r\n]{6,128})["'])re", false, 1,
   2.3, true, false, Verify::kOddValue, true},
  // Bundler's credentials for a gem source: BUNDLE_<HOST, dots as __> = "user:password".
  {"bundler-credentials",
   R"re(\bBUNDLE_[A-Z0-9_]{1,100}__[A-Z0-9]{2,30}["']?[ \t]{0,4}[:=][ \t]{0,4}["']?([A-Za-z0-9_.@%+\-]{1,128}:[^\s"':/][^\s"']{3,127}))re",
   false, 1, 2.3, true, false, Verify::kNone, true},
  // IRC: NickServ's identify command (irssi's autosendcmd, weechat's command), ZNC's
  // nickserv module with its password.
  {"nickserv-identify",
   R"re(\b(?:nickserv|ns)[ \t]{1,4}identify[ \t]{1,4}(?:[^\s;"'<>$]{1,64}[ \t]{1,4})?([^\s;"'<>$][^\s;"'<>]{5,127}))re", true,
   1, 2.3, true, false, Verify::kNone, true},
  {"znc-nickserv-module", R"re(LoadModule[ \t]{0,4}=[ \t]{0,4}nickserv[ \t]{1,4}([^\s]{6,128}))re", true, 1, 2.3,
   true, false, Verify::kOddValueLineEnd, true},
  // strongSwan's ipsec.secrets: [ids] : PSK "..." (EAP, XAUTH, NTLM likewise).
  {"ipsec-secret",
   R"re((?:^|\s):[ \t]{0,4}(?:PSK|EAP|XAUTH|NTLM)[ \t]{1,4}"([^"\r\n]{4,200})")re", false, 1, 2.3, true, false,
   Verify::kOddValue, true},
  // Redis's server password (requirepass, masterauth; set by CONFIG SET in redis-cli from
  // scan version 13) and AUTH typed into redis-cli (its
  // user in lower case: SMTP's AUTH LOGIN <base64 user> and AUTH CRAM-MD5 are not).
  {"redis-password",
   R"re((?:^|\n)[ \t]{0,8}(?:(?:CONFIG|config)[ \t]{1,4}(?:SET|set)[ \t]{1,4})?(?:requirepass|masterauth)[ \t]{1,8}["']?([^\s"']{6,200}))re", false, 1, 2.3, true, false,
   Verify::kOddValueLineEnd, true},
  {"redis-auth-command", R"re((?:^|\n)AUTH[ \t]{1,4}(?:[a-z0-9_][^\s]{0,63}[ \t]{1,4})?([^\s]{6,128}))re", false, 1, 2.3,
   true, false, Verify::kOddValueLineEnd, true},
  // mpd's password "secret@read,add,control,admin".
  {"mpd-password",
   R"re((?:^|\n)[ \t]{0,8}password[ \t]{1,40}"([^"@\s]{6,128})@(?:read|add|control|admin))re", false, 1, 2.3, true,
   false, Verify::kOddValue, true},
  // aria2's RPC secret; himalaya's raw password; httpie's session auth (user:password).
  {"aria2-rpc-secret", R"re((?:^|\n)[ \t]{0,4}rpc-secret[ \t]{0,4}=[ \t]{0,4}([^\s]{6,200}))re", false, 1, 2.3, true,
   false, Verify::kOddValueLineEnd, true},
  {"himalaya-raw-password",
   R"re(\b(?:auth|passwd|password)\.raw[ \t]{0,4}=[ \t]{0,4}["']([^"'\r\n]{6,200})["'])re", false, 1, 2.3, true,
   false, Verify::kOddValue, true},
  {"httpie-session-auth",
   R"re(["']raw_auth["'][ \t]{0,4}:[ \t]{0,4}["'][^"'\s:]{1,64}:([^"'\r\n]{4,200})["'])re", false, 1, 2.3, true,
   false, Verify::kOddValue, true},
  // A mount's options (fstab, autofs, mount -o): password= or pass= after a ',' or -o.
  // (Not anchored on user=, which a log holds on every other line.)
  {"mount-option-password", R"re((?:,|-o[ \t]{1,4})pass(?:word)?=([^\s,"'()]{6,128}))re", false, 1, 2.3,
   true, false, Verify::kOddValue, true},
  // Recovery words on a line of their own (12 to 25 lower-case words, a BIP39, Electrum or
  // Monero seed) within three lines after a line naming a seed, a recovery phrase, a
  // mnemonic or a wallet. (A key block: the match spans lines.)
  {"wallet-seed-words",
   R"re((?:^|\n)[^\n]{0,40}\b(?:[Ss]eed|SEED|[Mm]nemonic|MNEMONIC|[Rr]ecovery|RECOVERY|[Pp]hrase|PHRASE|[Ww]allet|WALLET)\b[^\n]{0,40}\n(?:[^\n]{0,80}\n){0,2}((?:[a-z]{3,12} ){11,24}[a-z]{3,12})[ \t]{0,4}(?:\r?\n|$))re",
   false, 1, 0, false, true, Verify::kSeedWords},
  // A note's "secret key: ...", "app key: ...", "access token: ..." (words apart).
  {"note-key-value",
   R"re(\b(?:access|secret|app|api|private|auth|client|application)[ ](?:key|secret|token)[ \t]{0,4}[:=][ \t]{0,4}["'`]?([A-Za-z0-9+/_\-]{20,200}={0,2}))re",
   true, 1, 3.5, true, false},
  // Kaggle's API key (32 hex digits) under its name.
  {"kaggle-key", R"re(kaggle[_\-]?key["']?[ \t]{0,4}(?:=>|[:=,])[ \t]{0,4}["']?([0-9a-f]{32})\b)re", true, 1, 3.0,
   false, false},
  // Azure DevOps' personal access tokens (52 characters of lower-case base32) under a name
  // that says PAT, Azure or DevOps, or in a dev.azure.com request.
  {"azure-devops-pat",
   R"re((?:PAT|_pat|devops|DEVOPS|DevOps|azure|AZURE|Azure)[A-Za-z0-9_]{0,30}(?:["']?[ \t]{0,4}(?:=|:)|["'][ \t]{0,4},)[ \t]{0,4}["']?([a-z2-7]{52})\b)re",
   false, 1, 3.5, false, false},
  {"azure-devops-pat",
   R"re(-u[ \t]{1,4}["']?[^\s:"']{0,64}:([a-z2-7]{52})["']?[ \t][^\r\n]{0,200}dev\.azure\.com)re", false, 1, 3.5, false,
   false},
  // LaunchDarkly's SDK, mobile and API keys on a line that names LaunchDarkly.
  {"launchdarkly-key",
   R"re((?:launchdarkly|LAUNCHDARKLY|LaunchDarkly)[^\r\n]{0,60}?\b((?:sdk|mob|api)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b)re",
   false, 1, 3.0, false, false},
  {"launchdarkly-key",
   R"re(\b((?:sdk|mob|api)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b[^\r\n]{0,200}launchdarkly)re",
   false, 1, 3.0, false, false},
  // From a sixth probe (deployment and application configuration, encodings).
  // A base64 value that decodes to a URL with a password or to an env file's secret-named
  // line (Verify::kBase64Credentials): under a name ending in B64 or base64 (a CI
  // variable's), or under a name ending in URL, URI, DSN, env or connection string (a
  // Kubernetes Secret's data:). Not under any name: a candidate on every "key: value" line
  // of every file doubled the scan's time.
  // A keyword rule (generic): the specific rules' precedence would let its every candidate,
  // mostly rejected, silence the keyword rules on the same value.
  {"base64-credentials",
   R"re([A-Za-z0-9_.\-]{0,100}(?:_B64|_BASE64|[Bb]64|[Bb]ase64)["']?[ \t]{0,4}[:=][ \t]{0,4}["']?([A-Za-z0-9+/]{16,8000}={0,2}))re",
   false, 1, 0, true, false, Verify::kBase64Credentials},
  {"base64-credentials",
   R"re((?:url|URL|Url|uri|URI|Uri|dsn|DSN|Dsn|env|ENV|Env|[Cc]onnection[_\-]?[Ss]tring|CONNECTION_STRING)["']?:[ \t]{1,4}["']?([A-Za-z0-9+/]{16,8000}={0,2}))re",
   false, 1, 0, true, false, Verify::kBase64Credentials},
  // HAProxy: userlist's insecure-password, stats auth user:password.
  {"haproxy-password", R"re(\binsecure-password[ \t]{1,4}([^\s]{4,128}))re", false, 1, 2.3, true, false,
   Verify::kOddValue, true},
  {"haproxy-password", R"re(\bstats[ \t]{1,4}auth[ \t]{1,4}[^\s:]{1,64}:([^\s]{4,128}))re", false, 1, 2.3, true,
   false, Verify::kOddValue, true},
  // squid's cache_peer login=user:password.
  {"squid-peer-login", R"re(\bcache_peer\b[^\r\n]{0,200}\slogin=[^\s:]{1,64}:([^\s]{4,128}))re", false, 1, 2.3, true,
   false, Verify::kOddValue, true},
  // SSSD's LDAP bind password (ldap_default_authtok).
  {"sssd-authtok", R"re(\b[a-z_]{0,30}authtok[ \t]{0,4}=[ \t]{0,4}([^\s]{6,128}))re", false, 1, 2.3, true, false,
   Verify::kOddValueLineEnd, true},
  // ODBC's PWD= (Pwd=) in a DSN or a connection string.
  {"odbc-pwd", R"re((?:^|[\s;"'{])(?:PWD|Pwd)[ \t]{0,4}=[ \t]{0,4}(\{[^}\r\n]{4,128}\}|[^\s;{}"']{6,128}))re", false,
   1, 2.3, true, false, Verify::kOddValue, true},
  // Hibernate's connection password property.
  {"hibernate-password",
   R"re(<property[ \t]{1,4}name=["'][A-Za-z0-9_.\-]{0,80}password["'][ \t]{0,4}>([^<\r\n]{4,200})</property>)re", true, 1,
   2.3, true, false, Verify::kOddValue, true},
  // cloud-init's chpasswd list (user:password lines under list: |). A key block.
  {"cloud-init-chpasswd",
   R"re(chpasswd:[^\n]{0,40}\n(?:[^\n]{0,120}\n){0,3}[ \t]{0,16}list:[ \t]{0,4}\|[-+]?[ \t]{0,4}\r?\n[ \t]{1,16}[a-z_][a-z0-9_\-]{0,31}:([^\s:]{6,128}))re",
   false, 1, 2.3, true, true, Verify::kOddValue, true},
  // CloudFormation: a NoEcho parameter's Default (in either order; in JSON too from scan
  // version 13), a parameters file's ParameterValue under a secret-named ParameterKey. Key
  // blocks.
  {"cloudformation-secret-default",
   R"re(NoEcho"?:[ \t]{0,4}["']?(?:true|True|TRUE)["']?,?[ \t]{0,4}\r?\n(?:[^\n]{0,200}\n){0,4}[ \t]{1,16}"?Default"?:[ \t]{0,4}["']?([^\s"']{6,128}))re",
   false, 1, 2.3, true, true, Verify::kOddValue, true},
  {"cloudformation-secret-default",
   R"re(Default"?:[ \t]{0,4}["']?([^\s"']{6,128})["']?,?[ \t]{0,4}\r?\n(?:[^\n]{0,200}\n){0,4}[ \t]{1,16}"?NoEcho"?:[ \t]{0,4}["']?(?:true|True|TRUE))re",
   false, 1, 2.3, true, true, Verify::kOddValue, true},
  {"cloudformation-secret-parameter",
   R"re("ParameterKey"[ \t]{0,4}:[ \t]{0,4}"[A-Za-z0-9]{0,40}(?:Password|Passwd|Secret|Token|Pass|Pwd|ApiKey|PrivateKey)[A-Za-z0-9]{0,20}"[ \t]{0,4},\s{0,40}"ParameterValue"[ \t]{0,4}:[ \t]{0,4}"([^"\r\n]{6,200})")re",
   false, 1, 2.3, true, true, Verify::kOddValue, true},
  // A JDBC URL's password parameter (;password= of SQL Server, ?password= / &password=), and
  // Oracle's thin user/password@.
  {"jdbc-password",
   R"re(jdbc:[a-z0-9]{2,20}:[^\s"'<>]{0,300}?[;?&]password=([^\s;&"'<>]{4,128}))re", true, 1, 2.3, true, false,
   Verify::kOddValue, true},
  {"jdbc-password", R"re(jdbc:oracle:thin:[A-Za-z0-9_$#]{1,30}/([^\s@/"']{4,128})@)re", true, 1, 2.3, true, false,
   Verify::kOddValue, true},
  // A framework's env() default under a secret's name: env('DB_PASSWORD', '...').
  {"env-default-secret",
   R"re(\b(?:env|getenv|get_env|env_or)\([ \t]{0,4}["'][A-Z0-9_]{0,40}(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|PASS|PWD)[A-Z0-9_]{0,20}["'][ \t]{0,4},[ \t]{0,4}["']([^"'\r\n]{6,128})["'])re",
   false, 1, 2.3, true, false, Verify::kOddValue, true},
  // Airflow's (cryptography's) Fernet key: URL-safe base64 of 32 bytes.
  {"fernet-key", R"re(\bfernet_key["']?[ \t]{0,4}[:=][ \t]{0,4}["']?([A-Za-z0-9_\-]{42}[AEIMQUYcgkosw048]=))re", true, 1,
   3.5, false, false},
  // Fluent Bit's and similar keys: HTTP_Passwd VALUE (a prefix part, any case, blanks).
  {"blank-separated-secret",
   R"re((?:^|\n)[ \t]{0,8}[A-Za-z0-9]{1,20}_(?:Passwd|Password|Pass|Secret|Token)[ \t]{1,8}["']?([^\s"'`;,<>(){}\[\]\\$=:#][^\s"'`;,<>(){}\[\]\\]{7,199}))re",
   false, 1, 2.8, true, false, Verify::kLineEnd},
  // From a seventh probe (what people type and write down). SQL that sets a password:
  // IDENTIFIED BY '...' (MySQL, also as .mysql_history writes blanks, \040), PASSWORD '...'
  // after WITH/ENCRYPTED or a role's name in CREATE/ALTER ROLE or USER (PostgreSQL; anchored
  // on PASSWORD ': "user" and then any 120 characters made every "user" in a text a
  // candidate).
  {"sql-set-password",
   R"re(IDENTIFIED(?:\s|\\040){1,4}(?:WITH(?:\s|\\040){1,4}[A-Za-z_]{1,40}(?:\s|\\040){1,4})?(?:BY|AS)(?:\s|\\040){1,4}(?:PASSWORD(?:\s|\\040){0,4}\(?)?'([^'\r\n]{4,128})')re",
   true, 1, 2.3, true, false, Verify::kOddValue, true},
  // (Scan version 12: role options between WITH and PASSWORD, WITH LOGIN PASSWORD '...'.)
  {"sql-set-password",
   R"re(\b(?:(?:WITH|ENCRYPTED|UNENCRYPTED)(?:\s|\\040){1,4}(?:(?:NO)?(?:LOGIN|SUPERUSER|CREATEDB|CREATEROLE|INHERIT|REPLICATION|BYPASSRLS|ENCRYPTED)(?:\s|\\040){1,4}){0,6}|(?:USER|ROLE)(?:\s|\\040){1,4}[^\s;'"]{1,64}(?:\s|\\040){1,4}(?:(?:NO)?(?:LOGIN|SUPERUSER|CREATEDB|CREATEROLE|INHERIT|REPLICATION|BYPASSRLS)[ \t]{1,4}){0,3})PASSWORD(?:\s|\\040){1,4}'([^'\r\n]{4,128})')re",
   true, 1, 2.3, true, false, Verify::kOddValue, true},
  // impacket's target: [domain/]user:password@host (psexec.py, wmiexec.py, secretsdump.py ...).
  {"impacket-target",
   R"re(\b(?:psexec|smbexec|wmiexec|atexec|dcomexec|secretsdump|mssqlclient|smbclient|getTGT|GetUserSPNs|GetNPUsers)(?:\.py)?[ \t]{1,4}(?:-[^\s]{1,30}[ \t]{1,4}(?:[^\s-][^\s]{0,60}[ \t]{1,4})?){0,4}["']?(?:[^\s/:'"@]{1,64}/)?[^\s/:'"@]{1,64}:["']?([^\s'"@]{4,128})["']?@)re",
   false, 1, 2.3, true, false, Verify::kOddValue, true},
  // PowerShell: -Password 'X' (Invoke-Sqlcmd, New-LocalUser with a literal, ...).
  {"powershell-password-parameter",
   R"re([ \t]-(?:Password|Passwd|Secret|ApiKey|AccessToken|Token)[ \t]{1,4}(?:\(ConvertTo-SecureString[ \t]{1,4})?["']([^"'\r\n$]{6,128})["'])re",
   false, 1, 2.3, true, false, Verify::kOddValue, true},
  // FreeRDP's /p:password (xfreerdp, wlfreerdp), rdesktop's -p password.
  {"rdp-password",
   R"re(\b(?:xfreerdp3?|wlfreerdp|sdl-freerdp|rdesktop)\b[^\r\n;&|]{0,200}[ \t](?:/p:|-p[ \t]{1,4})["']?([^\s"']{4,128}))re",
   false, 1, 2.3, true, false, Verify::kOddValue, true},
  // A recovery code or key written down (Microsoft's XXXXX-XXXXX-XXXXX-XXXXX-XXXXX, other
  // services' grouped codes) after "recovery code" or "recovery key" and ':'.
  {"recovery-key-note",
   R"re([Rr]ecovery[ _\-]?(?:[Cc]ode|[Kk]ey)[^\r\n:=]{0,30}[:=][ \t]{0,4}["'`]?([A-Z0-9]{4,6}(?:-[A-Z0-9]{4,6}){3,8})\b)re",
   false, 1, 3.0, false, false},
  // A BitLocker recovery password: eight groups of six digits on a line naming recovery or
  // BitLocker.
  {"bitlocker-recovery-key",
   R"re((?:[Rr]ecovery|RECOVERY|BitLocker|Bitlocker|BITLOCKER)[^\r\n]{0,80}?\b([0-9]{6}(?:-[0-9]{6}){7})\b)re", false, 1,
   2.5, false, false},
  // The mongo shell's createUser/updateUser ({user: ..., pwd: "..."}) and changeUserPassword.
  {"mongo-shell-auth",
   R"re(\b(?:createUser|updateUser)\([ \t]{0,4}(?:["'][^"'\r\n]{1,64}["'][ \t]{0,4},[ \t]{0,4})?\{[^}\r\n]{0,200}\bpwd["']?[ \t]{0,4}:[ \t]{0,4}["']([^"'\r\n]{4,128})["'])re",
   false, 1, 2.3, true, false, Verify::kOddValue, true},
  {"mongo-shell-auth",
   R"re(\bchangeUserPassword\([ \t]{0,4}["'][^"'\r\n]{1,64}["'][ \t]{0,4},[ \t]{0,4}["']([^"'\r\n]{4,128})["'])re", false,
   1, 2.3, true, false, Verify::kOddValue, true},
  // Oracle's sqlplus user/password@db.
  {"sqlplus-credentials",
   R"re(\bsqlplus(?:\s{1,4}-[A-Za-z]{1,3}){0,3}\s{1,4}["']?[A-Za-z0-9_$#]{1,30}/([^\s@/"']{4,128})@)re", true, 1, 2.3,
   true, false, Verify::kOddValue, true},
  // rclone config create/update NAME TYPE ... pass X (password X).
  {"rclone-config-password",
   R"re(\brclone\s{1,4}config\s{1,4}(?:create|update)\b[^\r\n;&|]{0,300}\s(?:pass|password)\s{1,4}["']?([^\s"']{6,128}))re",
   false, 1, 2.3, true, false, Verify::kOddValue, true},
  // MinIO's client: mc alias set NAME URL ACCESS_KEY SECRET_KEY.
  {"minio-client-secret",
   R"re(\bmc\s{1,4}(?:alias\s{1,4}set|config\s{1,4}host\s{1,4}add)\s{1,4}[^\s]{1,64}\s{1,4}https?://[^\s]{1,200}\s{1,4}["']?[^\s"']{3,128}["']?\s{1,4}["']?([A-Za-z0-9/+=_\-]{8,128}))re",
   false, 1, 3.0, true, false},
  // KeePass's XML export: the Password entry's value.
  {"keepass-xml-password",
   R"re(<Key>Password</Key>\s{0,8}<Value(?:\s[^>\r\n]{0,60})?>([^<\r\n]{4,200})</Value>)re", false, 1, 2.3, true, false,
   Verify::kOddValue, true},
  // A TOTP secret: otpauth:// URIs' secret=, Google Authenticator's export links, and a
  // base32 secret after 2FA / TOTP / MFA / OTP ... secret, seed or key.
  {"otpauth-secret", R"re(otpauth://[th]otp/[^\s?"']{0,200}\?(?:[^\s#"']{0,200}&)?secret=([A-Za-z2-7]{16,128}))re",
   false, 1, 3.0, false, false},
  {"otpauth-migration", R"re(otpauth-migration://offline\?data=([A-Za-z0-9%+/=]{20,4000}))re", false, 1, 3.0, false,
   false},
  {"totp-secret-note",
   R"re(\b(?:2FA|2fa|TOTP|totp|MFA|mfa|OTP|otp|[Aa]uthenticator)\b[^\r\n]{0,40}?(?:secret|seed|key|Secret|Seed|Key)[^\r\n:=]{0,30}[:=][ \t]{0,4}["'`]?([A-Z2-7]{16,64}={0,6}|(?:[a-z2-7]{4} ){3,15}[a-z2-7]{4})\b)re",
   false, 1, 3.0, false, false},
  // Recovery (backup) codes: a line naming them, then four or more lines of one code each
  // (GitHub's xxxxx-xxxxx, other services' xxxx-xxxx, Google's 1234 5678). A key block.
  {"recovery-codes",
   R"re((?:recovery|backup|verification)[ _\-]?codes?[^\n]{0,80}\n(?:[^\n]{0,80}\n){0,4}((?:[ \t]{0,8}(?:[-*][ \t]{1,4}|[0-9]{1,2}[.)][ \t]{1,4})?(?:[a-z0-9]{4,5}-[a-z0-9]{4,5}|[0-9]{4} ?[0-9]{4})[ \t]{0,4}\r?\n){4}))re",
   true, 1, 0, false, true},
  // Jenkins' API tokens (11 and 32 hex digits) on a line naming Jenkins.
  {"jenkins-api-token", R"re((?:jenkins|JENKINS|Jenkins)[^\r\n]{0,80}?\b(11[0-9a-f]{32})\b)re", false, 1, 3.0, false,
   false},
  // Vault's older service tokens (s. and 24 characters) after vault login or VAULT_TOKEN=.
  {"vault-token",
   R"re((?:vault\s{1,4}login\s{1,4}(?:-[^\s]{1,40}\s{1,4}){0,3}|VAULT_TOKEN[ \t]{0,4}=[ \t]{0,4}["']?)(s\.[A-Za-z0-9]{24})\b)re",
   false, 1, 3.0, false, false},
  // A WireGuard key echoed into a private key's file (echo KEY | sudo tee /etc/wireguard/x.key).
  {"wireguard-private-key",
   R"re(\becho\s{1,4}["']?([A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=)["']?\s{0,4}\|[^\r\n]{0,60}(?:priv|\.key\b))re", false,
   1, 3.5, false, false},
  // From an eighth probe (a developer's and a sysadmin's home, measured after the above).
  // A Google app password (four groups of four lower-case letters) after password.
  {"app-password-groups", R"re(\bpassword[ \t]{1,4}["']?([a-z]{4} [a-z]{4} [a-z]{4} [a-z]{4})\b)re", true, 1, 2.5,
   false, false},
  // A private JSON Web Key's "d" (the private exponent or scalar, base64url).
  {"jwk-private-key", R"re("d"[ \t]{0,4}:[ \t]{0,4}"([A-Za-z0-9_\-]{42,700})")re", false, 1, 4.0, false, false},
  // Mattermost's incoming webhooks (/hooks/ and a 26-character id).
  {"mattermost-webhook", R"re(https?://[^\s/"']{1,200}/hooks/([a-z0-9]{26})\b)re", false, 1, 3.0, false, false},
  // A session cookie on a command line or in a Cookie header (curl -b, --cookie, Cookie:).
  {"cookie-header-session",
   R"re((?:\s-b|--cookie|[Cc]ookie:)[ \t=]{0,4}["']?[^"'\r\n]{0,200}?\b(?:sessionid|session|sid|PHPSESSID|JSESSIONID|connect\.sid|_session|user_session|auth_token|remember_token|laravel_session)=([A-Za-z0-9%._\-]{16,512}))re",
   false, 1, 3.0, false, false},
  // An exported cookie (JSON) whose name says session, sid, auth or token, and its value.
  // A key block: exports are written over several lines.
  {"cookie-json-session",
   R"re("name"[ \t]{0,4}:[ \t]{0,4}"[A-Za-z0-9_.\-]{0,30}(?:sess|sid|auth|token|login)[A-Za-z0-9_.\-]{0,30}"[ \t]{0,4},[^{}]{0,300}?"value"[ \t]{0,4}:[ \t]{0,4}"([^"\r\n]{16,4096})")re",
   true, 1, 3.0, false, true},
  // httpie's default options (config.json): --auth=user:password.
  {"httpie-default-auth", R"re(--auth=[^\s:"']{1,64}:([^\s"']{6,128}))re", false, 1, 2.3, true, false, Verify::kOddValue,
   true},
  // A quoted value under a password's or a secret's key holding characters the other
  // keyword rules stop at (< > ( ) { } [ ] ; , $ % \): "P<Csw(JfMcOp", ".ma[/Z1COFHp.dD.";
  // a template's forms (${...}, {{...}}, $(...), %(name)s, <name>) are not (Verify::kOddValue).
  {"quoted-password-symbols",
   R"re((?:^|[^A-Za-z0-9])(?:[A-Za-z0-9]{1,20}[_\-.]){0,3}[A-Za-z0-9]{0,20}(?:password|passwd|passphrase|pass|pwd|psk|secret)["']?\]?[ \t]{0,16}(?::=|=>|=|:)[ \t]{0,4}"([^"\s]{0,199}[<>(){}\[\];,$%\\][^"\s]{0,199})")re",
   true, 1, 0, true, false, Verify::kOddValue},
  {"quoted-password-symbols",
   R"re((?:^|[^A-Za-z0-9])(?:[A-Za-z0-9]{1,20}[_\-.]){0,3}[A-Za-z0-9]{0,20}(?:password|passwd|passphrase|pass|pwd|psk|secret)["']?\]?[ \t]{0,16}(?::=|=>|=|:)[ \t]{0,4}'([^'\s]{0,199}[<>(){}\[\];,$%\\][^'\s]{0,199})')re",
   true, 1, 0, true, false, Verify::kOddValue},
  // The same unquoted at a line's end in a configuration file (key = value, key value).
  {"line-password-symbols",
   R"re((?:^|\n)[ \t]{0,8}(?:(?:[A-Za-z0-9]{1,20}[_\-.]){0,3}[A-Za-z0-9]{0,20}(?:password|passwd|passphrase|pass|pwd|psk|secret)[ \t]{0,8}(?::=|=>|=|:)[ \t]{0,8}|(?:password|passwd|passphrase|pass|pwd|psk|secret|requirepass|masterauth)[ \t]{1,8})([^\s"'*&<:=^][^\s"']{0,199}[<>(){}\[\];,$%\\][^\s"']{0,199}))re",
   true, 1, 0, true, false, Verify::kOddValueLineEnd},
  // Scan version 12, from the sixth probe's unseen seeds: LDAP clients' bind password
  // (nslcd.conf, pam_ldap.conf, libnss-ldap.conf: bindpw, rootbindpw), Beats' Elastic Cloud
  // credentials (cloud.auth: "user:password"), grafana.ini's triple-quoted values (used for
  // a password holding # or ;).
  {"ldap-bindpw", R"re((?:^|\n)[ \t]{0,8}(?:root)?bindpw[ \t]{1,8}([^\s]{4,128}))re", false, 1, 2.3, true, false,
   Verify::kOddValueLineEnd, true},
  {"beats-cloud-auth", R"re(\bcloud\.auth[ \t]{0,4}:[ \t]{0,4}["']?[^\s:"']{1,64}:([^\s"']{4,128}))re", false, 1, 2.3,
   true, false, Verify::kOddValueLineEnd, true},
  {"triple-quoted-password",
   R"re((?:^|\n)[ \t]{0,8}(?:[A-Za-z0-9]{1,20}_)?(?:password|passwd)[ \t]{0,4}=[ \t]{0,4}"""([^"\r\n]{4,128})""")re",
   true, 1, 2.3, true, false, Verify::kOddValue, true},
  // Scan version 13, from the probes' unseen seeds 101 and 102. A call's quoted argument
  // under a secret's name holding a symbol secret-argument's value stops at (PHP's
  // define('DB_PASSWORD', 'b,!0&V,m^jD@-%SI'), to its closing quote; judged as
  // quoted-password-symbols' values (Verify::kOddValue).
  {"secret-argument",
   R"re(["'](?:[A-Za-z0-9]{1,20}[_\-.]){0,3})re" HV_SECRET_WORDS R"re((?:[_\-.][A-Za-z0-9]{1,20}){0,3}["'][ \t]{0,4},[ \t]{0,4}'([^'\s]{0,199}[<>(){}\[\];,$%\\][^'\s]{0,199})')re",
   true, 1, 0, true, false, Verify::kOddValue},
  {"secret-argument",
   R"re(["'](?:[A-Za-z0-9]{1,20}[_\-.]){0,3})re" HV_SECRET_WORDS R"re((?:[_\-.][A-Za-z0-9]{1,20}){0,3}["'][ \t]{0,4},[ \t]{0,4}"([^"\s]{0,199}[<>(){}\[\];,$%\\][^"\s]{0,199})")re",
   true, 1, 0, true, false, Verify::kOddValue},
  // A short password (8 or 9 characters) as a call's argument under a password's name (PHP's
  // define('DB_PASSWORD', 'May.2018!')), judged as short-password-assignment's.
  {"secret-argument",
   R"re(["'](?:[A-Za-z0-9]{1,20}[_\-.]){0,3}(?:PASSWORD|PASSWD|PASS|password|passwd|pass)["'][ \t]{0,4},[ \t]{0,4}["']([^\s"'`;,<>(){}\[\]\\]{8,9})["'])re",
   false, 1, 0, true, false, Verify::kShortPassword},
  // A Dockerfile's ENV in its blank-separated form (ENV ADMIN_PASSWORD cobalt-thunder-yellow4):
  // a secret baked into every layer after it.
  {"dockerfile-env-secret",
   R"re((?:^|\n)[ \t]{0,8}ENV[ \t]{1,8}[A-Za-z0-9_]{0,40}(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY)[A-Za-z0-9_]{0,20}[ \t]{1,8}["']?([^\s"'$=][^\s"']{7,199}))re",
   false, 1, 3.0, true, false, Verify::kLineEnd},
  // A Makefile's variable set with := ::= :::= or += (DB_PASSWORD := 500346cf4600303):
  // secret-assignment takes = and ?= bare, := only quoted (code assigns expressions so); a
  // value of 8-11 characters is judged as short-password-assignment's.
  {"make-secret-variable",
   R"re((?:^|\n)[ \t]{0,8}(?:(?:export|override)[ \t]{1,4})?[A-Z0-9_]{0,40}(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY)[A-Z0-9_]{0,20}[ \t]{0,4}(?::{1,3}=|\+=)[ \t]{0,4}([^\s"'$(#][^\s"'#]{11,199}))re",
   false, 1, 3.2, true, false, Verify::kLineEnd},
  {"make-secret-variable",
   R"re((?:^|\n)[ \t]{0,8}(?:(?:export|override)[ \t]{1,4})?[A-Z0-9_]{0,40}(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN)[A-Z0-9_]{0,20}[ \t]{0,4}(?::{1,3}=|\+=)[ \t]{0,4}([^\s"'$(#][^\s"'#]{7,10}))re",
   false, 1, 0, true, false, Verify::kShortPassword},
  // A secret's key and its value separated by blanks alone, as fluentd's, nginx's and similar
  // configurations write them (api_key e7ae1c646f5dd5966e09932e3c7e2d3f, access_token ...):
  // 16 or more characters of a token's alphabet ending the line.
  {"blank-separated-secret",
   R"re((?:^|\n)[ \t]{0,8}(?:[A-Za-z0-9]{1,20}_){0,2}(?:api_?key|apikey|access_?key|secret_?key|client_?secret|(?:auth|access|api|bearer)_?token|token|secret)[ \t]{1,8}["']?([A-Za-z0-9_\-+/=.]{16,200})["']?)re",
   true, 1, 3.2, true, false, Verify::kLineEnd},
  // A recovery code kept in a note (Bitwarden's two-step login recovery code, an account's
  // backup code): 16 or more letters and digits after "recovery code:" ending the line.
  {"recovery-code",
   R"re(\b(?:recovery|backup|rescue|emergency)[ \t](?:code|key)s?\b[^\r\n]{0,20}?:[ \t]{1,4}["'`]?([A-Za-z0-9][A-Za-z0-9\-]{15,63}))re",
   true, 1, 3.0, true, false, Verify::kLineEnd},
  // Network devices, from a ninth outsider probe (a network engineer's home). SNMP
  // communities (Cisco's snmp-server community X RO, net-snmp's rocommunity X, Junos' set
  // snmp community X) and net-snmp's v3 users' pass phrases (createUser NAME SHA "X");
  // public and private are defaults (judged as a password's place by Verify::kOddValue).
  {"snmp-community",
   R"re((?:^|\n)[ \t]{0,8}(?:snmp-server[ \t]{1,4}community|r[ow]community6?|set[ \t]{1,4}snmp[ \t]{1,4}community)[ \t]{1,4}["']?([^\s"']{6,64}))re",
   false, 1, 2.3, true, false, Verify::kOddValue, true},
  {"snmp-user-passphrase",
   R"re(\bcreateUser[ \t]{1,4}(?:-e[ \t]{1,4}[^\s]{1,64}[ \t]{1,4})?[^\s]{1,64}[ \t]{1,4}(?:MD5|SHA(?:-?[0-9]{3})?)[ \t]{1,4}["']?([^\s"']{8,128}))re",
   false, 1, 2.3, true, false, Verify::kOddValue, true},
  // Cisco IOS: a TACACS+ or RADIUS server's key (tacacs-server host H key X, radius-server
  // host H auth-port 1812 key 0 X, a server block's "key 0 X", and any "key X" inside a
  // "tacacs server NAME" or "radius server NAME" block), a type 7 password (a
  // reversible encoding: two decimal digits of salt, then hex), and a plain (type 0) one.
  {"network-server-key",
   R"re((?:^|\n)[ \t]{0,8}(?:(?:tacacs-server|radius-server)[ \t]{1,4}(?:host[ \t]{1,4}[^\s]{1,64}[ \t]{1,4}(?:[^\r\n]{0,80}?[ \t])?)?key[ \t]{1,4}(?:[07][ \t]{1,4})?|key[ \t]{1,4}[07][ \t]{1,4})([^\s"']{6,128}))re",
   false, 1, 2.3, true, false, Verify::kOddValueLineEnd, true},
  {"network-server-key",
   R"re((?:^|\n)(?:tacacs|radius)[ \t]server[ \t][^\r\n]{1,64}\r?\n(?:[ \t][^\r\n]{0,200}\r?\n){0,8}[ \t]{1,4}key[ \t]{1,4}(?:[07][ \t]{1,4})?([^\s"']{6,128}))re",
   false, 1, 2.3, true, true, Verify::kOddValueLineEnd, true},
  {"cisco-type7-password",
   R"re((?:^|\n)[ \t]{0,8}(?:enable[ \t]{1,4}|username[ \t]{1,4}[^\s]{1,64}[ \t]{1,4}(?:privilege[ \t]{1,4}[0-9]{1,2}[ \t]{1,4})?)?(?:password|secret|key)[ \t]{1,4}7[ \t]{1,4}((?:0[0-9]|1[0-5])[0-9A-F]{8,200}))re",
   false, 1, 2.5, false, false},
  {"cisco-plain-password",
   R"re((?:^|\n)[ \t]{0,8}(?:enable[ \t]{1,4}(?:password|secret)|username[ \t]{1,4}[^\s]{1,64}[ \t]{1,4}(?:privilege[ \t]{1,4}[0-9]{1,2}[ \t]{1,4})?(?:password|secret))[ \t]{1,4}(?:0[ \t]{1,4})?([^\s"'$]{6,128}))re",
   false, 1, 2.3, true, false, Verify::kOddValueLineEnd, true},
  // Junos set commands' plain secrets (set system radius-server H secret "X", ike's
  // pre-shared-key ascii-text "X", authentication-key "X"); $9$ values are encoded (LooksHash).
  {"junos-set-secret",
   R"re((?:^|\n)set[ \t][^\r\n]{0,200}?[ \t](?:secret|ascii-text|authentication-key|simple-password)[ \t]{1,4}"?([^\s"]{6,128}))re",
   false, 1, 2.3, true, false, Verify::kOddValue, true},
  // FreeRADIUS' clients.conf and swanctl's secrets: secret = X (with '=': YAML's secret: names
  // a Kubernetes object).
  {"secret-line-password",
   R"re((?:^|\n)[ \t]{0,8}secret[ \t]{0,4}=[ \t]{0,4}["']?([^\s"']{6,64}))re",
   false, 1, 2.3, true, false, Verify::kOddValueLineEnd, true},
  // MikroTik's export with show-sensitive: wpa2-pre-shared-key=X.
  {"mikrotik-psk", R"re(\bwpa2?-pre-shared-key=["']?([^\s"']{8,64}))re", false, 1, 2.3, true, false,
   Verify::kOddValue, true},
  // Java tools' store and key passwords as options anywhere (jarsigner -storepass X on a
  // continued line); Gradle's Groovy signing config (storePassword 'X', keyPassword "X").
  {"keystore-password-option",
   R"re((?:^|\s)-(?:storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass)[ \t]{1,4}["']?([^\s"'$\-][^\s"']{5,127}))re",
   false, 1, 2.3, true, false, Verify::kOddValue, true},
  {"gradle-signing-password",
   R"re(\b(?:storePassword|keyPassword)[ \t]{1,4}["']([^"'\r\n$]{6,128})["'])re", false, 1, 2.3, true, false,
   Verify::kOddValue, true},
  // JDBC: DriverManager.getConnection(url, "user", "password"), over lines; Perl's
  // DBI->connect(dsn, "user", "password", ...) too.
  {"jdbc-connection-password",
   R"re((?:\bgetConnection|DBI->connect)[ \t]{0,4}\([^()]{0,300}?,\s{0,40}"[^"\r\n]{1,64}"[ \t]{0,4},\s{0,40}"([^"\r\n]{4,128})"[ \t]{0,4}[,)])re",
   false, 1, 2.3, true, true, Verify::kOddValue, true},
  // Streaming and chat: Twitch's chat token (oauth: and 30 characters), a Twitch stream key
  // (live_, the channel's number, a random part), OBS's service.json key, Opsgenie's
  // GenieKey header, W&B's key in wandb.login().
  {"twitch-chat-token", R"re(\boauth:([a-z0-9]{30})\b)re", false, 1, 3.0, false, false},
  {"twitch-stream-key", R"re(\b(live_[0-9]{6,12}_[A-Za-z0-9]{20,40})\b)re", false, 1, 3.0, false, false},
  {"obs-stream-key",
   R"re("settings"[ \t]{0,4}:[ \t]{0,4}\{[^{}]{0,400}?"key"[ \t]{0,4}:[ \t]{0,4}"([A-Za-z0-9_\-]{12,128})")re",
   false, 1, 3.0, false, true},
  {"opsgenie-key",
   R"re(\bGenieKey[ \t]{1,4}([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b)re", false, 1, 3.0,
   false, false},
  {"wandb-login-key", R"re(\bwandb\.login\([^)\r\n]{0,80}?key[ \t]{0,4}=[ \t]{0,4}\\?["']([0-9a-f]{40})\b)re",
   false, 1, 3.0, false, false},
  // fastlane match's git_basic_authorization("base64 of user:token").
  {"fastlane-git-basic-auth",
   R"re(\bgit_basic_authorization[ \t]{0,4}\(?[ \t]{0,4}["']([A-Za-z0-9+/]{8,400}={0,2})["'])re", false, 1, 3.0,
   false, false, Verify::kBasicAuth},
  // PagerDuty's Events API integration key under its names (Alertmanager's routing_key and
  // service_key): 32 hex digits.
  {"pagerduty-routing-key",
   R"re(\b(?:routing_key|service_key|integration_key)["']?[ \t]{0,4}[:=][ \t]{0,4}["']?([0-9a-f]{32})\b)re", false, 1,
   3.0, false, false},
  // Hardhat's and Truffle's accounts: ["0x" and 64 hex digits] (a private key).
  {"hardhat-account-key",
   R"re(\baccounts[ \t]{0,4}:[ \t]{0,4}\[[ \t]{0,4}["'](?:0x)?([0-9a-fA-F]{64})["'])re", false, 1, 3.0, false, false},
  // A passphrase of words between blanks named in a note (guest wifi password: kestrel sierra
  // basalt 67): after ':' or '=', three to six lower-case words and a number, to the line's
  // end (Verify::kSpacedPassphrase). The number is needed: prose ends lines with words
  // ("password is necessary because gcloud caches").
  {"prose-passphrase",
   R"re((?:^|\s)(?:[Pp]ass(?:word|phrase|wort)|PASSWORD|[Kk]ennwort|psk|PSK|[Ww]i-?[Ff]i|WIFI|wlan|WLAN)\b[^\r\n]{0,30}?(?::|[ \t]=)[ \t]{1,4}["'`]?([a-z]{3,12}(?: [a-z]{3,12}){2,5} [0-9]{1,4}))re",
   false, 1, 0, true, false, Verify::kSpacedPassphrase},
  // Consul's ACL tokens in its configuration's tokens block (agent = "<uuid>", default,
  // initial_management, agent_recovery, replication).
  {"consul-acl-token",
   R"re(\btokens[ \t]{0,4}\{[^{}]{0,400}?\b(?:agent|default|initial_management|master|agent_recovery|agent_master|replication|config_file_service_registration)[ \t]{0,4}=[ \t]{0,4}"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")re",
   false, 1, 3.0, false, true},
  // From an eleventh outsider probe (a home directory sampled widely). A passphrase of words
  // under a PASSPHRASE or PASSWORD variable, quoted (duplicity's export PASSPHRASE="igloo
  // kumquat falcon marble", restic's RESTIC_PASSWORD='...'), judged by the passphrase test.
  // Scan version 15: also a systemd unit's Environment="BORG_PASSPHRASE=words ...".
  {"passphrase-variable",
   R"re((?:^|\n)[ \t]{0,8}(?:(?:export[ \t]{1,4})?[A-Z0-9_]{0,30}(?:PASSPHRASE|PASSWORD|PASSWD)=["']|Environment=["'][A-Z0-9_]{0,30}(?:PASSPHRASE|PASSWORD|PASSWD)=)([a-z]{3,12}(?: [a-z]{3,12}){2,7}(?: [0-9]{1,4})?)["'])re",
   false, 1, 0, true, false, Verify::kSpacedPassphrase},
  // ESPHome's API encryption key (api: encryption: key: base64 of 32 bytes).
  {"esphome-api-key",
   R"re(\bencryption:[ \t]{0,4}\r?\n[ \t]{1,16}key:[ \t]{0,4}["']?([A-Za-z0-9+/]{43}=))re", false, 1, 3.5, false, true},
  // A Facebook (Meta Graph API) access token: EAA and 80 or more letters and digits, standing
  // alone (quoted or between blanks: not a run inside base64, as in bundled WebAssembly).
  {"facebook-access-token", R"re((?:^|[\s"'=:])(EAA[A-Za-z0-9]{80,400})["'\s,;&])re", false, 1, 3.5, false, false},
  // Android's saved Wi-Fi networks (WifiConfigStore.xml): PreSharedKey, its quotes escaped.
  {"android-wifi-psk",
   R"re(name="PreSharedKey">(?:&quot;|")?([^<&"]{8,63})(?:&quot;|")?</string>)re", false, 1, 2.3, true, false,
   Verify::kOddValue, true},
  // A macOS property list's (launchd's EnvironmentVariables) key naming a secret and its
  // string on the next line.
  {"plist-secret-string",
   R"re(<key>[A-Za-z0-9_.\-]{0,40}(?:PASSWORD|PASSWD|TOKEN|SECRET|API_?KEY|Password|Token|Secret|ApiKey)[A-Za-z0-9_.\-]{0,20}</key>\s{0,40}<string>([^<\s]{8,200})</string>)re",
   false, 1, 3.0, true, true},
  // slrn's nnrpaccess "server" "user" "password".
  {"slrn-nnrpaccess",
   R"re(\bnnrpaccess[ \t]{1,4}"[^"\r\n]{1,200}"[ \t]{1,4}"[^"\r\n]{1,64}"[ \t]{1,4}"([^"\r\n]{4,128})")re", false, 1, 2.3,
   true, false, Verify::kOddValue, true},
  // An INI file's bare pass= or pwd= key alone on its line with its value (pwd=iY_E_IPu-^@tZ):
  // in code, pwd is the working directory (let pwd = a:dict.tmpdir, pwd = os.getcwd()).
  {"ini-pass-assignment",
   R"re((?:^|\n)[ \t]{0,8}(?:pass|pwd)[ \t]{0,4}[=:][ \t]{0,4}["']?([^\s"'`;,<>(){}\[\]\\$=][^\s"'`]{11,199}))re",
   true, 1, 3.2, true, false, Verify::kLineEnd, true},
  // Windows' net use with the password after the share (net use Z: \\nas\share PASS
  // /user:DOMAIN\name); '*' asks for it.
  {"net-use-password",
   R"re(\bnet[ \t]{1,4}use[ \t]{1,4}(?:[A-Za-z]:[ \t]{1,4})?\\\\[^\s]{1,200}[ \t]{1,4}["']?([^\s"'/*][^\s"']{3,127})["']?[ \t]{1,4}/(?:user|u):)re",
   true, 1, 2.3, true, false, Verify::kNone, true},
  // (scan version 14: the password after /user:NAME, net use Z: \\nas\backup /user:bob X)
  {"net-use-password",
   R"re(\bnet[ \t]{1,4}use[ \t]{1,4}(?:[A-Za-z]:[ \t]{1,4})?\\\\[^\s]{1,200}[ \t]{1,4}/(?:user|u):[^\s/]{1,64}[ \t]{1,4}["']?([^\s"'/*][^\s"']{3,127}))re",
   true, 1, 2.3, true, false, Verify::kNone, true},
  // Scan version 14. A Wi-Fi profile netsh exported with key=clear: the key in plain text
  // after <protected>false</protected> (protected, it is a DPAPI blob).
  {"wifi-profile-key",
   R"re(<protected>false</protected>\s{0,40}<keyMaterial>([^<\r\n]{8,63})</keyMaterial>)re",
   false, 1, 2.0, true, true, Verify::kNone, true},
  // Scan version 14. Windows setup's answer file (autounattend.xml, unattend.xml): an
  // account's or the administrator's password with <PlainText>true</PlainText> (not the
  // *SENSITIVE*DATA*DELETED* Windows' Panther folder keeps).
  {"unattend-password",
   R"re(<(?:AdministratorPassword|Password|AutoLogon>\s{0,40}<Password)>\s{0,40}<Value>([^<\r\n*][^<\r\n]{3,127})</Value>\s{0,40}<PlainText>true</PlainText>)re",
   false, 1, 2.0, true, true, Verify::kNone, true},
};
// clang-format on

#undef HV_ASSIGN
#undef HV_SECRET_WORDS

const PathRule kPathRules[] = {
    {"ssh-private-key-file", ".ssh/id_*", "*.pub", ""},
    // (a file of credential_process entries alone holds none: scan version 11)
    {"aws-credentials-file", ".aws/credentials", "", "aws_"},
    // (scan version 11: with a password; a .netrc of logins alone holds none; scan version
    // 13: nor one of anonymous logins, an e-mail address as the password)
    {"netrc-file", ".netrc", "", "password", false, false, false, false, true},
    {"pgpass-file", ".pgpass", "", ""},
    {"git-credentials-file", ".git-credentials", "", ""},
    {"docker-config-auths", ".docker/config.json", "", "\"auth\""},
    {"gnupg-private-keys", ".gnupg/private-keys-v1.d/*", "", ""},
    {"gnupg-secring", ".gnupg/secring.gpg", "", ""},
    {"vault-token-file", ".vault-token", "", ""},
    {"containers-auth", "containers/auth.json", "", "\"auth\""},
    {"rails-master-key", "config/master.key", "", ""},
    {"rails-credentials-key", "config/credentials/*.key", "", ""},
    {"vnc-password-file", ".vnc/passwd", "", ""},
    {"davfs2-secrets", ".davfs2/secrets", "", ""},
    {"tor-onion-service-key", "hs_ed25519_secret_key", "", ""},
    // The Solana CLI's default keypair: a JSON array of the 64 secret key bytes.
    {"solana-keypair", ".config/solana/id.json", "", "["},
    // Scan version 9: cryptocurrency wallets. Bitcoin Core's (and its forks') wallet file; an
    // Ethereum keystore anywhere (geth's keystore/, Parity's keys/ethereum/, a wallet's
    // export in Downloads: the account key encrypted under a password, as an SSH key with a
    // passphrase is); a Cardano signing key.
    {"bitcoin-wallet-file", "wallet.dat", "", ""},
    {"ethereum-keystore", "UTC--*--*", "", "ciphertext"},
    {"cardano-signing-key", "*.skey", "", "SigningKey"},
    // A file Ansible reads the vault password from (vault_password_file, --vault-password-file);
    // a script of that name prints the password instead of holding it.
    {"ansible-vault-password-file", "*vault[_-]pass*", "*.[ps][yh]", ""},
    // Subversion keeps a password in plain text only where it was allowed to: the key says so.
    {"subversion-password", ".subversion/auth/svn.simple/*", "", "\npassword\nV "},
    // Scan version 8. OpenVPN's auth-user-pass file (a user line, a password line) in an
    // openvpn folder (or its client/ and server/ folders) under a name that says what it
    // holds; a short text (PathRule::short_text: not a plugin's .so, not a script).
    {"openvpn-auth-file", "*vpn/*[Aa]uth*", "*.ovpn", "\n", false, true},
    {"openvpn-auth-file", "*vpn/*[Pp]ass*", "*.ovpn", "\n", false, true},
    {"openvpn-auth-file", "*vpn/*[Cc]red*", "*.ovpn", "\n", false, true},
    {"openvpn-auth-file", "*vpn/*[Ll]ogin*", "*.ovpn", "\n", false, true},
    {"openvpn-auth-file", "*vpn/*/*[Aa]uth*", "*.ovpn", "\n", false, true},
    {"openvpn-auth-file", "*vpn/*/*[Pp]ass*", "*.ovpn", "\n", false, true},
    {"openvpn-auth-file", "*vpn/*/*[Cc]red*", "*.ovpn", "\n", false, true},
    {"openvpn-auth-file", "*vpn/*/*[Ll]ogin*", "*.ovpn", "\n", false, true},
    // autorestic's configuration: each backend's key: is its restic repository password.
    {"autorestic-key", ".autorestic.y*ml", "", "key:"},
    // A file that is one password or token and nothing else, under a name that says so
    // (PathRule::whole_file_secret): ~/.config/borg/passphrase, .pgadmin_pass, db_password;
    // "pass" only as a word of the name (not bypass, compass).
    {"password-file", "*[Pp]assphrase*", "", "", true},
    {"password-file", "*[Pp]assword*", "", "", true},
    {"password-file", "*[Pp]asswd*", "", "", true},
    {"password-file", "[Pp]ass", "", "", true},
    {"password-file", "*[._-][Pp]ass", "", "", true},
    {"password-file", "*[._-][Pp]ass.txt", "", "", true},
    {"password-file", "*[Ss]ecret*", "", "", true},
    {"password-file", "*[Tt]oken*", "", "", true},
    {"password-file", "*[Aa]pi[._-][Kk]ey*", "", "", true},
    {"password-file", "*[Aa]pikey*", "", "", true},
    // (scan version 14: a *.key file of one token, or an API key's id and secret on two
    // lines: Kraken's kraken.key)
    {"password-file", "*.key", "", "", true},
    // Scan version 10. A small table of accounts and their passwords in a note's file (no
    // extension, .txt, .md, .csv, .tsv, .org, .log) named for passwords, accounts or
    // credentials (PathRule::password_table): a note kept in Documents or on the Desktop, or
    // a password manager's or AWS's CSV export (not logins*: a log of logins).
    {"password-table-file", "*[Pp]assw*", "", "", false, false, false, true},
    {"password-table-file", "*[Aa]ccounts*", "", "", false, false, false, true},
    {"password-table-file", "*[Cc]redentials*", "", "", false, false, false, true},
    // (scan version 14: a note of API keys, tokens or secrets, "openweather: X")
    {"password-table-file", "*[Aa]pi[._-][Kk]eys*", "", "", false, false, false, true},
    {"password-table-file", "*[Aa]pi[Kk]eys*", "", "", false, false, false, true},
    {"password-table-file", "*[Tt]okens*", "", "", false, false, false, true},
    {"password-table-file", "*[Ss]ecrets*", "", "", false, false, false, true},
    // ... and any CSV or TSV file whose header names a password column (KeePass's, a
    // browser's, Bitwarden's export under any name).
    {"password-table-file", "*.csv", "", "", false, false, false, true},
    {"password-table-file", "*.tsv", "", "", false, false, false, true},
    // Scan version 9. A raw private key, 64 or 128 hex digits alone in a file
    // (PathRule::raw_key) named for a key, a wallet or a seed in any case, or in geth's
    // folder (~/.ethereum/geth/nodekey, eth_private_key.txt, WALLET.hex); not a public key's
    // file, not a checksum's (RawHexKey).
    {"raw-private-key-file", "*[Kk][Ee][Yy]*", "*[Pp][Uu][Bb]*", "", false, false, true},
    {"raw-private-key-file", "*[Pp][Rr][Ii][Vv]*", "*[Pp][Uu][Bb]*", "", false, false, true},
    {"raw-private-key-file", "*[Ww][Aa][Ll][Ll][Ee][Tt]*", "*[Pp][Uu][Bb]*", "", false, false, true},
    {"raw-private-key-file", "*[Ss][Ee][Ee][Dd]*", "*[Pp][Uu][Bb]*", "", false, false, true},
    {"raw-private-key-file", ".ethereum/*", "*[Pp][Uu][Bb]*", "", false, false, true},
    {"raw-private-key-file", ".ethereum/*/*", "*[Pp][Uu][Bb]*", "", false, false, true},
    // Scan version 11. DBeaver's saved credentials (encrypted under a key every copy of
    // DBeaver holds, so as good as plain text); atuin's sync session and encryption key;
    // deluge's daemon accounts (user:password:level).
    {"dbeaver-credentials", ".dbeaver/credentials-config.json", "", ""},
    {"atuin-session", "atuin/session", "", "", true},
    {"atuin-key", "atuin/key", "", "", true},
    {"deluge-auth", "deluge/auth", "", ":"},
    // pppd's CHAP secrets with an entry (Debian's own file holds comments alone; a quoted
    // secret marks an entry). A path rule: as a content rule its columns cost every line of
    // every file a look.
    {"ppp-chap-secrets", "ppp/chap-secrets", "", "\""},
    // GitHub's (and other services') downloaded recovery codes.
    {"recovery-codes-file", "*recovery[-_]codes*.txt", "", "-"},
    {"recovery-codes-file", "*backup[-_]codes*.txt", "", ""},
    // Postfix's SMTP relay credentials (host user:password lines), in any folder from scan
    // version 13 (a relay's copy outside /etc/postfix).
    {"postfix-sasl-passwd", "sasl_passwd", "", ":"},
    // The Snyk CLI's token (configstore/snyk.json's "api").
    {"snyk-config", "configstore/snyk.json", "", "\"api\""},
    // Scan version 12. PgBouncer's auth_file ("user" "password" lines): a plain password in
    // a row (PathRule::password_table); md5 and SCRAM hashes are not.
    {"pgbouncer-userlist", "pgbouncer/userlist.txt", "", "", false, false, false, true},
    // Scan version 13. The TACACS+ daemon's configuration: its top-level key = "..." is the
    // secret every device shares with it.
    {"tacacs-plus-key", "tac_plus.conf", "", "key = "},
};

// Values that documentation publishes as examples (AWS's, jwt.io's). They are examples
// by definition, so they are listed as text; they grant nothing.
const char* const kExampleSecrets[] = {
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "czZCaGRSa3F0MzpnWDFmQmF0M2JW",  // RFC 6749 2.3.1's client credentials, Basic-encoded
    "QWxhZGRpbjpvcGVuIHNlc2FtZQ==",  // RFC 7617's "Aladdin:open sesame"
    "MOJRH0mkL1IPauahWITSVvyDrQbEEIwljvmxdq03",  // MinIO's quickstart output, quoted by rclone's manual
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",  // Stripe's documentation test key
    "MWYyZDFlMmU2N2Rm",                  // Kubernetes' Secret example ("1f2d1e2e67df")
    "d-FL95Q19q7MQmFpd7hHD0Ty",          // the client secret gcloud ships (an installed app's)
    "h480djs93hd8",                      // RFC 6749 7.1's MAC token id, quoted by oauthlib
    "JAsJvRcgR-_veXNfy_sGmQ",            // the password `rclone config` generates in rclone's manual
    // Published keys: Hardhat's and Anvil's first test accounts, the Bitcoin wiki's WIF
    // examples, strongSwan's ipsec.secrets example, Splunk's HEC token example
    "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    "5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ",
    "KwdMAjGmerYanjeui5SHS7JkmpZvVipYvB2LJGU1ZxJwYvP98617",
    "v+NkxY9LLZvwj4qCC2o/gGrWDF2d21jL",
    "B5A79AAD-D822-46CC-80D1-819F80D7BFB0",
    "SW2YcwTIb9zpOOhoPsMm",  // Grafana's default secret_key (defaults.ini, sample.ini)
    "JBSWY3DPEHPK3PXP",  // the TOTP secret of Google Authenticator's key-URI format page
    // Azurite's (the Azure Storage emulator's) published development account key
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    // AWS IAM's documented example passwords (the CLI's and botocore's examples)
    "]35d/{pB9Fo9wJ",
    "3s0K_;xh4~8XXI",
    "h]6EszR}vJ*m",
    // BIP32's published test vectors' master keys (1, 2, 3; 5's invalid ones), in every
    // wallet library's tests
    "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6",
    "xprv9s21ZrQH143K31xYSDQpPDxsXRTUcvj2iNHm5NUtrGiGG5",
    "xprv9s21ZrQH143K25QhxbucbDDuQ4naNntJRi4KUfWT7xo4EK",
    "xprv9s21ZrQH143K24Mfq5zL5MhWK9hUhhGbd45hLXo2Pq2oqz",
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
    std::snprintf(num, sizeof(num), "%d %d %.3f %d %d %d%s", r.caseless ? 1 : 0, r.secret_group,
                  r.min_entropy, r.generic ? 1 : 0, r.binary ? 1 : 0, static_cast<int>(r.verify),
                  r.password_value ? " p" : "");
    all += std::string("C\0", 2) + r.id + '\0' + r.pattern + '\0' + num + '\n';
  }
  for (const PathRule& r : kPathRules)
    all += std::string("P\0", 2) + r.id + '\0' + r.glob + '\0' + r.unless_glob + '\0' +
           r.content_need + (r.whole_file_secret ? std::string("\0W", 2) : std::string()) +
           (r.short_text ? std::string("\0S", 2) : std::string()) +
           (r.raw_key ? std::string("\0R", 2) : std::string()) +
           (r.password_table ? std::string("\0T", 2) : std::string()) +
           (r.netrc_password ? std::string("\0N", 2) : std::string()) + '\n';
  for (const char* e : kExampleSecrets) all += std::string("E\0", 2) + e + '\n';
  for (const char* e : kEncryptedMarkers) all += std::string("M\0", 2) + e + '\n';
  return Sha256(AsBytes(all)).Hex();
}

}  // namespace haven::capture
