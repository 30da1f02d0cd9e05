"""p13 look-alikes: the same encodings and formats, holding placeholders, references,
hashes, labelled encrypted blobs, public material, GUIDs and ordinary binary data."""
import json

from common import neg, C, B, reg_esc, xml_esc, jdump, pct, props_esc, qp_line
from vals import (rs, rhex, rbytes, b64, b64u, guid, B62, B64U, UP, LO, DG, HEX, WORDS, person, username, org, domain,
                  email, host, winuser, ts, sentence, camel, dpapi_hex, dpapi_b64, sha256hex, bcrypt_hash, placeholder,
                  ssh_pub_ed25519, pubkey_pem, cert_pem, ppk, TOKENS)
import fill
import bins
from cases_pos import reg_file, wu, ps_head

ENVNAMES = [t[0] for t in TOKENS] + ['DB_PASSWORD', 'SMTP_PASSWORD', 'API_KEY', 'CLIENT_SECRET']


def envname(r):
    return r.choice(ENVNAMES)


# ============================================================ Windows registry
@neg('windows-reg')
def reg_dpapi_binary(r):
    blob = bytes.fromhex(dpapi_hex(r, r.randrange(60, 140)))
    hexs = ','.join('%02x' % b for b in blob)
    parts, line = [], '"Password"=hex:'
    for i, h in enumerate(hexs.split(',')):
        if len(line) > 74:
            parts.append(line + '\\')
            line = '  '
        line += h + ('' if i == len(blob) - 1 else ',')
    parts.append(line)
    vals = ['"HostName"="%s"' % host(r), '"UserName"="%s"' % wu(r), '; Password below is a DPAPI-encrypted blob (CryptProtectData)'] + parts + [
        '"SavePassword"=dword:00000001']
    return C('Documents/remote-tool-export.reg', reg_file([('HKEY_CURRENT_USER\\Software\\%s\\Connections\\%s' % (
        r.choice(['mRemoteNG', 'RoyalTS', 'RDCMan']), r.choice(['prod', 'lab'])), vals)]),
        note='DPAPI-encrypted REG_BINARY password', enc='utf-16le', eol='\r\n')


@neg('windows-reg')
def reg_clsid(r):
    keys = []
    for _ in range(r.randrange(2, 5)):
        g = '{%s}' % guid(r, True)
        keys.append(('HKEY_CLASSES_ROOT\\CLSID\\' + g, ['@="%s Shell Extension"' % org(r).capitalize(), '"AppID"="{%s}"' % guid(r, True)]))
        keys.append(('HKEY_CLASSES_ROOT\\CLSID\\%s\\InprocServer32' % g, ['@="C:\\\\Program Files\\\\%s\\\\shellext64.dll"' % org(r).capitalize(),
                                                                           '"ThreadingModel"="Apartment"']))
    keys.append(('HKEY_CLASSES_ROOT\\TypeLib\\{%s}\\1.0' % guid(r, True), ['@="%s 1.0 Type Library"' % org(r).capitalize()]))
    return C('Desktop/shellext-backup.reg', reg_file(keys), note='CLSIDs, AppIDs, TypeLib GUIDs', enc='utf-16le', eol='\r\n')


@neg('windows-reg')
def reg_env_refs(r):
    u = wu(r)
    vals = ['"OneDrive"="C:\\\\Users\\\\%s\\\\OneDrive"' % u, '"Path"=hex(2):25,00,55,00,53,00,45,00,52,00,50,00,52,00,4f,00,46,00,49,00,\\',
            '  4c,00,45,00,25,00,5c,00,62,00,69,00,6e,00,00,00',
            '"%s_FILE"="C:\\\\Users\\\\%s\\\\.secrets\\\\%s.txt"' % (envname(r), u, r.choice(WORDS)),
            '"GIT_ASKPASS"="C:\\\\Program Files\\\\Git\\\\mingw64\\\\bin\\\\git-askpass.exe"',
            '"SSH_AUTH_SOCK"="\\\\\\\\.\\\\pipe\\\\openssh-ssh-agent"', '"DOTNET_CLI_TELEMETRY_OPTOUT"="1"']
    return C('Documents/env-backup.reg', reg_file([('HKEY_CURRENT_USER\\Environment', vals)]), note='environment: paths and file references',
             enc='utf-16le', eol='\r\n')


@neg('windows-reg')
def reg_putty_nopass(r):
    u = wu(r)
    vals = ['"Present"=dword:00000001', '"HostName"="%s"' % host(r), '"PortNumber"=dword:00000016', '"ProxyMethod"=dword:00000000',
            '"ProxyUsername"=""', '"ProxyPassword"=""', '"UserName"="%s"' % u, '"PublicKeyFile"="C:\\\\Users\\\\%s\\\\.ssh\\\\id.ppk"' % u,
            '"AgentFwd"=dword:00000001', '"HostKey"="ssh-ed25519"']
    keys = [('HKEY_CURRENT_USER\\Software\\SimonTatham\\PuTTY\\Sessions\\%s' % r.choice(['prod', 'lab', 'pi']), vals),
            ('HKEY_CURRENT_USER\\Software\\SimonTatham\\PuTTY\\SshHostKeys',
             ['"ssh-ed25519@22:%s"="0x%s,0x%s"' % (host(r), rhex(r, 64), rhex(r, 64))])]
    return C('Desktop/putty-sessions.reg', reg_file(keys), note='PuTTY session with empty ProxyPassword and host keys', enc='utf-16le', eol='\r\n')


# ============================================================ PowerShell
@neg('powershell')
def ps_getsecret(r):
    n = envname(r)
    lines = ['# Microsoft.PowerShell_profile.ps1', 'Import-Module Microsoft.PowerShell.SecretManagement',
             '$env:%s = Get-Secret -Name %s -AsPlainText' % (n, camel(n)), '$cred = Get-Credential -UserName "CORP\\%s" -Message "VPN"' % wu(r),
             'Set-Alias k kubectl']
    return C('Documents/WindowsPowerShell/Microsoft.PowerShell_profile.ps1', lines, note='Get-Secret / Get-Credential, no literal',
             enc='utf-16le', eol='\r\n')


