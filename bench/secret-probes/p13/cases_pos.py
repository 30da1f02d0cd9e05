"""p13 positives: one live-looking credential on one line, in the bytes real homes hold."""
import base64, json

from common import pos, S, C, B, reg_esc, xml_esc, jdump, pct, props_esc, qp_line, ps_sq
from vals import (rs, rhex, rbytes, b64, b64u, guid, B62, B64U, UP, LO, DG, HEX, WORDS, person, username, org,
                  domain, email, host, winuser, ts, sentence, password, token, camel, db_url, aws_secret, gh,
                  gh_fine, glpat, slack_bot, slack_user, slack_webhook, stripe, openai, anthropic, google_key,
                  sendgrid, mailgun, npm, pypi, hf, azure_client_secret, azure_storage_key, discord, telegram,
                  tfc, vault, crates, jwt, twilio_sid, twilio_token, pem_rsa, pem_ec, openssh_ed25519,
                  openssh_rsa, ppk, sha256hex, TOKENS)
import fill
import bins

WIN_USERS = ('jdoe', 'mkowalski', 'a.tanaka', 'lindqvist', 'rpatel', 'snovak')


def wu(r):
    return r.choice(WIN_USERS)


def body_uniq(pem):
    """A random base64 line from the middle of a PEM/OpenSSH body (avoids fixed DER prefixes)."""
    body = [l for l in pem[1:-1] if len(l) >= 40]
    return body[len(body) // 2]


# ============================================================ Windows registry exports (UTF-16LE, CRLF)
def reg_file(keys):
    out = ['Windows Registry Editor Version 5.00', '']
    for k, vals in keys:
        out.append('[%s]' % k)
        out += vals
        out.append('')
    return out


@pos('windows-reg')
def reg_putty_proxy(r):
    pw = password(r)
    sess = r.choice(['prod-bastion', 'jump%20host', 'router-core', 'nas-admin', 'build-01'])
    u = wu(r)
    vals = ['"Present"=dword:00000001', '"HostName"="%s"' % host(r), '"LogFileName"="putty.log"',
            '"LogType"=dword:00000000', '"Protocol"="ssh"', '"PortNumber"=dword:00000016',
            '"CloseOnExit"=dword:00000001', '"ProxyExcludeList"=""', '"ProxyDNS"=dword:00000001',
            '"ProxyLocalhost"=dword:00000000', '"ProxyMethod"=dword:00000003',
            '"ProxyHost"="%s"' % host(r, 'proxy'), '"ProxyPort"=dword:00000c38',
            '"ProxyUsername"="%s"' % u, S('"ProxyPassword"="%s"' % reg_esc(pw)),
            '"ProxyTelnetCommand"="connect %host %port\\\\n"', '"UserName"="%s"' % u,
            '"PublicKeyFile"="C:\\\\Users\\\\%s\\\\.ssh\\\\id_ed25519.ppk"' % u,
            '"TerminalType"="xterm"', '"Font"="Consolas"', '"FontHeight"=dword:0000000a']
    lines = reg_file([('HKEY_CURRENT_USER\\Software\\SimonTatham\\PuTTY\\Sessions\\' + sess, vals)])
    return C('Desktop/putty-sessions-%s.reg' % r.choice(['backup', 'export', '2023']), lines, reg_esc(pw),
             'PuTTY ProxyPassword REG_SZ', enc='utf-16le', eol='\r\n')


@pos('windows-reg')
def reg_env_token(r):
    name, val, desc = token(r)
    u = wu(r)
    vals = ['"OneDrive"="C:\\\\Users\\\\%s\\\\OneDrive"' % u, '"TEMP"=hex(2):25,00,55,00,53,00,45,00,52,00,50,00,52,00,4f,00,\\',
            '  46,00,49,00,4c,00,45,00,25,00,5c,00,41,00,70,00,70,00,44,00,61,00,74,00,61,\\',
            '  00,5c,00,4c,00,6f,00,63,00,61,00,6c,00,5c,00,54,00,65,00,6d,00,70,00,00,00',
            '"GOPATH"="C:\\\\Users\\\\%s\\\\go"' % u, S('"%s"="%s"' % (name, val)),
            '"JAVA_HOME"="C:\\\\Program Files\\\\Eclipse Adoptium\\\\jdk-17.0.8.7-hotspot"']
    return C('Documents/env-backup.reg', reg_file([('HKEY_CURRENT_USER\\Environment', vals)]), val,
             desc + ' in HKCU\\Environment REG_SZ', enc='utf-16le', eol='\r\n')


@pos('windows-reg')
def reg_odbc_pwd(r):
    pw = password(r)
    dsn = r.choice(['ProdWarehouse', 'CRM_Live', 'FinanceDB', 'Reporting'])
    vals = ['"Driver"="C:\\\\Program Files\\\\PostgreSQL\\\\psqlODBC\\\\bin\\\\psqlodbc35w.dll"',
            '"Servername"="%s"' % host(r, 'pg'), '"Port"="5432"', '"Database"="%s"' % dsn.lower(),
            '"Username"="%s"' % r.choice(['report_ro', 'etl', 'svc_bi']), S('"Password"="%s"' % reg_esc(pw)),
            '"SSLmode"="require"', '"ReadOnly"="0"']
    lines = reg_file([('HKEY_CURRENT_USER\\Software\\ODBC\\ODBC.INI\\ODBC Data Sources', ['"%s"="PostgreSQL Unicode(x64)"' % dsn]),
                      ('HKEY_CURRENT_USER\\Software\\ODBC\\ODBC.INI\\' + dsn, vals)])
    return C('OneDrive/Documents/odbc-%s.reg' % dsn.lower(), lines, reg_esc(pw), 'ODBC DSN Password REG_SZ',
             enc='utf-16le', eol='\r\n')


@pos('windows-reg')
def reg_app_connstr(r):
    pw = password(r, sym='!#*-_+.?') + '\\' + rs(r, B62, 3) + '"' + rs(r, B62, 2)
    esc = reg_esc(pw)
    cs = 'Server=tcp:%s,1433;Initial Catalog=%s;User ID=%s;Password=%s;Encrypt=True;' % (
        host(r, 'sql'), r.choice(['Orders', 'Inventory', 'Payroll']), r.choice(['sa', 'app_rw', 'svc_sync']), esc)
    vendor = r.choice(['Contoso\\SyncAgent', 'Fabrikam\\Reporter', 'Northwind\\POS'])
    vals = ['"InstallDir"="C:\\\\Program Files\\\\%s"' % reg_esc(vendor), '"Version"="4.%d.%d"' % (r.randrange(9), r.randrange(99)),
            '"InstanceId"="{%s}"' % guid(r, True), S('"ConnectionString"="%s"' % cs), '"PollSeconds"=dword:0000003c']
    return C('Documents/%s-settings.reg' % vendor.split('\\')[1].lower(),
             reg_file([('HKEY_CURRENT_USER\\Software\\' + vendor, vals)]), esc,
             'SQL Server connection string REG_SZ with \\\\ and \\" escapes', enc='utf-16le', eol='\r\n')


@pos('windows-reg')
def reg_vendor_apikey(r):
    name, val, desc = token(r, exclude=('AWS_SECRET_ACCESS_KEY',))
    vals = ['"Owner"="%s"' % r.choice(['Jürgen Müller', 'Zoë Brontë', 'François Lefèvre', 'Søren Ødegård']),
            '"Theme"="dark"', '"LastSync"=hex(b):%s' % ','.join('%02x' % b for b in rbytes(r, 8)),
            S('"%s"="%s"' % (r.choice(['ApiKey', 'AccessToken', 'AuthToken', 'Token']), val)),
            '"Proxy"=""', '"WindowPlacement"=hex:2c,00,00,00,00,00,00,00,01,00,00,00,ff,ff,ff,ff']
    app = r.choice(['DevToys', 'SyncBox', 'CloudNotes', 'Uploader'])
    return C('OneDrive/Backup/%s.reg' % app.lower(), reg_file([('HKEY_CURRENT_USER\\Software\\%s\\Settings' % app, vals)]),
             val, desc + ' REG_SZ next to non-ASCII owner', enc='utf-16le', eol='\r\n')


# ============================================================ PowerShell
def ps_head(r):
    return ['# %s' % r.choice(['Profile for PowerShell 5.1', 'Maintenance script', 'deploy helper', 'nightly job']),
            'Set-StrictMode -Version Latest', "$ErrorActionPreference = 'Stop'", '']


@pos('powershell')
def ps_profile_env(r):
    name, val, desc = token(r)
    lines = ['# Microsoft.PowerShell_profile.ps1', 'Import-Module posh-git', 'Set-PSReadLineOption -EditMode Emacs',
             "Set-Alias ll Get-ChildItem", '', '$env:PATH += ";$HOME\\bin"', S('$env:%s = "%s"' % (name, val)),
             'function prompt { "PS $(Get-Location)> " }']
    return C('Documents/WindowsPowerShell/Microsoft.PowerShell_profile.ps1', lines, val,
             desc + ' in $env: assignment', enc='utf-16le', eol='\r\n')


@pos('powershell')
def ps_securestring(r):
    pw = password(r)
    u = 'CORP\\' + wu(r)
    lines = ps_head(r) + ['$user = "%s"' % u, S('$pass = ConvertTo-SecureString "%s" -AsPlainText -Force' % pw),
                          '$cred = New-Object System.Management.Automation.PSCredential($user, $pass)',
                          'Invoke-Command -ComputerName %s -Credential $cred -ScriptBlock { Restart-Service W3SVC }' % host(r, 'web'),
                          'Write-Host "done"']
    return C('Scripts/restart-iis.ps1', lines, pw, 'ConvertTo-SecureString -AsPlainText literal', enc='utf-16le', eol='\r\n')


@pos('powershell')
def ps_pscredential_oneline(r):
    pw = password(r)
    lines = ps_head(r) + ['Import-Module SqlServer',
                          S("$cred = New-Object PSCredential('%s', (ConvertTo-SecureString '%s' -AsPlainText -Force))" % (
                              r.choice(['sa', 'backup_op', 'svc_sql']), pw)),
                          'Backup-SqlDatabase -ServerInstance "%s" -Database Orders -Credential $cred' % host(r, 'sql'),
                          'Get-ChildItem D:\\Backups -Filter *.bak | Where-Object LastWriteTime -lt (Get-Date).AddDays(-14) | Remove-Item']
    return C('OneDrive/Scripts/sql-backup.ps1', lines, pw, 'PSCredential one-liner, UTF-8 BOM', enc='utf-8-sig', eol='\r\n')


@pos('powershell')
def ps_bearer_headers(r):
    t = jwt(r)
    lines = ps_head(r) + ['$base = "https://api.%s/v2"' % domain(r), S('$headers = @{ Authorization = "Bearer %s"; Accept = "application/json" }' % t),
                          '$items = Invoke-RestMethod -Uri "$base/items?limit=500" -Headers $headers',
                          '$items | Export-Csv -NoTypeInformation -Path .\\items.csv']
    return C('Documents/Scripts/export-items.ps1', lines, t, 'Bearer JWT in headers hashtable', enc=r.choice(['utf-8-sig', 'utf-16le']), eol='\r\n',
             uniq=[t.split('.')[2]])


@pos('powershell')
def ps_setenv_user(r):
    name, val, desc = token(r)
    lines = ['# one-time setup, run as the user', S("[System.Environment]::SetEnvironmentVariable('%s', '%s', 'User')" % (name, val)),
             "[System.Environment]::SetEnvironmentVariable('EDITOR', 'code --wait', 'User')", 'refreshenv']
    return C('Desktop/setup-env.ps1', lines, val, desc + ' via SetEnvironmentVariable', enc='utf-16le', eol='\r\n')


@pos('powershell')
def ps_herestring(r):
    name, val, desc = token(r)
    lines = ps_head(r) + ['$config = @"', '{', '  "endpoint": "https://api.%s",' % domain(r), '  "retries": 3,',
                          S('  "%s": "%s",' % (camel(name), val)), '  "timeoutSeconds": 30', '}', '"@',
                          'Set-Content -Path "$env:APPDATA\\uploader\\config.json" -Value $config -Encoding UTF8']
    return C('Scripts/write-config.ps1', lines, val, desc + ' inside a PowerShell here-string', enc='utf-16le', eol='\r\n')


@pos('powershell')
def ps_azure_sp(r):
    sec = azure_client_secret(r)
    lines = ps_head(r) + ['$tenant = "%s"' % guid(r), '$appId = "%s"' % guid(r),
                          S('$secret = ConvertTo-SecureString %s -AsPlainText -Force' % ps_sq(sec)),
                          '$cred = New-Object System.Management.Automation.PSCredential($appId, $secret)',
                          'Connect-AzAccount -ServicePrincipal -Tenant $tenant -Credential $cred',
                          'Get-AzResourceGroup | Format-Table']
    return C('OneDrive/Documents/azure/login-sp.ps1', lines, sec, 'Azure AD client secret in ConvertTo-SecureString',
             enc=r.choice(['utf-8-sig', 'utf-16le']), eol='\r\n')


@pos('powershell')
def psreadline_history(r):
    name, val, desc = token(r)
    cmds = ['cd C:\\src\\%s' % r.choice(['api', 'web', 'infra']), 'git pull', 'dotnet build', 'code .',
            'Get-Process node | Stop-Process', 'winget upgrade --all', 'wsl --shutdown', 'ssh %s' % host(r),
            'docker compose up -d', 'npm run dev', 'Get-ChildItem -Recurse -Filter *.log | Remove-Item']
    hist = [r.choice(cmds) for _ in range(r.randrange(20, 60))]
    hist.insert(r.randrange(3, len(hist)), S('$env:%s="%s"' % (name, val)))
    return C('AppData/Roaming/Microsoft/Windows/PowerShell/PSReadLine/ConsoleHost_history.txt', hist, val,
             desc + ' in PSReadLine history', eol='\r\n')


# ============================================================ cmd / bat
@pos('windows-cmd')
def bat_cmdkey(r):
    pw = password(r, sym='#*-_+.?')
    srv = host(r, 'fs')
    lines = ['@echo off', 'rem map shares after login', S('cmdkey /add:%s /user:CORP\\%s /pass:%s' % (srv, wu(r), pw)),
             'net use S: \\\\%s\\shared /persistent:yes' % srv, 'exit /b 0']
    return C('AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup/map-drives.bat', lines, pw,
             'cmdkey /add /pass:', enc='cp1252', eol='\r\n')


@pos('windows-cmd')
def cmd_netuse(r):
    pw = password(r, sym='#*-_+.?')
    lines = ['@echo off', 'setlocal', 'if exist Z:\\ net use Z: /delete /y',
             S('net use Z: \\\\%s\\backup /user:%s %s /persistent:no' % (host(r, 'nas'), r.choice(['admin', 'backup', wu(r)]), pw)),
             'robocopy "%USERPROFILE%\\Documents" Z:\\docs /MIR /R:1 /W:1 /LOG:%TEMP%\\backup.log', 'net use Z: /delete /y', 'endlocal']
    return C('Scripts/backup-to-nas.cmd', lines, pw, 'net use /user: PASSWORD', enc='cp1252', eol='\r\n')


@pos('windows-cmd')
def bat_set_env(r):
    name, val, desc = token(r)
    lines = ['@echo off', 'set "PROJECT=%s"' % r.choice(['shop', 'api', 'etl']), S('set "%s=%s"' % (name, val)),
             'set "NODE_ENV=production"', 'call npm run deploy', 'pause']
    return C('src/deploy.bat', lines, val, desc + ' in set "X=..."', eol='\r\n')


@pos('windows-cmd')
def bat_setx(r):
    name, val, desc = token(r)
    lines = ['@echo off', 'echo Setting user environment...', S('setx %s "%s"' % (name, val)), 'setx PYTHONUTF8 1',
             'echo Open a new terminal to pick up the changes.']
    return C('Downloads/setup_env.cmd', lines, val, desc + ' via setx', eol='\r\n')


@pos('windows-cmd')
def cmd_curl_caret(r):
    name, val, desc = token(r, exclude=('AWS_SECRET_ACCESS_KEY',))
    lines = ['@echo off', 'curl.exe -sS -X POST "https://api.%s/v1/jobs" ^' % domain(r),
             '  -H "Content-Type: application/json" ^', S('  -H "Authorization: Bearer %s" ^' % val),
             '  -d "{\\"name\\":\\"nightly\\"}"', 'if errorlevel 1 echo failed']
    return C('Scripts/trigger-job.cmd', lines, val, desc + ' as Bearer on a ^-continued curl.exe line', eol='\r\n')


@pos('windows-cmd')
def bat_echo_npmrc(r):
    t = npm(r)
    lines = ['@echo off', S('echo //registry.npmjs.org/:_authToken=%s> "%%USERPROFILE%%\\.npmrc"' % t),
             'echo registry=https://registry.npmjs.org/>> "%USERPROFILE%\\.npmrc"', 'npm whoami']
    return C('Desktop/fix-npm-login.bat', lines, t, 'npm token echoed into .npmrc', eol='\r\n')


# ============================================================ INI / env / text from Windows tools
@pos('ini')
def ini_utf16_spaces(r):
    pw = password(r)
    lines = ['; Settings written by %s' % r.choice(['SyncAgent 4.2', 'BackupPro', 'ReportViewer']), '[General]',
             'Language = en-US', 'CheckUpdates = 1', '', '[Database]', 'Server   =   %s' % host(r, 'sql'), 'Port     =   1433',
             'User     =   %s' % r.choice(['sa', 'svc_app', 'report']), S('Password =   %s' % pw), 'Timeout  =   30', '']
    return C('AppData/Roaming/%s/Settings.ini' % r.choice(['SyncAgent', 'BackupPro', 'ReportViewer']), lines, pw,
             'INI Password with spaces around =', enc='utf-16le', eol='\r\n')


@pos('ini')
def ini_cp1252(r):
    pw = password(r, sym='#*-_+.') + r.choice(['ä', 'ö', 'ü', 'ß', '§'])
    lines = ['[Allgemein]', 'Benutzer=%s' % r.choice(['Jürgen Weiß', 'Käthe Müller', 'Björn Groß']), 'Sprache=Deutsch',
             'Zuletzt geöffnet=C:\\Users\\%s\\Dokumente\\Buchhaltung 2023.xlsx' % wu(r), '', '[Verbindung]',
             'Server=%s' % host(r, 'db'), 'Anmeldename=buchhaltung', S('Passwort=%s' % pw), 'Verschlüsselung=TLS']
    return C('Dokumente/Buchhaltung/verbindung.ini', lines, pw, 'German INI Passwort with a non-ASCII char, cp1252',
             enc='cp1252', eol='\r\n')


@pos('ini')
def ini_bom_smtp(r):
    pw = password(r)
    lines = ['[SMTP]', 'Host = smtp.%s' % domain(r), 'Port = 587', 'UseTLS = true', 'From = "%s"' % email(r),
             'Username = "%s"' % email(r), S('Password = "%s"' % pw), '', '[Schedule]', 'Daily = 02:30']
    return C('OneDrive/Apps/BackupPro/mail.ini', lines, pw, 'SMTP Password quoted, UTF-8 BOM', enc='utf-8-sig', eol='\r\n')


@pos('ini')
def ini_mycnf_tabs(r):
    pw = password(r)
    lines = ['[client]', 'user\t=\t%s' % r.choice(['root', 'admin', 'dba']), S('password\t=\t"%s"' % pw),
             'host\t=\t%s' % host(r, 'mysql'), 'default-character-set = utf8mb4', '', '[mysql]', 'auto-rehash',
             'prompt = "\\u@\\h [\\d]> "']
    return C('.my.cnf', lines, pw, 'MySQL client password with tabs around =', eol=r.choice(['\n', '\r\n']))


@pos('env-file')
def env_crlf_dburl(r):
    url, pw = db_url(r)
    lines = ['# local overrides', 'APP_ENV=production', 'APP_DEBUG=false', 'LOG_LEVEL=info', S('DATABASE_URL=%s' % url),
             'CACHE_TTL=600', 'FEATURE_FLAGS=search,export']
    return C('src/%s/.env' % r.choice(['shop', 'portal', 'crm']), lines, pw, 'DATABASE_URL with password, CRLF', eol='\r\n')


@pos('env-file')
def env_bom_first_line(r):
    name, val, desc = token(r)
    lines = [S('%s=%s' % (name, val)), 'MODEL=%s' % r.choice(['gpt-4o', 'claude-3-5-sonnet', 'llama3']), 'TEMPERATURE=0.2']
    return C('Projects/%s/.env' % r.choice(['chatbot', 'summarizer', 'notes-ai']), lines, val,
             desc + ' on line 1 right after a UTF-8 BOM (Notepad)', enc='utf-8-sig', eol=r.choice(['\n', '\r\n']))


@pos('env-file')
def env_spaces_quotes(r):
    name, val, desc = token(r)
    lines = ['# .env saved on Windows', 'PORT = 8080', S('%s = "%s"' % (name, val)), "REGION = 'eu-west-1'"]
    return C('Projects/api/.env.local', lines, val, desc + ' with spaces around =, CRLF', eol='\r\n')


@pos('text-notes')
def notes_utf16(r):
    name, val, desc = token(r)
    lines = ['Things to do', '- renew domain before %d-%02d' % (r.randrange(2024, 2026), r.randrange(1, 13)),
             '- ask IT about VPN split tunnel', '', S('%s: %s' % (desc, val)), '', 'Meeting notes %s' % ts(r).date(),
             sentence(r), sentence(r)]
    return C('Desktop/notes.txt', lines, val, desc + ' in Notepad "Unicode" text', enc='utf-16le', eol='\r\n')


@pos('text-notes')
def notes_utf16be(r):
    name, val, desc = token(r)
    lines = ['Accounts', '========', 'Portal: https://portal.%s  (SSO)' % domain(r), S('%s = %s' % (name, val)),
             'Support PIN: ask %s' % person(r)[0].capitalize()]
    return C('Documents/accounts-unicode-big-endian.txt', lines, val, desc + ' in UTF-16BE text with BOM',
             enc='utf-16be', eol=r.choice(['\n', '\r\n']))


@pos('text-notes')
def strings_utf16(r):
    k = google_key(r)
    lines = ['/* Config.strings */', '"app_name" = "%s";' % org(r).capitalize(), '"maps_region" = "EU";',
             S('"GoogleMapsAPIKey" = "%s";' % k), '"support_email" = "%s";' % email(r)]
    return C('Projects/iOS/%sApp/Resources/Config.strings' % org(r).capitalize().replace('-', ''), lines, k,
             'Google API key in a .strings file', enc=r.choice(['utf-16le', 'utf-16be']))


@pos('text-notes')
def notes_macroman_cr(r):
    pw = password(r, sym='#*-_+.')
    lines = ['FTP settings \u2014 old site', 'Server: ftp.%s' % domain(r), 'User: %s' % username(r),
             S('Password: %s' % pw), 'Remote dir: /public_html/caf\u00e9']
    return C('Documents/Old Mac/FTP settings.txt', lines, pw, 'classic Mac text: MacRoman, CR-only line ends',
             enc='mac_roman', eol='\r')


@pos('text-notes')
def csv_mac_cr(r):
    name, val, desc = token(r)
    rows = ['Service,Account,Created,Notes']
    for _ in range(r.randrange(3, 7)):
        rows.append('%s,%s,%s,%s' % (r.choice(['Dropbox', 'Figma', 'Miro', 'Zoom']), email(r), ts(r).date(), r.choice(['SSO', 'shared', '-'])))
    rows.insert(r.randrange(1, len(rows)), S('%s,%s,%s,"%s"' % (desc.split()[0], email(r), ts(r).date(), val)))
    return C('Documents/services.csv', rows, val, desc + ' in CSV (Macintosh) with CR-only line ends', eol='\r', nl=r.random() < 0.5)


@pos('windows-xml')
def unattend_xml(r):
    pw = password(r)
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<unattend xmlns="urn:schemas-microsoft-com:unattend">',
             '  <settings pass="oobeSystem">',
             '    <component name="Microsoft-Windows-Shell-Setup" processorArchitecture="amd64" publicKeyToken="31bf3856ad364e35" language="neutral" versionScope="nonSxS">',
             '      <UserAccounts>', '        <AdministratorPassword>', S('          <Value>%s</Value>' % xml_esc(pw)),
             '          <PlainText>true</PlainText>', '        </AdministratorPassword>', '      </UserAccounts>',
             '      <TimeZone>W. Europe Standard Time</TimeZone>', '    </component>', '  </settings>', '</unattend>']
    return C('Downloads/win11-lab/autounattend.xml', lines, xml_esc(pw), 'unattend AdministratorPassword PlainText true',
             enc='utf-8-sig', eol='\r\n')


