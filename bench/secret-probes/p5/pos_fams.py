"""Positive families: each returns (relpath, content, secret, note). One credential per file."""
import json, base64, hashlib, struct
from urllib.parse import quote
from lib import *

POS = []


def fam(name):
    def d(f):
        POS.append((name, f))
        return f
    return d


# ============================================================ mail clients
@fam("mutt-imap-pass")
def _(c):
    r = c.r
    u = email(r)
    p = pw(r, avoid="'\"`\\$ ")
    dom = u.split("@")[1]
    name = r.choice([".muttrc", ".mutt/muttrc", ".config/mutt/muttrc", ".config/neomutt/neomuttrc", ".mutt/accounts/personal"])
    which = r.choice(["imap_pass", "smtp_pass"])
    body = f"""# {r.choice(['personal', 'work', 'main'])} account
set realname = "{first(r).capitalize()} {r.choice(LAST).capitalize()}"
set from = "{u}"
set imap_user = "{u}"
set {which} = '{p}'
set folder = "imaps://imap.{dom}:993"
set spoolfile = "+INBOX"
set postponed = "+Drafts"
set record = "+Sent"
set smtp_url = "smtps://{quote(u, safe='')}@smtp.{dom}:465"
set ssl_force_tls = yes
set header_cache = ~/.cache/mutt/headers
set message_cachedir = ~/.cache/mutt/bodies
set sort = threads
set editor = "nvim"
mailboxes =INBOX =Sent =Archive
"""
    return name, body, p, which


@fam("mutt-smtp-url-pass")
def _(c):
    r = c.r
    u = email(r)
    p = pw(r, avoid=" \"'`")
    dom = u.split("@")[1]
    body = f"""source ~/.config/neomutt/colors
set from = "{u}"
set smtp_url = "smtps://{quote(u, safe='')}:{quote(p, safe='')}@smtp.{dom}:465/"
set smtp_authenticators = "login"
set sidebar_visible = yes
bind index,pager \\CP sidebar-prev
"""
    return ".config/neomutt/accounts/" + dom.split(".")[0], body, quote(p, safe=""), "password in smtp_url"


@fam("msmtprc-password")
def _(c):
    r = c.r
    u = email(r)
    p = pw(r, avoid=" #\"")
    dom = u.split("@")[1]
    body = f"""# Set default values for all following accounts.
defaults
auth           on
tls            on
tls_trust_file /etc/ssl/certs/ca-certificates.crt
logfile        ~/.msmtp.log

# {dom}
account        {dom.split('.')[0]}
host           smtp.{dom}
port           587
from           {u}
user           {u}
password       {p}

account default : {dom.split('.')[0]}
"""
    return r.choice([".msmtprc", ".config/msmtp/config"]), body, p, "password line"


@fam("mbsyncrc-pass")
def _(c):
    r = c.r
    u = email(r)
    p = pw(r, avoid=" \"\\")
    dom = u.split("@")[1]
    body = f"""IMAPAccount {dom.split('.')[0]}
Host imap.{dom}
User {u}
Pass "{p}"
SSLType IMAPS
CertificateFile /etc/ssl/certs/ca-certificates.crt

IMAPStore {dom.split('.')[0]}-remote
Account {dom.split('.')[0]}

MaildirStore {dom.split('.')[0]}-local
SubFolders Verbatim
Path ~/Mail/{dom}/
Inbox ~/Mail/{dom}/Inbox

Channel {dom.split('.')[0]}
Far :{dom.split('.')[0]}-remote:
Near :{dom.split('.')[0]}-local:
Patterns *
Create Both
SyncState *
"""
    return r.choice([".mbsyncrc", ".config/isyncrc"]), body, p, "Pass"


@fam("offlineimap-remotepass")
def _(c):
    r = c.r
    u = email(r)
    p = pw(r, avoid=" %;#")
    dom = u.split("@")[1]
    body = f"""[general]
accounts = Main
maxsyncaccounts = 1
ui = ttyui

[Account Main]
localrepository = Local
remoterepository = Remote
autorefresh = 5
quick = 10

[Repository Local]
type = Maildir
localfolders = ~/Maildir

[Repository Remote]
type = IMAP
remotehost = imap.{dom}
remoteuser = {u}
remotepass = {p}
ssl = yes
sslcacertfile = /etc/ssl/certs/ca-certificates.crt
"""
    return ".offlineimaprc", body, p, "remotepass"


@fam("fetchmailrc-password")
def _(c):
    r = c.r
    u = username(r)
    p = pw(r, avoid=" \"\\")
    dom = domain(r)
    body = f"""set daemon 300
set logfile ~/.fetchmail.log
poll pop.{dom} protocol POP3 port 995:
    user "{u}" there with password "{p}" is {first(r)} here
    options ssl keep fetchall
    mda "/usr/bin/procmail -d %T"
"""
    return ".fetchmailrc", body, p, "password in poll"


@fam("aerc-url-pass")
def _(c):
    r = c.r
    u = email(r)
    p = pw(r, avoid=" ")
    dom = u.split("@")[1]
    body = f"""[{dom.split('.')[0].capitalize()}]
source        = imaps://{quote(u, safe='')}:{quote(p, safe='')}@imap.{dom}:993
outgoing      = smtps://{quote(u, safe='')}@smtp.{dom}:465
outgoing-cred-cmd = pass show mail/{dom}
default       = INBOX
from          = {first(r).capitalize()} <{u}>
copy-to       = Sent
cache-headers = true
"""
    return ".config/aerc/accounts.conf", body, quote(p, safe=""), "password inside source URL"


@fam("himalaya-raw")
def _(c):
    r = c.r
    u = email(r)
    p = pw(r, avoid="\"\\ ")
    dom = u.split("@")[1]
    body = f"""[accounts.{dom.split('.')[0]}]
default = true
email = "{u}"
display-name = "{first(r).capitalize()}"

backend.type = "imap"
backend.host = "imap.{dom}"
backend.port = 993
backend.login = "{u}"
backend.auth.type = "password"
backend.auth.raw = "{p}"

message.send.backend.type = "smtp"
message.send.backend.host = "smtp.{dom}"
message.send.backend.port = 465
message.send.backend.login = "{u}"
message.send.backend.auth.type = "password"
message.send.backend.auth.cmd = "pass show email/{dom}"
"""
    return ".config/himalaya/config.toml", body, p, "backend.auth.raw"


@fam("getmailrc-password")
def _(c):
    r = c.r
    u = email(r)
    p = pw(r, avoid=" %")
    dom = u.split("@")[1]
    body = f"""[retriever]
type = SimpleIMAPSSLRetriever
server = imap.{dom}
username = {u}
password = {p}
mailboxes = ("INBOX",)

[destination]
type = Maildir
path = ~/Mail/{dom}/

[options]
verbose = 1
read_all = false
delete = false
"""
    return ".getmail/getmailrc", body, p, "password"


@fam("thunderbird-userjs-apikey")
def _(c):
    r = c.r
    key = rand_uuid(r) + ":fx"
    body = f"""// user.js - overrides for my Thunderbird profile
user_pref("mail.shell.checkDefaultClient", false);
user_pref("mailnews.start_page.enabled", false);
user_pref("mail.identity.id1.compose_html", false);
user_pref("extensions.translate-thunderbird.deepl.apiKey", "{key}");
user_pref("extensions.translate-thunderbird.provider", "deepl");
user_pref("mail.spellcheck.inline", true);
"""
    return ".thunderbird/%s.default-release/user.js" % pick(r, LOW + DIG, 8), body, key, "DeepL API key in pref"


@fam("meli-server-password")
def _(c):
    r = c.r
    u = email(r)
    p = pw(r, avoid="\"\\")
    dom = u.split("@")[1]
    body = f"""[accounts.{dom.split('.')[0]}]
root_mailbox = "INBOX"
format = "imap"
server_hostname = "imap.{dom}"
server_username = "{u}"
server_password = "{p}"
server_port = "993"
identity = "{u}"
display_name = "{first(r).capitalize()}"
subscribed_mailboxes = ["INBOX", "INBOX/*"]
"""
    return ".config/meli/config.toml", body, p, "server_password"


# ============================================================ chat
@fam("irssi-sasl-password")
def _(c):
    r = c.r
    nick = first(r) + pick(r, LOW, 2)
    p = pw(r, avoid="\";\\")
    body = f"""servers = (
  {{
    address = "irc.libera.chat";
    chatnet = "liberachat";
    port = "6697";
    use_tls = "yes";
    tls_verify = "yes";
    autoconnect = "yes";
  }},
  {{ address = "irc.oftc.net"; chatnet = "OFTC"; port = "6697"; use_tls = "yes"; }}
);

chatnets = {{
  liberachat = {{
    type = "IRC";
    sasl_mechanism = "PLAIN";
    sasl_username = "{nick}";
    sasl_password = "{p}";
  }};
  OFTC = {{ type = "IRC"; max_kicks = "1"; max_msgs = "3"; max_whois = "30"; }};
}};

channels = (
  {{ name = "#archlinux"; chatnet = "liberachat"; autojoin = "yes"; }},
  {{ name = "#neovim"; chatnet = "liberachat"; autojoin = "yes"; }}
);

settings = {{
  core = {{ real_name = "{nick}"; user_name = "{nick}"; nick = "{nick}"; }};
  "fe-common/core" = {{ theme = "default"; autolog = "yes"; }};
}};
"""
    return ".irssi/config", body, p, "sasl_password"


@fam("irssi-nickserv-autosendcmd")
def _(c):
    r = c.r
    nick = first(r) + str(r.randint(1, 99))
    p = pw(r, avoid="\"; ")
    body = f"""chatnets = {{
  OFTC = {{
    type = "IRC";
    autosendcmd = "/msg nickserv identify {p} ;wait 2000";
    max_kicks = "1";
  }};
}};
settings = {{ core = {{ nick = "{nick}"; }}; }};
"""
    return ".irssi/config", body, p, "NickServ identify in autosendcmd"


@fam("weechat-sasl-password")
def _(c):
    r = c.r
    nick = first(r) + pick(r, LOW, 3)
    p = pw(r, avoid="\"\\")
    body = f"""#
# weechat -- irc.conf
#
# WARNING: It is NOT recommended to edit this file by hand,
# especially if WeeChat is running.
#

config_version = 3

[look]
buffer_open_before_autojoin = on
display_away = local
smart_filter = on

[server_default]
nicks = "{nick},{nick}_"
sasl_mechanism = plain
tls = on

[server]
libera.addresses = "irc.libera.chat/6697"
libera.tls = on
libera.sasl_username = "{nick}"
libera.sasl_password = "{p}"
libera.autoconnect = on
libera.autojoin = "#weechat,#linux"
"""
    return ".config/weechat/irc.conf", body, p, "sasl_password"


@fam("weechat-slack-token")
def _(c):
    r = c.r
    t = slack_token(r, "xoxp")
    body = f"""#
# weechat -- plugins.conf
#

config_version = 1

[var]
python.check_license = "off"
python.slack.auto_open_threads = "true"
python.slack.slack_api_token = "{t}"
python.slack.unfurl_ignore_alt_text = "false"
python.grep.clear_buffer = "off"
"""
    return ".config/weechat/plugins.conf", body, t, "slack_api_token"