@neg('powershell')
def ps_securestring_encrypted(r):
    lines = ps_head(r) + ['# produced by: Read-Host -AsSecureString | ConvertFrom-SecureString   (DPAPI, this user on this machine only)',
                          '$encrypted = "%s"' % dpapi_hex(r), '$secure = $encrypted | ConvertTo-SecureString',
                          '$cred = New-Object PSCredential("CORP\\%s", $secure)' % wu(r)]
    return C('Scripts/connect.ps1', lines, note='DPAPI-encrypted SecureString text, no -AsPlainText', enc='utf-16le', eol='\r\n')


@neg('powershell')
def ps_securestring_env(r):
    lines = ps_head(r) + ['$pw = ConvertTo-SecureString $env:SVC_PASSWORD -AsPlainText -Force',
                          '$key = Get-Content "$PSScriptRoot\\aes.key"', '$pw2 = Get-Content .\\pw.txt | ConvertTo-SecureString -Key $key',
                          '$cred = [PSCredential]::new("svc_backup", $pw)', 'cmdkey /add:%s /user:CORP\\svc_backup /pass' % host(r, 'fs')]
    return C('Scripts/backup-cred.ps1', lines, note='ConvertTo-SecureString from $env and -Key, cmdkey prompting', enc='utf-8-sig', eol='\r\n')


@neg('powershell')
def ps_herestring_placeholders(r):
    n = envname(r)
    lines = ps_head(r) + ['$config = @"', '{', '  "endpoint": "https://api.%s",' % domain(r), '  "%s": "%s",' % (camel(n), placeholder(r, n)),
                          '  "installId": "%s"' % guid(r), '}', '"@', 'Set-Content -Path config.json -Value $config']
    return C('Scripts/write-config.ps1', lines, note='here-string with a placeholder key', enc='utf-16le', eol='\r\n')


@neg('powershell')
def psreadline_clean(r):
    cmds = ['git pull', 'dotnet test', 'Get-Secret -Name github -AsPlainText | gh auth login --with-token',
            '$env:GITHUB_TOKEN = Read-Host -MaskInput', 'az login --use-device-code', 'aws sso login --profile dev',
            'Get-FileHash .\\setup.exe -Algorithm SHA256', 'ssh-keygen -t ed25519 -C "%s"' % email(r), 'winget install Git.Git']
    return C('AppData/Roaming/Microsoft/Windows/PowerShell/PSReadLine/ConsoleHost_history.txt',
             [r.choice(cmds) for _ in range(r.randrange(15, 50))], note='history with secret-manager commands only', eol='\r\n')


# ============================================================ cmd / bat
@neg('windows-cmd')
def bat_cmdkey_prompt(r):
    lines = ['@echo off', 'rem /pass without a value makes cmdkey prompt', 'cmdkey /add:%s /user:CORP\\%s /pass' % (host(r, 'fs'), wu(r)),
             'net use Z: \\\\%s\\backup /user:%s * /persistent:no' % (host(r, 'nas'), wu(r)), 'cmdkey /list']
    return C('Scripts/map-drives.bat', lines, note='cmdkey /pass and net use * (prompting)', enc='cp1252', eol='\r\n')


@neg('windows-cmd')
def bat_env_refs(r):
    n = envname(r)
    lines = ['@echo off', 'if "%%%s%%"=="" (echo set %s first & exit /b 1)' % (n, n), 'set "DB_PASSWORD=%~1"',
             'setx %s "%%%s%%"' % (n, n), 'curl.exe -H "Authorization: Bearer %%%s%%" https://api.%s/v1/ping' % (n, domain(r))]
    return C('src/deploy.bat', lines, note='%VAR% references only', eol='\r\n')


@neg('windows-cmd')
def cmdkey_list_utf16(r):
    lines = ['', 'Currently stored credentials:', '']
    for _ in range(r.randrange(2, 6)):
        lines += ['    Target: Domain:target=%s' % host(r), '    Type: Domain Password', '    User: CORP\\%s' % wu(r), '    Local machine persistence', '']
    lines += ['    Target: LegacyGeneric:target=git:https://github.com', '    Type: Generic', '    User: %s' % username(r), '']
    return C('Desktop/creds-list.txt', lines, note='cmdkey /list output (no secrets), UTF-16LE', enc='utf-16le', eol='\r\n')


# ============================================================ INI / env / text
@neg('ini')
def ini_empty_pw(r):
    lines = ['[Database]', 'Server = %s' % host(r, 'sql'), 'User = %s' % r.choice(['sa', 'svc_app']), 'Password =', 'SavePassword = 0',
             'PasswordHash = sha256:%s' % sha256hex(r), 'IntegratedSecurity = 1']
    return C('AppData/Roaming/SyncAgent/Settings.ini', lines, note='empty Password and a hash', enc='utf-16le', eol='\r\n')


@neg('ini')
def ini_cp1252_labels(r):
    lines = ['[Allgemein]', 'Benutzer=%s' % r.choice(['Jürgen Weiß', 'Käthe Müller']), 'Passwort speichern=0', 'Passwort=',
             'Kennwort-Hinweis=Geburtstag der Katze', 'Zuletzt geöffnet=Übersicht 2023.xlsx']
    return C('Dokumente/Buchhaltung/verbindung.ini', lines, note='German labels, empty Passwort, cp1252', enc='cp1252', eol='\r\n')


@neg('ini')
def ini_password_command(r):
    lines = ['[account work]', 'host smtp.%s' % domain(r), 'port 587', 'user %s' % email(r),
             'passwordeval "gpg -q --for-your-eyes-only --decrypt ~/.msmtp-work.gpg"', '', '[client]',
             'password_command = pass show mail/%s' % r.choice(WORDS), 'password =']
    return C('.msmtprc', lines, note='passwordeval / password_command')


@neg('env-file')
def env_crlf_placeholders(r):
    lines = ['# copy to .env and fill in', 'DATABASE_URL=postgres://${DB_USER}:${DB_PASSWORD}@${DB_HOST}:5432/app']
    for n in r.sample(ENVNAMES, 4):
        lines.append('%s=%s' % (n, placeholder(r, n)))
    return C('src/shop/.env.example', lines, note='placeholders and ${} references, CRLF', eol='\r\n')