@pos('windows-xml')
def wifi_profile(r):
    pw = password(r, sym='-_.!')
    ssid = r.choice(['HomeNet-5G', 'FRITZ!Box 7590 XY', 'Office-Guest', 'Vodafone-%s' % rs(r, UP + DG, 4)])
    lines = ['<?xml version="1.0"?>', '<WLANProfile xmlns="http://www.microsoft.com/networking/WLAN/profile/v1">',
             '\t<name>%s</name>' % xml_esc(ssid), '\t<SSIDConfig>', '\t\t<SSID>', '\t\t\t<hex>%s</hex>' % ssid.encode().hex().upper(),
             '\t\t\t<name>%s</name>' % xml_esc(ssid), '\t\t</SSID>', '\t</SSIDConfig>', '\t<connectionType>ESS</connectionType>',
             '\t<connectionMode>auto</connectionMode>', '\t<MSM>', '\t\t<security>', '\t\t\t<authEncryption>',
             '\t\t\t\t<authentication>WPA2PSK</authentication>', '\t\t\t\t<encryption>AES</encryption>', '\t\t\t</authEncryption>',
             '\t\t\t<sharedKey>', '\t\t\t\t<keyType>passPhrase</keyType>', '\t\t\t\t<protected>false</protected>',
             S('\t\t\t\t<keyMaterial>%s</keyMaterial>' % pw), '\t\t\t</sharedKey>', '\t\t</security>', '\t</MSM>', '</WLANProfile>']
    return C('Documents/wifi/Wi-Fi-%s.xml' % ssid.replace(' ', '_').replace('!', ''), lines, pw,
             'netsh wlan export key=clear keyMaterial', eol='\r\n')


