// Scanner tests. Every secret here is built at run time from random characters of the
// right shape (fixed seed): none is a real credential, and none appears literally.
#include "capture/scanner.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "capture/rules.h"

namespace haven::capture {
namespace {

const std::string kUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const std::string kLower = "abcdefghijklmnopqrstuvwxyz";
const std::string kDigits = "0123456789";
const std::string kAlnum = kUpper + kLower + kDigits;
const std::string kB64 = kAlnum + "+/";
const std::string kUrlSafe = kAlnum + "_-";
const std::string kHexLower = "0123456789abcdef";

class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}
  std::string Of(const std::string& alphabet, size_t n) {
    std::string s;
    std::uniform_int_distribution<size_t> d(0, alphabet.size() - 1);
    for (size_t i = 0; i < n; ++i) s.push_back(alphabet[d(rng_)]);
    return s;
  }

 private:
  std::mt19937 rng_;
};

const Scanner& S() {
  static Scanner s;
  return s;
}

std::vector<std::string> RulesFound(const std::string& text, const std::string& path = "f.txt") {
  std::vector<std::string> out;
  for (const auto& f : S().Scan(path, text)) out.push_back(f.rule);
  return out;
}

bool Has(const std::vector<std::string>& v, const std::string& r) {
  return std::find(v.begin(), v.end(), r) != v.end();
}

std::string PemBlock(Gen& g, const std::string& label) {
  std::string s = "-----BEGIN " + label + "-----\n";
  for (int i = 0; i < 5; ++i) s += g.Of(kB64, 64) + "\n";
  s += "-----END " + label + "-----\n";
  return s;
}

std::string B64Url(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int k = 3; k >= 0; --k) out.push_back(t[(v >> (6 * k)) & 63]);
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out.push_back(t[(v >> 18) & 63]), out.push_back(t[(v >> 12) & 63]);
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out.push_back(t[(v >> 18) & 63]), out.push_back(t[(v >> 12) & 63]),
        out.push_back(t[(v >> 6) & 63]);
  }
  return out;
}

struct Case {
  const char* rule;
  std::string positive, near_miss;
};