@neg('env-file')
def env_bom_refs(r):
    lines = ['%s=${%s}' % (n, n) for n in r.sample(ENVNAMES, 3)] + ['MODEL=gpt-4o', 'REQUEST_ID_SALT_SOURCE=/run/secrets/salt']
    return C('Projects/chatbot/.env', lines, note='BOM then ${VAR} references', enc='utf-8-sig')


@neg('text-notes')
def notes_utf16_clean(r):
    lines = ['Security reminders', '- the API keys live in 1Password (vault "Engineering"), never paste them here',
             '- rotate the deploy token every 90 days', '- VPN password: use the one from the IT portal', '',
             'Ticket %s: %s' % (guid(r), sentence(r))]
    return C('Desktop/notes.txt', lines, note='talks about passwords, holds none', enc=r.choice(['utf-16le', 'utf-16be']), eol='\r\n')


@neg('text-notes')
def strings_labels(r):
    lines = ['/* Localizable.strings */', '"password_prompt" = "Enter your password";', '"api_key_label" = "API key";',
             '"token_expired" = "Your session token expired. Please sign in again.";', '"secret_hint" = "Never share your secret key";']
    return C('Projects/iOS/App/Resources/de.lproj/Localizable.strings', lines, note='UI labels about passwords/keys',
             enc=r.choice(['utf-16le', 'utf-16be']))


@neg('text-notes')
def csv_mac_cr_clean(r):
    rows = ['Name,Email,Phone,Notes']
    for _ in range(r.randrange(3, 8)):
        f, l = person(r)
        rows.append('%s %s,%s,+49 %d,%s' % (f.capitalize(), l.capitalize(), email(r), r.randrange(10 ** 9, 10 ** 10), r.choice(['Café', 'Büro', '-'])))
    return C('Documents/contacts.csv', rows, note='CSV (Macintosh): MacRoman, CR-only', enc='mac_roman', eol='\r')


@neg('windows-xml')
def unattend_deleted(r):
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<unattend xmlns="urn:schemas-microsoft-com:unattend">', '  <settings pass="oobeSystem">',
             '    <component name="Microsoft-Windows-Shell-Setup">', '      <UserAccounts>', '        <AdministratorPassword>',
             '          <Value>*SENSITIVE*DATA*DELETED*</Value>', '          <PlainText>true</PlainText>', '        </AdministratorPassword>',
             '      </UserAccounts>', '    </component>', '  </settings>', '</unattend>']
    return C('Downloads/Panther/unattend.xml', lines, note='unattend with *SENSITIVE*DATA*DELETED*', enc='utf-8-sig', eol='\r\n')


@neg('windows-xml')
def wifi_protected(r):
    ssid = r.choice(['HomeNet-5G', 'Office', 'Cafe-Guest'])
    lines = ['<?xml version="1.0"?>', '<WLANProfile xmlns="http://www.microsoft.com/networking/WLAN/profile/v1">', '\t<name>%s</name>' % ssid,
             '\t<MSM>', '\t\t<security>', '\t\t\t<sharedKey>', '\t\t\t\t<keyType>passPhrase</keyType>', '\t\t\t\t<protected>true</protected>',
             '\t\t\t\t<keyMaterial>%s</keyMaterial>' % dpapi_hex(r).upper(), '\t\t\t</sharedKey>', '\t\t</security>', '\t</MSM>', '</WLANProfile>']
    return C('Documents/wifi/Wi-Fi-%s.xml' % ssid, lines, note='protected (DPAPI) keyMaterial', eol='\r\n')


@neg('windows-xml')
def rdp_dpapi(r):
    lines = ['screen mode id:i:2', 'desktopwidth:i:1920', 'desktopheight:i:1080', 'full address:s:%s' % host(r, 'rds'),
             'username:s:CORP\\%s' % wu(r), 'password 51:b:%s' % dpapi_hex(r).upper(), 'gatewayhostname:s:', 'prompt for credentials:i:0']
    return C('Desktop/%s.rdp' % r.choice(['jump', 'prod-rds', 'lab']), lines, note='.rdp with DPAPI password 51:b: blob',
             enc='utf-16le', eol='\r\n')


@neg('windows-xml')
def nuget_encrypted(r):
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<configuration>', '  <packageSourceCredentials>', '    <internal>',
             '      <add key="Username" value="%s" />' % username(r), '      <!-- Password is DPAPI-encrypted by "nuget sources add" -->',
             '      <add key="Password" value="%s" />' % dpapi_b64(r), '    </internal>', '    <github>',
             '      <add key="ClearTextPassword" value="%GITHUB_PACKAGES_TOKEN%" />', '    </github>', '  </packageSourceCredentials>', '</configuration>']
    return C('AppData/Roaming/NuGet/NuGet.Config', lines, note='DPAPI-encrypted Password and %VAR% ClearTextPassword', enc='utf-8-sig', eol='\r\n')


@neg('windows-xml')
def web_config_integrated(r):
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<configuration>', '  <appSettings>', '    <add key="ApiKey" value="" />',
             '    <add key="Greeting" value="Tom &amp; Jerry&apos;s &quot;shop&quot;" />', '  </appSettings>', '  <connectionStrings>',
             '    <add name="ShopDb" connectionString="Data Source=%s;Initial Catalog=Shop;Integrated Security=True;Password=;" />' % host(r, 'sql'),
             '  </connectionStrings>', '</configuration>']
    return C('source/repos/Shop/Shop.Web/Web.config', lines, note='Integrated Security, empty values, entities', enc='utf-8-sig', eol='\r\n')