@pos('windows-xml')
def nuget_config(r):
    pw = rs(r, B62, 6) + '&' + rs(r, B62, 5) + '<' + rs(r, B62, 6)
    esc = xml_esc(pw)
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<configuration>', '  <packageSources>',
             '    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" protocolVersion="3" />',
             '    <add key="internal" value="https://nuget.%s/v3/index.json" />' % domain(r), '  </packageSources>',
             '  <packageSourceCredentials>', '    <internal>', '      <add key="Username" value="%s" />' % username(r),
             S('      <add key="ClearTextPassword" value="%s" />' % esc), '    </internal>', '  </packageSourceCredentials>',
             '</configuration>']
    return C('AppData/Roaming/NuGet/NuGet.Config', lines, esc, 'NuGet ClearTextPassword with &amp; and &lt; entities',
             enc='utf-8-sig', eol='\r\n')


@pos('windows-xml')
def web_config(r):
    pw = password(r, sym='!#*-_+.?') + '&' + rs(r, B62, 3)
    esc = xml_esc(pw)
    cs = 'Data Source=%s;Initial Catalog=Shop;User ID=shop_app;Password=%s;MultipleActiveResultSets=True' % (host(r, 'sql'), esc)
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<configuration>', '  <appSettings>',
             '    <add key="webpages:Version" value="3.0.0.0" />', '    <add key="Greeting" value="Welcome &amp; enjoy" />',
             '  </appSettings>', '  <connectionStrings>', S('    <add name="ShopDb" connectionString="%s" providerName="System.Data.SqlClient" />' % cs),
             '  </connectionStrings>', '</configuration>']
    return C('source/repos/Shop/Shop.Web/Web.config', lines, esc, 'connectionString Password with &amp; entity',
             enc='utf-8-sig', eol='\r\n')