@fam("hexchat-servlist-pass")
def _(c):
    r = c.r
    nick = first(r) + str(r.randint(1, 999))
    p = pw(r, avoid="\n ")
    body = f"""v=2.16.2

N=Libera.Chat
I={nick}
i={nick}_
U={nick}
R={nick}
L=6
A={nick}
B={p}
E=UTF-8 (Unicode)
F=23
D=0
S=irc.libera.chat/+6697
J=#hexchat

N=OFTC
E=UTF-8 (Unicode)
F=19
D=0
S=irc.oftc.net
"""
    return ".config/hexchat/servlist.conf", body, p, "B= login password (SASL)"


@fam("znc-network-serverpass")
def _(c):
    r = c.r
    nick = first(r)
    p = pw(r, avoid=" \n")
    salt = pick(r, ALNUM + "!@#$%^&*()_+-=,.?:", 20)
    body = f"""// WARNING
//
// Do NOT edit this file while ZNC is running!
Version = 1.8.2
<Listener l>
        Port = 6697
        IPv4 = true
        IPv6 = true
        SSL = true
</Listener>
LoadModule = webadmin

<User {nick}>
        Admin      = true
        Nick       = {nick}
        AltNick    = {nick}_
        Ident      = {nick}
        RealName   = {nick}
        <Pass password>
                Method = sha256
                Hash = {hashlib.sha256(r.randbytes(16)).hexdigest()}
                Salt = {salt}
        </Pass>

        <Network libera>
                LoadModule = simple_away
                LoadModule = nickserv {p}
                Server     = irc.libera.chat +6697
                <Chan #znc>
                </Chan>
        </Network>
</User>
"""
    return ".znc/configs/znc.conf", body, p, "nickserv module argument (Pass block is a hash)"


@fam("matrix-commander-credentials")
def _(c):
    r = c.r
    u = first(r) + pick(r, LOW, 2)
    t = matrix_token(r, u)
    body = json.dumps({"homeserver": "https://matrix-client.matrix.org", "device_id": pick(r, UP, 10),
                       "user_id": "@%s:matrix.org" % u, "room_id": "!%s:matrix.org" % pick(r, ALNUM, 18),
                       "access_token": t}, indent=4)
    return ".config/matrix-commander/credentials.json", body, t, "matrix access token"


@fam("gomuks-like-session")
def _(c):
    r = c.r
    u = first(r)
    t = "MDAx" + b64(r.randbytes(r.choice([150, 180]))).replace("=", "")
    body = f"""mxid: '@{u}:{domain(r)}'
device_id: {pick(r, UP, 10)}
access_token: {t}
homeserver: https://matrix.{domain(r)}
room_cache_size: 32
"""
    return ".config/gomuks/config.yaml", body, t, "legacy macaroon access token"


@fam("slack-term-token")
def _(c):
    r = c.r
    t = slack_token(r, r.choice(["xoxp", "xoxb"]))
    body = json.dumps({"slack_token": t, "sidebar_width": 1, "emoji": True, "theme": {"view": {"fg": "white"}}}, indent=2)
    return ".config/slack-term/config", body, t, "slack_token"


@fam("slack-localstorage-xoxc")
def _(c):
    r = c.r
    t = slack_token(r, "xoxc")
    tid = "T" + pick(r, UP + DIG, 10)
    body = json.dumps({"teams": {tid: {"id": tid, "name": r.choice(WORDS) + "-team", "url": "https://%s.slack.com/" % r.choice(WORDS),
                                       "token": t, "user_id": "U" + pick(r, UP + DIG, 10)}}, "lastActiveTeamId": tid}, indent=1)
    return ".config/Slack/storage/localConfig_v2.json", body, t, "xoxc session token"


@fam("discord-localstorage-token")
def _(c):
    r = c.r
    t = discord_token(r)
    body = json.dumps({"token": json.dumps(t), "user_id_cache": json.dumps(t.split(".")[0]),
                       "locale": '"en-US"', "hideNag": "false"}, indent=2)
    return ".config/discord/Local Storage/leveldb-export.json", body, t, "Discord user token"


@fam("telegram-send-token")
def _(c):
    r = c.r
    t = "%d:AA%s" % (r.randint(10**9, 8 * 10**9), pick(r, ALNUM + "_-", 33))
    body = f"[telegram]\ntoken = {t}\nchat_id = {r.randint(10**8, 10**10)}\n"
    return ".config/telegram-send.conf", body, t, "bot token"


# ============================================================ network
@fam("nm-wifi-psk")
def _(c):
    r = c.r
    ssid = r.choice(["FRITZ!Box 7590 %s" % pick(r, UP, 2), "Vodafone-%s" % pick(r, UP + DIG, 4), r.choice(WORDS).capitalize() + "Net",
                     "TP-Link_%s" % pick(r, HEX.upper(), 4), "eduroam-home", "Home"])
    p = pw(r, avoid="\n", minlen=8)
    body = f"""[connection]
id={ssid}
uuid={rand_uuid(r)}
type=wifi
interface-name=wlp{r.randint(1, 4)}s0
timestamp={int(ts(r).timestamp())}

[wifi]
mode=infrastructure
ssid={ssid}

[wifi-security]
auth-alg=open
key-mgmt=wpa-psk
psk={p}

[ipv4]
method=auto

[ipv6]
addr-gen-mode=stable-privacy
method=auto

[proxy]
"""
    return "backup/etc/NetworkManager/system-connections/%s.nmconnection" % ssid.replace("/", "_"), body, p, "psk="


@fam("nm-8021x-password")
def _(c):
    r = c.r
    u = username(r)
    p = pw(r, avoid="\n")
    body = f"""[connection]
id=eduroam
uuid={rand_uuid(r)}
type=wifi

[wifi]
mode=infrastructure
ssid=eduroam

[wifi-security]
key-mgmt=wpa-eap

[802-1x]
anonymous-identity=anonymous@{domain(r)}
ca-cert=/etc/ssl/certs/T-TeleSec_GlobalRoot_Class_2.pem
domain-suffix-match={domain(r)}
eap=peap;
identity={u}@{domain(r)}
password={p}
phase2-auth=mschapv2

[ipv4]
method=auto
"""
    return "backup/etc/NetworkManager/system-connections/eduroam.nmconnection", body, p, "802-1x password="


@fam("nm-vpn-secrets")
def _(c):
    r = c.r
    p = pw(r, avoid="\n")
    gw = host(r)
    body = f"""[connection]
id=Work VPN
uuid={rand_uuid(r)}
type=vpn
autoconnect=false

[vpn]
ca=/home/{first(r)}/.cert/nm-openvpn/work-ca.pem
connection-type=password
password-flags=0
remote={gw}:1194
username={username(r)}
service-type=org.freedesktop.NetworkManager.openvpn

[vpn-secrets]
password={p}

[ipv4]
method=auto
never-default=true
"""
    return "backup/etc/NetworkManager/system-connections/Work VPN.nmconnection", body, p, "[vpn-secrets] password"


@fam("nm-wireguard-private-key")
def _(c):
    r = c.r
    k = b64(r.randbytes(32))
    body = f"""[connection]
id=wg0
uuid={rand_uuid(r)}
type=wireguard
interface-name=wg0

[wireguard]
private-key={k}

[wireguard-peer.{b64(r.randbytes(32))}]
endpoint={ip(r, False)}:51820
allowed-ips=0.0.0.0/0;::/0;

[ipv4]
address1=10.8.0.{r.randint(2, 200)}/24
method=manual
"""
    return "backup/etc/NetworkManager/system-connections/wg0.nmconnection", body, k, "private-key="


@fam("wpa-supplicant-psk")
def _(c):
    r = c.r
    ssid = r.choice(WORDS).capitalize() + "-" + pick(r, DIG, 3)
    p = pw(r, avoid="\"\n", minlen=8)
    if r.random() < .4:
        val = hashlib.pbkdf2_hmac("sha1", p.encode(), ssid.encode(), 4096, 32).hex()
        line = "psk=" + val
    else:
        val = p
        line = 'psk="%s"' % p
    body = f"""ctrl_interface=DIR=/var/run/wpa_supplicant GROUP=wheel
update_config=1
country=DE

network={{
	ssid="{ssid}"
	{line}
	key_mgmt=WPA-PSK
	priority=10
}}
"""
    return "backup/etc/wpa_supplicant/wpa_supplicant-wlan0.conf", body, val, "psk (passphrase or 64-hex PMK)"


@fam("wireguard-conf-privatekey")
def _(c):
    r = c.r
    k = b64(r.randbytes(32))
    body = f"""[Interface]
PrivateKey = {k}
Address = 10.{r.randint(0, 99)}.0.{r.randint(2, 200)}/32
DNS = 10.64.0.1

[Peer]
PublicKey = {b64(r.randbytes(32))}
AllowedIPs = 0.0.0.0/0, ::/0
Endpoint = {ip(r, False)}:{r.choice([51820, 51821, 443])}
PersistentKeepalive = 25
"""
    return r.choice(["vpn/wg0.conf", ".config/wireguard/mullvad-de4.conf", "backup/etc/wireguard/wg0.conf"]), body, k, "PrivateKey"


@fam("wireguard-presharedkey")
def _(c):
    r = c.r
    k = b64(r.randbytes(32))
    body = f"""# peer definition to paste into the server config
[Peer]
# laptop
PublicKey = {b64(r.randbytes(32))}
PresharedKey = {k}
AllowedIPs = 10.9.0.{r.randint(2, 250)}/32
"""
    return "vpn/peer-laptop.conf", body, k, "PresharedKey"


@fam("openvpn-inline-key")
def _(c):
    r = c.r
    ca = c.ca()
    cert, key = ca.leaf("client-" + first(r))
    kp = pem_trad(key) if r.random() < .5 else pem_pkcs8(key)
    body = f"""client
dev tun
proto udp
remote {host(r)} 1194
resolv-retry infinite
nobind
persist-key
persist-tun
remote-cert-tls server
cipher AES-256-GCM
verb 3
<ca>
{ca.pem()}</ca>
<cert>
{cert}</cert>
<key>
{kp}</key>
"""
    return "vpn/%s.ovpn" % r.choice(WORDS), body, kp.strip().splitlines()[1], "inline <key> block"


@fam("openvpn-static-key")
def _(c):
    r = c.r
    lines = [r.randbytes(16).hex() for _ in range(16)]
    body = "#\n# 2048 bit OpenVPN static key\n#\n-----BEGIN OpenVPN Static key V1-----\n" + "\n".join(lines) + \
        "\n-----END OpenVPN Static key V1-----\n"
    return r.choice(["vpn/ta.key", ".config/openvpn/tls-crypt.key"]), body, lines[0], "static key"


@fam("openvpn-auth-file")
def _(c):
    r = c.r
    p = pw(r, avoid="\n ")
    body = f"{username(r)}\n{p}\n"
    return r.choice([".config/openvpn/auth.txt", "vpn/credentials.txt", "vpn/pia-auth.txt"]), body, p, "auth-user-pass file (2 lines)"