@neg('windows-xml')
def vs_sln(r):
    lines = ['', 'Microsoft Visual Studio Solution File, Format Version 12.00', '# Visual Studio Version 17', 'VisualStudioVersion = 17.8.34330.188']
    projs = []
    for name in r.sample(['Core', 'Web', 'Tests', 'Worker', 'Api'], 3):
        g = guid(r, True)
        projs.append(g)
        lines += ['Project("{FAE04EC0-301F-11D3-BF4B-00C04F79EFBC}") = "%s", "%s\\%s.csproj", "{%s}"' % (name, name, name, g), 'EndProject']
    lines += ['Global', '\tGlobalSection(ProjectConfigurationPlatforms) = postSolution']
    for g in projs:
        lines += ['\t\t{%s}.Debug|Any CPU.ActiveCfg = Debug|Any CPU' % g, '\t\t{%s}.Release|Any CPU.Build.0 = Release|Any CPU' % g]
    lines += ['\tEndGlobalSection', '\tGlobalSection(ExtensibilityGlobals) = postSolution', '\t\tSolutionGuid = {%s}' % guid(r, True),
              '\tEndGlobalSection', 'EndGlobal']
    return C('source/repos/App/App.sln', lines, note='Visual Studio .sln full of GUIDs', enc='utf-8-sig', eol='\r\n')


@neg('git-credentials')
def git_config_crlf(r):
    lines = ['[user]', '\tname = %s' % ' '.join(x.capitalize() for x in person(r)), '\temail = %s' % email(r), '[credential]',
             '\thelper = manager', '[credential "https://dev.azure.com"]', '\tuseHttpPath = true', '[url "git@github.com:"]',
             '\tinsteadOf = https://github.com/', '[core]', '\tautocrlf = true']
    return C('.gitconfig', lines, note='credential helper config, CRLF', eol='\r\n')


@neg('npmrc')
def npmrc_env_ref(r):
    lines = ['registry=https://registry.npmjs.org/', '//registry.npmjs.org/:_authToken=${NPM_TOKEN}',
             '@%s:registry=https://npm.pkg.github.com' % org(r), '//npm.pkg.github.com/:_authToken=${GITHUB_PACKAGES_TOKEN}']
    return C('.npmrc', lines, note='npm auth via ${VAR}', enc='utf-8-sig', eol='\r\n')


# ============================================================ public material, encrypted keys
@neg('public-key')
def authorized_keys_utf16(r):
    lines = [ssh_pub_ed25519(r, '%s@%s' % (wu(r), r.choice(['laptop', 'desktop', 'ci']))) for _ in range(r.randrange(1, 4))]
    return C('.ssh/authorized_keys', lines, note='public keys written by PowerShell echo >> (UTF-16LE)', enc='utf-16le', eol='\r\n')


@neg('public-key')
def cert_bom(r):
    lines = cert_pem(r)
    return C('Documents/certs/%s.crt' % r.choice(['root-ca', 'server', 'intranet']), lines, note='certificate, UTF-8 BOM CRLF',
             enc='utf-8-sig', eol='\r\n')


@neg('public-key')
def ppk_encrypted(r):
    lines = ppk(r, 'rsa-key-%s' % ts(r).strftime('%Y%m%d'), passphrase=rs(r, B62, 16))
    return C('Documents/keys/prod.ppk', lines, note='PuTTY key with Encryption: aes256-cbc (passphrase not stored)', eol='\r\n')


@neg('public-key')
def jwks_json(r):
    from cryptography.hazmat.primitives import serialization as s
    pem = pubkey_pem(r)
    d = {'keys': [{'kty': 'RSA', 'use': 'sig', 'alg': 'RS256', 'kid': rhex(r, 16), 'n': b64u(rbytes(r, 256)), 'e': 'AQAB'}],
         'public_key': '\n'.join(pem) + '\n'}
    return C('Projects/auth/jwks.json', json.dumps(d, indent=2) + '\n', note='JWKS and a \\n-escaped PUBLIC KEY')


@neg('public-key')
def yaml_block_cert(r):
    c = cert_pem(r)
    lines = ['tls:', '  ca: |'] + ['    ' + l for l in c] + ['  key_file: /etc/app/tls.key', '  verify: true']
    return C('.config/gatewayd/config.yaml', lines, note='certificate in a YAML | block, key by file path')


@neg('public-key')
def kubeconfig_exec(r):
    c = '\n'.join(cert_pem(r)) + '\n'
    lines = ['apiVersion: v1', 'kind: Config', 'clusters:', '- cluster:', '    certificate-authority-data: %s' % b64(c.encode()),
             '    server: https://%s.gr7.eu-west-1.eks.amazonaws.com' % rhex(r, 32).upper(), '  name: eks-prod', 'users:', '- name: eks-prod',
             '  user:', '    exec:', '      apiVersion: client.authentication.k8s.io/v1beta1', '      command: aws',
             '      args: ["eks", "get-token", "--cluster-name", "prod"]', 'current-context: eks-prod']
    return C('.kube/config', lines, note='kubeconfig: CA cert data and exec plugin')


@neg('public-key')
def kubeconfig_cert_paths(r):
    c = '\n'.join(cert_pem(r)) + '\n'
    lines = ['apiVersion: v1', 'kind: Config', 'users:', '- name: minikube', '  user:', '    client-certificate-data: %s' % b64(c.encode()),
             '    client-key: /home/%s/.minikube/profiles/minikube/client.key' % username(r)]
    return C('.kube/minikube.yaml', lines, note='client certificate data, key by path')


@neg('public-key')
def known_hosts_hashed(r):
    lines = []
    for _ in range(r.randrange(4, 12)):
        lines.append('|1|%s|%s %s' % (b64(rbytes(r, 20)), b64(rbytes(r, 20)), ssh_pub_ed25519(r, '').strip()))
    return C('.ssh/known_hosts', lines, note='hashed known_hosts')


# ============================================================ long lines, big files
@neg('long-line')
def minified_ids(r):
    cfg = fill.app_config(r, r.randrange(50000, 200000))
    return C('Projects/shop/dist/assets/config.%s.js' % rhex(r, 8), 'window.__APP_CONFIG__=' + jdump(cfg) + ';\n',
             note='50-200 KB minified config: hashes, GUIDs, SRI')


@neg('long-line')
def ext_storage_clean(r):
    st = fill.ext_storage(r, r.randrange(60000, 200000))
    st['settings']['apiToken'] = ''
    return C('Downloads/octotree-settings-backup.json', jdump(st), note='one-line extension storage, empty apiToken', nl=False)