std::vector<Case> Cases(Gen& g) {
  std::vector<Case> c;
  const std::string b32 = kUpper + "234567";
  c.push_back({"aws-access-key-id", "key_id: AKIA" + g.Of(b32, 16) + "\n",
               "key_id: AKIA" + g.Of(b32, 12) + "\n"});
  c.push_back({"aws-secret-access-key", "aws_secret_access_key = " + g.Of(kB64, 40) + "\n",
               "aws_secret_access_key = " + g.Of(kB64, 20) + "\n"});
  c.push_back({"github-token", "t=ghp_" + g.Of(kAlnum, 36) + "\n", "t=ghp_" + g.Of(kAlnum, 20) + "\n"});
  c.push_back({"github-token", "t=gho_" + g.Of(kAlnum, 36) + "\n", "t=ghx_" + g.Of(kAlnum, 36) + "\n"});
  c.push_back({"github-fine-grained-token",
               "github_pat_" + g.Of(kAlnum, 22) + "_" + g.Of(kAlnum, 59) + "\n",
               "github_pat_" + g.Of(kAlnum, 10) + "\n"});
  c.push_back({"gitlab-token", "glpat-" + g.Of(kUrlSafe, 20) + "\n", "glpat-" + g.Of(kAlnum, 8) + "\n"});
  c.push_back({"slack-token",
               "xoxb-" + g.Of(kDigits, 11) + "-" + g.Of(kDigits, 13) + "-" + g.Of(kAlnum, 24) + "\n",
               "xoxb-" + g.Of(kLower, 6) + "\n"});
  c.push_back({"slack-webhook",
               "https://hooks.slack.com/services/T" + g.Of(kUpper + kDigits, 9) + "/B" +
                   g.Of(kUpper + kDigits, 9) + "/" + g.Of(kAlnum, 24) + "\n",
               "https://hooks.slack.com/services/\n"});
  c.push_back({"stripe-live-key", "sk_live_" + g.Of(kAlnum, 24) + "\n", "sk_test_" + g.Of(kAlnum, 24) + "\n"});
  c.push_back({"google-api-key", "AIza" + g.Of(kUrlSafe, 35) + "\n", "AIza" + g.Of(kAlnum, 20) + "\n"});
  c.push_back({"openai-key", "sk-proj-" + g.Of(kUrlSafe, 20) + "T3BlbkFJ" + g.Of(kUrlSafe, 20) + "\n",
               "sk-" + g.Of(kAlnum, 10) + "\n"});
  c.push_back({"openai-legacy-key", "OPENAI=sk-" + g.Of(kAlnum, 48) + "\n",
               "OPENAI=sk-" + g.Of(kAlnum, 30) + "\n"});
  c.push_back({"anthropic-key", "sk-ant-api03-" + g.Of(kUrlSafe, 93) + "AA\n",
               "sk-ant-" + g.Of(kLower, 8) + "\n"});
  c.push_back({"npm-token", "npm_" + g.Of(kAlnum, 36) + "\n", "npm_" + g.Of(kAlnum, 12) + "\n"});
  c.push_back({"npm-auth-token", "//registry.npmjs.org/:_authToken=" + g.Of(kAlnum, 8) + "-" + g.Of(kHexLower, 28) + "\n",
               "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n"});
  c.push_back({"pypi-token", "password = pypi-AgEIcHlwaS5vcmc" + g.Of(kUrlSafe, 70) + "\n",
               "pypi-" + g.Of(kAlnum, 10) + "\n"});
  c.push_back({"azure-storage-key",
               "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + g.Of(kB64, 86) + "==;\n",
               "AccountKey=" + g.Of(kB64, 20) + "==;\n"});
  for (const char* k : {"RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY",
                        "OPENSSH PRIVATE KEY", "PRIVATE KEY"})
    c.push_back({"private-key", PemBlock(g, k),
                 std::string("const char* kHeader = \"-----BEGIN ") + k + "-----\";\n"});
  c.push_back({"private-key", PemBlock(g, "RSA PRIVATE KEY"), PemBlock(g, "PUBLIC KEY")});
  c.push_back({"pgp-private-key",
               "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: x\n\n" + g.Of(kB64, 64) + "\n" +
                   g.Of(kB64, 64) + "\n-----END PGP PRIVATE KEY BLOCK-----\n",
               "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n" + g.Of(kB64, 64) + "\n"});
  c.push_back({"age-secret-key", "AGE-SECRET-KEY-1" + g.Of("023456789ACDEFGHJKLMNPQRSTUVWXYZ", 58) + "\n",
               "AGE-SECRET-KEY-1" + g.Of("023456789ACDEFGHJKLMNPQRSTUVWXYZ", 20) + "\n"});
  {
    std::string head = B64Url("{\"alg\":\"HS256\",\"typ\":\"JWT\"}");
    std::string body = B64Url("{\"sub\":\"" + g.Of(kAlnum, 12) + "\",\"iat\":" + g.Of(kDigits, 10) + "}");
    c.push_back({"jwt", "Authorization: Bearer " + head + "." + body + "." + g.Of(kUrlSafe, 43) + "\n",
                 "v=" + head + "." + body + "\n"});
  }
  c.push_back({"sendgrid-key", "SG." + g.Of(kUrlSafe, 22) + "." + g.Of(kUrlSafe, 43) + "\n",
               "SG." + g.Of(kUrlSafe, 10) + "\n"});
  c.push_back({"huggingface-token", "hf_" + g.Of(kUpper + kLower, 34) + "\n", "hf_" + g.Of(kLower, 8) + "\n"});
  c.push_back({"digitalocean-token", "dop_v1_" + g.Of(kHexLower, 64) + "\n", "dop_v1_" + g.Of(kHexLower, 10) + "\n"});
  c.push_back({"azure-ad-client-secret", "AZURE_CLIENT_SECRET_VALUE " + g.Of(kAlnum, 3) + "8Q~" + g.Of(kAlnum + "_~.-", 34) + "\n",
               "AZURE " + g.Of(kAlnum, 3) + "8Q~" + g.Of(kAlnum, 10) + "\n"});
  c.push_back({"putty-private-key", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: x\n",
               "PuTTY-User-Key-File: docs mention only\n"});
  c.push_back({"netrc-credentials", "machine api.host.test login me password " + g.Of(kAlnum, 16) + "\n",
               "machine api.host.test login me password changeme\n"});
  c.push_back({"secret-xml-element", "<settings><password>" + g.Of(kAlnum, 18) + "</password></settings>\n",
               "<password>${env.PASS}</password>\n"});
  c.push_back({"secret-assignment", "DB_PASSWORD=\"" + g.Of(kAlnum, 20) + "\"\n",
               "DB_PASSWORD=\"changeme\"\n"});
  c.push_back({"secret-assignment", "client_secret: " + g.Of(kAlnum + "!@#%^", 24) + "\n",
               "client_secret: ${CLIENT_SECRET}\n"});
  c.push_back({"secret-assignment", "api_key = '" + g.Of(kHexLower, 32) + "'\n",
               "api_key = os.environ.get_key\n"});
  c.push_back({"url-credentials", "remote = https://deploy:" + g.Of(kAlnum, 14) + "@git.internal.test/r.git\n",
               "remote = https://user:password@host.test/\n"});
  return c;
}

