"""Notes, documents, chat exports, password-manager exports (positive and negative)."""
import json, base64, csv, io, struct
import vals as V
from vals import pick, rs, password, user, host, dbname, org, repo, person, ssid

def date():
    return '%04d-%02d-%02d' % (V.R.randrange(2021, 2025), V.R.randrange(1, 13), V.R.randrange(1, 29))
def notes_dir():
    return pick(['Documents/notes', 'notes', 'Notes', 'Documents', 'Dropbox/notes', 'obsidian/vault/Inbox', 'org', 'Desktop'])
def fname(stem, ext=None):
    ext = ext or pick(['md', 'md', 'txt', 'org'])
    return f'{stem}.{ext}'

FILLER = ['Remember to renew the car insurance before the end of the month.',
          'Groceries: oat milk, eggs, coffee beans, tomatoes.',
          'Call the landlord about the heating.',
          'Book dentist appointment (Dr. Weber) next week.',
          'Read chapter 4 of "Designing Data-Intensive Applications".',
          'The standup moved to 9:45 starting Monday.',
          'Ask Priya about the Q3 roadmap slides.',
          'Backup of the photo library finished, 412 GB.',
          'Try the new ramen place on Oranienstrasse.',
          'Plant the tomatoes once the frost is over.',
          'Dinner with Marco on Friday, 19:30.',
          'Renew passport — appointment at the Bürgeramt on the 14th.',
          'Sprint review: demo the export feature.',
          'Laptop battery health at 81 %, consider replacement.']
def filler(n): return [pick(FILLER) for _ in range(n)]

def note(lines_before, secret_lines, lines_after):
    return '\n'.join(lines_before + secret_lines + lines_after) + '\n'

# ------------------------------------------------------------------ positives
# each returns (relpath, content, needle, family, note)
def np_wifi():
    pw = password(); s = ssid()
    lang = pick(['en', 'en', 'de', 'es', 'fr'])
    line = {'en': pick([f'The wifi password is {pw}', f'- WiFi "{s}" / password: `{pw}`', f'wifi pw for guests: {pw}']),
            'de': pick([f'Das WLAN-Passwort lautet: {pw}', f'WLAN {s} – Schlüssel: {pw}']),
            'es': f'La contraseña del wifi es {pw}',
            'fr': f'Le mot de passe du wifi est : {pw}'}[lang]
    hdr = pick([['# Home network', ''], ['# Haushalt', ''], ['* Wohnung', ''], ['Casa', '']])
    c = note(hdr + filler(V.R.randrange(0, 3)), [f'SSID: {s}', line], filler(V.R.randrange(0, 3)))
    return f'{notes_dir()}/{fname(pick(["wifi", "home", "haushalt", "casa"]))}', c, pw, 'note-wifi', lang

def np_db_userpass():
    pw, u, h = password(), user(), host()
    line = pick([f'DB: {u} / {pw}', f'- staging db `{h}` — {u} / `{pw}`', f'{h}  user={u}  pass={pw}', f'login for {h}: {u} : {pw}'])
    c = note(['# Staging access', ''] + filler(1), [line], ['', 'ask Jonas before running migrations'])
    return f'{notes_dir()}/{fname("staging")}', c, pw, 'note-db-creds', 'user / pass'

def np_api_key():
    name, k = pick([('OpenAI', V.openai_key()), ('Stripe', V.stripe_live()), ('SendGrid', V.sendgrid()), ('Mailgun', V.mailgun()),
                    ('Shopify', V.shopify()), ('Google Maps', V.google_api()), ('HuggingFace', V.hf_token()), ('Notion', V.notion()),
                    ('Jira', V.atlassian()), ('New Relic', V.newrelic()), ('Postman', V.postman()), ('Linear', V.linear())])
    line = pick([f'API key: {k}', f'{name} API key — `{k}`', f'key = {k}', f'{name}: {k}'])
    c = note([f'## {name} integration', ''] + filler(1), [line], filler(1))
    return f'{notes_dir()}/{fname(name.lower().replace(" ", "-"))}', c, k, 'note-api-key', name

def np_accounts_table():
    pw = password()
    rows = [('GitHub', 'bob-dev', 'SSO / see 1Password'), ('Netflix', 'family@example.net', 'ask Anna'),
            (pick(['Router admin', 'Synology NAS', 'Jenkins', 'Grafana', 'Plex']), user(), pw), ('Bank', '— (card reader)', 'n/a')]
    V.R.shuffle(rows)
    if V.R.random() < 0.5:
        lines = ['# Accounts', '', '| Service | User | Password |', '|---|---|---|'] + [f'| {a} | {b} | {c} |' for a, b, c in rows]
    else:
        lines = ['* Accounts', '| Service | User | Password |', '|---------+------+----------|'] + [f'| {a} | {b} | {c} |' for a, b, c in rows]
    return f'{notes_dir()}/{fname("accounts", pick(["md", "org"]))}', '\n'.join(lines) + '\n', pw, 'note-accounts-table', 'one row with a password'