@neg('long-line')
def html_single_line_clean(r):
    img = b64(rbytes(r, r.randrange(40000, 120000)))
    text = ('<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><img src="data:image/png;base64,%s">'
            '<script>const API_KEY=window.ENV.MAPS_API_KEY;loadMaps(API_KEY)</script></body></html>' % img)
    return C('Documents/saved/store-locator.html', text, note='data: URI then a key read from window.ENV', nl=False)


@neg('long-line')
def firefox_logins(r):
    logins = []
    for i in range(r.randrange(5, 40)):
        logins.append({'id': i + 1, 'hostname': 'https://%s' % domain(r), 'httpRealm': None, 'formSubmitURL': 'https://%s' % domain(r),
                       'usernameField': 'email', 'passwordField': 'password',
                       'encryptedUsername': 'MDoEEPgAAAAAAAAAAAAAAAAAAAEwFAYIKoZIhvcNAwcECA' + b64(rbytes(r, 24)),
                       'encryptedPassword': 'MDoEEPgAAAAAAAAAAAAAAAAAAAEwFAYIKoZIhvcNAwcECA' + b64(rbytes(r, 24)),
                       'guid': '{%s}' % guid(r), 'encType': 1, 'timeCreated': int(ts(r).timestamp() * 1000),
                       'timeLastUsed': int(ts(r).timestamp() * 1000), 'timePasswordChanged': int(ts(r).timestamp() * 1000), 'timesUsed': r.randrange(1, 99)})
    d = {'nextId': len(logins) + 1, 'logins': logins, 'potentiallyVulnerablePasswords': [], 'dismissedBreachAlertsByLoginGUID': {}, 'version': 3}
    return C('.mozilla/firefox/%s.default-release/logins.json' % rs(r, LO + DG, 8), jdump(d), note='Firefox logins.json (NSS-encrypted fields)', nl=False)


@neg('big-file')
def big_log_redacted(r):
    lines = fill.app_log(r, r.randrange(1000000, 3000000))
    i = r.randrange(len(lines))
    lines.insert(i, '%sZ DEBUG http.client: > GET /v1/me | Authorization: Bearer [REDACTED] | Cookie: <omitted>' % ts(r).isoformat())
    lines.insert(r.randrange(len(lines)), '%sZ INFO db.pool: connecting to postgresql://app:***@%s:5432/app' % (ts(r).isoformat(), host(r, 'pg')))
    return C('.local/state/syncd/logs/app.log', lines, note='1-3 MB log with redacted auth')


@neg('big-file')
def big_log_crlf_clean(r):
    lines = fill.app_log(r, r.randrange(1000000, 3000000), win=True)
    return C('AppData/Local/Contoso/Logs/service.log', lines, note='1-3 MB CRLF log, ids and hashes only', eol='\r\n')


@neg('big-file')
def big_sqldump_hashes(r):
    lines, _ = fill.sql_dump(r, r.randrange(1000000, 3000000), hashes=True)
    return C('backups/site-%s.sql' % ts(r).date(), lines, note='1-3 MB dump with bcrypt/phpass hashes')


@neg('big-file')
def big_har_clean(r):
    text = fill.har(r, r.randrange(700000, 1500000), secret_header=('Authorization', 'Bearer <redacted by exporter>'))
    return C('Downloads/login-issue.har', text, note='~1 MB HAR, auth header redacted')


# ============================================================ binary containers
@neg('sqlite')
def sqlite_vscdb_clean(r):
    stm = [('CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)', ())]
    for k, v in fill.vscode_items(r):
        stm.append(('INSERT INTO ItemTable VALUES (?, ?)', (k, v)))
    return B('.config/Code/User/globalStorage/state.vscdb', bins.sqlite_db(stm), note='VS Code state: machineId hash, UI state')


@neg('sqlite')
def sqlite_cookies_encrypted(r):
    stm = [('CREATE TABLE cookies(creation_utc INTEGER NOT NULL, host_key TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, '
            'path TEXT NOT NULL, expires_utc INTEGER NOT NULL, is_secure INTEGER NOT NULL, encrypted_value BLOB DEFAULT \'\')', ())]
    for _ in range(r.randrange(10, 60)):
        stm.append(('INSERT INTO cookies VALUES (?,?,?,?,?,?,?,?)', (13300000000000000 + r.randrange(10 ** 14), '.' + domain(r),
                    r.choice(['_ga', 'sid', 'csrftoken', 'prefs', '__Secure-next-auth.session-token']), '', '/',
                    13400000000000000 + r.randrange(10 ** 14), 1, b'v10' + rbytes(r, r.randrange(30, 200)))))
    return B('.config/google-chrome/Default/Cookies', bins.sqlite_db(stm), note='Chrome cookies: values only as v10-encrypted blobs')


@neg('sqlite')
def sqlite_utf16_clean(r):
    stm = [('CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT)', ())]
    for row in [('ui.language', 'de-DE'), ('device.id', guid(r)), ('account.email', email(r)), ('apiKey', ''), ('cache.hash', sha256hex(r))]:
        stm.append(('INSERT INTO settings VALUES (?,?)', row))
    return B('AppData/Roaming/Syncro/settings.db', bins.sqlite_db(stm, encoding='UTF-16le'), note='UTF-16le SQLite, empty apiKey')


@neg('sqlite')
def sqlite_sticky_clean(r):
    stm = [('CREATE TABLE Note (Text TEXT, Id TEXT PRIMARY KEY)', ())]
    for _ in range(r.randrange(2, 6)):
        stm.append(('INSERT INTO Note VALUES (?,?)', ('\\id=%s %s' % (guid(r), r.choice(['password reset done', 'rotate API key friday', sentence(r)])), guid(r))))
    return B('AppData/Local/Packages/Microsoft.MicrosoftStickyNotes_8wekyb3d8bbwe/LocalState/plum.sqlite', bins.sqlite_db(stm),
             note='sticky notes mentioning passwords, none present')