@pos('git-credentials')
def git_credentials_crlf(r):
    t = r.choice([gh, glpat])(r)
    u = username(r)
    lines = [S('https://%s:%s@%s' % (u, t, 'github.com' if t.startswith('ghp_') else 'gitlab.com'))]
    return C('.git-credentials', lines, t, 'token in .git-credentials, CRLF (Windows-synced home)', eol='\r\n')


@pos('git-credentials')
def git_credentials_pct(r):
    pw = password(r, sym='@/#%!:?')
    enc = pct(pw)
    u = email(r)
    lines = [S('https://%s:%s@git.%s' % (pct(u), enc, domain(r)))]
    return C('.git-credentials', lines, enc, 'percent-encoded user and password in .git-credentials', uniq=[enc])


@pos('npmrc')
def npmrc_bom(r):
    t = npm(r)
    lines = ['registry=https://registry.npmjs.org/', S('//registry.npmjs.org/:_authToken=%s' % t), 'save-exact=true',
             'fund=false']
    return C('.npmrc', lines, t, 'npm token, UTF-8 BOM CRLF', enc='utf-8-sig', eol='\r\n')


# ============================================================ private keys in odd bytes
@pos('private-key')
def pem_crlf(r):
    pem = pem_rsa(r, 'pkcs1')
    lines = pem[:]
    lines[0] = S(lines[0])
    return C('OneDrive/.ssh/id_rsa', lines, pem[0], 'RSA PKCS#1 key with CRLF (synced from Windows)', eol='\r\n',
             uniq=[body_uniq(pem)])


@pos('private-key')
def pem_bom(r):
    pem = r.choice([pem_rsa, pem_ec])(r, 'pkcs8')
    lines = pem[:]
    lines[0] = S(lines[0])
    return C('Documents/certs/%s.key' % r.choice(['server', 'wildcard', 'api']), lines, pem[0],
             'PKCS#8 key saved by Notepad with UTF-8 BOM', enc='utf-8-sig', eol='\r\n', uniq=[body_uniq(pem)])


@pos('private-key')
def pem_utf16(r):
    pem, pub = openssh_ed25519(r, '%s@%s' % (wu(r), r.choice(['DESKTOP-7Q2', 'LAPTOP-K3']) + rs(r, UP + DG, 4)))
    lines = pem[:]
    lines[0] = S(lines[0])
    return C('.ssh/id_ed25519', lines, pem[0], 'OpenSSH key written by PowerShell Out-File: UTF-16LE BOM',
             enc='utf-16le', eol='\r\n', uniq=[body_uniq(pem)])


@pos('private-key')
def ppk_plain(r):
    lines = ppk(r, 'rsa-key-%s' % ts(r).strftime('%Y%m%d'))
    out = lines[:]
    out[0] = S(out[0])
    return C('Documents/keys/%s.ppk' % r.choice(['prod', 'bastion', 'aws-ec2']), out, lines[0],
             'PuTTY .ppk v2 with Encryption: none, CRLF', eol='\r\n', uniq=[lines[-3]])


@pos('private-key')
def env_multiline_pem(r):
    pem = pem_ec(r, 'pkcs1')
    lines = ['NODE_ENV=production', 'ISSUER=https://auth.%s' % domain(r), S('JWT_SIGNING_KEY="' + pem[0])] + pem[1:-1] + [pem[-1] + '"', 'JWT_TTL=3600']
    return C('Projects/auth/.env', lines, pem[0], 'EC key in a multi-line double-quoted dotenv value', uniq=[body_uniq(pem)])


@pos('private-key')
def json_pem_escaped(r):
    pem = pem_rsa(r, 'pkcs8')
    proj = '%s-%s-%d' % (org(r), r.choice(['prod', 'dev', 'data']), r.randrange(100000, 999999))
    sa = '%s@%s.iam.gserviceaccount.com' % (r.choice(['deployer', 'ci-runner', 'bq-export']), proj)
    key = '\n'.join(pem) + '\n'
    d = {'type': 'service_account', 'project_id': proj, 'private_key_id': rhex(r, 40), 'private_key': key,
         'client_email': sa, 'client_id': str(r.randrange(10 ** 20, 10 ** 21)),
         'auth_uri': 'https://accounts.google.com/o/oauth2/auth', 'token_uri': 'https://oauth2.googleapis.com/token',
         'auth_provider_x509_cert_url': 'https://www.googleapis.com/oauth2/v1/certs',
         'client_x509_cert_url': 'https://www.googleapis.com/robot/v1/metadata/x509/' + pct(sa),
         'universe_domain': 'googleapis.com'}
    text = json.dumps(d, indent=2) + '\n'
    core = json.dumps(key)[1:60]
    return C('Downloads/%s-%s.json' % (proj, rhex(r, 12)), text, core, 'GCP service account JSON, \\n-escaped PEM',
             uniq=[body_uniq(pem)])


@pos('private-key')
def env_pem_oneline(r):
    pem = pem_rsa(r, 'pkcs8')
    esc = '\\n'.join(pem) + '\\n'
    lines = ['FIREBASE_PROJECT_ID=%s-app' % org(r), 'FIREBASE_CLIENT_EMAIL=firebase-adminsdk-%s@%s-app.iam.gserviceaccount.com' % (rs(r, LO + DG, 5), org(r)),
             S('FIREBASE_PRIVATE_KEY="%s"' % esc)]
    return C('Projects/web/.env.production', lines, esc[:80], 'PEM with literal \\n escapes in one dotenv line',
             uniq=[body_uniq(pem)])


@pos('private-key')
def yaml_block_pem(r):
    pem = pem_ec(r, 'pkcs8') if r.random() < 0.5 else pem_rsa(r, 'pkcs1')
    lines = ['server:', '  listen: 8443', '  tls:', '    cert_file: /etc/app/tls.crt', '    key: |'] + \
            ['      ' + l for l in pem] + ['  log_level: info']
    lines[5] = S(lines[5])
    return C('.config/%s/config.yaml' % r.choice(['gatewayd', 'proxyd', 'webhookd']), lines, pem[0],
             'PEM in a YAML literal block scalar', uniq=[body_uniq(pem)])


@pos('private-key')
def toml_multiline_pem(r):
    pem = pem_ec(r, 'pkcs1')
    lines = ['[signing]', 'algorithm = "ES256"', 'key = """', S(pem[0])] + pem[1:] + ['"""', '', '[server]', 'port = 9000']
    return C('.config/relay/relay.toml', lines, pem[0], 'PEM in a TOML multi-line basic string', uniq=[body_uniq(pem)])


@pos('private-key')
def kubeconfig_client_key(r):
    pem = pem_ec(r, 'pkcs1')
    kd = b64(('\n'.join(pem) + '\n').encode())
    cd = b64(rbytes(r, 540))
    lines = ['apiVersion: v1', 'clusters:', '- cluster:', '    certificate-authority-data: %s' % b64(rbytes(r, 800)),
             '    server: https://%s:6443' % host(r, 'k8s'), '  name: homelab', 'contexts:', '- context:',
             '    cluster: homelab', '    user: admin', '  name: admin@homelab', 'current-context: admin@homelab',
             'kind: Config', 'preferences: {}', 'users:', '- name: admin', '  user:',
             '    client-certificate-data: %s' % cd, S('    client-key-data: %s' % kd)]
    return C('.kube/config', lines, kd, 'kubeconfig client-key-data (base64 of an EC PEM key)', uniq=[kd[100:160]])


# ============================================================ long lines and big files
@pos('long-line')
def minified_webapp_config(r):
    name, val, desc = token(r)
    cfg = fill.app_config(r, r.randrange(50000, 200000))
    keys = list(cfg['services'].keys())
    cfg['services'][r.choice(keys)][camel(name)] = val
    text = 'window.__APP_CONFIG__=' + jdump(cfg) + ';\n'
    return C('Projects/%s/dist/assets/config.%s.js' % (r.choice(['shop', 'portal', 'admin']), rhex(r, 8)), text, val,
             desc + ' inside a 50-200 KB minified config line')


@pos('long-line')
def ext_storage_export(r):
    name, val, desc = token(r)
    st = fill.ext_storage(r, r.randrange(60000, 200000))
    st['settings'][camel(name)] = val
    items = list(st.items())
    r.shuffle(items)
    text = jdump(dict(items))
    return C('Downloads/%s-settings-backup.json' % r.choice(['tampermonkey', 'refined-github', 'octotree', 'linkding']),
             text, val, desc + ' in a one-line browser extension storage export (no final newline)', nl=False)


@pos('long-line')
def html_single_line(r):
    k = google_key(r)
    img = b64(rbytes(r, r.randrange(40000, 120000)))
    text = ('<!DOCTYPE html><html><head><meta charset="utf-8"><title>Store locator</title><style>body{margin:0;font-family:sans-serif}'
            '#map{height:100vh}</style></head><body><img alt="logo" src="data:image/png;base64,%s"><div id="map"></div>'
            '<script>function initMap(){new google.maps.Map(document.getElementById("map"),{center:{lat:%.4f,lng:%.4f},zoom:12})}</script>'
            '<script async src="https://maps.googleapis.com/maps/api/js?key=%s&callback=initMap"></script></body></html>'
            % (img, r.uniform(-60, 60), r.uniform(-120, 120), k))
    return C('Documents/saved/store-locator.html', text, k, 'Maps key after a 50-160 KB data: URI on one line', nl=False)