def np_recovery_codes():
    v = V.R.randrange(4)
    if v == 0:
        codes = V.github_recovery(); hdr = ['GitHub recovery codes', '', 'Keep your recovery codes as safe as your password.', '']
        fam = 'github'
    elif v == 1:
        codes = V.google_backup(); hdr = ['BACKUP VERIFICATION CODES', f'{user()}@gmail.com', '']
        fam = 'google'
    elif v == 2:
        codes = V.generic_recovery(); hdr = [f'# {pick(["Proton", "Dropbox", "Discord", "Tuta", "Kraken"])} 2FA backup codes', '']
        fam = 'generic'
    else:
        codes = V.github_recovery()[:10]; hdr = [f'{pick(["gitlab", "npm", "pypi"])} recovery codes ({date()})', '']
        fam = 'gitlab-like'
    body = [('- ' if V.R.random() < 0.4 else '') + c for c in codes]
    return f'{pick(["Documents", "Downloads", "notes"])}/{pick(["recovery-codes", "backup-codes", "2fa-codes"])}.txt', \
        '\n'.join(hdr + body) + '\n', codes[0], 'note-recovery-codes', fam

def np_single_recovery():
    k, name = pick([(V.bitlocker(), 'BitLocker recovery key'), (V.apple_recovery(), 'Apple ID recovery key'),
                    (V.onepw_secret_key(), '1Password Secret Key'), (V.ms_recovery(), 'Microsoft account recovery code'),
                    (rs(V.LOW + V.DIG, 32), 'Bitwarden two-step login recovery code')])
    c = note(['Emergency info', '=' * 14, ''] + filler(1), [f'{name}: {k}'], filler(1))
    return f'Documents/{pick(["emergency", "important", "notfall"])}.txt', c, k, 'note-recovery-key', name

def np_seed_phrase():
    m = V.mnemonic(pick([12, 24]))
    line = pick([f'seed: {m}', f'Recovery phrase (Ledger): {m}', f'wallet words -> {m}'])
    c = note(['crypto stuff', ''], [line], ['', 'PIN is on paper in the drawer'])
    return f'{notes_dir()}/{fname("wallet", "txt")}', c, m.split()[0] + ' ' + m.split()[1], 'note-seed-phrase', 'BIP39-like mnemonic'

def np_otpauth():
    sec = V.base32_secret(pick([16, 32]))
    iss = pick(['GitHub', 'AWS', 'Google', 'Coinbase', 'Discord', 'Proton'])
    uri = f'otpauth://totp/{iss}:{user()}%40{org()}.com?secret={sec}&issuer={iss}' + pick(['', '&algorithm=SHA1&digits=6&period=30'])
    c = note(['# 2FA setup', '', f'Scanned with Aegis on {date()}; URI from the QR code:'], [uri], [''])
    return f'{notes_dir()}/{fname("2fa")}', c, sec, 'note-totp-uri', iss

def np_totp_bare():
    sec = V.base32_secret(32)
    shown = ' '.join(sec.lower()[i:i + 4] for i in range(0, 32, 4)) if V.R.random() < 0.5 else sec
    line = pick([f'TOTP seed: {shown}', f'2FA secret for {pick(["AWS root", "Binance", "the admin panel"])}: {shown}', f'authenticator key = {shown}'])
    c = note(['## MFA', ''] + filler(1), [line], [])
    return f'{notes_dir()}/{fname("mfa")}', c, shown[:9], 'note-totp-bare', 'base32 secret'

def np_ssh_key_note():
    pem, pub = V.ed25519_openssh(f'{user()}@{pick(["laptop", "build-01", "pi"])}')
    c = '# deploy key for the build box\n\nCopied from the old laptop, put into ~/.ssh/id_deploy:\n\n```\n' + pem + '```\n\nPublic part:\n' + pub + '\n'
    return f'{notes_dir()}/{fname("deploy-key", "md")}', c, 'BEGIN OPENSSH PRIVATE KEY', 'note-ssh-private-key', 'ed25519 openssh'

def np_pem_note():
    pem = V.ec_pem() if V.R.random() < 0.5 else V.rsa_pem(bits=2048)
    c = f'server key for {host()} (TLS), cert is in the wiki\n\n' + pem + '\n'
    return f'{pick(["Documents", "Desktop"])}/{pick(["server-key", "tls-stuff", "key-backup"])}.txt', c, 'PRIVATE KEY-----', 'note-pem-private-key', 'PEM'

def np_bitwarden():
    pw = password()
    d = {"encrypted": False, "folders": [{"id": V.uuid4(), "name": "Work"}],
         "items": [{"id": V.uuid4(), "organizationId": None, "folderId": None, "type": 1, "reprompt": 0,
                    "name": pick(["Synology", "Netflix", "Grafana", "Router"]), "notes": None, "favorite": False,
                    "login": {"uris": [{"match": None, "uri": f"https://{host()}/"}], "username": user(), "password": pw, "totp": None},
                    "collectionIds": None}]}
    return f'Downloads/bitwarden_export_{date().replace("-", "")}.json', json.dumps(d, indent=2) + '\n', pw, 'pm-bitwarden-json', 'one login'

def _csv(rows):
    b = io.StringIO(); w = csv.writer(b, lineterminator='\n'); [w.writerow(r) for r in rows]; return b.getvalue()