@fam("ipsec-secrets-psk")
def _(c):
    r = c.r
    p = pw(r, avoid="\"\n")
    body = f"""# ipsec.secrets - strongSwan IPsec secrets file
# This file holds shared secrets or RSA private keys for authentication.

{ip(r, False)} %any : PSK "{p}"
"""
    return "backup/etc/ipsec.secrets", body, p, "PSK"


@fam("ipsec-secrets-eap")
def _(c):
    r = c.r
    p = pw(r, avoid="\"\n")
    body = f"""# /etc/ipsec.secrets
: RSA /etc/ipsec.d/private/client.key
{username(r)} : EAP "{p}"
"""
    return "backup/etc/ipsec.secrets", body, p, "EAP secret (the RSA line is only a path)"


@fam("swanctl-secret")
def _(c):
    r = c.r
    p = pw(r, avoid="\"\n")
    body = f"""connections {{
    home {{
        remote_addrs = {host(r)}
        vips = 0.0.0.0
        local {{
            auth = psk
            id = {first(r)}@roadwarrior
        }}
        remote {{
            auth = psk
        }}
        children {{
            home {{
                remote_ts = 192.168.0.0/16
                start_action = start
            }}
        }}
    }}
}}

secrets {{
    ike-home {{
        id = {first(r)}@roadwarrior
        secret = "{p}"
    }}
}}
"""
    return "backup/etc/swanctl/conf.d/home.conf", body, p, "secrets.ike secret"


@fam("ppp-chap-secrets")
def _(c):
    r = c.r
    p = pw(r, avoid="\"\n \t")
    body = f"""# Secrets for authentication using CHAP
# client	server	secret			IP addresses
"{username(r)}@{r.choice(['t-online.de', 'dsl.example.net', 'vodafone-ip.de'])}"	*	"{p}"	*
"""
    return "backup/etc/ppp/chap-secrets", body, p, "chap secret"


@fam("cifs-credentials")
def _(c):
    r = c.r
    p = pw(r, avoid="\n")
    body = f"username={username(r)}\npassword={p}\ndomain={r.choice(['WORKGROUP', 'CORP', 'HOME'])}\n"
    return r.choice([".smbcredentials", ".config/cifs/nas.cred", ".credentials/smb"]), body, p, "password="


@fam("fstab-cifs-password")
def _(c):
    r = c.r
    p = pw(r, avoid=", \n\t#")
    body = f"""# /etc/fstab: static file system information.
UUID={rand_uuid(r)} /               ext4    errors=remount-ro 0       1
UUID={pick(r, HEX.upper(), 4)}-{pick(r, HEX.upper(), 4)}  /boot/efi       vfat    umask=0077      0       1
//{ip(r)}/media /mnt/media cifs username={username(r)},password={p},uid=1000,gid=1000,iocharset=utf8,vers=3.0 0 0
"""
    return "backup/etc/fstab", body, p, "cifs password= mount option"


@fam("davfs2-secrets")
def _(c):
    r = c.r
    p = pw(r, avoid=" \"\\#\n")
    body = f"""# davfs2 secrets file
# mountpoint / server url   user   password
https://cloud.{domain(r)}/remote.php/dav/files/{first(r)}/ {first(r)} {p}
"""
    return ".davfs2/secrets", body, p, "password column"


@fam("rclone-obscured-pass")
def _(c):
    r = c.r
    p = pw(r)
    ob = rclone_obscure(r, p)
    t = r.choice(["sftp", "webdav", "mega", "ftp", "smb"])
    extra = {"sftp": f"host = {host(r)}\nuser = {first(r)}\nport = 22\n",
             "webdav": f"url = https://cloud.{domain(r)}/remote.php/dav/files/{first(r)}\nvendor = nextcloud\nuser = {first(r)}\n",
             "mega": f"user = {email(r)}\n", "ftp": f"host = {host(r)}\nuser = {first(r)}\nexplicit_tls = true\n",
             "smb": f"host = {ip(r)}\nuser = {first(r)}\n"}[t]
    body = f"""[{t}-{r.choice(WORDS)}]
type = {t}
{extra}pass = {ob}

[crypt]
type = alias
remote = {t}-x:backup
"""
    return ".config/rclone/rclone.conf", body, ob, "rclone obscured (reversible) pass"


@fam("rclone-oauth-token")
def _(c):
    r = c.r
    rt = google_refresh(r)
    tok = json.dumps({"access_token": google_access(r), "token_type": "Bearer", "refresh_token": rt,
                      "expiry": ts(r, 2024, 2026).isoformat()}, separators=(",", ":"))
    body = f"""[gdrive]
type = drive
scope = drive
token = {tok}
team_drive =
"""
    return ".config/rclone/rclone.conf", body, rt, "drive OAuth token JSON"


@fam("rclone-s3-secret")
def _(c):
    r = c.r
    s = aws_secret(r)
    body = f"""[wasabi]
type = s3
provider = Wasabi
access_key_id = {pick(r, UP + DIG, 20)}
secret_access_key = {s}
endpoint = s3.eu-central-1.wasabisys.com
"""
    return ".config/rclone/rclone.conf", body, s, "secret_access_key"


@fam("netrc-password")
def _(c):
    r = c.r
    p = pw(r, avoid=" \t\n\"'")
    body = f"""machine {host(r)}
login {username(r)}
password {p}

machine ftp.{domain(r)} login anonymous password {email(r)}
"""
    return ".netrc", body, p, "netrc password"


@fam("heroku-netrc")
def _(c):
    r = c.r
    k = r.choice([rand_uuid(r), "HRKU-" + rand_uuid(r)])
    e = email(r)
    body = f"""machine api.heroku.com
  login {e}
  password {k}
machine git.heroku.com
  login {e}
  password {k}
"""
    return ".netrc", body, k, "heroku API key"


@fam("git-credentials")
def _(c):
    r = c.r
    t = r.choice([gh_token(r), gh_pat_fine(r), glpat(r), pw(r, avoid="@:/ ")])
    hostn = r.choice(["github.com", "gitlab.com", "git." + domain(r)])
    body = f"https://{username(r)}:{quote(t, safe='')}@{hostn}\n"
    return ".git-credentials", body, quote(t, safe=""), "user:token@host"


@fam("gitconfig-insteadof-token")
def _(c):
    r = c.r
    t = gh_token(r)
    body = f"""[user]
	name = {first(r).capitalize()} {r.choice(LAST).capitalize()}
	email = {email(r)}
[init]
	defaultBranch = main
[url "https://{first(r)}:{t}@github.com/"]
	insteadOf = https://github.com/
[pull]
	rebase = true
"""
    return ".gitconfig", body, t, "token in url insteadOf"


# ============================================================ package registries / dev tools
@fam("docker-config-auth")
def _(c):
    r = c.r
    u = username(r)
    p = r.choice(["dckr_pat_" + pick(r, ALNUM + "_-", 27), pw(r)])
    a = b64(("%s:%s" % (u, p)).encode())
    reg = r.choice(["https://index.docker.io/v1/", "ghcr.io", "registry.gitlab.com", "registry." + domain(r)])
    body = json.dumps({"auths": {reg: {"auth": a}}, "currentContext": "default"}, indent="\t")
    return ".docker/config.json", body, a, "auths.auth base64(user:pass)"


@fam("podman-auth-json")
def _(c):
    r = c.r
    a = b64(("%s:%s" % (username(r), pw(r))).encode())
    body = json.dumps({"auths": {"quay.io": {"auth": a}, "docker.io": {}}}, indent="\t")
    return ".config/containers/auth.json", body, a, "auth"


@fam("pypirc-token")
def _(c):
    r = c.r
    t = pypi_token(r)
    body = f"""[distutils]
index-servers =
    pypi
    testpypi

[pypi]
username = __token__
password = {t}

[testpypi]
repository = https://test.pypi.org/legacy/
username = __token__
"""
    return ".pypirc", body, t, "PyPI API token"


@fam("pypirc-password")
def _(c):
    r = c.r
    p = pw(r, avoid="%\n")
    body = f"""[distutils]
index-servers = internal

[internal]
repository = https://nexus.{domain(r)}/repository/pypi-internal/
username = {username(r)}
password = {p}
"""
    return ".pypirc", body, p, "password"


@fam("npmrc-authtoken")
def _(c):
    r = c.r
    t = npm_token(r)
    body = f"""//registry.npmjs.org/:_authToken={t}
save-exact=true
fund=false
"""
    return ".npmrc", body, t, "_authToken"


@fam("npmrc-github-packages")
def _(c):
    r = c.r
    t = gh_token(r)
    body = f"""@{r.choice(WORDS)}:registry=https://npm.pkg.github.com
//npm.pkg.github.com/:_authToken={t}
"""
    return ".npmrc", body, t, "_authToken (GitHub PAT)"


@fam("npmrc-auth-basic")
def _(c):
    r = c.r
    a = b64(("%s:%s" % (username(r), pw(r))).encode())
    body = f"""registry=https://artifactory.{domain(r)}/artifactory/api/npm/npm/
_auth={a}
always-auth=true
email={email(r)}
"""
    return ".npmrc", body, a, "_auth base64(user:pass)"


@fam("npmrc-password-field")
def _(c):
    r = c.r
    pb = b64(pw(r).encode())
    d = domain(r)
    body = f"""registry=https://nexus.{d}/repository/npm-group/
//nexus.{d}/repository/npm-group/:username={username(r)}
//nexus.{d}/repository/npm-group/:_password={pb}
//nexus.{d}/repository/npm-group/:email={email(r)}
"""
    return ".npmrc", body, pb, "_password (base64 password)"


@fam("yarnrc-npmauthtoken")
def _(c):
    r = c.r
    t = npm_token(r)
    body = f"""nodeLinker: node-modules
npmScopes:
  {r.choice(WORDS)}:
    npmRegistryServer: "https://registry.npmjs.org"
    npmAuthToken: "{t}"
yarnPath: .yarn/releases/yarn-4.1.0.cjs
"""
    return ".yarnrc.yml", body, t, "npmAuthToken"


@fam("gem-credentials")
def _(c):
    r = c.r
    t = "rubygems_" + pick(r, HEX, 48)
    body = f"---\n:rubygems_api_key: {t}\n"
    return ".gem/credentials", body, t, "rubygems api key"


@fam("bundle-config-credential")
def _(c):
    r = c.r
    v = "%s:%s" % (pick(r, HEX, 8), pick(r, HEX, 8))
    body = f"""---
BUNDLE_PATH: "vendor/bundle"
BUNDLE_GEMS__CONTRIBSYS__COM: "{v}"
BUNDLE_JOBS: "4"
"""
    return ".bundle/config", body, v, "source credential user:pass"


@fam("cargo-credentials")
def _(c):
    r = c.r
    t = "cio" + pick(r, ALNUM, 32)
    body = f'[registry]\ntoken = "{t}"\n'
    return ".cargo/credentials.toml", body, t, "crates.io token"