@pos('big-file')
def big_log_bearer(r):
    t = jwt(r)
    lines = fill.app_log(r, r.randrange(1000000, 3000000))
    i = r.randrange(len(lines) // 4, 3 * len(lines) // 4)
    lines.insert(i, S('%s DEBUG http.client: > GET /v1/accounts/me HTTP/1.1 | Host: api.%s | Authorization: Bearer %s | Accept: */*' % (
        lines[i - 1][:24], domain(r), t)))
    return C('.local/state/%s/logs/app.log' % r.choice(['syncd', 'mediaserver', 'tracker']), lines, t,
             'Bearer JWT in a debug line in the middle of a 1-3 MB log', uniq=[t.split('.')[2]])


@pos('big-file')
def big_log_dburl_crlf(r):
    url, pw = db_url(r, scheme=r.choice(['postgresql', 'mysql', 'amqp']))
    lines = fill.app_log(r, r.randrange(1000000, 3000000), win=True)
    i = r.randrange(len(lines) // 4, 3 * len(lines) // 4)
    lines.insert(i, S('%s ERROR [Worker-3] Connection to %s failed: timeout after 30000 ms' % (lines[i - 1][:23], url)))
    return C('AppData/Local/%s/Logs/service.log' % r.choice(['Contoso', 'Fabrikam', 'Tailspin']), lines, pw,
             'DB URL with password in an error line of a 1-3 MB CRLF log', eol='\r\n')


@pos('big-file')
def big_sqldump(r):
    k = r.choice([mailgun, sendgrid, stripe])(r)
    lines, opt_line = fill.sql_dump(r, r.randrange(1000000, 3000000), secret_row="(%d,'%s','%s','yes')" % (
        r.randrange(300, 900), r.choice(['mail_api_key', 'smtp_api_key', 'payment_secret']), k))
    return C('backups/site-%s.sql' % ts(r).date(), lines, k, 'API key in an extended INSERT of a 1-3 MB mysqldump')


@pos('big-file')
def big_har(r):
    name, val, desc = token(r, exclude=('AWS_SECRET_ACCESS_KEY',))
    text = fill.har(r, r.randrange(700000, 1500000), secret_header=('Authorization', 'Bearer ' + val))
    return C('Downloads/%s.har' % r.choice(['app.example', 'checkout-bug', 'login-issue']), text, val,
             desc + ' as a request header in a ~1 MB HAR')


# ============================================================ binary containers
@pos('sqlite')
def sqlite_vscdb(r):
    pw = password(r)
    conns = [{'name': 'prod', 'driver': 'PostgreSQL', 'server': host(r, 'pg'), 'port': 5432, 'database': 'app',
              'username': 'app_rw', 'password': pw, 'previewLimit': 50}]
    stm = [('CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)', ())]
    items = fill.vscode_items(r) + [('mtxr.sqltools', jdump({'connections': conns}))]
    r.shuffle(items)
    for k, v in items:
        stm.append(('INSERT INTO ItemTable VALUES (?, ?)', (k, v)))
    data = bins.sqlite_db(stm, page_size=r.choice([1024, 4096]))
    sec = '"password":"%s"' % pw
    return B('.config/Code/User/globalStorage/state.vscdb', data, sec, 'SQLTools password in VS Code state.vscdb (SQLite)',
             uniq=[pw])


@pos('sqlite')
def sqlite_sticky(r):
    name, val, desc = token(r)
    stm = [('CREATE TABLE Note (Text TEXT, WindowPosition TEXT, IsOpen INTEGER, Theme TEXT, Id TEXT PRIMARY KEY, CreatedAt INTEGER, UpdatedAt INTEGER)', ())]
    notes = ['\\id=%s groceries: %s' % (guid(r), ', '.join(r.sample(WORDS, 4))),
             '\\id=%s %s' % (guid(r), sentence(r)),
             '\\id=%s %s %s' % (guid(r), desc, val)]
    r.shuffle(notes)
    for n in notes:
        stm.append(('INSERT INTO Note VALUES (?,?,?,?,?,?,?)', (n, 'ManagedPosition=DeviceId:\\\\?\\DISPLAY#%s;Position=%d,%d;Size=320,320' % (
            rs(r, UP + DG, 7), r.randrange(900), r.randrange(600)), 1, r.choice(['Yellow', 'Blue', 'Green']), guid(r),
            637000000000000000 + r.randrange(10 ** 16), 637000000000000000 + r.randrange(10 ** 16))))
    data = bins.sqlite_db(stm)
    return B('AppData/Local/Packages/Microsoft.MicrosoftStickyNotes_8wekyb3d8bbwe/LocalState/plum.sqlite', data, val,
             desc + ' in a Sticky Notes row (SQLite)')


@pos('sqlite')
def sqlite_utf16(r):
    name, val, desc = token(r)
    stm = [('CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT)', ())]
    rows = [('ui.language', 'de-DE'), ('sync.interval', '300'), ('account.email', email(r)), ('device.id', guid(r)),
            (camel(name), val)]
    r.shuffle(rows)
    for row in rows:
        stm.append(('INSERT INTO settings VALUES (?,?)', row))
    data = bins.sqlite_db(stm, encoding='UTF-16le')
    sec = val.encode('utf-16-le').decode('latin-1')
    return B('AppData/Roaming/%s/settings.db' % r.choice(['Syncro', 'NoteHub', 'Clipdesk']), data, sec,
             desc + ' in a UTF-16le-encoded SQLite database', uniq=[val])


@pos('sqlite')
def sqlite_http_history(r):
    t = jwt(r)
    stm = [('CREATE TABLE requests (id INTEGER PRIMARY KEY, method TEXT, url TEXT, headers TEXT, status INTEGER, ts INTEGER)', ())]
    n = r.randrange(5, 20)
    k = r.randrange(n)
    for i in range(n):
        hdr = {'Accept': 'application/json', 'User-Agent': 'HTTPie/3.2.2'}
        if i == k:
            hdr['Authorization'] = 'Bearer ' + t
        stm.append(('INSERT INTO requests (method,url,headers,status,ts) VALUES (?,?,?,?,?)',
                    (r.choice(['GET', 'POST']), 'https://api.%s/v1/%s' % (domain(r), r.choice(['users', 'orders', 'ping'])),
                     jdump(hdr), r.choice([200, 201, 401, 404]), int(ts(r).timestamp()))))
    data = bins.sqlite_db(stm)
    return B('.local/share/%s/history.sqlite' % r.choice(['httpie', 'restclient', 'apitool']), data, t,
             'Bearer JWT in a request-history row (SQLite)', uniq=[t.split('.')[2]])


@pos('leveldb')
def leveldb_discord(r):
    t = discord(r)
    o = 'https://discord.com'
    batches = [[bins.ls_meta(r, o)], [(bins.ls_key(o, 'user_id_cache'), bins.ls_val('"%d"' % r.randrange(10 ** 17, 10 ** 18)))],
               [(bins.ls_key(o, 'token'), bins.ls_val('"%s"' % t))],
               [(bins.ls_key(o, 'MultiAccountStore'), bins.ls_val(jdump({'_state': {'users': []}, '_version': 1})))]]
    r.shuffle(batches)
    return B('.config/discord/Local Storage/leveldb/%06d.log' % r.randrange(3, 200), bins.leveldb_log(batches, r.randrange(1, 5000)),
             t, 'Discord token in Local Storage LevelDB log')


@pos('leveldb')
def leveldb_obsidian(r):
    name, val, desc = token(r)
    o = 'app://obsidian.md'
    st = {'defaultModel': 'gpt-4o', camel(name): val, 'temperature': 0.7, 'maxTokens': 1000, 'chatNoteFolder': 'copilot-conversations'}
    batches = [[bins.ls_meta(r, o)], [(bins.ls_key(o, 'plugin:copilot:settings'), bins.ls_val(jdump(st)))],
               [(bins.ls_key(o, 'theme'), bins.ls_val('"obsidian"'))],
               [(bins.ls_key(o, 'recent-files'), bins.ls_val(jdump(['Daily/%s.md' % ts(r).date() for _ in range(5)])))]]
    r.shuffle(batches)
    return B('.config/obsidian/Local Storage/leveldb/%06d.log' % r.randrange(3, 200), bins.leveldb_log(batches), val,
             desc + ' in an Electron app LevelDB log (JSON value)')


@pos('leveldb')
def leveldb_ext(r):
    t = r.choice([gh, gh_fine, glpat])(r)
    ext = rs(r, 'abcdefghijklmnop', 32)
    batches = [[(b'authToken', ('"%s"' % t).encode())], [(b'options', jdump({'theme': 'auto', 'hovercards': True}).encode())],
               [(b'lastUpdate', str(int(ts(r).timestamp() * 1000)).encode())]]
    r.shuffle(batches)
    return B('.config/google-chrome/Default/Local Extension Settings/%s/%06d.log' % (ext, r.randrange(3, 60)),
             bins.leveldb_log(batches), t, 'git token in a Chrome extension storage LevelDB log')


@pos('bplist')
def bplist_prefs(r):
    name, val, desc = token(r)
    d = {'NSWindow Frame MainWindow': '%d %d 1024 700 0 0 1728 1079 ' % (r.randrange(400), r.randrange(300)),
         'SUEnableAutomaticChecks': True, 'SULastCheckTime': ts(r), 'UUID': guid(r, True),
         camel(name): val, 'RecentDocuments': ['/Users/%s/Documents/%s.md' % (username(r), w) for w in r.sample(WORDS, 3)]}
    items = list(d.items())
    r.shuffle(items)
    app = r.choice(['com.%s.uploader' % org(r).replace('-', ''), 'io.%s.menubar' % org(r).replace('-', '')])
    return B('Library/Preferences/%s.plist' % app, bins.bplist(dict(items)), val, desc + ' in a binary plist')


@pos('bplist')
def bplist_webloc(r):
    pw = password(r, sym='-_.!*')
    url = 'https://%s:%s@%s/dashboard' % (r.choice(['admin', 'ops', username(r)]), pw, host(r, 'grafana'))
    return B('Desktop/%s.webloc' % r.choice(['Grafana', 'Dashboard', 'Monitoring']), bins.bplist({'URL': url}), pw,
             'password in URL userinfo of a binary-plist .webloc')


@pos('shell-history')
def zsh_history_meta(r):
    user = r.choice(['admin', 'deploy', 'elastic'])
    pw = password(r, sym='-_.!*')
    t0 = int(ts(r).timestamp())
    cmds = ['ls -la', 'cd ~/Projekte/Übersicht', 'git status', 'vim Notizen_März.md', 'open "Präsentation Q3.key"',
            'brew upgrade', 'echo "Grüße" | pbcopy', 'python3 -m venv .venv', 'kubectl get pods -A', 'du -sh *']
    hist = []
    for i in range(r.randrange(30, 80)):
        hist.append(': %d:%d;%s' % (t0 + i * 37, r.randrange(3), r.choice(cmds)))
    hist.insert(r.randrange(5, len(hist)), S(': %d:0;curl -u %s:%s https://%s:9200/_cluster/health' % (t0 + 5, user, pw, host(r, 'es'))))
    return C('.zsh_history', hist, pw, 'curl -u user:pass in a metafied zsh history (non-UTF-8 bytes)', enc='zsh')


@pos('shell-history')
def macos_security_cli(r):
    name, val, desc = token(r, exclude=('AWS_SECRET_ACCESS_KEY',))
    svc = name.lower().replace('_', '-')
    lines = ['#!/bin/zsh', '# bootstrap a new Mac', 'set -euo pipefail', 'brew bundle --file=~/dotfiles/Brewfile',
             S('security add-generic-password -U -a "$USER" -s %s -w \'%s\'' % (svc, val)),
             'defaults write com.apple.dock autohide -bool true', 'killall Dock']
    return C('dotfiles/macos/bootstrap.sh', lines, val, desc + ' in security add-generic-password -w')


@pos('shell-history')
def macos_security_internet(r):
    pw = password(r, sym='-_.!*#')
    cmds = ['cd ~/Sites', 'brew services list', 'open -a Safari', 'pbpaste | jq .', 'mdfind -name invoice']
    hist = [r.choice(cmds) for _ in range(r.randrange(10, 30))]
    hist.insert(r.randrange(2, len(hist)), S('security add-internet-password -a %s -s %s -r "htps" -w "%s"' % (username(r), host(r, 'git'), pw)))
    return C('.bash_sessions/%s.history' % guid(r, True), hist, pw, 'security add-internet-password -w in a bash session history')


@pos('plist-xml')
def launchd_env(r):
    name, val, desc = token(r)
    label = 'com.%s.%s' % (username(r).replace('.', ''), r.choice(['backup', 'sync', 'reporter', 'bot']))
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
             '<plist version="1.0">', '<dict>', '\t<key>Label</key>', '\t<string>%s</string>' % label,
             '\t<key>ProgramArguments</key>', '\t<array>', '\t\t<string>/usr/local/bin/%s</string>' % label.split('.')[-1], '\t</array>',
             '\t<key>EnvironmentVariables</key>', '\t<dict>', '\t\t<key>PATH</key>', '\t\t<string>/usr/local/bin:/usr/bin:/bin</string>',
             '\t\t<key>%s</key>' % name, S('\t\t<string>%s</string>' % xml_esc(val)), '\t</dict>',
             '\t<key>StartInterval</key>', '\t<integer>3600</integer>', '</dict>', '</plist>']
    return C('Library/LaunchAgents/%s.plist' % label, lines, xml_esc(val), desc + ' in launchd EnvironmentVariables (value on its own line)')


@pos('plist-xml')
def launchd_args(r):
    pw = password(r, sym='-_.!*#')
    label = 'local.restic.backup'
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
             '<plist version="1.0">', '<dict>', '  <key>Label</key>', '  <string>%s</string>' % label,
             '  <key>ProgramArguments</key>', '  <array>', '    <string>/bin/sh</string>', '    <string>-c</string>',
             S('    <string>RESTIC_PASSWORD=%s /opt/homebrew/bin/restic -r sftp:%s:/srv/restic backup ~/Documents</string>' % (pw, host(r, 'nas'))),
             '  </array>', '  <key>StartCalendarInterval</key>', '  <dict><key>Hour</key><integer>3</integer></dict>', '</dict>', '</plist>']
    return C('Library/LaunchAgents/%s.plist' % label, lines, pw, 'RESTIC_PASSWORD in launchd ProgramArguments')