def np_lastpass():
    pw = password()
    rows = [['url', 'username', 'password', 'totp', 'extra', 'name', 'grouping', 'fav'],
            ['http://sn', '', '', '', 'NoteType:Server\nHostname:web01', 'web01 notes', 'Secure Notes', '0'],
            [f'https://{host()}/login', user(), pw, '', '', pick(['NAS', 'Jira', 'Plex']), 'Home', '0']]
    return 'Downloads/lastpass_export.csv', _csv(rows), pw, 'pm-lastpass-csv', ''

def np_1password():
    pw = password()
    rows = [['Title', 'Url', 'Username', 'Password', 'OTPAuth', 'Favorite', 'Archived', 'Tags', 'Notes'],
            [pick(['Amazon', 'eBay', 'Zalando']), 'https://www.amazon.de', f'{user()}@{org()}.com', pw, '', 'false', 'false', '', '']]
    return 'Downloads/1PasswordExport.csv', _csv(rows), pw, 'pm-1password-csv', ''

def np_keepass():
    pw = password()
    x = f'''<?xml version="1.0" encoding="utf-8" standalone="yes"?>
<KeePassFile>
\t<Meta><Generator>KeePassXC</Generator><DatabaseName>Passwords</DatabaseName></Meta>
\t<Root>
\t\t<Group>
\t\t\t<UUID>{base64.b64encode(V.randbytes(16)).decode()}</UUID>
\t\t\t<Name>Root</Name>
\t\t\t<Entry>
\t\t\t\t<UUID>{base64.b64encode(V.randbytes(16)).decode()}</UUID>
\t\t\t\t<String><Key>Title</Key><Value>{pick(["Router", "Mail", "VPN"])}</Value></String>
\t\t\t\t<String><Key>UserName</Key><Value>{user()}</Value></String>
\t\t\t\t<String><Key>Password</Key><Value ProtectInMemory="True">{pw.replace("&", "&amp;")}</Value></String>
\t\t\t\t<String><Key>URL</Key><Value>https://{host()}</Value></String>
\t\t\t</Entry>
\t\t</Group>
\t</Root>
</KeePassFile>
'''
    return 'Documents/keepass-export.xml', x, pw.replace('&', '&amp;'), 'pm-keepass-xml', ''

def np_chrome():
    pw = password()
    rows = [['name', 'url', 'username', 'password', 'note'], [f'{org()}.com', f'https://{org()}.com/login', user(), pw, '']]
    return 'Downloads/Chrome Passwords.csv', _csv(rows), pw, 'pm-chrome-csv', ''

def np_firefox():
    pw = password()
    rows = [['url', 'username', 'password', 'httpRealm', 'formActionOrigin', 'guid', 'timeCreated', 'timeLastUsed', 'timePasswordChanged'],
            [f'https://{org()}.com', user(), pw, '', f'https://{org()}.com', '{' + V.uuid4() + '}', '1690000000000', '1700000000000', '1690000000000']]
    return 'Downloads/logins.csv', _csv(rows), pw, 'pm-firefox-csv', ''

def eml(subject, body, frm=None, to=None):
    frm = frm or f'{person()} <{person().lower()}@{org()}.com>'
    to = to or f'{person()} <{person().lower()}@{org()}.com>'
    return (f'From: {frm}\nTo: {to}\nSubject: {subject}\nDate: Mon, {V.R.randrange(1, 28)} May 2024 10:{V.R.randrange(10, 59)}:00 +0200\n'
            f'MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nX-Mozilla-Draft-Info: internal/draft; vcard=0\n\n' + body)

def np_email():
    pw, u = password(), user()
    body = pick([f'Hi {person()},\n\nhere are the credentials for the staging server:\n\n  user: {u}\n  password: {pw}\n\nPlease change it after the first login.\n\nCheers\n',
                 f'Hallo {person()},\n\ndein Zugang zum NAS: Benutzer {u}, Passwort {pw}\n\nGruß\n',
                 f'Hola {person()},\n\nUsuario: {u}\nContraseña: {pw}\n\nSaludos\n'])
    return f'Mail/Drafts/{pick(["cur", "new"])}/{V.R.randrange(1690000000, 1720000000)}.M{V.R.randrange(1000, 9999)}.laptop.eml', eml('access', body), pw, 'email-draft-password', ''

def np_email_key():
    ak, sk = V.aws_akid(), V.aws_secret()
    body = f'Hi,\n\nas discussed, the upload user for the bucket:\n\nAccess key ID: {ak}\nSecret access key: {sk}\n\nBest\n{person()}\n'
    return f'Mail/Drafts/{V.R.randrange(100, 999)}.eml', eml('S3 upload credentials', body), sk, 'email-draft-aws', ''

def np_slack():
    t = pick([V.slack_bot(), V.gh_token(), V.openai_key(), V.slack_webhook()])
    msgs = [{"type": "message", "user": "U0" + rs(V.UP + V.DIG, 8), "text": "can someone share the token for the deploy bot?", "ts": f"{V.ts()}.000200"},
            {"type": "message", "user": "U0" + rs(V.UP + V.DIG, 8), "text": f"here: {t}", "ts": f"{V.ts()}.000300"},
            {"type": "message", "user": "U0" + rs(V.UP + V.DIG, 8), "text": "thx :pray:", "ts": f"{V.ts()}.000400"}]
    return f'Downloads/slack-export/{pick(["devops", "general", "backend"])}/{date()}.json', json.dumps(msgs, indent=4) + '\n', t, 'chat-slack-export', t[:5]