@fam("composer-auth-json")
def _(c):
    r = c.r
    if r.random() < .5:
        s = gh_token(r)
        d = {"github-oauth": {"github.com": s}}
    else:
        s = pw(r, avoid="\"\\")
        d = {"http-basic": {"repo.packagist.com": {"username": "token", "password": s}}}
    return ".config/composer/auth.json", json.dumps(d, indent=4), s, "composer auth"


@fam("maven-settings-password")
def _(c):
    r = c.r
    p = pw(r, avoid="<>&\"'")
    body = f"""<?xml version="1.0" encoding="UTF-8"?>
<settings xmlns="http://maven.apache.org/SETTINGS/1.2.0"
          xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
          xsi:schemaLocation="http://maven.apache.org/SETTINGS/1.2.0 https://maven.apache.org/xsd/settings-1.2.0.xsd">
  <servers>
    <server>
      <id>{r.choice(['nexus-releases', 'ossrh', 'artifactory'])}</id>
      <username>{username(r)}</username>
      <password>{p}</password>
    </server>
  </servers>
  <mirrors>
    <mirror>
      <id>central-mirror</id>
      <url>https://nexus.{domain(r)}/repository/maven-public/</url>
      <mirrorOf>central</mirrorOf>
    </mirror>
  </mirrors>
</settings>
"""
    return ".m2/settings.xml", body, p, "<password>"


@fam("gradle-properties-password")
def _(c):
    r = c.r
    p = pw(r, avoid="\\\n")
    key = r.choice(["ossrhPassword", "mavenCentralPassword", "signing.password", "artifactory_password", "nexusPassword"])
    body = f"""org.gradle.jvmargs=-Xmx4g -Dfile.encoding=UTF-8
org.gradle.parallel=true
org.gradle.caching=true
signing.keyId={pick(r, HEX.upper(), 8)}
signing.secretKeyRingFile=/home/{first(r)}/.gnupg/secring.gpg
{key.replace('Password', 'Username').replace('password', 'user')}={username(r)}
{key}={p}
"""
    return ".gradle/gradle.properties", body, p, key


@fam("nuget-cleartextpassword")
def _(c):
    r = c.r
    p = r.choice([gh_token(r), pw(r, avoid="<>&\"'")])
    body = f"""<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" protocolVersion="3" />
    <add key="github" value="https://nuget.pkg.github.com/{first(r)}/index.json" />
  </packageSources>
  <packageSourceCredentials>
    <github>
      <add key="Username" value="{first(r)}" />
      <add key="ClearTextPassword" value="{p}" />
    </github>
  </packageSourceCredentials>
</configuration>
"""
    return ".nuget/NuGet/NuGet.Config", body, p, "ClearTextPassword"


@fam("pip-conf-index-creds")
def _(c):
    r = c.r
    p = pw(r, avoid=" ")
    body = f"""[global]
index-url = https://{username(r)}:{quote(p, safe='')}@pypi.{domain(r)}/simple
timeout = 60
"""
    return ".config/pip/pip.conf", body, quote(p, safe=""), "creds in index-url"


@fam("poetry-auth-toml")
def _(c):
    r = c.r
    p = pw(r, avoid="\"\\")
    body = f"""[http-basic.{r.choice(WORDS)}]
username = "{username(r)}"
password = "{p}"
"""
    return ".config/pypoetry/auth.toml", body, p, "http-basic password"


# ============================================================ databases
@fam("pgpass")
def _(c):
    r = c.r
    p = pw(r, avoid=":\\\n")
    body = f"""# hostname:port:database:username:password
localhost:5432:*:postgres:{p}
"""
    if r.random() < .5:
        body = f"{host(r)}:5432:{r.choice(WORDS)}:{username(r)}:{p}\n"
    return ".pgpass", body, p, "pgpass password field"


@fam("my-cnf-password")
def _(c):
    r = c.r
    p = pw(r, avoid="\"\\\n#")
    body = f"""[client]
user={username(r)}
password="{p}"
host=127.0.0.1

[mysql]
auto-rehash
prompt=\\u@\\h [\\d]>\\_
"""
    return ".my.cnf", body, p, "[client] password"


@fam("mongorc-auth")
def _(c):
    r = c.r
    p = pw(r, avoid="\"\\")
    body = f"""// ~/.mongorc.js
DBQuery.shellBatchSize = 50;
db = connect("localhost:27017/admin");
db.auth("{username(r)}", "{p}");
prompt = function() {{ return db.getName() + "> "; }};
"""
    return ".mongorc.js", body, p, "db.auth"


@fam("mongosh-uri")
def _(c):
    r = c.r
    p = pw(r)
    body = f"""// .mongoshrc.js
config.set("historyLength", 5000);
const prod = "mongodb+srv://{username(r)}:{quote(p, safe='')}@cluster0.{pick(r, LOW + DIG, 5)}.mongodb.net/?retryWrites=true&w=majority";
function connectProd() {{ return connect(prod); }}
"""
    return ".mongoshrc.js", body, quote(p, safe=""), "password in connection URI"


@fam("redis-requirepass")
def _(c):
    r = c.r
    p = pw(r, avoid=" \"\n")
    body = f"""bind 127.0.0.1 -::1
port 6379
daemonize no
save 900 1
dir ./
requirepass {p}
maxmemory 256mb
"""
    return "dev/redis/redis.conf", body, p, "requirepass"


@fam("rediscli-history-auth")
def _(c):
    r = c.r
    p = pw(r, avoid=" \n")
    body = f"""KEYS *
AUTH {p}
INFO memory
GET session:{pick(r, HEX, 8)}
FLUSHDB
"""
    return ".rediscli_history", body, p, "AUTH in history"


@fam("dbeaver-credentials-config")
def _(c):
    r = c.r
    p = pw(r)
    cid = "postgres-jdbc-%x-%x" % (r.getrandbits(44), r.getrandbits(40))
    plain = json.dumps({cid: {"#connection": {"user": username(r), "password": p}}})
    blob = dbeaver_encrypt(r, plain)
    return ".local/share/DBeaverData/workspace6/General/.dbeaver/credentials-config.json", blob, "<binary:%s>" % blob[:8].hex(), \
        "AES with DBeaver's public default key; holds password " + p


@fam("jetbrains-datasource-url")
def _(c):
    r = c.r
    p = pw(r, avoid="&<>\"';")
    body = f"""<?xml version="1.0" encoding="UTF-8"?>
<project version="4">
  <component name="DataSourceManagerImpl" format="xml" multifile-model="true">
    <data-source source="LOCAL" name="prod@{host(r)}" uuid="{rand_uuid(r)}">
      <driver-ref>mysql.8</driver-ref>
      <synchronize>true</synchronize>
      <jdbc-driver>com.mysql.cj.jdbc.Driver</jdbc-driver>
      <jdbc-url>jdbc:mysql://{host(r)}:3306/app?user={username(r)}&amp;password={p}</jdbc-url>
      <working-dir>$ProjectFileDir$</working-dir>
    </data-source>
  </component>
</project>
"""
    return "code/%s/.idea/dataSources.xml" % r.choice(WORDS), body, p, "password in jdbc-url"


# ============================================================ cloud / CLIs
@fam("s3cfg-secret")
def _(c):
    r = c.r
    s = aws_secret(r)
    body = f"""[default]
access_key = {aws_keyid(r)}
secret_key = {s}
host_base = s3.amazonaws.com
host_bucket = %(bucket)s.s3.amazonaws.com
use_https = True
signature_v2 = False
"""
    return ".s3cfg", body, s, "secret_key"


@fam("boto-credentials")
def _(c):
    r = c.r
    if r.random() < .5:
        s = aws_secret(r)
        body = f"[Credentials]\naws_access_key_id = {aws_keyid(r)}\naws_secret_access_key = {s}\n\n[Boto]\nhttps_validate_certificates = True\n"
    else:
        s = google_refresh(r)
        body = f"[Credentials]\ngs_oauth2_refresh_token = {s}\n\n[GSUtil]\ndefault_project_id = {r.choice(WORDS)}-{r.randint(100000, 999999)}\n"
    return ".boto", body, s, "boto credentials"


@fam("aws-credentials")
def _(c):
    r = c.r
    s = aws_secret(r)
    body = f"""[default]
aws_access_key_id = {aws_keyid(r)}
aws_secret_access_key = {s}

[{r.choice(WORDS)}]
role_arn = arn:aws:iam::{r.randint(10**11, 10**12 - 1)}:role/Admin
source_profile = default
"""
    return ".aws/credentials", body, s, "aws_secret_access_key"


@fam("aws-session-token")
def _(c):
    r = c.r
    st = "IQoJb3JpZ2luX2Vj" + pick(r, ALNUM + "/+", 340) + "=="
    body = f"""[tmp]
aws_access_key_id = {aws_keyid(r, 'ASIA')}
aws_secret_access_key = {aws_secret(r)}
aws_session_token = {st}
"""
    return ".aws/credentials", body, st, "ASIA temp creds with session token"


@fam("aws-sso-cache")
def _(c):
    r = c.r
    t = "aoa" + pick(r, ALNUM, 30) + ":" + pick(r, ALNUM + "/+", 300)
    body = json.dumps({"startUrl": "https://d-%s.awsapps.com/start" % pick(r, DIG + "abcdef", 10), "region": "eu-central-1",
                       "accessToken": t, "expiresAt": ts(r, 2024, 2026).strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "clientId": pick(r, ALNUM + "-_", 22), "clientSecret": jwt(r, alg="HS384", siglen=48),
                       "refreshToken": "aor" + pick(r, ALNUM, 300)})
    return ".aws/sso/cache/%s.json" % hashlib.sha1(r.randbytes(8)).hexdigest(), body, t, "SSO accessToken"


@fam("gcloud-adc-authorized-user")
def _(c):
    r = c.r
    rt = google_refresh(r)
    body = json.dumps({"account": "", "client_id": "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com",
                       "client_secret": "d-FL95Q19q7MQmFpd7hHD0Ty", "quota_project_id": "%s-%d" % (r.choice(WORDS), r.randint(1000, 9999)),
                       "refresh_token": rt, "type": "authorized_user", "universe_domain": "googleapis.com"}, indent=2)
    return ".config/gcloud/application_default_credentials.json", body, rt, "refresh_token"


@fam("gcloud-service-account-key")
def _(c):
    r = c.r
    k = rsa_key(r, 2048)
    pem = pem_pkcs8(k)
    proj = "%s-%d" % (r.choice(WORDS), r.randint(100000, 999999))
    sa = "%s@%s.iam.gserviceaccount.com" % (r.choice(["deployer", "terraform", "ci", "backup"]), proj)
    body = json.dumps({"type": "service_account", "project_id": proj, "private_key_id": pick(r, HEX, 40), "private_key": pem,
                       "client_email": sa, "client_id": str(r.randint(10**20, 10**21)),
                       "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token",
                       "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
                       "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/" + quote(sa),
                       "universe_domain": "googleapis.com"}, indent=2)
    return r.choice([".config/gcloud/keys/%s.json" % proj, "keys/%s-sa.json" % proj]), body, pem.splitlines()[1], "private_key"


