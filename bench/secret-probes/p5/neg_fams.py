"""Negative families: each returns (relpath, content, note). No credential in the file.
Policy: passphrase-encrypted private keys (OpenSSH with bcrypt KDF, ENCRYPTED PRIVATE KEY, Ethereum keystores,
encrypted PPK) are deliberately NOT used as negatives -- a careful reviewer may still call them sensitive.
Encrypted *data* blobs (PGP MESSAGE, ansible-vault) and password *hashes* (sha512crypt, yescrypt, bcrypt, argon2id,
PBKDF2) are used as negatives."""
import json, hashlib, struct
from urllib.parse import quote
from lib import *

NEG = []


def fam(name):
    def d(f):
        NEG.append((name, f))
        return f
    return d


# ============================================================ public key material
@fam("ssh-pub")
def _(c):
    r = c.r
    k = r.choice([lambda: ed_key(r), lambda: ec_key(r), lambda: c.rsa()])()
    return ".ssh/%s.pub" % r.choice(["id_ed25519", "id_ecdsa", "id_rsa", "github"]), ssh_pub_line(k, "%s@%s" % (first(r), r.choice(WORDS))) + "\n", \
        "public key"


@fam("authorized-keys")
def _(c):
    r = c.r
    lines = ["# managed by hand", ssh_pub_line(ed_key(r), first(r) + "@laptop"),
             'command="/usr/bin/rrsync -ro ~/backup",restrict ' + ssh_pub_line(ed_key(r), "backup@nas"),
             'from="10.0.0.0/8",no-agent-forwarding ' + ssh_pub_line(c.rsa(), first(r) + "@work"),
             "cert-authority,principals=\"%s\" %s" % (first(r), ssh_pub_line(ec_key(r), "ssh-ca"))]
    return ".ssh/authorized_keys", "\n".join(lines) + "\n", "public keys with options"


@fam("known-hosts")
def _(c):
    r = c.r
    lines = []
    for _ in range(r.randint(3, 6)):
        k = r.choice([lambda: ed_key(r), lambda: ec_key(r)])()
        t, blob = ssh_pub_line(k, "").split()[:2]
        if r.random() < .5:
            salt = r.randbytes(20)
            hn = "%s" % host(r)
            lines.append("|1|%s|%s %s %s" % (b64(salt), b64(hmac.new(salt, hn.encode(), hashlib.sha1).digest()), t, blob))
        else:
            lines.append("%s,%s %s %s" % (host(r), ip(r, False), t, blob))
    lines.append("github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl")
    return ".ssh/known_hosts", "\n".join(lines) + "\n", "known_hosts plain+hashed"


@fam("ssh-config")
def _(c):
    r = c.r
    body = f"""Host *
    AddKeysToAgent yes
    IdentitiesOnly yes
    ServerAliveInterval 60

Host github.com
    User git
    IdentityFile ~/.ssh/id_ed25519_github

Host nas
    HostName {ip(r)}
    User {first(r)}
    Port {r.choice([22, 2222, 22022])}
    IdentityFile ~/.ssh/homelab
    LocalForward 5000 localhost:5000

Host bastion-{r.choice(WORDS)}
    HostName {host(r)}
    ProxyJump jump@{host(r)}
    CertificateFile ~/.ssh/id_ed25519-cert.pub
"""
    return ".ssh/config", body, "ssh client config"


@fam("ssh-cert-pub")
def _(c):
    r = c.r
    k = ed_key(r)
    ca = ed_key(r)
    # OpenSSH user certificate (signed by ca)
    blob_wo_sig = (sstr("ssh-ed25519-cert-v01@openssh.com") + sstr(r.randbytes(32)) + sstr(ed_raw(k)[1]) +
                   struct.pack(">Q", r.getrandbits(32)) + struct.pack(">I", 1) + sstr(first(r)) +
                   sstr(sstr(first(r))) + struct.pack(">Q", int(ts(r).timestamp())) + struct.pack(">Q", int(ts(r, 2026, 2027).timestamp())) +
                   sstr(b"") + sstr(sstr("permit-pty") + sstr(b"")) + sstr(b"") + sstr(ssh_pub_blob(ca)))
    sig = ca.sign(blob_wo_sig)
    blob = blob_wo_sig + sstr(sstr("ssh-ed25519") + sstr(sig))
    return ".ssh/id_ed25519-cert.pub", "ssh-ed25519-cert-v01@openssh.com %s %s@laptop\n" % (b64(blob), first(r)), "ssh certificate"


@fam("allowed-signers")
def _(c):
    r = c.r
    lines = ["%s namespaces=\"git\" %s" % (email(r), " ".join(ssh_pub_line(ed_key(r), "").split()[:2])) for _ in range(r.randint(1, 4))]
    return ".config/git/allowed_signers", "\n".join(lines) + "\n", "allowed signers"


@fam("pgp-public-key")
def _(c):
    r = c.r
    arm, fpr = pgp_key(r, "%s %s <%s>" % (first(r).capitalize(), r.choice(LAST).capitalize(), email(r)), secret=False)
    return r.choice(["%s.asc" % fpr[-16:], "keys/pubkey.asc", ".gnupg/exported-pub.asc"]), arm, "public key block"


@fam("x509-cert")
def _(c):
    r = c.r
    cert, _ = c.ca().leaf("%s.%s" % (r.choice(WORDS), domain(r)))
    return r.choice(["certs/%s.crt" % r.choice(WORDS), ".local/share/ca-certificates/homelab.crt"]), \
        r.choice([cert, c.ca().pem()]), "certificate"


@fam("x509-chain")
def _(c):
    r = c.r
    cert, _ = c.ca().leaf("mail." + domain(r))
    return "certs/fullchain.pem", cert + c.ca().pem(), "cert chain without key"


@fam("csr")
def _(c):
    r = c.r
    k = ed_key(r)
    return "certs/%s.csr" % r.choice(WORDS), c.ca().csr("%s.%s" % (r.choice(WORDS), domain(r)), k), "CSR"


@fam("public-key-pem")
def _(c):
    r = c.r
    k = r.choice([lambda: ed_key(r), lambda: ec_key(r), lambda: c.rsa()])()
    return r.choice(["keys/public.pem", "keys/jwt-verify.pub.pem"]), pem_pub(k), "SubjectPublicKeyInfo"