# ============================================================ escapes inside text
@pos('json-escape')
def json_u0022(r):
    name, val, desc = token(r)
    inner = '{\\u0022provider\\u0022:\\u0022%s\\u0022,\\u0022%s\\u0022:\\u0022%s\\u0022,\\u0022region\\u0022:\\u0022eu\\u0022}' % (
        r.choice(['openai', 'custom', 'azure']), camel(name), val)
    lines = ['{', '  "version": 3,', '  "window": {"width": 1280, "height": 800},', S('  "pluginState": "%s",' % inner),
             '  "lastOpened": "%s"' % ts(r).isoformat(), '}']
    return C('.config/%s/state.json' % r.choice(['Raycast', 'Insomnia', 'Bruno', 'chatbox']), lines, val,
             desc + ' in stringified JSON with \\u0022 quotes')


@pos('json-escape')
def json_slash_escape(r):
    url = slack_webhook(r)
    esc = url.replace('/', '\\/')
    d = '{"site_name":"%s","notify":{"channel":"#alerts","webhook":"%s","on":["deploy","error"]},"cron":"*\\/5 * * * *"}' % (
        org(r).capitalize(), esc)
    return C('Sites/%s/wp-content/uploads/notifier-settings.json' % org(r), [d], esc[len('https:\\/\\/hooks.slack.com'):],
             'Slack webhook with \\/ escapes (PHP json_encode)', uniq=[url.rsplit('/', 1)[1]])


@pos('json-escape')
def ipynb_escaped(r):
    name, val, desc = token(r)
    cells = [{'cell_type': 'markdown', 'metadata': {}, 'source': ['# %s analysis\n' % r.choice(['Churn', 'Sales', 'Survey'])]},
             {'cell_type': 'code', 'execution_count': 1, 'metadata': {}, 'outputs': [],
              'source': ['import os\n', 'os.environ["%s"] = "%s"\n' % (name, val), 'import pandas as pd\n']},
             {'cell_type': 'code', 'execution_count': 2, 'metadata': {}, 'outputs': [],
              'source': ['df = pd.read_csv("data.csv")\n', 'df.head()']}]
    nb = {'cells': cells, 'metadata': {'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'}},
          'nbformat': 4, 'nbformat_minor': 5}
    return C('notebooks/%s.ipynb' % r.choice(['explore', 'scratch', 'llm-test']), json.dumps(nb, indent=1) + '\n', val,
             desc + ' in a notebook source line with \\" escapes')


@pos('json-escape')
def postman_env(r):
    name, val, desc = token(r)
    vals = [{'key': 'baseUrl', 'value': 'https://api.%s' % domain(r), 'type': 'default', 'enabled': True},
            {'key': camel(name), 'value': val, 'type': 'secret', 'enabled': True},
            {'key': 'tenant', 'value': guid(r), 'type': 'default', 'enabled': True}]
    d = {'id': guid(r), 'name': 'Production', 'values': vals, '_postman_variable_scope': 'environment',
         '_postman_exported_at': ts(r).isoformat() + 'Z', '_postman_exported_using': 'Postman/10.%d.%d' % (r.randrange(24), r.randrange(9))}
    return C('Downloads/Production.postman_environment.json', json.dumps(d, indent='\t') + '\n', val,
             desc + ' in a Postman environment (name and value on separate lines)')


@pos('json-escape')
def basic_auth_header(r):
    u, pw = username(r), password(r)
    v = b64(('%s:%s' % (u, pw)).encode())
    d = {'_type': 'request', 'name': 'List builds', 'method': 'GET', 'url': 'https://ci.%s/api/json' % domain(r),
         'headers': [{'name': 'Accept', 'value': 'application/json'}, {'name': 'Authorization', 'value': 'Basic ' + v}]}
    return C('Documents/insomnia/jenkins-requests.json', json.dumps(d, indent=2) + '\n', v,
             'HTTP Basic header (base64 user:password) in an API client export', uniq=[pw, v[-16:]])