@fam("azure-msal-token-cache")
def _(c):
    r = c.r
    oid, tid = rand_uuid(r), rand_uuid(r)
    rt = "1.A" + pick(r, ALNUM + "_-", 400)
    hid = oid + "." + tid
    body = json.dumps({"RefreshToken": {hid + "-login.microsoftonline.com-refreshtoken-04b07795-8ddb-461a-bbee-02f9e1bf7b46--": {
        "home_account_id": hid, "environment": "login.microsoftonline.com", "credential_type": "RefreshToken",
        "client_id": "04b07795-8ddb-461a-bbee-02f9e1bf7b46", "secret": rt, "last_modification_time": str(int(ts(r).timestamp()))}},
        "Account": {hid + "-login.microsoftonline.com-" + tid: {"home_account_id": hid, "username": email(r), "authority_type": "MSSTS"}}},
        indent=2)
    return ".azure/msal_token_cache.json", body, rt, "RefreshToken secret"


@fam("azure-sp-secret")
def _(c):
    r = c.r
    s = pick(r, ALNUM, 3) + str(r.randint(0, 9)) + "Q~" + pick(r, ALNUM + "_.-~", 34)
    body = json.dumps({"client_id": rand_uuid(r), "client_secret": s, "tenant_id": rand_uuid(r),
                       "subscription_id": rand_uuid(r)}, indent=2)
    return ".azure/sp-terraform.json", body, s, "client secret"


@fam("kubeconfig-token")
def _(c):
    r = c.r
    t = jwt(r, {"kubernetes.io/serviceaccount/namespace": "kube-system"})
    ca = c.ca()
    body = f"""apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: {b64(ca.pem().encode())}
    server: https://{ip(r)}:6443
  name: homelab
contexts:
- context:
    cluster: homelab
    user: admin
  name: homelab
current-context: homelab
preferences: {{}}
users:
- name: admin
  user:
    token: {t}
"""
    return ".kube/config", body, t, "bearer token"


@fam("kubeconfig-client-key")
def _(c):
    r = c.r
    ca = c.ca()
    k = rsa_key(r, 2048) if r.random() < .3 else ec_key(r)
    cert, _ = ca.leaf("kubernetes-admin", k)
    kd = b64(pem_trad(k).encode())
    body = f"""apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {b64(ca.pem().encode())}
    server: https://127.0.0.1:{r.randint(30000, 45000)}
  name: kind-kind
contexts:
- context:
    cluster: kind-kind
    user: kind-kind
  name: kind-kind
current-context: kind-kind
kind: Config
preferences: {{}}
users:
- name: kind-kind
  user:
    client-certificate-data: {b64(cert.encode())}
    client-key-data: {kd}
"""
    return ".kube/config", body, kd[:40], "client-key-data"


@fam("minikube-client-key")
def _(c):
    r = c.r
    k = rsa_key(r, 2048)
    pem = pem_trad(k)
    return ".minikube/profiles/minikube/client.key", pem, pem.splitlines()[1], "RSA client key"


@fam("vault-token-file")
def _(c):
    r = c.r
    t = vault_token(r)
    return ".vault-token", t, t, "vault token, no newline"


@fam("ansible-vault-password-file")
def _(c):
    r = c.r
    p = pw(r, avoid="\n")
    return r.choice([".vault_pass.txt", ".ansible/vault-password", ".config/ansible/vault_pass"]), p + "\n", p, \
        "vault password file (only the password)"


@fam("gh-hosts-yml")
def _(c):
    r = c.r
    t = gh_token(r, "gho_")
    u = first(r)
    body = f"""github.com:
    user: {u}
    oauth_token: {t}
    git_protocol: ssh
"""
    return ".config/gh/hosts.yml", body, t, "oauth_token"


@fam("glab-config-token")
def _(c):
    r = c.r
    t = glpat(r)
    body = f"""git_protocol: ssh
editor: nvim
browser:
glamour_style: dark
check_update: true
hosts:
    gitlab.com:
        api_protocol: https
        api_host: gitlab.com
        token: {t}
        user: {first(r)}
"""
    return ".config/glab-cli/config.yml", body, t, "glab token"


@fam("hub-config-token")
def _(c):
    r = c.r
    t = pick(r, HEX, 40)
    body = f"""github.com:
- user: {first(r)}
  oauth_token: {t}
  protocol: https
"""
    return ".config/hub", body, t, "legacy 40-hex oauth token"


@fam("tea-gitea-token")
def _(c):
    r = c.r
    t = pick(r, HEX, 40)
    body = f"""logins:
- name: {r.choice(WORDS)}
  url: https://git.{domain(r)}
  token: {t}
  default: true
  ssh_host: git.{domain(r)}
  user: {first(r)}
preferences:
  editor: false
"""
    return ".config/tea/config.yml", body, t, "gitea token"


@fam("terraform-credentials-tfrc")
def _(c):
    r = c.r
    t = tfc_token(r)
    body = json.dumps({"credentials": {"app.terraform.io": {"token": t}}}, indent=2)
    return ".terraform.d/credentials.tfrc.json", body, t, "TFC token"


@fam("doctl-config")
def _(c):
    r = c.r
    t = "dop_v1_" + pick(r, HEX, 64)
    body = f"""access-token: {t}
context: default
output: text
"""
    return ".config/doctl/config.yaml", body, t, "DO token"


@fam("hcloud-cli-toml")
def _(c):
    r = c.r
    t = pick(r, ALNUM, 64)
    body = f"""active_context = "{r.choice(WORDS)}"

[[contexts]]
  name = "{r.choice(WORDS)}"
  token = "{t}"
"""
    return ".config/hcloud/cli.toml", body, t, "Hetzner token"


@fam("linode-cli")
def _(c):
    r = c.r
    t = pick(r, HEX, 64)
    u = first(r)
    body = f"""[DEFAULT]
default-user = {u}

[{u}]
token = {t}
region = eu-central
type = g6-standard-1
image = linode/debian12
"""
    return ".config/linode-cli", body, t, "linode token"


@fam("ngrok-authtoken")
def _(c):
    r = c.r
    t = "2" + pick(r, ALNUM, 26) + "_" + pick(r, ALNUM, 33)
    body = f'version: "2"\nauthtoken: {t}\nregion: eu\n'
    return ".config/ngrok/ngrok.yml", body, t, "authtoken"


@fam("cloudflared-cert-pem")
def _(c):
    r = c.r
    tok = b64(json.dumps({"zoneID": pick(r, HEX, 32), "accountID": pick(r, HEX, 32),
                          "apiToken": pick(r, ALNUM + "_-", 40)}).encode())
    body = "-----BEGIN ARGO TUNNEL TOKEN-----\n" + wrap(tok) + "\n-----END ARGO TUNNEL TOKEN-----\n"
    return ".cloudflared/cert.pem", body, wrap(tok).splitlines()[0], "argo tunnel token"


@fam("certbot-cloudflare-ini")
def _(c):
    r = c.r
    t = pick(r, ALNUM + "_-", 40)
    body = f"# Cloudflare API token used by Certbot\ndns_cloudflare_api_token = {t}\n"
    return ".secrets/certbot/cloudflare.ini", body, t, "cloudflare api token"


@fam("influx-configs")
def _(c):
    r = c.r
    t = b64(r.randbytes(64))
    body = f"""[default]
  url = "http://localhost:8086"
  token = "{t}"
  org = "{r.choice(WORDS)}"
  active = true
"""
    return ".influxdbv2/configs", body, t, "influx token"


@fam("sentryclirc")
def _(c):
    r = c.r
    t = "sntryu_" + pick(r, HEX, 64)
    body = f"[auth]\ntoken={t}\n\n[defaults]\norg={r.choice(WORDS)}\nproject={r.choice(WORDS)}\n"
    return ".sentryclirc", body, t, "sentry token"


@fam("stripe-cli-config")
def _(c):
    r = c.r
    k = "rk_live_51" + pick(r, ALNUM, 97)
    body = f"""color = ''
[default]
  account_id = 'acct_{pick(r, ALNUM, 16)}'
  device_name = '{first(r)}-laptop'
  display_name = '{r.choice(WORDS).capitalize()} GmbH'
  live_mode_api_key = '{k}'
  live_mode_key_expires_at = '{ts(r, 2025, 2026).date()}'
  live_mode_pub_key = 'pk_live_51{pick(r, ALNUM, 97)}'
"""
    return ".config/stripe/config.toml", body, k, "restricted live key"


@fam("huggingface-token")
def _(c):
    r = c.r
    t = "hf_" + pick(r, LOW + UP, 34)
    return ".cache/huggingface/token", t, t, "HF token file"


@fam("llm-keys-json")
def _(c):
    r = c.r
    t = r.choice(["sk-proj-" + pick(r, ALNUM + "_-", 156), "sk-ant-api03-" + pick(r, ALNUM + "_-", 93) + "AA"])
    body = json.dumps({"// Note": "This file stores secret API credentials. Do not share!",
                       "openai" if t.startswith("sk-proj") else "anthropic": t}, indent=2)
    return ".config/io.datasette.llm/keys.json", body, t, "LLM API key"


@fam("sgptrc-openai")
def _(c):
    r = c.r
    t = "sk-" + pick(r, ALNUM, 48)
    body = f"""CHAT_CACHE_PATH=/tmp/chat_cache
CACHE_LENGTH=100
OPENAI_API_KEY={t}
DEFAULT_MODEL=gpt-4o
DEFAULT_COLOR=magenta
"""
    return ".config/shell_gpt/.sgptrc", body, t, "legacy OpenAI key"


@fam("copilot-hosts-json")
def _(c):
    r = c.r
    t = gh_token(r, "ghu_")
    body = json.dumps({"github.com": {"user": first(r), "oauth_token": t, "githubAppId": "Iv1.b507a08c87ecfe98"}})
    return ".config/github-copilot/hosts.json", body, t, "ghu_ token"


@fam("wakatime-cfg")
def _(c):
    r = c.r
    t = "waka_" + rand_uuid(r)
    body = f"[settings]\napi_key = {t}\ndebug = false\nhidefilenames = false\n"
    return ".wakatime.cfg", body, t, "api_key"


@fam("todoist-config")
def _(c):
    r = c.r
    t = pick(r, HEX, 40)
    body = json.dumps({"token": t, "color": True}, indent=2)
    return ".config/todoist/config.json", body, t, "todoist token"


@fam("gitlab-runner-token")
def _(c):
    r = c.r
    t = "glrt-" + pick(r, ALNUM + "_-", 20)
    body = f"""concurrent = 1
check_interval = 0

[[runners]]
  name = "{first(r)}-laptop"
  url = "https://gitlab.com"
  token = "{t}"
  executor = "docker"
  [runners.docker]
    image = "alpine:latest"
    privileged = false
"""
    return ".gitlab-runner/config.toml", body, t, "runner token"


@fam("httpie-session")
def _(c):
    r = c.r
    p = pw(r, avoid="\"\\")
    raw = "%s:%s" % (username(r), p)
    body = json.dumps({"__meta__": {"about": "HTTPie session file", "help": "https://httpie.io/docs#sessions", "httpie": "3.2.2"},
                       "auth": {"password": None, "type": "basic", "raw_auth": raw}, "cookies": [], "headers": []}, indent=4)
    return ".config/httpie/sessions/api.%s/default.json" % domain(r).replace(".", "_"), body, p, "raw_auth"