def np_discord():
    pw = password()
    c = (f'==============================================================\nGuild: Friends\nChannel: general\n==============================================================\n\n'
         f'[{V.R.randrange(1, 12)}/{V.R.randrange(1, 28)}/2024 8:12 PM] {person().lower()}\nanyone got the minecraft server admin pw?\n\n'
         f'[{V.R.randrange(1, 12)}/{V.R.randrange(1, 28)}/2024 8:14 PM] {person().lower()}\nrcon password is {pw}\n\n')
    return 'Documents/discord-export/Friends - general.txt', c, pw, 'chat-discord-export', 'rcon password'

def np_irc():
    pw = password()
    n = person().lower()
    c = (f'--- Log opened Tue Mar 12 09:00:01 2024\n09:00 -!- {n} [~{n}@host] has joined #{pick(["linux", "python", "homelab"])}\n'
         f'09:01 <{n}> /msg NickServ IDENTIFY {pw}\n09:01 <{n}> oops\n09:02 <op> {n}: change it now :)\n')
    return f'.irssi/logs/libera/#{pick(["linux", "python", "homelab"])}.log', c, pw, 'chat-irc-log', 'NickServ identify'

def np_whatsapp():
    pw = password()
    c = (f'{V.R.randrange(1, 28):02d}/03/2024, 18:02 - {person()}: what was the netflix password again?\n'
         f'{V.R.randrange(1, 28):02d}/03/2024, 18:05 - {person()}: {pick(["its", "it is", "es"])} {pw}\n'
         f'{V.R.randrange(1, 28):02d}/03/2024, 18:06 - {person()}: 👍\n')
    return 'Documents/WhatsApp Chat with Family.txt', c, pw, 'chat-whatsapp', ''

def np_meeting():
    t = V.jenkins_token()
    c = note([f'# Meeting notes {date()}', '', f'Attendees: {person()}, {person()}, {person()}', '', '## Action items'],
             [f'- {person()} created the Jenkins API token for the release job: `{t}` (user: release-bot)'],
             [f'- {person()} to update the runbook', '- next sync in two weeks'])
    return f'{notes_dir()}/meetings/{date()}.md', c, t, 'note-meeting', 'jenkins token'

def np_onboarding():
    psk = password()
    c = note(['# Onboarding', '', '1. Get a laptop from IT', '2. VPN setup:', '   - Server: vpn.' + org() + '.com', '   - Type: IPsec/L2TP'],
             [f'   - Pre-shared key: {psk}'], ['3. Join #general on Slack', '4. Ask your buddy for a tour'])
    return f'Documents/onboarding.md', c, psk, 'note-onboarding', 'vpn psk'

def np_journal():
    pw = password()
    lang = pick(['en', 'de', 'fr'])
    line = {'en': f'Changed my bank login password to {pw} — must not forget it this time.',
            'de': f'Neues Passwort fürs Online-Banking: {pw}',
            'fr': f'Nouveau mot de passe de la banque : {pw}'}[lang]
    c = note([f'* {date()} journal', ''] + filler(2), [line], filler(1))
    return f'org/journal/{date()}.org', c, pw, 'note-journal', lang

def np_todo():
    k = pick([V.stripe_live(), V.sendgrid(), V.gh_token(), V.dckr_pat()])
    c = note(['# TODO', '', '- [x] migrate blog to Hugo', '- [ ] renew domain'], [f'- [ ] rotate the key `{k}` after launch'], ['- [ ] clean up S3 buckets'])
    return f'{notes_dir()}/TODO.md', c, k, 'note-todo', k[:6]

def np_netrc():
    pw = password()
    c = f'machine api.{org()}.com\n  login {user()}\n  password {pw}\n'
    return '.netrc', c, pw, 'dotfile-netrc', ''

def np_sticky():
    pw = password()
    c = pick([f'router admin / {pw}\n', f'Fritzbox Kennwort: {pw}\n', f'NAS admin pw {pw}\n'])
    return f'Desktop/{pick(["sticky", "note", "untitled"])}.txt', c, pw, 'note-sticky', 'tiny note'

def np_env_block():
    pw = V.password(urlsafe=True)
    c = note(['# local dev setup', '', 'put this into `.env`:', '', '```'], [f'DATABASE_URL=postgres://{user()}:{pw}@{host()}:5432/{dbname()}'], ['REDIS_URL=redis://localhost:6379', '```'])
    return f'{notes_dir()}/{fname("dev-setup", "md")}', c, pw, 'note-env-snippet', 'url creds'

def np_jwt():
    t = V.jwt()
    c = note(['Home Assistant', ''], [pick([f'long-lived access token: {t}', f'session cookie: {t}'])], ['', 'expires in 10 years'])
    return f'{notes_dir()}/{fname("homeassistant", "txt")}', c, t[:30], 'note-jwt', ''