@neg('leveldb')
def leveldb_clean(r):
    o = 'https://discord.com'
    batches = [[bins.ls_meta(r, o)], [(bins.ls_key(o, 'user_id_cache'), bins.ls_val('"%d"' % r.randrange(10 ** 17, 10 ** 18)))],
               [(bins.ls_key(o, 'token'), None)], [(bins.ls_key(o, 'locale'), bins.ls_val('"de"'))],
               [(bins.ls_key(o, 'deviceProperties'), bins.ls_val(jdump({'os': 'Linux', 'browser': 'Discord Client', 'client_build_number': r.randrange(200000, 300000)})))]]
    return B('.config/discord/Local Storage/leveldb/%06d.log' % r.randrange(3, 200), bins.leveldb_log(batches), note='LevelDB log: token key deleted, ids only')


@neg('leveldb')
def leveldb_ext_clean(r):
    ext = rs(r, 'abcdefghijklmnop', 32)
    batches = [[(b'options', jdump({'theme': 'auto', 'authToken': None, 'installId': guid(r)}).encode())],
               [(b'cache', jdump({rhex(r, 40): int(ts(r).timestamp()) for _ in range(20)}).encode())]]
    return B('.config/google-chrome/Default/Local Extension Settings/%s/000003.log' % ext, bins.leveldb_log(batches),
             note='extension LevelDB: null authToken, commit hashes')


@neg('bplist')
def bplist_clean(r):
    d = {'NSWindow Frame MainWindow': '100 100 1024 700 0 0 1728 1079 ', 'SUEnableAutomaticChecks': True, 'UUID': guid(r, True),
         'apiToken': '', 'LastExportHash': sha256hex(r), 'RecentDocuments': ['/Users/%s/Documents/%s.md' % (username(r), w) for w in r.sample(WORDS, 3)]}
    return B('Library/Preferences/com.%s.uploader.plist' % org(r).replace('-', ''), bins.bplist(d), note='binary plist: empty apiToken, UUID, hash')


@neg('bplist')
def webloc_clean(r):
    return B('Desktop/Grafana.webloc', bins.bplist({'URL': 'https://%s/d/%s/overview?orgId=1' % (host(r, 'grafana'), rs(r, B62, 9))}),
             note='.webloc with a plain URL')


@neg('bplist')
def ds_store(r):
    names = ['secrets.txt', 'api_keys.md', 'passwords.kdbx', 'id_rsa.pub', 'Übersicht.pdf', 'token-notes.rtf']
    return B('Documents/.DS_Store', bins.ds_store(r, r.sample(names, 4)), note='.DS_Store listing secret-sounding file names')


@neg('shell-history')
def zsh_history_clean(r):
    t0 = int(ts(r).timestamp())
    cmds = ['cd ~/Projekte/Übersicht', 'export GITHUB_TOKEN=$(op read op://Private/GitHub/token)', 'gh auth login --with-token < ~/.gh-token',
            'security find-generic-password -s github -w | pbcopy', 'vim Notizen_März.md', 'export OPENAI_API_KEY="$(pass show openai)"',
            'shasum -a 256 release.tar.gz', 'git log --oneline -5', 'curl -u "$ES_USER:$ES_PASS" https://localhost:9200']
    hist = [': %d:0;%s' % (t0 + i * 41, r.choice(cmds)) for i in range(r.randrange(20, 60))]
    return C('.zsh_history', hist, note='metafied zsh history: secret-manager lookups only', enc='zsh')


@neg('shell-history')
def macos_security_find(r):
    lines = ['#!/bin/zsh', 'set -euo pipefail', 'TOKEN=$(security find-generic-password -a "$USER" -s github-cli -w)',
             '# -w as the last option: security prompts for the password', 'security add-generic-password -U -a "$USER" -s npm-publish -w',
             'export NPM_TOKEN="$TOKEN"']
    return C('dotfiles/macos/bootstrap.sh', lines, note='keychain read and prompting add')


@neg('plist-xml')
def launchd_env_clean(r):
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
             '<plist version="1.0">', '<dict>', '\t<key>Label</key>', '\t<string>com.local.sync</string>', '\t<key>EnvironmentVariables</key>',
             '\t<dict>', '\t\t<key>PATH</key>', '\t\t<string>/opt/homebrew/bin:/usr/bin:/bin</string>', '\t\t<key>TOKEN_FILE</key>',
             '\t\t<string>/Users/%s/.config/sync/token</string>' % username(r), '\t\t<key>API_KEY</key>', '\t\t<string></string>', '\t</dict>',
             '</dict>', '</plist>']
    return C('Library/LaunchAgents/com.local.sync.plist', lines, note='launchd env: path to a token file, empty API_KEY')


@neg('plist-xml')
def mobileconfig(r):
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<plist version="1.0">', '<dict>', '  <key>PayloadContent</key>', '  <array>', '    <dict>',
             '      <key>PayloadType</key><string>com.apple.wifi.managed</string>', '      <key>SSID_STR</key><string>Office</string>',
             '      <key>EncryptionType</key><string>WPA2</string>', '      <key>PromptForPassword</key><true/>',
             '      <key>PayloadUUID</key><string>%s</string>' % guid(r, True), '    </dict>', '  </array>',
             '  <key>PayloadIdentifier</key><string>com.%s.wifi.%s</string>' % (org(r).replace('-', ''), guid(r, True)),
             '  <key>PayloadUUID</key><string>%s</string>' % guid(r, True), '</dict>', '</plist>']
    return C('Downloads/office-wifi.mobileconfig', lines, note='profile that prompts for the password, UUIDs')


# ============================================================ escapes
@neg('json-escape')
def json_u0022_placeholder(r):
    n = envname(r)
    inner = '{\\u0022provider\\u0022:\\u0022openai\\u0022,\\u0022%s\\u0022:\\u0022\\u0022,\\u0022keyRef\\u0022:\\u0022keychain:%s\\u0022}' % (camel(n), camel(n))
    lines = ['{', '  "version": 3,', '  "pluginState": "%s",' % inner, '  "lastOpened": "%s"' % ts(r).isoformat(), '}']
    return C('.config/Raycast/state.json', lines, note='\\u0022-escaped JSON with empty key and keychain ref')