TEST(ScanRules, EveryFamilyHasAPositiveAndANearMiss) {
  Gen g(20261130);
  for (const Case& c : Cases(g)) {
    auto pos = RulesFound(c.positive);
    EXPECT_TRUE(Has(pos, c.rule)) << c.rule << " missed: " << c.positive;
    auto neg = RulesFound(c.near_miss);
    EXPECT_FALSE(Has(neg, c.rule)) << c.rule << " fired on near miss: " << c.near_miss;
  }
}

TEST(ScanRules, EveryContentRuleIsExercised) {
  Gen g(7);
  std::set<std::string> seen;
  for (const Case& c : Cases(g)) seen.insert(c.rule);
  for (const ContentRule& r : ContentRules()) {
    // Rules of the same family share a case above; these few are covered below.
    static const std::set<std::string> kElsewhere = {
        "slack-app-token",  "openai-project-key", "azure-storage-key-assignment",
        "vault-token",      "shopify-token",      "dockerhub-token",
        "telegram-bot-token"};
    if (kElsewhere.count(r.id)) continue;
    EXPECT_TRUE(seen.count(r.id)) << "no test case for rule " << r.id;
  }
}

TEST(ScanRules, FamilyVariants) {
  Gen g(11);
  EXPECT_TRUE(Has(RulesFound("xapp-1-A" + g.Of(kUpper + kDigits, 10) + "-" + g.Of(kDigits, 13) +
                             "-" + g.Of(kHexLower, 64) + "\n"),
                  "slack-app-token"));
  EXPECT_TRUE(Has(RulesFound("k=sk-proj-" + g.Of(kUrlSafe, 60) + "\n"), "openai-project-key"));
  EXPECT_TRUE(Has(RulesFound("azure_storage_key: " + g.Of(kB64, 86) + "==\n"),
                  "azure-storage-key-assignment"));
  EXPECT_TRUE(Has(RulesFound("VAULT_TOKEN=hvs." + g.Of(kUrlSafe, 95) + "\n"), "vault-token"));
  EXPECT_TRUE(Has(RulesFound("shpat_" + g.Of(kHexLower, 32) + "\n"), "shopify-token"));
  EXPECT_TRUE(Has(RulesFound("dckr_pat_" + g.Of(kUrlSafe, 27) + "\n"), "dockerhub-token"));
  EXPECT_TRUE(Has(RulesFound("xoxe.xoxp-1-" + g.Of(kAlnum, 40) + "\n"), "slack-token"));
  EXPECT_TRUE(Has(RulesFound("bot" + g.Of(kDigits, 10) + ":AA" + g.Of(kUrlSafe, 33) + "\n"),
                  "telegram-bot-token"));
}

TEST(ScanRules, PublishedExamplesDoNotCount) {
  // AWS's documentation key pair, assembled from parts.
  std::string id = std::string("AKIAIOSFODNN7") + "EXAMPLE";
  std::string key = std::string("wJalrXUtnFEMI/K7MDENG/bPxRfiCY") + "EXAMPLEKEY";
  EXPECT_TRUE(S().Scan("c", "aws_access_key_id = " + id + "\naws_secret_access_key = " + key + "\n")
                  .empty());
}

TEST(ScanRules, EncryptedFilesDoNotCount) {
  Gen g(3);
  std::string secret = "ghp_" + g.Of(kAlnum, 36);
  EXPECT_TRUE(S().Scan("a.age", "age-encryption.org/v1\n-> X25519 " + secret + "\n").empty());
  EXPECT_TRUE(S().Scan("v.yml", "$ANSIBLE_VAULT;1.1;AES256\n" + secret + "\n").empty());
  EXPECT_TRUE(S().Scan("m.asc", "\n-----BEGIN PGP MESSAGE-----\n\n" + secret + "\n").empty());
  EXPECT_FALSE(S().Scan("plain", "x\n" + secret + "\n").empty());
}

TEST(ScanRules, InlineAllowAllowsOnlyItsLine) {
  Gen g(5);
  std::string a = "ghp_" + g.Of(kAlnum, 36), b = "ghp_" + g.Of(kAlnum, 36);
  auto f = S().Scan("x", "t1 = " + a + "  # haven:allow\nt2 = " + b + "\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].line, 2u);
}

TEST(ScanRules, BinaryFilesOnlyForKeyBlocks) {
  Gen g(9);
  std::string bin("\x7f" "ELF\0\0\0", 7);
  std::string token = "ghp_" + g.Of(kAlnum, 36);
  EXPECT_TRUE(S().Scan("b", bin + token + bin).empty());
  auto f = S().Scan("b", bin + "\n" + PemBlock(g, "OPENSSH PRIVATE KEY") + bin);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "private-key");
}