@pos('json-escape')
def docker_config_auth(r):
    u, t = username(r), r.choice([gh, lambda rr: password(rr, sym='-_.')])(r)
    v = b64(('%s:%s' % (u, t)).encode())
    d = {'auths': {'ghcr.io' if t.startswith('ghp_') else 'registry.%s' % domain(r): {'auth': v}},
         'currentContext': 'desktop-linux'}
    return C('.docker/config.json', json.dumps(d, indent='\t') + '\n', v, 'docker config auth (base64 user:secret)', uniq=[t, v[-16:]])


@pos('json-escape')
def vscode_settings(r):
    pw = password(r)
    lines = ['{', '  // editor', '  "editor.fontSize": 14,', '  "files.eol": "\\r\\n",', '  "sqltools.connections": [', '    {',
             '      "name": "reporting",', '      "driver": "MSSQL",', '      "server": "%s",' % host(r, 'sql'),
             '      "database": "reports",', '      "username": "report_ro",', S('      "password": "%s"' % pw), '    }', '  ],',
             '  "workbench.colorTheme": "Default Dark Modern"', '}']
    return C('AppData/Roaming/Code/User/settings.json', lines, pw, 'password in JSONC settings, UTF-8 BOM CRLF',
             enc='utf-8-sig', eol='\r\n')


@pos('xml-entities')
def html_entities_attr(r):
    name, val, desc = token(r)
    cfg = '{&quot;apiBase&quot;:&quot;https://api.%s&quot;,&quot;%s&quot;:&quot;%s&quot;,&quot;locale&quot;:&quot;en&quot;}' % (
        domain(r), camel(name), val)
    lines = ['<!doctype html>', '<html lang="en">', '<head><meta charset="utf-8"><title>Dashboard</title></head>', '<body>',
             S('<div id="root" data-config="%s"></div>' % cfg), '<script src="/static/js/main.%s.js"></script>' % rhex(r, 8),
             '</body>', '</html>']
    return C('Downloads/Dashboard.html', lines, val, desc + ' in an HTML attribute full of &quot; entities')


@pos('xml-entities')
def maven_settings(r):
    pw = rs(r, B62, 7) + '&' + rs(r, B62, 4) + '<' + rs(r, B62, 5)
    esc = xml_esc(pw, quot=False)
    lines = ['<settings xmlns="http://maven.apache.org/SETTINGS/1.2.0">', '  <servers>', '    <server>',
             '      <id>internal-releases</id>', '      <username>%s</username>' % username(r),
             S('      <password>%s</password>' % esc), '    </server>', '  </servers>', '  <mirrors>', '    <mirror>',
             '      <id>corp</id>', '      <url>https://nexus.%s/repository/maven-public/?a=1&amp;b=2</url>' % domain(r),
             '      <mirrorOf>*</mirrorOf>', '    </mirror>', '  </mirrors>', '</settings>']
    return C('.m2/settings.xml', lines, esc, 'Maven server password with &amp; and &lt;')


@pos('url-encoding')
def url_encoded_dburl(r):
    pw = password(r, sym='@/#%?:!')
    while not any(c in pw for c in '@/#%?:'):
        pw = password(r, sym='@/#%?:!')
    enc = pct(pw)
    url = 'postgresql://%s:%s@%s:5432/%s?sslmode=require' % (r.choice(['app', 'etl']), enc, host(r, 'pg'), r.choice(['app', 'dw']))
    lines = ['# Heroku-style config', 'export PORT=5000', S('export DATABASE_URL="%s"' % url), 'export WEB_CONCURRENCY=2']
    return C('Projects/%s/.envrc' % r.choice(['api', 'jobs', 'site']), lines, enc, 'percent-encoded password in a DB URL')


@pos('url-encoding')
def form_body_curl(r):
    sec = r.choice([lambda rr: 'GOCSPX-' + rs(rr, B64U, 28), lambda rr: password(rr, sym='+/=~.') + '/' + rs(rr, B62, 4)])(r)
    enc = pct(sec)
    lines = ['#!/bin/bash', 'set -e', 'TOKEN=$(curl -s https://login.%s/oauth2/token \\' % domain(r),
             "  -H 'Content-Type: application/x-www-form-urlencoded' \\",
             S("  -d 'grant_type=client_credentials&client_id=%s&client_secret=%s&scope=api%%3A%%2F%%2Fdefault' | jq -r .access_token)" % (guid(r), enc)),
             'curl -s -H "Authorization: Bearer $TOKEN" https://api.%s/v1/reports > reports.json' % domain(r)]
    return C('bin/fetch-reports.sh', lines, enc, 'url-encoded client_secret in a form body')


@pos('url-encoding')
def bookmarks_query_key(r):
    k = r.choice([google_key, lambda rr: rhex(rr, 32)])(r)
    href = 'https://maps.googleapis.com/maps/api/staticmap?center=%s&amp;zoom=13&amp;size=600x300&amp;key=%s' % (
        pct('%s,%s' % (r.choice(['Berlin', 'Lisbon', 'Austin']), r.choice(['DE', 'PT', 'US']))), k)
    if not k.startswith('AIza'):
        href = 'https://api.openweathermap.org/data/2.5/weather?q=London&amp;appid=%s&amp;units=metric' % k
    lines = ['<!DOCTYPE NETSCAPE-Bookmark-file-1>', '<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">',
             '<TITLE>Bookmarks</TITLE>', '<H1>Bookmarks</H1>', '<DL><p>', '    <DT><H3 ADD_DATE="%d">Dev</H3>' % int(ts(r).timestamp()), '    <DL><p>',
             '        <DT><A HREF="https://docs.python.org/3/" ADD_DATE="%d">Python docs</A>' % int(ts(r).timestamp()),
             S('        <DT><A HREF="%s" ADD_DATE="%d">map test</A>' % (href, int(ts(r).timestamp()))), '    </DL><p>', '</DL><p>']
    return C('Documents/bookmarks_%s.html' % ts(r).strftime('%m_%d_%y'), lines, k, 'API key in a query string with &amp; in bookmarks')


@pos('mail')
def eml_qp(r):
    pw = rs(r, B62, 5) + '=' + rs(r, B62, 4) + r.choice('!#*') + rs(r, B62, 4)
    qp = qp_line(pw)
    f, l = person(r)
    lines = ['Return-Path: <it-support@%s>' % domain(r), 'From: IT Support <it-support@%s>' % domain(r),
             'To: %s %s <%s.%s@%s>' % (f.capitalize(), l.capitalize(), f, l, domain(r)), 'Subject: =?UTF-8?Q?Ihr_neues_VPN-Passwort?=',
             'Date: %s' % ts(r).strftime('%a, %d %b %Y %H:%M:%S +0100'), 'MIME-Version: 1.0',
             'Content-Type: text/plain; charset="utf-8"', 'Content-Transfer-Encoding: quoted-printable', '',
             qp_line('Hallo %s,' % f.capitalize()), '', qp_line('für den VPN-Zugang gilt ab sofort:'), '',
             'Benutzer: %s' % f, S('Passwort: %s' % qp), '', qp_line('Bitte ändern Sie es bei der ersten Anmeldung.'), '',
             qp_line('Grüße, IT')]
    return C('Documents/Mail/Ihr neues VPN-Passwort.eml', lines, qp, 'password (with =3D) in a quoted-printable .eml',
             eol='\r\n', uniq=[qp])


@pos('base64-field')
def k8s_secret_b64(r):
    pw = password(r)
    v = b64(pw.encode())
    lines = ['apiVersion: v1', 'kind: Secret', 'metadata:', '  name: %s-db' % r.choice(['orders', 'wiki', 'grafana']),
             '  namespace: default', 'type: Opaque', 'data:', '  username: %s' % b64(b'app'), S('  password: %s' % v)]
    return C('homelab/k8s/%s-secret.yaml' % r.choice(['db', 'app', 'grafana']), lines, v, 'base64 password in a Secret manifest')


@pos('base64-field')
def kubeconfig_token(r):
    t = jwt(r, alg='RS256', iss='kubernetes/serviceaccount')
    lines = ['apiVersion: v1', 'kind: Config', 'clusters:', '- name: prod', '  cluster:', '    server: https://%s:6443' % host(r, 'k8s'),
             '    certificate-authority-data: %s' % b64(rbytes(r, 700)), 'users:', '- name: ci', '  user:', S('    token: %s' % t),
             'contexts:', '- name: ci@prod', '  context: {cluster: prod, user: ci}', 'current-context: ci@prod']
    return C('.kube/prod-ci.yaml', lines, t, 'service-account bearer token in a kubeconfig', uniq=[t.split('.')[2]])


@pos('yaml-block')
def yaml_literal_script(r):
    name, val, desc = token(r)
    lines = ['tasks:', '  - name: publish', '    shell: |', '      set -e', S('      export %s=%s' % (name, val)),
             '      make release', '    args:', '      chdir: ~/src/tool']
    return C('ansible/playbooks/publish.yml', lines, val, desc + ' inside a YAML | block scalar')


@pos('yaml-block')
def yaml_folded_dburl(r):
    url, pw = db_url(r)
    ind = r.choice(['>', '>-', '|', '|-'])
    lines = ['app:', '  name: %s' % org(r), '  database_url: ' + ind, S('    %s' % url), '  pool: 10']
    return C('.config/%s/settings.yml' % r.choice(['ledger', 'shortener', 'crawler']), lines, pw,
             'DB URL as a YAML %s block scalar (value on the line after the key)' % ind)