@neg('json-escape')
def json_slash_docs(r):
    d = '{"notify":{"webhook":"https:\\/\\/hooks.slack.com\\/services\\/T00000000\\/B00000000\\/XXXXXXXXXXXXXXXXXXXXXXXX","docs":"https:\\/\\/api.slack.com\\/messaging\\/webhooks"}}'
    return C('Sites/blog/wp-content/uploads/notifier-settings.json', [d], note='Slack docs example webhook with \\/ escapes')


@neg('json-escape')
def ipynb_getpass(r):
    cells = [{'cell_type': 'code', 'execution_count': 1, 'metadata': {}, 'outputs': [],
              'source': ['import os, getpass\n', 'os.environ["OPENAI_API_KEY"] = getpass.getpass("key: ")\n']},
             {'cell_type': 'code', 'execution_count': 2, 'metadata': {},
              'outputs': [{'output_type': 'display_data', 'data': {'image/png': b64(rbytes(r, r.randrange(3000, 30000))), 'text/plain': ['<Figure>']}, 'metadata': {}}],
              'source': ['df.plot()']}]
    nb = {'cells': cells, 'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}
    return C('notebooks/explore.ipynb', json.dumps(nb, indent=1) + '\n', note='getpass() and a base64 PNG output')


@neg('json-escape')
def postman_env_empty(r):
    vals = [{'key': 'baseUrl', 'value': 'https://api.%s' % domain(r), 'enabled': True}, {'key': 'apiKey', 'value': '', 'type': 'secret', 'enabled': True},
            {'key': 'authHeader', 'value': 'Bearer {{accessToken}}', 'enabled': True}]
    d = {'id': guid(r), 'name': 'Production', 'values': vals, '_postman_variable_scope': 'environment'}
    return C('Downloads/Production.postman_environment.json', json.dumps(d, indent='\t') + '\n', note='Postman env: empty secret, {{var}}')


@neg('json-escape')
def docker_credsstore(r):
    d = {'auths': {'ghcr.io': {}, 'https://index.docker.io/v1/': {}}, 'credsStore': r.choice(['desktop', 'osxkeychain', 'wincred']),
         'currentContext': 'desktop-linux'}
    return C('.docker/config.json', json.dumps(d, indent='\t') + '\n', note='docker config with credsStore')


@neg('xml-entities')
def html_entities_clean(r):
    cfg = '{&quot;apiBase&quot;:&quot;https://api.%s&quot;,&quot;buildId&quot;:&quot;%s&quot;,&quot;sentryRelease&quot;:&quot;%s&quot;}' % (
        domain(r), rhex(r, 40), rhex(r, 12))
    lines = ['<!doctype html>', '<html>', '<body>', '<div id="root" data-config="%s"></div>' % cfg, '</body>', '</html>']
    return C('Downloads/Dashboard.html', lines, note='&quot;-escaped config with build hashes')


@neg('xml-entities')
def maven_encrypted(r):
    lines = ['<settings>', '  <servers>', '    <server>', '      <id>internal-releases</id>', '      <username>%s</username>' % username(r),
             '      <!-- encrypted with mvn --encrypt-password; master key in settings-security.xml -->',
             '      <password>{%s}</password>' % b64(rbytes(r, 32)), '    </server>', '  </servers>',
             '  <mirrors><mirror><url>https://nexus.%s/repository/maven-public/?a=1&amp;b=2</url></mirror></mirrors>' % domain(r), '</settings>']
    return C('.m2/settings.xml', lines, note='Maven {..} encrypted password')


@neg('xml-entities')
def jenkins_credentials(r):
    lines = ["<?xml version='1.1' encoding='UTF-8'?>", '<com.cloudbees.plugins.credentials.SystemCredentialsProvider plugin="credentials@1319.v7eb_51b_3a_c97b_">',
             '  <domainCredentialsMap class="hudson.util.CopyOnWriteMap$Hash">', '    <entry>',
             '      <com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>', '        <id>%s</id>' % guid(r),
             '        <username>%s</username>' % username(r), '        <password>{%s}</password>' % b64(b'\x01\x00\x00\x00\x10' + rbytes(r, 60)),
             '      </com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>', '    </entry>', '  </domainCredentialsMap>',
             '</com.cloudbees.plugins.credentials.SystemCredentialsProvider>']
    return C('jenkins_home/credentials.xml', lines, note='Jenkins {AQAAAB...} encrypted secret')


@neg('url-encoding')
def url_encoded_clean(r):
    redirect = pct('https://app.%s/callback?next=/settings' % domain(r))
    lines = ['# OAuth flow notes', 'AUTH_URL="https://login.%s/authorize?response_type=code&client_id=%s&redirect_uri=%s&state=%s&scope=openid%%20profile"' % (
        domain(r), guid(r), redirect, rhex(r, 16)), 'export DATABASE_URL="postgresql://app@%s:5432/app?sslmode=require&passfile=%%2Fhome%%2Fapp%%2F.pgpass"' % host(r, 'pg')]
    return C('Projects/api/.envrc', lines, note='percent-encoded URLs with no credentials')


@neg('mail')
def eml_qp_notice(r):
    f, l = person(r)
    lines = ['From: IT Support <it-support@%s>' % domain(r), 'To: %s@%s' % (f, domain(r)), 'Subject: Password reset',
             'MIME-Version: 1.0', 'Content-Type: text/plain; charset="utf-8"', 'Content-Transfer-Encoding: quoted-printable', '',
             qp_line('Hallo %s,' % f.capitalize()), qp_line('Ihr Passwort wurde zurückgesetzt. Bitte nutzen Sie den Link:'),
             'https://sso.%s/reset?id=3D%s&amp;t=3D%s' % (domain(r), guid(r), rhex(r, 8)), '', qp_line('Grüße, IT')]
    return C('Documents/Mail/Password reset.eml', lines, note='QP mail about a reset, no password', eol='\r\n')


@neg('yaml-block')
def yaml_ansible_vault(r):
    lines = ['db_user: app', 'db_password: !vault |', '  $ANSIBLE_VAULT;1.1;AES256']
    blob = rhex(r, 640)
    lines += ['  ' + blob[i:i + 80] for i in range(0, len(blob), 80)]
    lines += ['api_token: "{{ lookup(\'env\', \'API_TOKEN\') }}"']
    return C('ansible/group_vars/prod/vars.yml', lines, note='Ansible vault block and env lookup')


@neg('yaml-block')
def yaml_sops(r):
    def enc():
        return 'ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:str]' % (b64(rbytes(r, r.randrange(16, 60))), b64(rbytes(r, 32)), b64(rbytes(r, 16)))
    lines = ['database:', '  password: %s' % enc(), 'slack:', '  token: %s' % enc(), 'sops:', '  age:',
             '    - recipient: age1%s' % rs(r, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58), '      enc: |',
             '        -----BEGIN AGE ENCRYPTED FILE-----'] + ['        ' + b64(rbytes(r, 48)) for _ in range(4)] + [
             '        -----END AGE ENCRYPTED FILE-----', '  lastmodified: "%sZ"' % ts(r).isoformat(), '  mac: %s' % enc(), '  version: 3.8.1']
    return C('homelab/secrets.enc.yaml', lines, note='SOPS-encrypted values and age recipient')


@neg('yaml-block')
def yaml_folded_ref(r):
    lines = ['app:', '  database_url: >-', '    postgres://{{ db_user }}:{{ vault_db_password }}@{{ db_host }}:5432/app', '  description: |',
             '    The password is injected at deploy time.', '    Never commit it.']
    return C('.config/ledger/settings.yml', lines, note='folded scalar with template references')


@neg('toml-multiline')
def toml_multiline_desc(r):
    lines = ['[bot]', 'name = "deploybot"', 'description = """', 'Posts deploy notices. The token is read from', 'the OS keychain (service "deploybot").', '"""',
             'public_key = \'\'\'', ssh_pub_ed25519(r, 'deploybot'), "'''"]
    return C('.config/slackbot/config.toml', lines, note='TOML multi-line text and a public key')


@neg('toml-multiline')
def terraform_lock(r):
    lines = ['# This file is maintained automatically by "terraform init".', '']
    for p in r.sample(['hashicorp/aws', 'hashicorp/random', 'cloudflare/cloudflare', 'hashicorp/kubernetes'], 2):
        lines += ['provider "registry.terraform.io/%s" {' % p, '  version     = "%d.%d.%d"' % (r.randrange(1, 6), r.randrange(60), r.randrange(9)),
                  '  constraints = "~> 5.0"', '  hashes = [', '    "h1:%s",' % b64(rbytes(r, 32))]
        lines += ['    "zh:%s",' % rhex(r, 64) for _ in range(r.randrange(4, 10))]
        lines += ['  ]', '}', '']
    return C('infra/.terraform.lock.hcl', lines, note='provider lock hashes')


@neg('heredoc')
def heredoc_refs(r):
    lines = ['#!/bin/sh', "cat > ~/.pgpass <<EOF", '*:*:*:$PGUSER:$PGPASSWORD', 'EOF', 'chmod 600 ~/.pgpass',
             'cat > ~/.netrc <<EOF', 'machine api.%s login $API_USER password $(pass show api)' % domain(r), 'EOF']
    return C('bin/setup-psql.sh', lines, note='heredocs with $VAR and $(pass show)')


@neg('properties')
def properties_jasypt(r):
    lines = ['spring.datasource.url=jdbc:postgresql://%s:5432/app' % host(r, 'pg'), 'spring.datasource.username=${DB_USER}',
             'spring.datasource.password=${DB_PASSWORD}', 'mail.password=ENC(%s)' % b64(rbytes(r, 24)), 'db.url=jdbc:mysql://%s:3306/shop?\\' % host(r, 'mysql'),
             '    useSSL=true&\\', '    password=${SHOP_DB_PASSWORD}']
    return C('src/billing/src/main/resources/application-prod.properties', lines, note='${} refs, Jasypt ENC(), continuation')


@neg('properties')
def properties_unicode_labels(r):
    lines = ['label.password=Passwort', 'label.password.hint=Mindestens 12 Zeichen, Gro\\u00df- und Kleinbuchstaben',
             'error.password.wrong=Das Passwort ist falsch', 'label.greeting=Gr\\u00fc\\u00dfe']
    return C('src/app/src/main/resources/messages_de.properties', lines, note='i18n labels with \\u escapes')


@neg('dotfile')
def gh_hosts_keyring(r):
    u = username(r)
    lines = ['github.com:', '    git_protocol: ssh', '    users:', '        %s:' % u, '    user: %s' % u]
    return C('.config/gh/hosts.yml', lines, note='gh hosts.yml with keyring-stored token')


@neg('dotfile')
def aws_config_sso(r):
    lines = ['[default]', 'region = eu-central-1', 'sso_session = corp', '', '[sso-session corp]',
             'sso_start_url = https://%s.awsapps.com/start' % org(r).replace('-', ''), 'sso_region = eu-central-1',
             'sso_registration_scopes = sso:account:access', 'credential_process = /usr/local/bin/aws-vault exec dev --json']
    return C('.aws/config', lines, note='AWS SSO config, no keys', enc='utf-8-sig', eol='\r\n')


@neg('dotfile')
def vault_agent_config(r):
    u = username(r)
    lines = ['auto_auth {', '  method "approle" {', '    config = {', '      role_id_file_path   = "/home/%s/.vault/role-id"' % u,
             '      secret_id_file_path = "/home/%s/.vault/secret-id"' % u, '    }', '  }', '  sink "file" {',
             '    config = { path = "/home/%s/.vault-token" }' % u, '  }', '}']
    return C('.config/vault/agent.hcl', lines, note='Vault agent: file paths only')


@neg('binary')
def png_image(r):
    import struct, zlib
    w, h = r.randrange(16, 96), r.randrange(16, 96)

    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
    raw = b''.join(b'\x00' + rbytes(r, 3 * w) for _ in range(h))
    data = (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
            + chunk(b'tEXt', b'Software\x00Greenshot') + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))
    return B('Pictures/Screenshots/Screenshot %s.png' % ts(r).strftime('%Y-%m-%d %H%M%S'), data, note='ordinary PNG image')