@fam("jwks-public")
def _(c):
    r = c.r
    k = c.rsa()
    n = k.public_key().public_numbers().n
    body = json.dumps({"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": pick(r, ALNUM, 16),
                                 "n": b64url(n.to_bytes((n.bit_length() + 7) // 8, "big")), "e": "AQAB"}]}, indent=2)
    return "code/%s/jwks.json" % r.choice(WORDS), body, "public JWKS"


@fam("age-recipients")
def _(c):
    r = c.r
    pubs = [age_identity(r)[1] for _ in range(r.randint(1, 3))]
    if r.random() < .5:
        body = "creation_rules:\n  - path_regex: secrets/.*\\.yaml$\n    age: >-\n      " + ",\n      ".join(pubs) + "\n"
        return "dotfiles/.sops.yaml", body, "sops age recipients"
    return ".config/age/recipients.txt", "\n".join("# %s\n%s" % (first(r), p) for p in pubs) + "\n", "age recipients"


@fam("minisign-pub")
def _(c):
    r = c.r
    k = ed_key(r)
    keynum = r.randbytes(8)
    body = "untrusted comment: minisign public key %s\n%s\n" % (keynum[::-1].hex().upper(), b64(b"Ed" + keynum + ed_raw(k)[1]))
    return "minisign.pub", body, "minisign public key"


@fam("signify-pub")
def _(c):
    r = c.r
    k = ed_key(r)
    body = "untrusted comment: signify public key\n%s\n" % b64(b"Ed" + r.randbytes(8) + ed_raw(k)[1])
    return "keys/%s.pub" % r.choice(WORDS), body, "signify public key"


@fam("wireguard-peers-only")
def _(c):
    r = c.r
    peers = "\n".join("[Peer]\n# %s\nPublicKey = %s\nAllowedIPs = 10.7.0.%d/32\n" % (first(r), b64(r.randbytes(32)), i + 2)
                      for i in range(r.randint(2, 4)))
    body = f"""[Interface]
Address = 10.7.0.1/24
ListenPort = 51820
PostUp = wg set %i private-key /etc/wireguard/private.key

{peers}"""
    return "vpn/wg-server.conf", body, "wg config whose private key lives in another file"


@fam("gpg-conf-and-sshcontrol")
def _(c):
    r = c.r
    if r.random() < .5:
        body = "# List of allowed ssh keys.\n" + "".join("%s 0\n" % pick(r, HEX.upper(), 40) for _ in range(r.randint(1, 3)))
        return ".gnupg/sshcontrol", body, "keygrips"
    fpr = pick(r, HEX.upper(), 40)
    body = f"""default-key {fpr}
keyid-format 0xlong
with-fingerprint
use-agent
personal-cipher-preferences AES256 AES192 AES
keyserver hkps://keys.openpgp.org
"""
    return ".gnupg/gpg.conf", body, "fingerprint"


@fam("gpg-list-secret-keys-output")
def _(c):
    r = c.r
    fpr = pick(r, HEX.upper(), 40)
    body = f"""$ gpg --list-secret-keys --keyid-format long
/home/{first(r)}/.gnupg/pubring.kbx
------------------------------
sec   ed25519/{fpr[-16:]} {ts(r).date()} [SC] [expires: {ts(r, 2026, 2028).date()}]
      {fpr}
uid                 [ultimate] {first(r).capitalize()} <{email(r)}>
ssb   cv25519/{pick(r, HEX.upper(), 16)} {ts(r).date()} [E]

Keygrip = {pick(r, HEX.upper(), 40)}
"""
    return "notes/gpg.txt", body, "listing of keys (no key material)"


@fam("gpg-id")
def _(c):
    r = c.r
    return ".password-store/.gpg-id", r.choice([email(r), pick(r, HEX.upper(), 40)]) + "\n", "pass .gpg-id"


@fam("pgp-message")
def _(c):
    r = c.r
    return r.choice([".password-store/email/%s.asc" % domain(r), "Documents/taxes.txt.asc", ".authinfo.asc"]), pgp_message(r), \
        "encrypted blob"


@fam("ansible-vault-encrypted")
def _(c):
    r = c.r
    h = r.randbytes(32).hex() + "\n" + r.randbytes(32).hex() + "\n" + r.randbytes(r.choice([64, 96, 128])).hex()
    h = h.encode().hex()
    body = "$ANSIBLE_VAULT;1.1;AES256\n" + "\n".join(h[i:i + 80] for i in range(0, len(h), 80)) + "\n"
    return "ansible/group_vars/all/vault.yml", body, "ansible-vault encrypted"


@fam("ssh-keygen-fingerprints")
def _(c):
    r = c.r
    ks = [ed_key(r), ec_key(r)]
    body = "\n".join("256 %s %s@%s (%s)" % (ssh_fingerprint(k), first(r), r.choice(WORDS), "ED25519" if i == 0 else "ECDSA")
                     for i, k in enumerate(ks)) + "\n"
    return "notes/fingerprints.txt", body, "fingerprints"


@fam("dh-params")
def _(c):
    r = c.r
    # RFC 7919 ffdhe2048 computed from its definition
    e_fixed = _e_times_2pow(1918)
    p = 2 ** 2048 - 2 ** 1984 + (e_fixed + 560316) * 2 ** 64 - 1
    from cryptography.hazmat.primitives.asymmetric import dh
    params = dh.DHParameterNumbers(p, 2).parameters()
    return "certs/dhparam.pem", params.parameter_bytes(serialization.Encoding.PEM, serialization.ParameterFormat.PKCS3).decode(), \
        "DH parameters"


def _e_times_2pow(bits):
    # floor(e * 2^bits) with integer arithmetic
    scale = 1 << (bits + 64)
    s, term, k = 0, scale, 0
    while term:
        s += term
        k += 1
        term //= k
    return s >> 64


# ============================================================ hashes
@fam("shadow-snippet")
def _(c):
    r = c.r
    u = first(r)
    h = r.choice([sha512crypt, yescrypt])(r, pw(r))
    body = f"""root:!:{r.randint(19000, 20000)}:0:99999:7:::
daemon:*:19000:0:99999:7:::
{u}:{h}:{r.randint(19000, 20000)}:0:99999:7:::
"""
    return "backup/etc/shadow.copy", body, "crypt hashes"


@fam("htpasswd-bcrypt")
def _(c):
    r = c.r
    body = "".join("%s:%s\n" % (username(r), bcrypt_hash(r, pw(r), 5 if r.random() < .3 else None).replace("$2b$", "$2y$"))
                   for _ in range(r.randint(1, 3)))
    return "srv/.htpasswd", body, "bcrypt htpasswd"


@fam("argon2-admin-token-hash")
def _(c):
    r = c.r
    body = f"""DOMAIN=https://vault.{domain(r)}
SIGNUPS_ALLOWED=false
ADMIN_TOKEN='{argon2_shaped(r)}'
WEBSOCKET_ENABLED=true
"""
    return "srv/vaultwarden/.env", body, "argon2id PHC hash (vaultwarden hashes ADMIN_TOKEN)"


@fam("qbittorrent-pbkdf2")
def _(c):
    r = c.r
    body = f"""[Preferences]
WebUI\\Address=*
WebUI\\Port=8080
WebUI\\Username={first(r)}
WebUI\\Password_PBKDF2="@ByteArray({b64(r.randbytes(16))}:{b64(r.randbytes(64))})"
WebUI\\LocalHostAuth=false
"""
    return ".config/qBittorrent/qBittorrent.conf", body, "PBKDF2 hash"


@fam("znc-hash-only")
def _(c):
    r = c.r
    u = first(r)
    body = f"""Version = 1.9.0
<Listener listener0>
        AllowIRC = true
        AllowWeb = true
        Port = 6697
        SSL = true
</Listener>
<User {u}>
        Admin = true
        Nick = {u}
        <Pass password>
                Method = sha256
                Hash = {hashlib.sha256(r.randbytes(16)).hexdigest()}
                Salt = {pick(r, ALNUM + "!?.,-_", 20)}
        </Pass>
        <Network libera>
                Server = irc.libera.chat +6697
                LoadModule = sasl
        </Network>
</User>
"""
    return ".znc/configs/znc.conf", body, "ZNC salted sha256 only"


@fam("transmission-rpc-hash")
def _(c):
    r = c.r
    body = json.dumps({"download-dir": "/home/%s/Downloads" % first(r), "rpc-authentication-required": True,
                       "rpc-enabled": True, "rpc-password": "{" + pick(r, HEX, 40) + pick(r, ALNUM, 8),
                       "rpc-port": 9091, "rpc-username": first(r), "rpc-whitelist": "127.0.0.1"}, indent=4)
    return ".config/transmission-daemon/settings.json", body, "salted sha1 rpc-password"


# ============================================================ mail/chat configs without secrets
@fam("muttrc-passcmd")
def _(c):
    r = c.r
    u = email(r)
    dom = u.split("@")[1]
    body = r.choice([
        f'set imap_user = "{u}"\nset imap_pass = "`pass show mail/{dom}`"\nset folder = "imaps://imap.{dom}/"\n',
        f'source "gpg -dq ~/.mutt/passwords.gpg |"\nset imap_user = "{u}"\nset folder = "imaps://imap.{dom}/"\n',
        f'set imap_user = "{u}"\nset imap_pass = `secret-tool lookup mail {dom}`\nset smtp_url = "smtps://{quote(u, safe="")}@smtp.{dom}"\n'])
    return ".config/neomutt/neomuttrc", body, "password fetched by command"


@fam("msmtprc-passwordeval")
def _(c):
    r = c.r
    u = email(r)
    dom = u.split("@")[1]
    body = f"""defaults
auth on
tls on
tls_trust_file /etc/ssl/certs/ca-certificates.crt

account {dom.split('.')[0]}
host smtp.{dom}
port 587
from {u}
user {u}
passwordeval "{r.choice(['pass show mail/' + dom, 'gpg -q --for-your-eyes-only --no-tty -d ~/.mail-pass.gpg', 'secret-tool lookup host smtp.' + dom])}"

account default : {dom.split('.')[0]}
"""
    return ".msmtprc", body, "passwordeval"


@fam("mbsyncrc-passcmd")
def _(c):
    r = c.r
    u = email(r)
    dom = u.split("@")[1]
    body = f"""IMAPAccount main
Host imap.{dom}
User {u}
PassCmd "{r.choice(['pass show mail/' + dom, 'gpg2 -q -d ~/.authinfo.gpg | awk ' + chr(39) + '/imap/ {print $NF}' + chr(39)])}"
TLSType IMAPS
AuthMechs LOGIN

IMAPStore main-remote
Account main
"""
    return ".mbsyncrc", body, "PassCmd"


@fam("offlineimap-passeval")
def _(c):
    r = c.r
    u = email(r)
    body = f"""[general]
accounts = Main
pythonfile = ~/.offlineimap.py

[Repository Remote]
type = IMAP
remotehost = imap.{u.split('@')[1]}
remoteuser = {u}
remotepasseval = get_pass("{u}")
sslcacertfile = OS-DEFAULT
"""
    return ".offlineimaprc", body, "remotepasseval"


@fam("aerc-cred-cmd")
def _(c):
    r = c.r
    u = email(r)
    dom = u.split("@")[1]
    body = f"""[{dom.split('.')[0]}]
source            = imaps://{quote(u, safe='')}@imap.{dom}:993
source-cred-cmd   = pass show mail/{dom}
outgoing          = smtps+plain://{quote(u, safe='')}@smtp.{dom}:465
outgoing-cred-cmd = pass show mail/{dom}
default           = INBOX
from              = {first(r).capitalize()} <{u}>
"""
    return ".config/aerc/accounts.conf", body, "cred-cmd"


@fam("fetchmailrc-nopass")
def _(c):
    r = c.r
    body = f'poll imap.{domain(r)} protocol IMAP\n    user "{username(r)}" is {first(r)} here\n    options ssl keep\n'
    return ".fetchmailrc", body, "fetchmail prompts for password"


@fam("himalaya-cmd")
def _(c):
    r = c.r
    u = email(r)
    body = f"""[accounts.main]
default = true
email = "{u}"
backend.type = "imap"
backend.host = "imap.{u.split('@')[1]}"
backend.port = 993
backend.login = "{u}"
backend.auth.type = "password"
backend.auth.cmd = "pass show mail"
"""
    return ".config/himalaya/config.toml", body, "auth.cmd"


@fam("vdirsyncer-fetch")
def _(c):
    r = c.r
    body = f"""[storage cal_remote]
type = "caldav"
url = "https://dav.{domain(r)}/"
username = "{email(r)}"
password.fetch = ["command", "pass", "show", "dav/{r.choice(WORDS)}"]
"""
    return ".config/vdirsyncer/config", body, "password.fetch"


@fam("newsboat-passwordeval")
def _(c):
    r = c.r
    body = f"""urls-source "miniflux"
miniflux-url "https://rss.{domain(r)}/"
miniflux-login "{first(r)}"
miniflux-passwordeval "pass show rss"
"""
    return ".config/newsboat/config", body, "passwordeval"


@fam("thunderbird-prefs")
def _(c):
    r = c.r
    u = email(r)
    dom = u.split("@")[1]
    body = f"""// Mozilla User Preferences

// DO NOT EDIT THIS FILE.
user_pref("mail.account.account1.identities", "id1");
user_pref("mail.account.account1.server", "server1");
user_pref("mail.identity.id1.fullName", "{first(r).capitalize()}");
user_pref("mail.identity.id1.useremail", "{u}");
user_pref("mail.identity.id1.smtpServer", "smtp1");
user_pref("mail.server.server1.hostname", "imap.{dom}");
user_pref("mail.server.server1.userName", "{u}");
user_pref("mail.server.server1.socketType", 3);
user_pref("mail.server.server1.authMethod", 3);
user_pref("mail.smtpserver.smtp1.hostname", "smtp.{dom}");
user_pref("mail.smtpserver.smtp1.username", "{u}");
user_pref("signon.rememberSignons", true);
user_pref("toolkit.telemetry.cachedClientID", "{rand_uuid(r)}");
"""
    return ".thunderbird/%s.default-release/prefs.js" % pick(r, LOW + DIG, 8), body, "prefs without passwords"


@fam("irssi-no-password")
def _(c):
    r = c.r
    nick = first(r)
    body = f"""servers = (
  {{
    address = "irc.libera.chat";
    chatnet = "liberachat";
    port = "6697";
    use_tls = "yes";
    tls_cert = "~/.irssi/certs/{nick}.pem";
    autoconnect = "yes";
  }}
);
chatnets = {{ liberachat = {{ type = "IRC"; sasl_mechanism = "EXTERNAL"; }}; }};
settings = {{ core = {{ nick = "{nick}"; real_name = "{nick}"; }}; }};
"""
    return ".irssi/config", body, "SASL EXTERNAL via cert path"


@fam("weechat-sec-ref")
def _(c):
    r = c.r
    nick = first(r)
    body = f"""[server]
libera.addresses = "irc.libera.chat/6697"
libera.tls = on
libera.sasl_mechanism = plain
libera.sasl_username = "{nick}"
libera.sasl_password = "${{sec.data.libera}}"
libera.autoconnect = on
"""
    return ".config/weechat/irc.conf", body, "secured data reference"


@fam("hexchat-servlist-nopass")
def _(c):
    r = c.r
    nick = first(r)
    body = f"""v=2.16.2

N=Libera.Chat
I={nick}
i={nick}_
U={nick}
L=0
E=UTF-8 (Unicode)
F=19
D=0
S=irc.libera.chat/+6697
J=#linux
"""
    return ".config/hexchat/servlist.conf", body, "no password lines"


@fam("matrix-config-no-token")
def _(c):
    r = c.r
    body = json.dumps({"homeserver": "https://matrix.%s" % domain(r), "user_id": "@%s:%s" % (first(r), domain(r)),
                       "device_name": "laptop", "store_path": "~/.local/share/iamb"}, indent=2)
    return ".config/matrix-commander/config.json", body, "no token"


# ============================================================ network configs without secrets
@fam("nm-agent-owned")
def _(c):
    r = c.r
    ssid = r.choice(WORDS).capitalize() + "Net"
    body = f"""[connection]
id={ssid}
uuid={rand_uuid(r)}
type=wifi

[wifi]
mode=infrastructure
ssid={ssid}

[wifi-security]
key-mgmt=wpa-psk
psk-flags=1

[ipv4]
method=auto
"""
    return "backup/etc/NetworkManager/system-connections/%s.nmconnection" % ssid, body, "psk-flags=1, secret in agent"


@fam("nm-open-network")
def _(c):
    r = c.r
    body = f"""[connection]
id=Cafe {r.choice(WORDS).capitalize()}
uuid={rand_uuid(r)}
type=wifi
permissions=

[wifi]
mac-address-blacklist=
mode=infrastructure
ssid=Cafe-Free-WiFi

[ipv4]
dns-search=
method=auto

[ipv6]
method=auto
"""
    return "backup/etc/NetworkManager/system-connections/cafe.nmconnection", body, "open wifi"


@fam("wpa-supplicant-open")
def _(c):
    r = c.r
    body = f"""ctrl_interface=/run/wpa_supplicant
update_config=1

network={{
	ssid="{r.choice(WORDS).capitalize()}-Guest"
	key_mgmt=NONE
}}
"""
    return "backup/etc/wpa_supplicant/wpa_supplicant.conf", body, "open network"


@fam("ovpn-no-inline-key")
def _(c):
    r = c.r
    body = f"""client
dev tun
proto udp
remote {host(r)} 1194
nobind
persist-key
persist-tun
auth-user-pass /home/{first(r)}/.config/openvpn/auth.txt
remote-cert-tls server
verb 3
<ca>
{c.ca().pem()}</ca>
"""
    return "vpn/%s.ovpn" % r.choice(WORDS), body, "ovpn with CA cert only; auth file is referenced by path"


@fam("ipsec-secrets-refs")
def _(c):
    r = c.r
    body = f"""# /etc/ipsec.secrets - strongSwan IPsec secrets file
# This file holds shared secrets or RSA private keys for authentication.
: RSA {first(r)}Key.pem
: ECDSA /etc/ipsec.d/private/client-ecdsa.pem
include /var/lib/strongswan/ipsec.secrets.inc
"""
    return "backup/etc/ipsec.secrets", body, "references to key files only"


@fam("chap-secrets-template")
def _(c):
    return "backup/etc/ppp/chap-secrets", "# Secrets for authentication using CHAP\n# client\tserver\tsecret\t\t\tIP addresses\n", "header only"


@fam("fstab-cifs-credfile")
def _(c):
    r = c.r
    body = f"""UUID={rand_uuid(r)} /     btrfs  subvol=@,compress=zstd 0 0
UUID={rand_uuid(r)} /home btrfs  subvol=@home,compress=zstd 0 0
//{ip(r)}/share /mnt/share cifs credentials=/home/{first(r)}/.smbcredentials,uid=1000,_netdev,x-systemd.automount 0 0
"""
    return "backup/etc/fstab", body, "credentials= points to a file"


@fam("rclone-no-secret")
def _(c):
    r = c.r
    body = f"""[local-backup]
type = local

[aws]
type = s3
provider = AWS
env_auth = true
region = eu-central-1

[crypt]
type = alias
remote = local-backup:/mnt/backup
"""
    return ".config/rclone/rclone.conf", body, "env_auth"


@fam("gitconfig-credential-helper")
def _(c):
    r = c.r
    body = f"""[user]
	name = {first(r).capitalize()} {r.choice(LAST).capitalize()}
	email = {email(r)}
	signingkey = {pick(r, HEX.upper(), 16)}
[commit]
	gpgsign = true
[credential]
	helper = {r.choice(['libsecret', 'store', 'cache --timeout=3600', '/usr/lib/git-core/git-credential-libsecret'])}
[credential "https://github.com"]
	helper = !/usr/bin/gh auth git-credential
[alias]
	lg = log --graph --oneline --decorate
"""
    return ".gitconfig", body, "credential helper, no secret"


@fam("docker-config-credsstore")
def _(c):
    r = c.r
    body = json.dumps({"auths": {"https://index.docker.io/v1/": {}, "ghcr.io": {}}, "credsStore": r.choice(["desktop", "pass", "secretservice"]),
                       "currentContext": "rootless"}, indent="\t")
    return ".docker/config.json", body, "credsStore"


@fam("pypirc-no-password")
def _(c):
    r = c.r
    body = """[distutils]
index-servers =
    pypi
    testpypi

[pypi]
username = __token__

[testpypi]
repository = https://test.pypi.org/legacy/
username = __token__
"""
    return ".pypirc", body, "keyring supplies password"


@fam("npmrc-env-token")
def _(c):
    r = c.r
    body = f"""//registry.npmjs.org/:_authToken=${{NPM_TOKEN}}
@{r.choice(WORDS)}:registry=https://npm.pkg.github.com
//npm.pkg.github.com/:_authToken=${{GITHUB_TOKEN}}
init-author-name={first(r).capitalize()}
"""
    return ".npmrc", body, "env var references"


@fam("maven-settings-env")
def _(c):
    r = c.r
    body = f"""<settings>
  <servers>
    <server>
      <id>ossrh</id>
      <username>${{env.OSSRH_USERNAME}}</username>
      <password>${{env.OSSRH_PASSWORD}}</password>
    </server>
  </servers>
  <localRepository>/home/{first(r)}/.m2/repository</localRepository>
</settings>
"""
    return ".m2/settings.xml", body, "env refs"


@fam("gradle-properties-plain")
def _(c):
    r = c.r
    body = f"""org.gradle.jvmargs=-Xmx{r.choice([2, 4, 6])}g -XX:+UseParallelGC
org.gradle.daemon=true
org.gradle.configuration-cache=true
android.useAndroidX=true
kotlin.code.style=official
"""
    return ".gradle/gradle.properties", body, "no secrets"


@fam("nuget-sources-only")
def _(c):
    body = """<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" protocolVersion="3" />
  </packageSources>
</configuration>
"""
    return ".nuget/NuGet/NuGet.Config", body, "sources only"


@fam("pg-service-conf")
def _(c):
    r = c.r
    body = f"""[prod]
host={host(r)}
port=5432
dbname={r.choice(WORDS)}
user={username(r)}
sslmode=verify-full

[local]
host=/var/run/postgresql
dbname=postgres
"""
    return ".pg_service.conf", body, "no password (pgpass supplies it)"


@fam("my-cnf-no-password")
def _(c):
    r = c.r
    body = f"""[client]
user={username(r)}
host=127.0.0.1
default-character-set=utf8mb4

[mysql]
auto-rehash
pager="less -SFX"
"""
    return ".my.cnf", body, "no password"


@fam("redis-conf-commented")
def _(c):
    body = """bind 127.0.0.1 -::1
protected-mode yes
port 6379
# Warning: since Redis is pretty fast, an outside user can try up to
# 1 million passwords per second against a modern box.
#
# requirepass foobared
appendonly no
"""
    return "dev/redis/redis.conf", body, "requirepass commented (doc default)"


@fam("s3cfg-empty")
def _(c):
    r = c.r
    body = f"""[default]
access_key =
secret_key =
access_token =
bucket_location = EU
host_base = s3.{r.choice(['eu-central-1.amazonaws.com', 'fr-par.scw.cloud'])}
use_https = True
"""
    return ".s3cfg", body, "empty keys"


@fam("aws-config-sso")
def _(c):
    r = c.r
    acct = r.randint(10**11, 10**12 - 1)
    body = f"""[default]
region = eu-central-1
output = json

[profile dev]
sso_session = corp
sso_account_id = {acct}
sso_role_name = AdministratorAccess
region = eu-west-1

[profile legacy]
credential_process = /usr/bin/aws-vault exec legacy --json

[sso-session corp]
sso_start_url = https://d-{pick(r, DIG + 'abcdef', 10)}.awsapps.com/start
sso_region = eu-central-1
sso_registration_scopes = sso:account:access
"""
    return ".aws/config", body, "SSO / credential_process"


@fam("gcloud-config-default")
def _(c):
    r = c.r
    body = f"""[core]
account = {email(r)}
project = {r.choice(WORDS)}-{r.randint(100000, 999999)}
disable_usage_reporting = True

[compute]
region = europe-west3
zone = europe-west3-b
"""
    return ".config/gcloud/configurations/config_default", body, "no secret"


@fam("azure-profile")
def _(c):
    r = c.r
    body = json.dumps({"installationId": rand_uuid(r), "subscriptions": [
        {"id": rand_uuid(r), "name": "Pay-As-You-Go", "state": "Enabled", "user": {"name": email(r), "type": "user"},
         "isDefault": True, "tenantId": rand_uuid(r), "environmentName": "AzureCloud", "homeTenantId": rand_uuid(r),
         "managedByTenants": []}]}, indent=2)
    return ".azure/azureProfile.json", body, "subscription metadata"


@fam("kubeconfig-exec")
def _(c):
    r = c.r
    body = f"""apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: {b64(c.ca().pem().encode())}
    server: https://{pick(r, HEX.upper(), 32)}.gr7.eu-central-1.eks.amazonaws.com
  name: prod
contexts:
- context: {{cluster: prod, user: prod}}
  name: prod
current-context: prod
users:
- name: prod
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: aws
      args: [eks, get-token, --cluster-name, prod, --region, eu-central-1]
"""
    return ".kube/config", body, "exec plugin + CA data"


@fam("gh-hosts-keyring")
def _(c):
    r = c.r
    u = first(r)
    body = f"""github.com:
    git_protocol: ssh
    users:
        {u}:
    user: {u}
"""
    return ".config/gh/hosts.yml", body, "token kept in keyring"


@fam("glab-empty-token")
def _(c):
    r = c.r
    body = """git_protocol: ssh
hosts:
    gitlab.com:
        api_protocol: https
        api_host: gitlab.com
        token:
"""
    return ".config/glab-cli/config.yml", body, "empty token"


@fam("restic-passcmd")
def _(c):
    r = c.r
    body = f"""export RESTIC_REPOSITORY="b2:{r.choice(WORDS)}-backup:/laptop"
export RESTIC_PASSWORD_COMMAND="pass show backup/restic"
export B2_ACCOUNT_ID="$(pass show backup/b2-id)"
export B2_ACCOUNT_KEY="$(pass show backup/b2-key)"
"""
    return ".config/restic/env", body, "password via command"


@fam("borg-passcommand")
def _(c):
    r = c.r
    body = f"""export BORG_REPO=ssh://borg@{host(r)}/./repo
export BORG_PASSCOMMAND="secret-tool lookup borg-repository repo-{pick(r, HEX, 8)}"
"""
    return ".config/borg/env", body, "BORG_PASSCOMMAND"


@fam("terraform-rc-no-creds")
def _(c):
    body = """plugin_cache_dir = "$HOME/.terraform.d/plugin-cache"
disable_checkpoint = true
"""
    return ".terraformrc", body, "no credentials"


@fam("terraform-lock-hcl")
def _(c):
    r = c.r
    hs = "\n".join('    "zh:%s",' % pick(r, HEX, 64) for _ in range(6))
    body = f"""# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "registry.terraform.io/hashicorp/aws" {{
  version     = "5.{r.randint(10, 80)}.0"
  constraints = "~> 5.0"
  hashes = [
    "h1:{b64(r.randbytes(32))}",
{hs}
  ]
}}
"""
    return "code/infra/.terraform.lock.hcl", body, "provider hashes"


# ============================================================ placeholders
@fam("placeholder-password")
def _(c):
    r = c.r
    ph = r.choice(["changeme", "CHANGEME", "xxxxxxxx", "<password>", "${PASS}", "YOUR_PASSWORD_HERE", "********", "<your-token-here>",
                   "${DB_PASSWORD}", "%(password)s", "{{ vault_db_password }}", "REPLACE_ME"])
    kind = r.randint(0, 4)
    if kind == 0:
        return ".msmtprc.example", f"account default\nhost smtp.{domain(r)}\nuser {email(r)}\npassword {ph}\n", "placeholder " + ph
    if kind == 1:
        return "code/%s/.env.example" % r.choice(WORDS), f"DB_HOST=localhost\nDB_USER=app\nDB_PASSWORD={ph}\nSECRET_KEY={ph}\n", \
            "placeholder " + ph
    if kind == 2:
        return "code/%s/config.sample.yaml" % r.choice(WORDS), f"database:\n  host: localhost\n  user: app\n  password: \"{ph}\"\n", \
            "placeholder " + ph
    if kind == 3:
        return ".my.cnf.template", f"[client]\nuser=root\npassword={ph}\n", "placeholder " + ph
    return "dotfiles/templates/cifs.cred", f"username=%s\npassword={ph}\ndomain=WORKGROUP\n" % first(r), "placeholder " + ph


@fam("empty-password-fields")
def _(c):
    r = c.r
    kind = r.randint(0, 2)
    if kind == 0:
        return ".local/share/remmina/group_ssh_%s.remmina" % r.choice(WORDS), \
            f"[remmina]\nname={r.choice(WORDS)}\nprotocol=SSH\nserver={host(r)}\nusername={first(r)}\npassword=\nssh_auth=3\nssh_privatekey=/home/{first(r)}/.ssh/id_ed25519\n", \
            "empty remmina password"
    if kind == 1:
        return ".config/spotifyd/spotifyd.conf", f'[global]\nusername = "{username(r)}"\npassword = ""\nuse_keyring = true\nbackend = "pulseaudio"\n', \
            "empty + keyring"
    return ".smbcredentials.example", "username=\npassword=\ndomain=\n", "empty"


@fam("dotenv-example-refs")
def _(c):
    r = c.r
    body = """# Copy to .env and fill in
DATABASE_URL=postgres://user:password@localhost:5432/app
REDIS_URL=redis://localhost:6379
STRIPE_SECRET_KEY=
GITHUB_TOKEN=
SENTRY_DSN=
"""
    return "code/%s/.env.example" % r.choice(WORDS), body, "example file; the DATABASE_URL is the literal user:password placeholder"


@fam("docker-compose-env-refs")
def _(c):
    r = c.r
    body = f"""services:
  db:
    image: postgres:16
    environment:
      POSTGRES_USER: {r.choice(WORDS)}
      POSTGRES_PASSWORD: ${{POSTGRES_PASSWORD:?set it in .env}}
    secrets:
      - db_root
    volumes:
      - pgdata:/var/lib/postgresql/data
secrets:
  db_root:
    file: ./secrets/db_root.txt
volumes:
  pgdata:
"""
    return "code/%s/docker-compose.yml" % r.choice(WORDS), body, "env/secrets file references"


@fam("systemd-loadcredential")
def _(c):
    body = """[Unit]
Description=Backup job

[Service]
Type=oneshot
LoadCredentialEncrypted=restic-password:%h/.config/credstore.encrypted/restic
Environment=RESTIC_PASSWORD_FILE=%d/restic-password
EnvironmentFile=-%h/.config/restic/env
ExecStart=/usr/bin/restic backup %h/Documents
"""
    return ".config/systemd/user/backup.service", body, "credential references"


@fam("code-reads-env")
def _(c):
    r = c.r
    kind = r.randint(0, 2)
    if kind == 0:
        body = f"""import os
import requests

TOKEN = os.environ["GITHUB_TOKEN"]
password = os.getenv("DB_PASSWORD", "")


def fetch(repo):
    return requests.get(f"https://api.github.com/repos/{{repo}}", headers={{"Authorization": f"Bearer {{TOKEN}}"}}).json()
"""
        return "code/%s/gh.py" % r.choice(WORDS), body, "python reading env"
    if kind == 1:
        body = """#!/usr/bin/env bash
set -euo pipefail
: "${API_TOKEN:?API_TOKEN must be set}"
curl -fsS -H "Authorization: Bearer ${API_TOKEN}" "https://api.example.com/v1/items"
read -rsp "Password: " password
echo
sshpass -e ssh "$HOST"
"""
        return ".local/bin/fetch-items", body, "shell reading env/prompt"
    body = """package config

import "os"

type Config struct {
	Token    string
	Password string
}

func Load() Config {
	return Config{Token: os.Getenv("SERVICE_TOKEN"), Password: os.Getenv("SERVICE_PASSWORD")}
}
"""
    return "code/%s/config/config.go" % r.choice(WORDS), body, "go reading env"


@fam("prose-about-passwords")
def _(c):
    r = c.r
    body = f"""# Password hygiene

- Use a password manager ({r.choice(['KeePassXC', 'pass', 'Bitwarden'])}); never reuse passwords.
- The router admin password was rotated on {ts(r).date()}; the new one is in the password manager, not here.
- API tokens expire after 90 days. Rotate the GitHub token before it expires.
- Recovery codes are printed and stored in the safe.
- SSH keys: ed25519, passphrase protected, agent with a 1h timeout.
"""
    return "notes/security.md", body, "prose"


@fam("shell-history-clean")
def _(c):
    r = c.r
    body = f"""mysql -u {username(r)} -p -h {host(r)}
pass show mail/{domain(r)}
curl -u {first(r)} https://{host(r)}/api
ssh-keygen -t ed25519 -C "{email(r)}"
gpg --export --armor {pick(r, HEX.upper(), 16)} > pub.asc
docker login -u {first(r)} --password-stdin < ~/.config/docker-token
htpasswd -c ~/srv/.htpasswd {first(r)}
export GITHUB_TOKEN="$(pass show github/token)"
git log --oneline -n 5
"""
    return ".bash_history", body, "commands that prompt or fetch secrets"


@fam("bashrc")
def _(c):
    r = c.r
    body = f"""# ~/.bashrc
[[ $- != *i* ]] && return
export EDITOR=nvim
export GPG_TTY=$(tty)
export SSH_AUTH_SOCK="$XDG_RUNTIME_DIR/ssh-agent.socket"
export PASSWORD_STORE_DIR="$HOME/.password-store"
alias ll='ls -alF'
alias gpgpass='pass show -c'
gh_token() {{ pass show github/token; }}
HISTCONTROL=ignoreboth
HISTSIZE={r.choice([1000, 10000, 50000])}
"""
    return ".bashrc", body, "shell rc"


# ============================================================ data files with high-entropy values
@fam("fstab-uuids")
def _(c):
    r = c.r
    body = "\n".join("UUID=%s %s %s defaults 0 %d" % (rand_uuid(r), mp, fs, i) for i, (mp, fs) in
                     enumerate([("/", "ext4"), ("/home", "ext4"), ("/boot", "ext4"), ("none", "swap")])) + "\n"
    return "backup/etc/fstab", body, "UUIDs"


@fam("sha256sums")
def _(c):
    r = c.r
    body = "".join("%s  %s\n" % (r.randbytes(32).hex(), n) for n in
                   ["debian-12.5.0-amd64-netinst.iso", "archlinux-2024.05.01-x86_64.iso", "ubuntu-24.04-desktop-amd64.iso"])
    return "Downloads/SHA256SUMS", body, "checksums"


@fam("package-lock")
def _(c):
    r = c.r
    deps = {}
    for n in ["lodash", "chalk", "debug", "ms", "semver", "commander"]:
        deps["node_modules/" + n] = {"version": "%d.%d.%d" % (r.randint(1, 9), r.randint(0, 20), r.randint(0, 9)),
                                     "resolved": "https://registry.npmjs.org/%s/-/%s-1.0.0.tgz" % (n, n),
                                     "integrity": "sha512-" + b64(r.randbytes(64)), "license": "MIT"}
    body = json.dumps({"name": r.choice(WORDS), "version": "1.0.0", "lockfileVersion": 3, "requires": True, "packages": deps}, indent=2)
    return "code/%s/package-lock.json" % r.choice(WORDS), body, "integrity hashes"


@fam("cargo-lock")
def _(c):
    r = c.r
    body = "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 3\n\n" + "".join(
        '[[package]]\nname = "%s"\nversion = "%d.%d.%d"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "%s"\n\n'
        % (n, r.randint(0, 2), r.randint(0, 30), r.randint(0, 20), r.randbytes(32).hex()) for n in ["anyhow", "serde", "tokio", "clap"])
    return "code/%s/Cargo.lock" % r.choice(WORDS), body, "checksums"


@fam("git-log-excerpt")
def _(c):
    r = c.r
    body = "".join("commit %s\nAuthor: %s <%s>\nDate:   %s\n\n    %s\n\n" % (r.randbytes(20).hex(), first(r), email(r),
                                                                             ts(r).strftime("%a %b %d %H:%M:%S %Y +0100"),
                                                                             r.choice(["fix typo", "update deps", "add nvim config", "tweak prompt"]))
                   for _ in range(3))
    return "notes/gitlog.txt", body, "commit hashes"


@fam("cookie-jar-nonsession")
def _(c):
    r = c.r
    d = domain(r)
    exp = int(ts(r, 2025, 2027).timestamp())
    body = f"""# Netscape HTTP Cookie File
.{d}	TRUE	/	FALSE	{exp}	_ga	GA1.1.{r.randint(10**8, 10**9)}.{r.randint(1600000000, 1700000000)}
.{d}	TRUE	/	FALSE	{exp}	cookie_consent	accepted
.{d}	TRUE	/	FALSE	{exp}	lang	en-GB
.{d}	TRUE	/	FALSE	{exp}	theme	dark
"""
    return "cookies.txt", body, "only preference/analytics cookies"


@fam("har-no-auth")
def _(c):
    r = c.r
    d = domain(r)
    ent = {"request": {"method": "GET", "url": "https://%s/static/app.js" % d,
                       "headers": [{"name": "accept", "value": "*/*"}, {"name": "accept-encoding", "value": "gzip, br"}]},
           "response": {"status": 200, "headers": [{"name": "etag", "value": '"%s"' % r.randbytes(16).hex()},
                                                   {"name": "cache-control", "value": "max-age=31536000"}]}}
    body = json.dumps({"log": {"version": "1.2", "creator": {"name": "Firefox", "version": "128.0"}, "entries": [ent]}}, indent=2)
    return "Downloads/%s.har" % d, body, "HAR without auth"


@fam("filezilla-ask-password")
def _(c):
    r = c.r
    body = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>
<FileZilla3 version="3.66.4" platform="*nix">
	<Servers>
		<Server>
			<Host>{host(r)}</Host>
			<Port>22</Port>
			<Protocol>1</Protocol>
			<Type>0</Type>
			<User>{first(r)}</User>
			<Logontype>{r.choice([2, 3, 5])}</Logontype>
			<Name>{r.choice(WORDS)}</Name>
		</Server>
	</Servers>
</FileZilla3>
"""
    return ".config/filezilla/sitemanager.xml", body, "ask/interactive/keyfile logon"


@fam("dbeaver-data-sources")
def _(c):
    r = c.r
    body = json.dumps({"folders": {}, "connections": {"postgres-jdbc-%x" % r.getrandbits(48): {
        "provider": "postgresql", "driver": "postgres-jdbc", "name": r.choice(WORDS), "save-password": False,
        "configuration": {"host": host(r), "port": "5432", "database": r.choice(WORDS), "url": "jdbc:postgresql://localhost:5432/app",
                          "type": "dev", "auth-model": "native"}}}}, indent=1)
    return ".local/share/DBeaverData/workspace6/General/.dbeaver/data-sources.json", body, "no saved password"


@fam("vscode-settings-clean")
def _(c):
    r = c.r
    body = json.dumps({"editor.fontSize": r.randint(12, 16), "editor.tabSize": 4, "git.autofetch": True,
                       "telemetry.telemetryLevel": "off", "python.defaultInterpreterPath": "~/.venv/bin/python",
                       "remote.SSH.remotePlatform": {host(r): "linux"}, "gitlens.showWelcomeOnInstall": False}, indent=4)
    return ".config/Code/User/settings.json", body, "no secrets"


@fam("jetbrains-datasources-clean")
def _(c):
    r = c.r
    body = f"""<?xml version="1.0" encoding="UTF-8"?>
<project version="4">
  <component name="DataSourceManagerImpl" format="xml" multifile-model="true">
    <data-source source="LOCAL" name="dev" uuid="{rand_uuid(r)}">
      <driver-ref>postgresql</driver-ref>
      <jdbc-driver>org.postgresql.Driver</jdbc-driver>
      <jdbc-url>jdbc:postgresql://localhost:5432/{r.choice(WORDS)}</jdbc-url>
      <working-dir>$ProjectFileDir$</working-dir>
    </data-source>
  </component>
</project>
"""
    return "code/%s/.idea/dataSources.xml" % r.choice(WORDS), body, "no password"


@fam("keepassxc-ini")
def _(c):
    r = c.r
    body = f"""[General]
ConfigVersion=2
LastDatabases=/home/{first(r)}/Sync/passwords.kdbx
LastOpenedDatabases=/home/{first(r)}/Sync/passwords.kdbx

[Browser]
CustomProxyLocation=
Enabled=true

[GUI]
ApplicationTheme=dark
MinimizeOnClose=true

[Security]
LockDatabaseIdle=true
LockDatabaseIdleSeconds=600
"""
    return ".config/keepassxc/keepassxc.ini", body, "settings, no keys"


@fam("electrum-watch-only")
def _(c):
    r = c.r
    body = json.dumps({"addr_history": {}, "keystore": {"type": "bip32", "xpub": xkey(r, False, bytes.fromhex("04b24746")),
                                                         "root_fingerprint": pick(r, HEX, 8), "derivation": "m/84'/0'/0'"},
                       "seed_version": 59, "use_encryption": False, "wallet_type": "standard"}, indent=4)
    return ".electrum/wallets/watch_only", body, "xpub only"


@fam("crypto-addresses")
def _(c):
    r = c.r
    body = f"""donation addresses
BTC: {btc_p2pkh(r)}
BTC (segwit): {segwit_addr(r)}
ETH: {eth_addr(r)}
last tx: {r.randbytes(32).hex()}
"""
    return "notes/addresses.txt", body, "addresses and a tx hash"


@fam("password-store-tree")
def _(c):
    r = c.r
    body = "Password Store\n" + "".join("├── %s\n│   └── %s.gpg\n" % (d, email(r)) for d in ["email", "web", "bank"]) + "└── wifi.gpg\n"
    return "notes/pass-tree.txt", body, "names only"


@fam("svn-simple-keyring")
def _(c):
    r = c.r
    realm = "<https://svn.%s:443> Repo" % domain(r)
    u = first(r)
    body = f"K 8\npasstype\nV 13\ngnome-keyring\nK 15\nsvn:realmstring\nV {len(realm)}\n{realm}\nK 8\nusername\nV {len(u)}\n{u}\nEND\n"
    return ".subversion/auth/svn.simple/" + hashlib.md5(realm.encode()).hexdigest(), body, "keyring passtype"


@fam("pip-conf-plain")
def _(c):
    r = c.r
    body = f"[global]\nindex-url = https://pypi.{domain(r)}/simple\nextra-index-url = https://pypi.org/simple\nbreak-system-packages = false\n"
    return ".config/pip/pip.conf", body, "no credentials"


@fam("crontab-clean")
def _(c):
    r = c.r
    body = f"""# m h dom mon dow command
@reboot /usr/bin/syncthing --no-browser
*/30 * * * * /home/{first(r)}/.local/bin/mbsync-wrapper
0 4 * * 0 /usr/bin/restic forget --keep-daily 7 --prune
"""
    return "crontab.txt", body, "crontab"


@fam("syncthing-device-ids")
def _(c):
    r = c.r
    devs = "\n".join('    <device id="%s" name="%s" compression="metadata"/>' %
                     ("-".join(pick(r, UP + "234567", 7) for _ in range(8)), r.choice(WORDS)) for _ in range(3))
    body = f"""<configuration version="37">
    <folder id="{pick(r, LOW + DIG, 5)}-{pick(r, LOW + DIG, 5)}" label="Documents" path="~/Documents" type="sendreceive"/>
{devs}
</configuration>
"""
    return "notes/syncthing-devices.xml", body, "device ids"


@fam("mimeapps-and-user-dirs")
def _(c):
    body = """[Default Applications]
text/html=firefox.desktop
x-scheme-handler/http=firefox.desktop
x-scheme-handler/https=firefox.desktop
application/pdf=org.pwmt.zathura.desktop
"""
    return ".config/mimeapps.list", body, "desktop config"


@fam("tmux-conf")
def _(c):
    body = """set -g prefix C-a
unbind C-b
set -g mouse on
set -g history-limit 50000
bind r source-file ~/.tmux.conf \\; display "reloaded"
set -g @plugin 'tmux-plugins/tpm'
"""
    return ".tmux.conf", body, "tmux"


@fam("nvim-lua-config")
def _(c):
    body = """vim.opt.number = true
vim.opt.relativenumber = true
vim.g.mapleader = " "
-- copilot token is handled by the plugin's own login flow
require("lazy").setup("plugins")
vim.keymap.set("n", "<leader>pw", ":Telescope find_files<CR>")
"""
    return ".config/nvim/init.lua", body, "editor config"


@fam("rbw-config")
def _(c):
    r = c.r
    body = json.dumps({"email": email(r), "sso_id": None, "base_url": "https://vault.%s" % domain(r), "identity_url": None,
                       "ui_url": None, "notifications_url": None, "lock_timeout": 3600, "sync_interval": 3600,
                       "pinentry": "pinentry-gnome3", "client_cert_path": None}, indent=2)
    return ".config/rbw/config.json", body, "rbw settings"


@fam("ansible-cfg")
def _(c):
    body = """[defaults]
inventory = ./inventory
vault_password_file = ~/.local/bin/vault-pass-from-pass
remote_user = ansible
host_key_checking = True
"""
    return "ansible/ansible.cfg", body, "vault password file is a script path"


@fam("mpd-conf-nopass")
def _(c):
    body = """music_directory    "~/Music"
db_file            "~/.config/mpd/database"
bind_to_address    "127.0.0.1"
audio_output {
    type  "pipewire"
    name  "PipeWire Sound Server"
}
"""
    return ".config/mpd/mpd.conf", body, "no password"


@fam("yt-dlp-netrc")
def _(c):
    body = """-o ~/Videos/%(title)s.%(ext)s
--netrc
--embed-thumbnail
-f bv*[height<=1080]+ba/b
"""
    return ".config/yt-dlp/config", body, "uses netrc, no password"


@fam("ssh-agent-env")
def _(c):
    r = c.r
    n = r.randint(1000, 99999)
    body = f"SSH_AUTH_SOCK=/tmp/ssh-{pick(r, ALNUM, 12)}/agent.{n}; export SSH_AUTH_SOCK;\nSSH_AGENT_PID={n + 1}; export SSH_AGENT_PID;\necho Agent pid {n + 1};\n"
    return ".ssh/agent.env", body, "agent socket info"


@fam("wakatime-nokey")
def _(c):
    body = "[settings]\ndebug = false\nhidefilenames = true\napi_key_vault_cmd = pass show wakatime\n"
    return ".wakatime.cfg", body, "key via vault cmd"


@fam("kube-ca-only")
def _(c):
    return ".kube/homelab-ca.crt", c.ca().pem(), "CA cert"


@fam("hosts-file")
def _(c):
    r = c.r
    body = "127.0.0.1 localhost\n::1 localhost\n" + "".join("%s %s\n" % (ip(r), host(r)) for _ in range(4))
    return "backup/etc/hosts", body, "hosts"


@fam("machine-id-and-uuids")
def _(c):
    r = c.r
    return "backup/etc/machine-id", r.randbytes(16).hex() + "\n", "machine-id (random hex, not a secret)"


@fam("gpg-agent-conf")
def _(c):
    body = """enable-ssh-support
default-cache-ttl 600
max-cache-ttl 7200
pinentry-program /usr/bin/pinentry-curses
"""
    return ".gnupg/gpg-agent.conf", body, "agent conf"


@fam("readme-with-example-creds")
def _(c):
    r = c.r
    body = f"""# {r.choice(WORDS)}-cli

Configure it with:

    export {r.choice(WORDS).upper()}_TOKEN=<your token>
    {r.choice(WORDS)}-cli login --username YOUR_USER --password-stdin

The config file lives in `~/.config/{r.choice(WORDS)}/config.toml` and never stores the password;
it asks the system keyring.
"""
    return "code/%s/README.md" % r.choice(WORDS), body, "docs with placeholders"