@fam("restic-env")
def _(c):
    r = c.r
    p = pw(r, avoid="\"$`\\")
    body = f"""export RESTIC_REPOSITORY="sftp:backup@{host(r)}:/srv/restic/{first(r)}"
export RESTIC_PASSWORD="{p}"
export RESTIC_CACHE_DIR="$HOME/.cache/restic"
"""
    return r.choice([".config/restic/env", ".restic-env"]), body, p, "RESTIC_PASSWORD"


@fam("restic-password-file")
def _(c):
    r = c.r
    p = pw(r, avoid="\n")
    return ".config/restic/password", p + "\n", p, "repository password file"


@fam("borg-env")
def _(c):
    r = c.r
    p = pw(r, avoid="'")
    body = f"""#!/bin/sh
export BORG_REPO='ssh://{first(r)}@{host(r)}:23/./borg'
export BORG_PASSPHRASE='{p}'
borg create --stats --compression zstd ::'{{hostname}}-{{now}}' ~/Documents ~/Pictures
"""
    return ".local/bin/backup.sh", body, p, "BORG_PASSPHRASE"


@fam("systemd-unit-env")
def _(c):
    r = c.r
    t = r.choice([gh_token(r), pw(r, avoid=" \"%\\"), "sk-" + pick(r, ALNUM, 48)])
    body = f"""[Unit]
Description=Sync bot
After=network-online.target

[Service]
Type=simple
Environment=BOT_TOKEN={t}
ExecStart=%h/.local/bin/syncbot --daemon
Restart=on-failure

[Install]
WantedBy=default.target
"""
    return ".config/systemd/user/syncbot.service", body, t, "Environment= token"


@fam("crontab-curl-user")
def _(c):
    r = c.r
    p = pw(r, avoid=" '\"%")
    body = f"""# m h  dom mon dow   command
*/15 * * * * curl -fsS -u {username(r)}:{p} https://{host(r)}/nic/update?hostname=home >/dev/null
0 3 * * * /home/{first(r)}/.local/bin/backup.sh
"""
    return "crontab.txt", body, p, "curl -u in crontab"


@fam("dotenv-database-url")
def _(c):
    r = c.r
    p = pw(r)
    body = f"""APP_ENV=production
DEBUG=false
DATABASE_URL=postgres://{username(r)}:{quote(p, safe='')}@{host(r)}:5432/{r.choice(WORDS)}
REDIS_URL=redis://localhost:6379/0
"""
    return "code/%s/.env" % r.choice(WORDS), body, quote(p, safe=""), "password in DATABASE_URL"


@fam("dotenv-eth-private-key")
def _(c):
    r = c.r
    k = "0x" + r.randrange(1, K1_N).to_bytes(32, "big").hex()
    body = f"""SEPOLIA_RPC_URL=https://sepolia.infura.io/v3/{pick(r, HEX, 32)}
PRIVATE_KEY={k}
ETHERSCAN_API_KEY={pick(r, UP + DIG, 34)}
"""
    return "code/%s-contracts/.env" % r.choice(WORDS), body, k, "raw ethereum private key"


@fam("twilio-dotenv")
def _(c):
    r = c.r
    t = pick(r, HEX, 32)
    body = f"TWILIO_ACCOUNT_SID=AC{pick(r, HEX, 32)}\nTWILIO_AUTH_TOKEN={t}\nTWILIO_FROM=+4915{r.randint(10**8, 10**9)}\n"
    return "code/%s/.env.local" % r.choice(WORDS), body, t, "twilio auth token"


# ============================================================ keys
@fam("openssh-private-ed25519")
def _(c):
    r = c.r
    k = ed_key(r)
    body = openssh_private(k, "%s@%s" % (first(r), r.choice(WORDS)), r)
    return ".ssh/" + r.choice(["id_ed25519", "id_ed25519_github", "deploy_key", "homelab"]), body, body.splitlines()[1], "unencrypted"


@fam("openssh-private-rsa")
def _(c):
    r = c.r
    k = rsa_key(r, r.choice([2048, 3072]))
    body = openssh_private(k, "%s@%s" % (first(r), r.choice(WORDS)), r)
    return ".ssh/id_rsa", body, body.splitlines()[1], "unencrypted"


@fam("openssh-private-ecdsa")
def _(c):
    r = c.r
    k = ec_key(r, r.choice(["P-256", "P-384", "P-521"]))
    body = openssh_private(k, "%s@%s" % (first(r), r.choice(WORDS)), r)
    return ".ssh/id_ecdsa", body, body.splitlines()[1], "unencrypted"


@fam("pem-rsa-traditional")
def _(c):
    r = c.r
    k = rsa_key(r, 2048)
    body = pem_trad(k)
    return r.choice([".ssh/aws-%s.pem" % r.choice(WORDS), ".ssh/id_rsa", "keys/server.key"]), body, body.splitlines()[1], "BEGIN RSA PRIVATE KEY"


@fam("pem-ec-traditional")
def _(c):
    r = c.r
    k = ec_key(r, r.choice(["P-256", "P-384"]))
    body = pem_trad(k)
    return r.choice(["keys/%s.key" % r.choice(WORDS), ".config/%s/tls.key" % r.choice(WORDS)]), body, body.splitlines()[1], "BEGIN EC PRIVATE KEY"


@fam("pem-dsa-traditional")
def _(c):
    r = c.r
    k = dsa_key(r)
    body = pem_trad(k)
    return ".ssh/id_dsa", body, body.splitlines()[1], "BEGIN DSA PRIVATE KEY"


@fam("pem-pkcs8")
def _(c):
    r = c.r
    k = r.choice([lambda: ed_key(r), lambda: ec_key(r)])()
    body = pem_pkcs8(k)
    return r.choice(["keys/signing.pem", ".config/%s/private.pem" % r.choice(WORDS), "certs/privkey.pem"]), body, \
        body.splitlines()[1], "BEGIN PRIVATE KEY"


@fam("pem-key-and-cert-bundle")
def _(c):
    r = c.r
    cert, k = c.ca().leaf("%s.%s" % (r.choice(WORDS), domain(r)))
    kp = pem_pkcs8(k)
    body = cert + kp
    return "certs/%s-bundle.pem" % r.choice(WORDS), body, kp.splitlines()[1], "cert followed by its private key"


@fam("putty-ppk-v2")
def _(c):
    r = c.r
    k = r.choice([lambda: ed_key(r), lambda: rsa_key(r, 2048)])()
    body = ppk(k, "%s-key-%s" % (r.choice(["rsa", "eddsa"]), ts(r).strftime("%Y%m%d")), 2)
    return "putty/%s.ppk" % r.choice(WORDS), body, "Private-Lines", "unencrypted PPK v2"


@fam("putty-ppk-v3")
def _(c):
    r = c.r
    k = ed_key(r)
    body = ppk(k, "eddsa-key-%s" % ts(r).strftime("%Y%m%d"), 3)
    return ".putty/keys/%s.ppk" % first(r), body, "Private-Lines", "unencrypted PPK v3"


@fam("gpg-exported-secret-key")
def _(c):
    r = c.r
    arm, fpr = c_pgp = pgp_key(r, "%s %s <%s>" % (first(r).capitalize(), r.choice(LAST).capitalize(), email(r)), secret=True)
    return r.choice(["backup/gpg-secret-%s.asc" % fpr[-8:], ".gnupg/backup/secret.asc"]), arm, arm.splitlines()[2], \
        "unprotected (s2k usage 0) EdDSA secret key"


@fam("age-identity")
def _(c):
    r = c.r
    sk, pk = age_identity(r)
    body = f"# created: {ts(r).strftime('%Y-%m-%dT%H:%M:%S+01:00')}\n# public key: {pk}\n{sk}\n"
    return r.choice([".config/sops/age/keys.txt", ".age/key.txt", ".config/age/identity.txt"]), body, sk, "age secret key"


@fam("minisign-secret-key")
def _(c):
    r = c.r
    k = ed_key(r)
    priv, pub = ed_raw(k)
    keynum = r.randbytes(8)
    sk = priv + pub
    chk = hashlib.blake2b(b"Ed" + keynum + sk, digest_size=32).digest()
    blob = b"Ed" + b"\x00\x00" + b"B2" + b"\x00" * 32 + b"\x00" * 8 + b"\x00" * 8 + keynum + sk + chk
    body = "untrusted comment: minisign secret key\n" + b64(blob) + "\n"
    return ".minisign/minisign.key", body, b64(blob), "unencrypted (-W) minisign key"


@fam("signify-secret-key")
def _(c):
    r = c.r
    k = ed_key(r)
    priv, pub = ed_raw(k)
    sk = priv + pub
    blob = b"Ed" + b"BK" + struct.pack(">I", 0) + r.randbytes(16) + hashlib.sha512(sk).digest()[:8] + r.randbytes(8) + sk
    body = "untrusted comment: signify secret key\n" + b64(blob) + "\n"
    return "keys/%s.sec" % r.choice(WORDS), body, b64(blob), "signify -n (no passphrase)"


@fam("ssh-key-in-notes")
def _(c):
    r = c.r
    k = ed_key(r)
    priv = openssh_private(k, "deploy@%s" % r.choice(WORDS), r)
    body = f"""# Server setup notes

Deploy key for the {r.choice(WORDS)} repo (read-only). Put it on the build box as ~/.ssh/deploy:

```
{priv}```

Public half is already in GitHub settings: `{ssh_pub_line(k, 'deploy')}`
"""
    return "notes/server-setup.md", body, priv.splitlines()[1], "private key pasted into markdown"


@fam("wg-key-in-notes")
def _(c):
    r = c.r
    k = b64(r.randbytes(32))
    body = f"""phone wireguard:
  privkey: {k}
  pubkey:  {b64(r.randbytes(32))}
  ip 10.6.0.{r.randint(2, 99)}
"""
    return "notes/vpn.txt", body, k, "wg privkey in note"


# ============================================================ wallets / recovery
@fam("bip39-note")
def _(c):
    r = c.r
    n = r.choice([12, 24])
    ph = bip39_phrase(r, n)
    style = r.randint(0, 2)
    if style == 0:
        body = f"ledger recovery phrase ({ts(r).date()}):\n{ph}\n"
    elif style == 1:
        body = "Seed words\n" + "\n".join("%d. %s" % (i + 1, w) for i, w in enumerate(ph.split())) + "\n"
    else:
        body = f"- [ ] buy steel backup plate\n- [ ] metamask seed: {ph}\n- [ ] move funds\n"
    return r.choice(["notes/crypto.txt", "Documents/seed.txt", "notes/todo.md"]), body, ph.split()[0] if style == 1 else ph, \
        "BIP39 %d words" % n


@fam("electrum-wallet-unencrypted")
def _(c):
    r = c.r
    seed = electrum_seed(r)
    xprv = xkey(r, True, bytes.fromhex("04b2430c"))
    body = json.dumps({"addr_history": {}, "keystore": {"pw_hash_version": 1, "seed": seed, "type": "bip32", "xprv": xprv,
                                                         "xpub": xkey(r, False, bytes.fromhex("04b24746"))},
                       "seed_type": "segwit", "seed_version": 59, "use_encryption": False, "wallet_type": "standard"}, indent=4)
    return ".electrum/wallets/default_wallet", body, seed, "electrum seed + zprv, not encrypted"