@pos('toml-multiline')
def toml_multiline_token(r):
    name, val, desc = token(r, exclude=('AWS_SECRET_ACCESS_KEY',))
    q = r.choice(['"""', "'''"])
    lines = ['[bot]', 'name = "%s"' % r.choice(['deploybot', 'standup', 'pager']), 'token = %s' % q, S(val + q), '', '[bot.channels]',
             'default = "#general"']
    return C('.config/%s/config.toml' % r.choice(['slackbot', 'notifier', 'relay']), lines, val,
             desc + ' in a TOML multi-line string (value on next line)')


@pos('toml-multiline')
def cargo_credentials(r):
    t = crates(r)
    lines = ['[registry]', S('token = "%s"' % t)]
    return C('.cargo/credentials.toml', lines, t, 'crates.io token')


@pos('heredoc')
def heredoc_pgpass(r):
    pw = password(r, sym='-_.!*#')
    h = host(r, 'pg')
    lines = ['#!/bin/sh', '# set up psql for the reporting box', "cat > ~/.pgpass <<'EOF'", S('%s:5432:*:report:%s' % (h, pw)), 'EOF',
             'chmod 600 ~/.pgpass', 'psql -h %s -U report -d dw -c "select 1"' % h]
    return C('bin/setup-psql.sh', lines, pw, '.pgpass line inside a shell heredoc')


@pos('heredoc')
def heredoc_env(r):
    name, val, desc = token(r)
    lines = ['#!/usr/bin/env bash', 'set -euo pipefail', 'mkdir -p ~/.config/app', 'cat > ~/.config/app/env <<EOF',
             'APP_HOME=$HOME/app', S('%s=%s' % (name, val)), 'LOG_DIR=/var/log/app', 'EOF']
    return C('dotfiles/install.sh', lines, val, desc + ' in a heredoc writing an env file')


@pos('heredoc')
def heredoc_netrc_crlf(r):
    pw = password(r, sym='-_.!*#')
    lines = ['#!/bin/bash', 'cat >> ~/.netrc << END', 'machine %s' % host(r, 'ftp'), '  login %s' % username(r), S('  password %s' % pw), 'END']
    return C('Scripts/ftp-setup.sh', lines, pw, '.netrc password in a heredoc, script saved with CRLF', eol='\r\n')


@pos('properties')
def properties_escapes(r):
    pw = rs(r, B62, 5) + '=' + rs(r, B62, 3) + ':' + rs(r, B62, 4) + '#' + rs(r, B62, 3)
    esc = props_esc(pw)
    lines = ['# database', 'spring.datasource.url=jdbc:postgresql://%s:5432/app' % host(r, 'pg'),
             'spring.datasource.username=app', S('spring.datasource.password=%s' % esc), 'server.port=8080']
    return C('src/%s/src/main/resources/application-prod.properties' % r.choice(['billing', 'catalog']), lines, esc,
             'properties password with \\= \\: \\# escapes')


@pos('properties')
def properties_continuation(r):
    pw = password(r, sym='-_.!*')
    lines = ['# JDBC', 'db.url=jdbc:mysql://%s:3306/shop?\\' % host(r, 'mysql'), '    useSSL=true&\\', S('    password=%s&\\' % pw),
             '    user=shop', 'db.pool.size=10']
    return C('.config/%s/db.properties' % r.choice(['shopd', 'crawler']), lines, pw, 'password on a .properties continuation line')


@pos('properties')
def properties_unicode(r):
    pw = rs(r, B62, 5) + r.choice('äöüß€') + rs(r, B62, 5) + r.choice('ÄÖÜé') + rs(r, DG, 3)
    esc = props_esc(pw)
    lines = ['mail.smtp.host=smtp.%s' % domain(r), 'mail.smtp.port=587', 'mail.smtp.user=%s' % email(r),
             S('mail.smtp.password=%s' % esc), 'mail.from.name=Gr\\u00fc\\u00dfe Bot']
    return C('.config/mailer/mail.properties', lines, esc, 'password with \\uXXXX escapes in .properties')


@pos('properties')
def gradle_props(r):
    pw = password(r)
    lines = ['org.gradle.jvmargs=-Xmx4g', 'org.gradle.daemon=true', 'signing.keyId=%s' % rhex(r, 8).upper(),
             S('signing.password=%s' % pw), 'signing.secretKeyRingFile=/Users/%s/.gnupg/secring.gpg' % username(r)]
    return C('.gradle/gradle.properties', lines, pw, 'gradle signing.password', eol=r.choice(['\n', '\r\n']))


# ============================================================ dotfiles with plain values
@pos('dotfile')
def vault_token_file(r):
    t = vault(r)
    return C('.vault-token', S(t), t, 'Vault token file, no newline at all')


@pos('dotfile')
def terraformrc(r):
    t = tfc(r)
    lines = ['credentials "app.terraform.io" {', S('  token = "%s"' % t), '}', '', 'plugin_cache_dir = "$HOME/.terraform.d/plugin-cache"']
    return C('AppData/Roaming/terraform.rc', lines, t, 'Terraform Cloud token in terraform.rc, CRLF', eol='\r\n')


@pos('dotfile')
def gh_hosts(r):
    t = gh(r, 'gho')
    u = username(r)
    lines = ['github.com:', '    users:', '        %s:' % u, S('            oauth_token: %s' % t), '    git_protocol: https', '    user: %s' % u]
    return C('.config/gh/hosts.yml', lines, t, 'gh CLI oauth_token (gho_)')


@pos('dotfile')
def pypirc(r):
    t = pypi(r)
    lines = ['[distutils]', 'index-servers =', '    pypi', '', '[pypi]', 'username = __token__', S('password = %s' % t)]
    return C('.pypirc', lines, t, 'PyPI token in .pypirc', eol=r.choice(['\n', '\r\n']))


@pos('dotfile')
def aws_credentials_crlf(r):
    s = aws_secret(r)
    lines = ['[default]', 'region = eu-central-1', 'output = json', S('aws_secret_access_key = %s' % s), '',
             '[sso-dev]', 'sso_start_url = https://%s.awsapps.com/start' % org(r).replace('-', ''), 'sso_region = eu-central-1']
    return C('.aws/credentials', lines, s, 'AWS secret key, file synced via OneDrive with CRLF and BOM', enc='utf-8-sig', eol='\r\n')


@pos('dotfile')
def aws_pair_oneline(r):
    akid, s = 'AKIA' + rs(r, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16), aws_secret(r)
    lines = ['@echo off', 'rem temp creds for the migration', S('set AWS_ACCESS_KEY_ID=%s&& set AWS_SECRET_ACCESS_KEY=%s' % (akid, s)),
             'aws s3 sync D:\\export s3://%s-migration/' % org(r)]
    return C('Desktop/migrate.bat', lines, s, 'AWS key pair on one cmd line', eol='\r\n', uniq=[s, akid])


@pos('dotfile')
def twilio_curl(r):
    sid, tok = twilio_sid(r), twilio_token(r)
    lines = ['#!/bin/sh', S('curl -X POST https://api.twilio.com/2010-04-01/Accounts/%s/Messages.json -u %s:%s \\' % (sid, sid, tok)),
             '  --data-urlencode "Body=Server %s is down" --data-urlencode "To=+49%d"' % (host(r), r.randrange(10 ** 9, 10 ** 10))]
    return C('bin/sms-alert.sh', lines, tok, 'Twilio SID:auth token in curl -u', uniq=[tok])


@pos('dotfile')
def azure_storage_connstr(r):
    k = azure_storage_key(r)
    acct = org(r).replace('-', '') + rs(r, LO + DG, 4)
    cs = 'DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;EndpointSuffix=core.windows.net' % (acct, k)
    d = {'IsEncrypted': False, 'Values': {'AzureWebJobsStorage': cs, 'FUNCTIONS_WORKER_RUNTIME': 'dotnet-isolated'}}
    return C('source/repos/%sFunctions/local.settings.json' % org(r).capitalize().replace('-', ''), json.dumps(d, indent=2) + '\n', k,
             'Azure storage connection string, UTF-8 BOM', enc='utf-8-sig', eol='\r\n')


@pos('base64-field')
def filezilla_sitemanager(r):
    pw = password(r)
    v = b64(pw.encode())
    lines = ['<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>', '<FileZilla3 version="3.66.4" platform="windows">', '    <Servers>',
             '        <Server>', '            <Host>%s</Host>' % host(r, 'ftp'), '            <Port>21</Port>', '            <Protocol>0</Protocol>',
             '            <Type>0</Type>', '            <User>%s</User>' % username(r), S('            <Pass encoding="base64">%s</Pass>' % v),
             '            <Logontype>1</Logontype>', '            <Name>%s</Name>' % r.choice(['Website', 'Kunde XY', 'old hosting']),
             '        </Server>', '    </Servers>', '</FileZilla3>']
    return C('AppData/Roaming/FileZilla/sitemanager.xml', lines, v, 'FileZilla <Pass encoding="base64">', eol='\r\n')


@pos('env-file')
def env_laravel_key(r):
    k = 'base64:' + b64(rbytes(r, 32))
    lines = ['APP_NAME=Laravel', 'APP_ENV=production', S('APP_KEY=%s' % k), 'APP_DEBUG=false', 'APP_URL=https://%s' % domain(r)]
    return C('Sites/%s/.env' % r.choice(['shop', 'crm', 'booking']), lines, k, 'Laravel APP_KEY (base64 32-byte key), CRLF', eol='\r\n',
             uniq=[k[7:]])