TEST(ScanRules, PathRules) {
  EXPECT_TRUE(Has(RulesFound("", "/home/u/.ssh/id_ed25519"), "ssh-private-key-file"));
  EXPECT_FALSE(Has(RulesFound("", "/home/u/.ssh/id_ed25519.pub"), "ssh-private-key-file"));
  EXPECT_TRUE(Has(RulesFound("", "/home/u/.aws/credentials"), "aws-credentials-file"));
  EXPECT_TRUE(Has(RulesFound("machine x login y", "/home/u/.netrc"), "netrc-file"));
  EXPECT_TRUE(Has(RulesFound("", "/root/.pgpass"), "pgpass-file"));
  EXPECT_TRUE(Has(RulesFound("", "/home/u/.gnupg/private-keys-v1.d/AB.key"), "gnupg-private-keys"));
  EXPECT_TRUE(Has(RulesFound("{\"auths\":{\"r\":{\"auth\":\"eHl6\"}}}", "/h/.docker/config.json"),
                  "docker-config-auths"));
  EXPECT_FALSE(Has(RulesFound("{\"auths\":{}}", "/h/.docker/config.json"), "docker-config-auths"));
}

TEST(ScanRules, PositionsRedactionAndOrder) {
  Gen g(13);
  std::string tok = "ghp_" + g.Of(kAlnum, 36);
  std::string pw = g.Of(kAlnum, 22);
  auto f = S().Scan("p", "first line\n  x = " + tok + "\npassword: " + pw + "\n");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].line, 2u);
  EXPECT_EQ(f[0].column, 7u);
  EXPECT_EQ(f[0].rule, "github-token");
  EXPECT_EQ(f[1].line, 3u);
  EXPECT_EQ(f[1].column, 1u);
  for (const auto& x : f) {
    EXPECT_EQ(x.Text().find(tok), std::string::npos);
    EXPECT_EQ(x.Json().find(tok), std::string::npos);
    EXPECT_EQ(x.Text().find(pw), std::string::npos);
    EXPECT_EQ(x.fingerprint.size(), 16u);
  }
  EXPECT_EQ(f[0].Text(), "p:2:7: github-token: ghp_****");
  // The fingerprint depends on rule and secret only.
  auto again = S().Scan("other", tok);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].fingerprint, f[0].fingerprint);
}

TEST(ScanRules, AllowLists) {
  Finding f;
  f.path = "/home/u/.config/app/settings.ini";
  f.rule = "secret-assignment";
  f.fingerprint = "0123456789abcdef";
  auto allow = [](std::vector<std::string> globs, std::vector<std::string> rules,
                  std::vector<std::string> fps) {
    ScanAllow a;
    a.path_globs = std::move(globs), a.rules = std::move(rules), a.fingerprints = std::move(fps);
    return a;
  };
  EXPECT_TRUE(allow({".config/app/*"}, {}, {}).Allows(f));
  EXPECT_TRUE(allow({"/home/u/.config/*"}, {}, {}).Allows(f));
  EXPECT_TRUE(allow({}, {"secret-assignment"}, {}).Allows(f));
  EXPECT_TRUE(allow({}, {}, {"0123456789abcdef"}).Allows(f));
  EXPECT_FALSE(allow({"*.txt"}, {"jwt"}, {"ffff"}).Allows(f));
}

TEST(ScanRules, HugeLinesAndManyMatchesStayBounded) {
  Gen g(17);
  std::string big;
  for (int i = 0; i < 2000; ++i) big += "token=" + g.Of(kAlnum, 30) + ";";
  auto f = S().Scan("big", big);
  EXPECT_GE(f.size(), 1990u);  // a few random values look like words
}

// The rule table is pinned to kScanVersion: change a rule, then bump kScanVersion and
// record the new digest here (a capture trusts a parent only at the same version).
TEST(ScanVersion, RuleTableDigestIsPinnedToTheVersion) {
  struct Pin {
    int version;
    const char* digest;
  };
  static const Pin kPins[] = {
      {1, "ba104213efe1d0f2ba9c19d2c71ae38c6a8fcffb0617732c5a614ec7d6897f69"},
      {2, "980d65e1622d092157d4040952267a1c69c1f8b531f11e151786f158d1f1ec0c"},  // + azure-ad-client-secret, putty, netrc lines, XML elements, xoxe
  };
  const Pin* pin = nullptr;
  for (const Pin& p : kPins)
    if (p.version == kScanVersion) pin = &p;
  ASSERT_NE(pin, nullptr) << "no digest recorded for kScanVersion " << kScanVersion;
  EXPECT_EQ(RuleTableDigest(), pin->digest)
      << "the rule table changed: bump kScanVersion and pin the new digest";
}

}  // namespace
}  // namespace haven::capture