@fam("electrum-seed-note")
def _(c):
    r = c.r
    seed = electrum_seed(r)
    return "notes/electrum.txt", "electrum wallet seed (segwit):\n%s\n" % seed, seed, "electrum v2 seed"


@fam("monero-mnemonic")
def _(c):
    r = c.r
    s = monero_seed(r)
    body = f"Monero GUI wallet '{r.choice(WORDS)}'\nrestore height: {r.randint(2500000, 3200000)}\n\n{s}\n"
    return "notes/xmr-wallet.txt", body, s, "25-word monero seed"


@fam("btc-wif-note")
def _(c):
    r = c.r
    w = btc_wif(r)
    body = f"paper wallet {ts(r).year}\naddress: {btc_p2pkh(r)}\nprivkey (WIF): {w}\n"
    return "notes/paper-wallet.txt", body, w, "WIF"


@fam("xprv-note")
def _(c):
    r = c.r
    x = xkey(r, True)
    body = f"cold wallet master key\n{x}\n"
    return "notes/wallet-backup.txt", body, x, "BIP32 xprv"


@fam("eth-key-note")
def _(c):
    r = c.r
    k = r.randrange(1, K1_N).to_bytes(32, "big").hex()
    body = f"metamask account 2 export\naddress {eth_addr(r)}\nprivate key: {k}\n"
    return "notes/metamask.txt", body, k, "raw hex key"


# ============================================================ browser / session data
@fam("cookie-jar-session")
def _(c):
    r = c.r
    d = r.choice(["github.com", "gitlab.com", "www.reddit.com", "app.slack.com", domain(r)])
    name, val = r.choice([("user_session", pick(r, ALNUM + "_-", 48)), ("sessionid", pick(r, LOW + DIG, 32)),
                          ("_session_id", pick(r, HEX, 32)), ("PHPSESSID", pick(r, LOW + DIG, 26)),
                          ("connect.sid", "s%3A" + pick(r, ALNUM + "_-", 32) + "." + pick(r, ALNUM, 43))])
    exp = int(ts(r, 2025, 2027).timestamp())
    body = f"""# Netscape HTTP Cookie File
# https://curl.se/docs/http-cookies.html
# This file was generated by libcurl! Edit at your own risk.

.{d}	TRUE	/	FALSE	{exp}	_ga	GA1.2.{r.randint(10**8, 10**9)}.{r.randint(1600000000, 1700000000)}
#HttpOnly_.{d}	TRUE	/	TRUE	{exp}	{name}	{val}
.{d}	TRUE	/	FALSE	{exp}	theme	dark
"""
    return r.choice(["cookies.txt", ".local/share/yt-dlp/cookies.txt", "Downloads/cookies-%s.txt" % d.split(".")[-2]]), body, val, \
        "session cookie " + name