def np_lang():
    pw, u = password(), user()
    line = pick([f'Zugangsdaten Router: Benutzer {u}, Kennwort: {pw}', f'Usuario: {u} / Contraseña: {pw}', f'identifiant : {u} — mot de passe : {pw}',
                 f'Credenziali: utente {u}, password {pw}'])
    c = note(filler(1), [line], filler(1))
    return f'{notes_dir()}/{fname(pick(["zugang", "acceso", "acces", "accesso"]), "txt")}', c, pw, 'note-foreign', line.split(':')[0]

def np_codeblock_cmd():
    pw = password()
    c = note(['# Restore the DB', '', 'Run on the bastion:', '', '```sh'], [f"mysql -u root -p'{pw}' shop < dump.sql"], ['```'])
    return f'{notes_dir()}/{fname("restore", "md")}', c, pw, 'note-cmd-in-doc', 'mysql -p in code block'

def np_otp_migration():
    sec = V.randbytes(20)
    name = f'{user()}@{org()}.com'.encode(); iss = pick(['GitHub', 'AWS', 'Google']).encode()
    def ld(tag, b): return bytes([tag << 3 | 2, len(b)]) + b
    otp = ld(1, sec) + ld(2, name) + ld(3, iss) + bytes([4 << 3, 1, 5 << 3, 1, 6 << 3, 2])
    payload = ld(1, otp) + bytes([2 << 3, 1, 3 << 3, 1, 4 << 3, 0])
    import urllib.parse
    uri = 'otpauth-migration://offline?data=' + urllib.parse.quote(base64.b64encode(payload).decode(), safe='')
    c = note(['Authenticator export (transfer QR decoded)', ''], [uri], [])
    return f'{notes_dir()}/{fname("authenticator-export", "txt")}', c, 'otpauth-migration', 'note-otp-migration', ''

def np_age_key():
    k = V.age_key()
    c = note(['# sops', '', 'age key for the homelab repo:'], [k], ['', 'public: age1' + rs('qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58)])
    return f'{notes_dir()}/{fname("sops", "md")}', c, k, 'note-age-key', ''

def np_bullet_creds():
    pw = password()
    c = note(['## Grafana', ''], [f'- url: https://grafana.{org()}.com', f'- user: `admin`', f'- pass: `{pw}`'], [])
    return f'{notes_dir()}/{fname("grafana", "md")}', c, pw, 'note-bullets', 'split user/pass'

def np_inline_backtick():
    t = pick([V.gh_token(), V.glpat(), V.npm_token(), V.pypi_token(), V.vault_token(), V.tailscale(), V.discord_bot(), V.telegram()])
    c = note(['# tokens', ''], [f'CI uses `{t}` until we move to OIDC'], [''])
    return f'{notes_dir()}/{fname("ci", "md")}', c, t, 'note-inline-token', t[:5]

def np_pin_card():
    pw = password()
    c = note(['Mutti - Computer', ''], [f'Windows Anmeldung: Mutti / {pw}'], ['Drucker: HP Envy, Treiber auf USB-Stick'])
    return 'Documents/mutti.txt', c, pw, 'note-family', ''

NOTE_POS = [v for k, v in sorted(globals().items()) if k.startswith('np_')]

# ------------------------------------------------------------------ negatives
# each returns (relpath, content, family, note)
def nn_rotation():
    c = note([f'# Ops log {date()}', ''], [pick(['Rotated the DB password, new one is in 1Password (vault: Infra).',
                                                   'Password changed; stored in 1Password.', 'Revoked the old GitHub token and created a new one (in Bitwarden).',
                                                   'Passwort geändert, liegt im KeePass.'])], filler(2))
    return f'{notes_dir()}/{fname("ops-log")}', c, 'neg-rotation', 'no value'

def nn_wifi():
    c = note(['# Home network', '', f'SSID: {ssid()}'], [pick(['The wifi password is on the sticker under the router.', 'WLAN-Passwort: steht auf der Rückseite der Fritzbox',
                                                              'wifi password: ask Anna', 'Guest wifi has no password (captive portal).'])], [])
    return f'{notes_dir()}/{fname("wifi")}', c, 'neg-wifi', 'no value'

def nn_placeholder():
    line = pick(['export OPENAI_API_KEY=<your-key-here>', 'API_KEY=YOUR_API_KEY', 'password: xxxxxxxx', 'token: <token>',
                 'curl -H "Authorization: Bearer <TOKEN>" https://api.example.com/v1/me', 'DB_PASSWORD=changeme  # replace in prod via vault',
                 'export GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX', 'mysql -u root -p<password> app', 'psql "postgresql://user:PASSWORD@host/db"',
                 'aws_secret_access_key = <secret>', 'docker login -u USERNAME -p $TOKEN', 'password=${DB_PASSWORD}'])
    c = note(['# Setup', '', 'Replace the placeholder with your own value:', '', '```'], [line], ['```'])
    return f'{notes_dir()}/{fname("setup", "md")}', c, 'neg-placeholder', line[:30]

def nn_aws_example():
    c = note(['# AWS CLI cheatsheet (from the docs)', '', '```', '[default]'], ['aws_access_key_id = AKIAIOSFODNN7EXAMPLE', 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'], ['region = us-west-2', '```'])
    return f'{notes_dir()}/{fname("aws-cheatsheet", "md")}', c, 'neg-vendor-example', 'AWS docs example'

def nn_vendor_examples():
    line = pick(['Stripe test key from their docs: sk_test_4eC39HqLyjWDarjtT1zdp7dc',
                 'jwt.io example: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
                 'Google Authenticator wiki example: otpauth://totp/Example:alice@google.com?secret=JBSWY3DPEHPK3PXP&issuer=Example'])
    c = note(['# Examples copied from vendor documentation', ''], [line], ['', '(these are public sample values)'])
    return f'{notes_dir()}/{fname("examples", "md")}', c, 'neg-vendor-example', line[:25]

def nn_checksums():
    files = ['ubuntu-24.04-desktop-amd64.iso', 'debian-12.5.0-amd64-netinst.iso', 'Fedora-Workstation-Live-x86_64-40.iso', 'archlinux-2024.05.01-x86_64.iso']
    c = '\n'.join(f'{V.sha256hex()} *{f}' for f in files) + '\n'
    return f'Downloads/{pick(["SHA256SUMS", "checksums.txt"])}', c, 'neg-checksums', 'sha256'

def nn_commits():
    c = note([f'# Release notes {V.version()}', ''], [f'- fix login redirect ({V.sha1hex()})', f'- bump deps ({V.sha1hex()[:7]})',
                                                     f'- revert "cache tweaks" (commit {V.sha1hex()})'], [f'Tag: v{V.version()}'])
    return f'{notes_dir()}/{fname("release-notes", "md")}', c, 'neg-commit-shas', ''

def nn_uuids():
    c = note(['# VM inventory', ''], [f'- {n}: {V.uuid4()}' for n in ['web01', 'web02', 'db01', 'backup']], ['', f'Ticket: INC-{V.R.randrange(10000, 99999)}'])
    return f'{notes_dir()}/{fname("vms")}', c, 'neg-uuids', ''

def nn_license():
    line = pick([f'Windows 10 Pro product key: {V.win_product_key()}', f'Office 2019 key: {V.win_product_key()}',
                 f'License key: {V.win_product_key()}', f'Produktschlüssel Windows 11 Home: {V.win_product_key()}'])
    c = note(['Software licences', ''], [line], ['Purchased from the Microsoft store.'])
    return f'Documents/{pick(["licenses", "lizenzen"])}.txt', c, 'neg-license-key', 'product key'

def nn_serials():
    c = note(['# Inventory', ''], [f'- MacBook Pro 14": serial {V.serial_apple()}', f'- Dell U2720Q: S/N CN-0{rs(V.UP + V.DIG, 6)}-{rs(V.DIG, 5)}-{rs(V.UP + V.DIG, 3)}-{rs(V.UP + V.DIG, 4)}',
                                   f'- iPhone IMEI: {rs(V.DIG, 15)}', f'- Router MAC: {V.mac()}'], ['Insurance policy #' + rs(V.DIG, 10)])
    return f'{notes_dir()}/{fname("inventory")}', c, 'neg-serials', ''

def nn_tracking():
    c = note(['Orders', ''], [f'- Standing desk: UPS {V.ups_tracking()}', f'- Keyboard: DHL {rs(V.DIG, 10)}',
                              f'- Books: USPS 9400 1{rs(V.DIG, 3)} {rs(V.DIG, 4)} {rs(V.DIG, 4)} {rs(V.DIG, 4)} {rs(V.DIG, 2)}', f'- Order #{rs(V.DIG, 3)}-{rs(V.DIG, 7)}-{rs(V.DIG, 7)}'], [])
    return f'{notes_dir()}/{fname("orders")}', c, 'neg-tracking', ''

def nn_iban():
    c = note(['Invoice details', ''], [f'IBAN: {V.iban_de()}', f'BIC: {pick(["COBADEFFXXX", "DEUTDEDBBER", "INGDDEFFXXX"])}', f'Reference: INV-{date()}-{V.R.randrange(100, 999)}'],
             ['Amount: 1.240,00 EUR'])
    return f'Documents/{pick(["invoice", "rechnung"])}-{date()}.txt', c, 'neg-iban', ''

def nn_phones():
    c = note(['# Contacts', ''], [f'- {person()}: {V.phone()}' for _ in range(4)], ['', f'Emergency: 112'])
    return f'{notes_dir()}/{fname("contacts")}', c, 'neg-phones', ''

def nn_isbn():
    c = note(['# Reading list', ''], [f'- {t} (ISBN {V.isbn13()})' for t in ['Designing Data-Intensive Applications', 'The Pragmatic Programmer', 'Der Process', 'Cien años de soledad']], [])
    return f'{notes_dir()}/{fname("reading")}', c, 'neg-isbn', ''

def nn_versions():
    c = note(['# Toolchain', ''], [f'- node {V.version()}', f'- python 3.{V.R.randrange(8, 13)}.{V.R.randrange(0, 12)}', f'- terraform v{V.version()}',
                                   f'- kernel 6.{V.R.randrange(1, 10)}.{V.R.randrange(0, 40)}-{V.R.randrange(1, 200)}-generic', f'- build {V.version()}+{V.sha1hex()[:8]}'], [])
    return f'{notes_dir()}/{fname("versions")}', c, 'neg-versions', ''

def nn_pubkeys():
    p1, f1 = V.ssh_pub(f'{user()}@laptop'); p2, f2 = V.ssh_pub(f'{user()}@desktop')
    c = note(['# SSH keys to authorize on the NAS', '', '```'], [p1, p2], ['```', '', f'Fingerprints: {f1}, {f2}'])
    return f'{notes_dir()}/{fname("ssh-keys", "md")}', c, 'neg-ssh-public', ''

def nn_authorized_keys():
    p1, _ = V.ssh_pub('bob@laptop'); p2, _ = V.ssh_pub('ci@runner')
    return '.ssh/authorized_keys', p1 + '\n' + p2 + '\n', 'neg-ssh-public', 'authorized_keys'

def nn_gpg():
    fpr = V.gpg_fpr()
    c = (f'pub   ed25519 2023-0{V.R.randrange(1, 9)}-1{V.R.randrange(0, 9)} [SC] [expires: 2026-01-01]\n      {fpr}\n'
         f'uid           [ultimate] {person()} <{person().lower()}@{org()}.com>\nsub   cv25519 2023-01-10 [E]\n\n'
         f'Key ID: 0x{fpr[-16:]}\nUpload to keys.openpgp.org done.\n')
    return f'{notes_dir()}/{fname("gpg", "txt")}', c, 'neg-gpg-ids', ''

def nn_otpauth_nosecret():
    iss = pick(['GitHub', 'ACME', 'Proton'])
    c = note(['# 2FA', ''], [pick([f'The QR code encodes otpauth://totp/{iss}:{user()}?issuer={iss}&algorithm=SHA1&digits=6&period=30 plus the secret (not stored here).',
                                   f'Scanned the QR code for {iss} with Aegis. Secret lives only in the app.',
                                   f'otpauth://totp/{iss}:{user()}?issuer={iss}'])], ['Backup of Aegis vault is encrypted, on the NAS.'])
    return f'{notes_dir()}/{fname("2fa")}', c, 'neg-otpauth-nosecret', ''

def nn_recovery_stored():
    c = note(['2FA recovery'], [pick(['Recovery codes printed, stored in the safe deposit box.', 'GitHub recovery codes downloaded -> moved to the encrypted USB stick.',
                                      'Wiederherstellungscodes liegen ausgedruckt im Ordner "Wichtig".'])], [])
    return f'{notes_dir()}/{fname("recovery")}', c, 'neg-recovery-mention', ''

def nn_policy():
    c = note(['# Password policy', '', '- minimum length 14 characters', '- no reuse of the last 5 passwords', '- rotate service tokens every 90 days',
              '- store all secrets in Vault, never in notes or chat'], [], [])
    return f'Documents/policies/{fname("password-policy", "md")}', c, 'neg-policy', ''

def nn_meeting():
    c = note([f'# Meeting {date()}', ''], ['- Agreed to move API tokens to Vault.', '- Anna will rotate the staging DB password next week.',
                                         '- Nobody should paste passwords in Slack anymore.'], [f'- Jira: OPS-{V.R.randrange(100, 999)}'])
    return f'{notes_dir()}/meetings/{date()}.md', c, 'neg-meeting', ''

def nn_chat():
    msgs = [{"type": "message", "user": "U0" + rs(V.UP + V.DIG, 8), "text": "can you send me the password for the staging box?", "ts": f"{V.ts()}.000100"},
            {"type": "message", "user": "U0" + rs(V.UP + V.DIG, 8), "text": "shared it with you in 1Password :lock:", "ts": f"{V.ts()}.000200"},
            {"type": "message", "user": "U0" + rs(V.UP + V.DIG, 8), "text": f"deployed {V.sha1hex()[:7]} to prod", "ts": f"{V.ts()}.000300"}]
    return f'Downloads/slack-export/general/{date()}.json', json.dumps(msgs, indent=4) + '\n', 'neg-chat', ''

def nn_email():
    body = pick(['Hi,\n\nyour account has been created. Your temporary password will be sent separately by SMS.\n\nBest\n',
                 f'Hello,\n\nyour order {rs(V.DIG, 3)}-{rs(V.DIG, 7)} has shipped. Tracking: {V.ups_tracking()}\n\nThanks\n'])
    return f'Mail/Drafts/{V.R.randrange(100, 999)}.eml', eml('Your account', body), 'neg-email', ''

def nn_pm_export():
    rows = [['name', 'url', 'username', 'password', 'note'], ['github.com', 'https://github.com/login', user(), '', 'passkey only'],
            ['google.com', 'https://accounts.google.com', f'{user()}@gmail.com', '', 'passkey']]
    return 'Downloads/Chrome Passwords.csv', _csv(rows), 'neg-pm-export-empty', 'passkeys, no passwords'

def nn_bitwarden_folders():
    d = {"encrypted": False, "folders": [{"id": V.uuid4(), "name": n} for n in ['Work', 'Private', 'Banking']], "items": []}
    return 'Downloads/bitwarden_export_folders.json', json.dumps(d, indent=2) + '\n', 'neg-pm-export-empty', 'no items'

def nn_envnames():
    c = note(['# Deploy', ''], ['Set `STRIPE_SECRET_KEY` and `SENDGRID_API_KEY` in Heroku (values in Vault).', 'The app reads `DATABASE_URL` at startup.'], [])
    return f'{notes_dir()}/{fname("deploy", "md")}', c, 'neg-env-names', ''

def nn_token_format():
    c = note(['# Token formats', ''], ['- GitHub classic PATs start with `ghp_`, fine-grained with `github_pat_`.', '- GitLab PATs start with `glpat-`.',
                                     '- Slack bot tokens start with `xoxb-`.', '- AWS access key ids start with `AKIA`.'], [])
    return f'{notes_dir()}/{fname("token-formats", "md")}', c, 'neg-token-format-doc', ''

def nn_irc():
    n = person().lower()
    c = (f'09:00 -!- {n} has joined #homelab\n09:01 <{n}> how do I register my nick?\n09:01 <helper> /msg NickServ IDENTIFY <password>\n'
         f'09:02 <{n}> thanks!\n')
    return '.irssi/logs/libera/#homelab.log', c, 'neg-irc', 'placeholder'

def nn_journal():
    c = note([f'* {date()}', ''], [pick(['Forgot my password again, reset it via email.', 'Finally set up a password manager for Mum.',
                                         'Mot de passe oublié, réinitialisé par SMS.'])], filler(2))
    return f'org/journal/{date()}.org', c, 'neg-journal', ''

def nn_git_config():
    c = f'[user]\n\tname = {person()}\n\temail = {person().lower()}@{org()}.com\n\tsigningkey = {V.gpg_fpr()[-16:]}\n[commit]\n\tgpgsign = true\n[credential]\n\thelper = store --file ~/.git-credentials\n'
    return '.gitconfig', c, 'neg-gitconfig', 'signingkey'

def nn_digests():
    c = note(['# Pinned images', ''], [f'- nginx@sha256:{V.sha256hex()}', f'- postgres:16@sha256:{V.sha256hex()}'], [])
    return f'{notes_dir()}/{fname("images", "md")}', c, 'neg-digests', ''

def nn_datauri():
    b = base64.b64encode(V.randbytes(120)).decode()
    c = note(['# Logo', ''], [f'![logo](data:image/png;base64,{b})'], [])
    return f'{notes_dir()}/{fname("logo", "md")}', c, 'neg-data-uri', 'random base64 image'

def nn_wallet_addr():
    c = note(['Donations', ''], [f'BTC: {V.btc_addr()}', f'ETH: {V.eth_addr()}'], [])
    return f'{notes_dir()}/{fname("donate")}', c, 'neg-wallet-address', 'public addresses'

def nn_stripe_ids():
    c = note(['# Support ticket', ''], [f'customer cus_{rs(V.ALNUM, 14)}, invoice in_{rs(V.ALNUM, 24)}, payment pi_{rs(V.ALNUM, 24)}'], [])
    return f'{notes_dir()}/{fname("support")}', c, 'neg-object-ids', 'stripe object ids'

def nn_known_hosts():
    p, f = V.ssh_pub('')
    c = f'github.com {p.strip()}\n'
    return '.ssh/known_hosts', c, 'neg-known-hosts', ''

def nn_macs():
    c = note(['# DHCP reservations', ''], [f'{V.mac()}  192.168.1.{V.R.randrange(2, 250)}  {n}' for n in ['nas', 'printer', 'tv', 'pi']], [])
    return f'{notes_dir()}/{fname("dhcp")}', c, 'neg-macs', ''

def nn_colors():
    c = note(['# Palette', ''], [f'- {n}: #{rs(V.HEXL, 6)}' for n in ['primary', 'accent', 'bg', 'fg']], [])
    return f'{notes_dir()}/{fname("palette")}', c, 'neg-hex-colors', ''

def nn_qr():
    c = note(['# QR codes', ''], ['The QR code on the router sticker just contains WIFI:S:<ssid>;T:WPA;P:<password>;; — do not photograph it.',
                                   'Event ticket QR: order reference ' + rs(V.UP + V.DIG, 8)], [])
    return f'{notes_dir()}/{fname("qr")}', c, 'neg-qr-description', ''

def nn_password_word():
    c = note(['# Password manager comparison', ''], ['- Bitwarden: free, self-hostable', '- 1Password: family plan 5 users', '- KeePassXC: local file, sync via Syncthing',
                                                   'Decision: Bitwarden; master password memorised, emergency sheet in the safe.'], [])
    return f'{notes_dir()}/{fname("password-managers")}', c, 'neg-pm-discussion', ''

def nn_ssh_config():
    c = f'Host nas\n  HostName {host()}\n  User {user()}\n  IdentityFile ~/.ssh/id_ed25519\n  IdentitiesOnly yes\n\nHost *\n  AddKeysToAgent yes\n'
    return '.ssh/config', c, 'neg-ssh-config', ''

def nn_sumfile_in_note():
    c = note(['Verified download:', ''], [f'sha512: {rs(V.HEXL, 128)}', f'md5: {rs(V.HEXL, 32)}'], [])
    return f'Downloads/{fname("verify", "txt")}', c, 'neg-checksums', 'sha512/md5'

NOTE_NEG = [v for k, v in sorted(globals().items()) if k.startswith('nn_')]