@fam("har-authorization")
def _(c):
    r = c.r
    t = jwt(r)
    d = "api." + domain(r)
    ent = {"startedDateTime": ts(r).isoformat(), "time": r.randint(20, 800),
           "request": {"method": "GET", "url": "https://%s/v1/me" % d, "httpVersion": "HTTP/2",
                       "headers": [{"name": ":authority", "value": d}, {"name": "accept", "value": "application/json"},
                                   {"name": "authorization", "value": "Bearer " + t},
                                   {"name": "user-agent", "value": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"}],
                       "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
           "response": {"status": 200, "statusText": "", "httpVersion": "HTTP/2", "headers": [{"name": "content-type", "value": "application/json"}],
                        "cookies": [], "content": {"size": 84, "mimeType": "application/json"}, "redirectURL": "", "headersSize": -1, "bodySize": 84},
           "cache": {}, "timings": {"send": 0, "wait": 120, "receive": 2}}
    body = json.dumps({"log": {"version": "1.2", "creator": {"name": "Firefox", "version": "128.0"}, "pages": [], "entries": [ent]}}, indent=2)
    return "Downloads/%s.har" % d, body, t, "Authorization Bearer header"


@fam("har-basic-auth")
def _(c):
    r = c.r
    a = b64(("%s:%s" % (username(r), pw(r))).encode())
    ent = {"request": {"method": "POST", "url": "https://%s/login" % host(r), "headers": [{"name": "Authorization", "value": "Basic " + a}]},
           "response": {"status": 302, "headers": []}}
    body = json.dumps({"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "entries": [ent]}}, indent=1)
    return "Downloads/login.har", body, a, "Authorization Basic"


# ============================================================ desktop apps
@fam("keepassxc-browser-export")
def _(c):
    r = c.r
    key = b64(r.randbytes(32))
    h = hashlib.sha256(r.randbytes(16)).hexdigest()
    body = json.dumps({"settings": {"autoCompleteUsernames": True, "autoFillAndSend": False, "showNotifications": True},
                       "keyRing": {h: {"id": "firefox-" + pick(r, LOW, 6), "key": key, "hash": h,
                                       "created": ts(r).isoformat(), "lastUsed": ts(r).isoformat()}}}, indent=2)
    return "Downloads/keepassxc-browser-settings.json", body, key, "association key"


@fam("remmina-password")
def _(c):
    r = c.r
    enc = b64(r.randbytes(8 * r.randint(2, 4)))
    body = f"""[remmina]
password={enc}
gateway_username=
name={r.choice(WORDS).capitalize()} RDP
server={host(r)}:3389
protocol=RDP
username={username(r)}
domain=
colordepth=99
resolution_mode=2
window_maximize=1
ignore-tls-errors=1
"""
    return ".local/share/remmina/group_rdp_%s_%s.remmina" % (r.choice(WORDS), pick(r, DIG, 4)), body, enc, \
        "remmina 3DES password (key in remmina.pref)"


@fam("remmina-pref-secret")
def _(c):
    r = c.r
    s = b64(r.randbytes(32))
    body = f"""[remmina_pref]
secret={s}
save_view_mode=true
show_buttons_icons=0
default_action=0
scale_quality=0
"""
    return ".config/remmina/remmina.pref", body, s, "remmina encryption secret"


@fam("filezilla-sitemanager")
def _(c):
    r = c.r
    p = pw(r)
    pb = b64(p.encode())
    body = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>
<FileZilla3 version="3.66.4" platform="*nix">
	<Servers>
		<Server>
			<Host>{host(r)}</Host>
			<Port>22</Port>
			<Protocol>1</Protocol>
			<Type>0</Type>
			<User>{username(r)}</User>
			<Pass encoding="base64">{pb}</Pass>
			<Logontype>1</Logontype>
			<PasvMode>MODE_DEFAULT</PasvMode>
			<EncodingType>Auto</EncodingType>
			<BypassProxy>0</BypassProxy>
			<Name>{r.choice(WORDS)}</Name>
			<SyncBrowsing>0</SyncBrowsing>
			<DirectoryComparison>0</DirectoryComparison>
		</Server>
	</Servers>
</FileZilla3>
"""
    return ".config/filezilla/sitemanager.xml", body, pb, "base64 password"


@fam("filezilla-recentservers")
def _(c):
    r = c.r
    pb = b64(pw(r).encode())
    body = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>
<FileZilla3 version="3.63.0" platform="*nix">
	<RecentServers>
		<Server>
			<Host>ftp.{domain(r)}</Host>
			<Port>21</Port>
			<Protocol>0</Protocol>
			<Type>0</Type>
			<User>{username(r)}</User>
			<Pass encoding="base64">{pb}</Pass>
			<Logontype>1</Logontype>
		</Server>
	</RecentServers>
</FileZilla3>
"""
    return ".config/filezilla/recentservers.xml", body, pb, "base64 password"


@fam("mremoteng-confcons")
def _(c):
    r = c.r
    enc = mremoteng_encrypt(r, pw(r))
    body = f"""<?xml version="1.0" encoding="utf-8"?>
<mrng:Connections xmlns:mrng="http://mremoteng.org" Name="Connections" Export="false" EncryptionEngine="AES" BlockCipherMode="GCM" KdfIterations="1000" FullFileEncryption="false" Protected="{mremoteng_encrypt(r, 'ThisIsNotProtected')}" ConfVersion="2.6">
    <Node Name="{r.choice(WORDS)}" Type="Connection" Descr="" Icon="mRemoteNG" Panel="General" Id="{rand_uuid(r)}" Username="{username(r)}" Domain="" Password="{enc}" Hostname="{host(r)}" Protocol="RDP" Port="3389" />
</mrng:Connections>
"""
    return "Documents/mRemoteNG/confCons.xml", body, enc, "default-key mRemoteNG password"


@fam("vscode-settings-sqltools")
def _(c):
    r = c.r
    p = pw(r, avoid="\"\\")
    body = f"""{{
    "editor.fontSize": 14,
    "editor.formatOnSave": true,
    "workbench.colorTheme": "Default Dark Modern",
    "sqltools.connections": [
        {{
            "previewLimit": 50,
            "server": "{host(r)}",
            "port": 5432,
            "driver": "PostgreSQL",
            "name": "staging",
            "database": "{r.choice(WORDS)}",
            "username": "{username(r)}",
            "password": "{p}"
        }}
    ],
    "files.trimTrailingWhitespace": true
}}
"""
    return ".config/Code/User/settings.json", body, p, "sqltools password"


@fam("vscode-settings-restclient")
def _(c):
    r = c.r
    t = r.choice([gh_token(r), "sk-" + pick(r, ALNUM, 48), jwt(r)])
    body = f"""{{
    "terminal.integrated.fontFamily": "JetBrainsMono Nerd Font",
    "rest-client.environmentVariables": {{
        "$shared": {{}},
        "prod": {{
            "baseUrl": "https://api.{domain(r)}",
            "token": "{t}"
        }}
    }}
}}
"""
    return ".config/Code/User/settings.json", body, t, "rest-client token"


@fam("vscode-http-proxy-creds")
def _(c):
    r = c.r
    p = pw(r)
    body = f"""{{
    "http.proxy": "http://{username(r)}:{quote(p, safe='')}@proxy.{domain(r)}:3128",
    "http.proxyStrictSSL": false,
    "telemetry.telemetryLevel": "off"
}}
"""
    return ".config/Code/User/settings.json", body, quote(p, safe=""), "proxy URL creds"


@fam("syncthing-apikey")
def _(c):
    r = c.r
    k = pick(r, ALNUM, 32)
    body = f"""<configuration version="37">
    <device id="{'-'.join(pick(r, UP + '234567', 7) for _ in range(8))}" name="{first(r)}-laptop" compression="metadata" introducer="false">
        <address>dynamic</address>
    </device>
    <gui enabled="true" tls="false" debugging="false">
        <address>127.0.0.1:8384</address>
        <user>{first(r)}</user>
        <password>{bcrypt_hash(r, pw(r))}</password>
        <apikey>{k}</apikey>
        <theme>default</theme>
    </gui>
</configuration>
"""
    return ".local/state/syncthing/config.xml", body, k, "GUI apikey (password is a bcrypt hash)"


@fam("deluge-auth")
def _(c):
    r = c.r
    p = pw(r, avoid=":\n")
    body = f"localclient:{pick(r, HEX, 40)}:10\n{first(r)}:{p}:10\n"
    return ".config/deluge/auth", body, p, "cleartext deluge password (second line)"


@fam("aria2-rpc-secret")
def _(c):
    r = c.r
    s = pw(r, avoid="\n #")
    body = f"""dir=${{HOME}}/Downloads
continue=true
max-connection-per-server=8
enable-rpc=true
rpc-listen-all=false
rpc-secret={s}
"""
    return ".config/aria2/aria2.conf", body, s, "rpc-secret"


@fam("ytdlp-config-password")
def _(c):
    r = c.r
    p = pw(r, avoid=" \"'\\#")
    body = f"""# yt-dlp config
-o ~/Videos/%(uploader)s/%(title)s.%(ext)s
--embed-subs
--username {email(r)}
--password {p}
"""
    return ".config/yt-dlp/config", body, p, "--password"


@fam("spotifyd-password")
def _(c):
    r = c.r
    p = pw(r, avoid="\"\\")
    body = f"""[global]
username = "{username(r)}"
password = "{p}"
backend = "pulseaudio"
device_name = "{first(r)}-desktop"
bitrate = 320
"""
    return ".config/spotifyd/spotifyd.conf", body, p, "password"


@fam("mopidy-client-secret")
def _(c):
    r = c.r
    s = b64url(r.randbytes(30)) + "="
    body = f"""[spotify]
enabled = true
client_id = {rand_uuid(r)}
client_secret = {s}

[mpd]
hostname = 127.0.0.1
"""
    return ".config/mopidy/mopidy.conf", body, s, "client_secret"


@fam("pianobar-password")
def _(c):
    r = c.r
    p = pw(r, avoid="\n")
    body = f"user = {email(r)}\npassword = {p}\naudio_quality = high\nautostart_station = {r.randint(10**17, 10**18)}\n"
    return ".config/pianobar/config", body, p, "password"


@fam("newsboat-miniflux-password")
def _(c):
    r = c.r
    p = pw(r, avoid="\"\\")
    body = f"""urls-source "miniflux"
miniflux-url "https://rss.{domain(r)}/"
miniflux-login "{first(r)}"
miniflux-password "{p}"
auto-reload yes
reload-time 30
"""
    return ".config/newsboat/config", body, p, "miniflux-password"


@fam("vdirsyncer-password")
def _(c):
    r = c.r
    p = pw(r, avoid="\"\\")
    body = f"""[general]
status_path = "~/.local/share/vdirsyncer/status/"

[pair contacts]
a = "contacts_local"
b = "contacts_remote"
collections = ["from a", "from b"]

[storage contacts_local]
type = "filesystem"
path = "~/.local/share/contacts/"
fileext = ".vcf"

[storage contacts_remote]
type = "carddav"
url = "https://dav.{domain(r)}/"
username = "{email(r)}"
password = "{p}"
"""
    return ".config/vdirsyncer/config", body, p, "password"


@fam("mpd-password")
def _(c):
    r = c.r
    p = pw(r, avoid="@\"\\ ")
    body = f"""music_directory    "~/Music"
playlist_directory "~/.config/mpd/playlists"
db_file            "~/.config/mpd/database"
bind_to_address    "0.0.0.0"
password           "{p}@read,add,control,admin"
audio_output {{
    type  "pipewire"
    name  "PipeWire"
}}
"""
    return ".config/mpd/mpd.conf", body, p, "mpd password"


@fam("svn-simple-auth")
def _(c):
    r = c.r
    p = pw(r, avoid="\n")
    realm = "<https://svn.%s:443> %s Subversion Repository" % (domain(r), r.choice(WORDS).capitalize())
    u = username(r)
    body = f"K 8\npasstype\nV 6\nsimple\nK 8\npassword\nV {len(p)}\n{p}\nK 15\nsvn:realmstring\nV {len(realm)}\n{realm}\nK 8\nusername\nV {len(u)}\n{u}\nEND\n"
    return ".subversion/auth/svn.simple/" + hashlib.md5(realm.encode()).hexdigest(), body, p, "plaintext svn password"


@fam("lftp-bookmarks")
def _(c):
    r = c.r
    p = pw(r, avoid=" \t")
    body = f"{r.choice(WORDS)}\tftp://{username(r)}:{quote(p, safe='')}@ftp.{domain(r)}/pub\nmirror\tsftp://{first(r)}@{host(r)}/\n"
    return ".local/share/lftp/bookmarks", body, quote(p, safe=""), "password in bookmark URL"


@fam("atuin-session")
def _(c):
    r = c.r
    s = pick(r, ALNUM, 32)
    return ".local/share/atuin/session", s, s, "atuin sync session token"


@fam("onedrive-refresh-token")
def _(c):
    r = c.r
    t = "M.C" + str(r.randint(100, 999)) + "_BAY." + pick(r, ALNUM + "!*$", 300)
    return ".config/onedrive/refresh_token", t, t, "onedrive refresh token"


@fam("vnc-passwd")
def _(c):
    r = c.r
    p = pw(r, kind="alnum", maxlen=40)[:8].ljust(8, "\0")
    key = bytes(int("{:08b}".format(b)[::-1], 2) for b in bytes([23, 82, 107, 6, 35, 78, 88, 7]))
    try:
        from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
    except ImportError:
        from cryptography.hazmat.primitives.ciphers.algorithms import TripleDES
    e = Cipher(TripleDES(key * 3), modes.ECB()).encryptor()
    blob = e.update(p.encode()) + e.finalize()
    return ".vnc/passwd", blob, "<binary:%s>" % blob.hex(), "VNC DES-obfuscated password (fixed key)"


@fam("bitwarden-cli-data")
def _(c):
    r = c.r
    uid = rand_uuid(r)
    t = jwt(r, {"email": email(r), "scope": ["api", "offline_access"]})
    body = json.dumps({"global_account_activeAccountId": uid, "user_%s_token_accessToken" % uid: t,
                       "user_%s_token_refreshToken" % uid: b64url(r.randbytes(64)) + "==",
                       "global_environment_environment": {"region": "EU"}}, indent=2)
    return ".config/Bitwarden CLI/data.json", body, t, "access token"


# ============================================================ notes & history
@fam("passwords-txt")
def _(c):
    r = c.r
    p = pw(r)
    svc = r.choice(["amazon", "netflix", "bank", "router admin", "paypal", "steam", "ebay"])
    body = f"{svc}\n  user: {email(r)}\n  pass: {p}\n"
    return r.choice(["passwords.txt", "Documents/passwords.txt", "notes/logins.md"]), body, p, "plain password note"


@fam("todo-wifi-password")
def _(c):
    r = c.r
    p = pw(r, avoid=" ")
    body = f"""# TODO
- [x] renew passport
- [ ] call landlord about heating
- [ ] guest wifi for party: SSID "{r.choice(WORDS).capitalize()}-Guest", password {p}
- [ ] backup photos to NAS
"""
    return r.choice(["TODO.md", "notes/todo.txt"]), body, p, "wifi password in TODO"


@fam("pass-plaintext-export")
def _(c):
    r = c.r
    p = pw(r)
    body = f"{p}\nlogin: {email(r)}\nurl: https://{domain(r)}/login\n"
    return "notes/pass-export/%s.txt" % r.choice(WORDS), body, p, "password-store style entry in plain text (first line is the password)"


@fam("history-mysql-p")
def _(c):
    r = c.r
    p = pw(r, avoid=" '\"$`\\!&;|<>()*?")
    body = f"""ls -la
cd ~/code/{r.choice(WORDS)}
git status
mysql -u {username(r)} -p{p} -h {host(r)} {r.choice(WORDS)}
docker ps
"""
    return ".bash_history", body, p, "mysql -pSECRET"


@fam("history-sshpass")
def _(c):
    r = c.r
    p = pw(r, avoid=" '\"$`\\!&;|<>()*?")
    body = f""": {int(ts(r).timestamp())}:0;htop
: {int(ts(r).timestamp())}:0;sshpass -p '{p}' ssh {first(r)}@{ip(r)}
: {int(ts(r).timestamp())}:0;exit
"""
    return ".zsh_history", body, p, "sshpass -p"


@fam("history-curl-u")
def _(c):
    r = c.r
    p = pw(r, avoid=" '\"$`\\!&;|<>()*?")
    body = f"""- cmd: cd ~/Downloads
  when: {int(ts(r).timestamp())}
- cmd: curl -u {username(r)}:{p} https://{host(r)}/api/v1/status
  when: {int(ts(r).timestamp())}
"""
    return ".local/share/fish/fish_history", body, p, "curl -u user:pass"


@fam("history-docker-login")
def _(c):
    r = c.r
    p = r.choice(["dckr_pat_" + pick(r, ALNUM + "_-", 27), pw(r, avoid=" '\"$`\\!&;|<>()*?")])
    body = f"""vim Dockerfile
docker build -t {first(r)}/app .
docker login -u {first(r)} -p {p}
docker push {first(r)}/app
"""
    return ".bash_history", body, p, "docker login -p"


@fam("history-htpasswd-b")
def _(c):
    r = c.r
    p = pw(r, avoid=" '\"$`\\!&;|<>()*?")
    body = f"""sudo apt install apache2-utils
htpasswd -bc ~/srv/.htpasswd {username(r)} {p}
sudo systemctl reload nginx
"""
    return ".bash_history", body, p, "htpasswd -b"


@fam("history-export-token")
def _(c):
    r = c.r
    t = r.choice([gh_token(r), glpat(r), aws_secret(r), "sk-" + pick(r, ALNUM, 48)])
    body = f"""export EDITOR=nvim
export GITHUB_TOKEN={t}
gh repo list
"""
    return ".bash_history", body, t, "export TOKEN=..."


@fam("history-sshfs-password-stdin")
def _(c):
    r = c.r
    p = pw(r, avoid=" '\"$`\\!&;|<>()*?")
    body = f"""mkdir -p ~/mnt/nas
echo '{p}' | sshfs -o password_stdin {first(r)}@{ip(r)}:/volume1/home ~/mnt/nas
ls ~/mnt/nas
"""
    return ".bash_history", body, p, "echo pass | sshfs password_stdin"


@fam("history-psql-uri")
def _(c):
    r = c.r
    p = pw(r, avoid=" '\"$`\\!&;|<>()*?/@:#%")
    body = f"""psql postgresql://{username(r)}:{p}@{host(r)}:5432/{r.choice(WORDS)}
\\q
"""
    return ".bash_history", body, p, "psql URI"


@fam("history-az-login-sp")
def _(c):
    r = c.r
    s = pick(r, ALNUM, 3) + str(r.randint(0, 9)) + "Q~" + pick(r, ALNUM + "_.-", 34)
    body = f"az login --service-principal -u {rand_uuid(r)} -p {s} --tenant {rand_uuid(r)}\naz account show\n"
    return ".bash_history", body, s, "az login -p"
