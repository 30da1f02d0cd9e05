"""Shell / REPL history builders and history templates (positive and negative)."""
import vals as V
from vals import pick, rs, sq, password, user, host, dbname, org, repo

BENIGN = ['ls -la', 'cd ~/projects', 'git status', 'git pull --rebase', 'vim ~/.bashrc', 'htop', 'docker ps',
          'kubectl get pods -n staging', 'python3 -m venv .venv', 'source .venv/bin/activate',
          'pip install -r requirements.txt', 'make test', 'ssh deploy@web01', 'tail -f /var/log/syslog',
          'grep -rn TODO src/', 'brew upgrade', 'sudo apt update', 'df -h', 'du -sh *', 'npm run build',
          'cargo build --release', 'go test ./...', 'clear', 'man rsync', 'rsync -avz photos/ nas:/volume1/photos/',
          'tmux attach -t main', 'code .', 'cat /etc/os-release', 'ping -c 3 1.1.1.1',
          'journalctl -u nginx --since today', 'systemctl status postgresql', 'git log --oneline -n 20',
          'git checkout -b feature/login-form', 'terraform plan', 'ansible-playbook site.yml --check',
          'mkdir -p tmp/build', 'find . -name "*.pyc" -delete', 'echo $PATH', 'which python3',
          'curl -I https://example.com', 'jq ".items[].name" data.json', 'top', 'free -m', 'cd ..', 'ls',
          'git diff --stat', 'git add -p', 'git commit -m "fix typo in README"', 'git push', 'docker compose up -d',
          'docker compose logs -f web', 'kubectl describe pod api-7d9f8c-xk2lp', 'nvim notes.md', 'exit',
          'history | grep ssh', 'ssh-add -l', 'uname -a', 'ip a', 'sudo systemctl restart nginx', 'npm ci',
          'pytest -x -q', 'cat ~/.ssh/config', 'open .', 'z projects', 'fzf', 'bat README.md', 'rg "def main"']

def pad(n): return [pick(BENIGN) for _ in range(n)]

def fish_esc(c): return c.replace('\\', '\\\\').replace('\n', '\\n')

def shell_history(cmd, kind=None):
    """Returns (relpath, content) of a history file holding cmd among benign commands."""
    kind = kind or pick(['bash', 'bash', 'zsh', 'zsh', 'fish'])
    cmds = pad(R_range(3, 15)) + [cmd] + pad(R_range(2, 12))
    t = V.ts()
    lines = []
    if kind == 'bash':
        path = pick(['.bash_history', '.bash_history', '.bash_history', '.local/state/bash/history'])
        stamped = V.R.random() < 0.3
        for c in cmds:
            if stamped:
                lines.append('#%d' % t)
            lines.append(c)
            t += V.R.randrange(3, 900)
    elif kind == 'zsh':
        path = pick(['.zsh_history', '.zsh_history', '.histfile', '.zhistory', '.local/share/zsh/history'])
        for c in cmds:
            lines.append(': %d:%d;%s' % (t, V.R.randrange(0, 4), c))
            t += V.R.randrange(3, 900)
    else:
        path = '.local/share/fish/fish_history'
        for c in cmds:
            lines.append('- cmd: ' + fish_esc(c))
            lines.append('  when: %d' % t)
            t += V.R.randrange(3, 900)
    return path, '\n'.join(lines) + '\n'

def R_range(a, b): return V.R.randrange(a, b)

def app_history(path, line, before, after, encode=None):
    lines = [pick(before) for _ in range(R_range(2, 8))] + [line] + [pick(after) for _ in range(R_range(1, 6))]
    if encode:
        lines = [encode(l) for l in lines]
    return path, '\n'.join(lines) + '\n'

# ---------------------------------------------------------------- positives
# each returns (cmd, secret, note)
def url_pw(): return password(urlsafe=True)

def hp_psql():
    u, h, db = user(), host(), dbname()
    v = V.R.randrange(3)
    if v == 0:
        pw = url_pw(); return f'psql "postgresql://{u}:{pw}@{h}:5432/{db}?sslmode=require"', pw, 'postgres URL'
    if v == 1:
        pw = password(); return f'PGPASSWORD={sq(pw)} psql -h {h} -U {u} -d {db}', pw, 'PGPASSWORD prefix'
    pw = url_pw(); return f'psql "host={h} port=5432 dbname={db} user={u} password={pw}"', pw, 'libpq conninfo'

def hp_mysql():
    pw = password(); u, h = user(), host()
    if V.R.random() < 0.5:
        return f'mysql -u {u} -p{sq(pw)} -h {h} {dbname()}', pw, '-pPASS'
    return f'mysql --user={u} --password={sq(pw)} --host={h}', pw, '--password='

def hp_mongosh():
    if V.R.random() < 0.5:
        pw = url_pw()
        return f'mongosh "mongodb+srv://{user()}:{pw}@cluster0.{rs(V.LOW + V.DIG, 5)}.mongodb.net/{dbname()}"', pw, 'srv URL'
    pw = password()
    return f'mongosh --host {host()} -u admin -p {sq(pw)} --authenticationDatabase admin', pw, '-p'

def hp_redis():
    if V.R.random() < 0.5:
        pw = password(); return f'redis-cli -h {host()} -p 6379 -a {sq(pw)} --no-auth-warning', pw, '-a'
    pw = url_pw(); return f'redis-cli -u redis://default:{pw}@{host()}:6379/0', pw, 'redis URL'

def hp_sqlcmd():
    pw = password()
    return f'sqlcmd -S tcp:{host()},1433 -U sa -P {sq(pw)} -Q "SELECT @@VERSION"', pw, '-P'

def hp_clickhouse():
    pw = password()
    return f'clickhouse-client --host {host()} --user default --password {sq(pw)} --query "SHOW DATABASES"', pw, '--password'

def hp_curl_u():
    pw, u = password(), user()
    cred = f'{u}:{pw}' if sq(pw) == pw else f"'{u}:{pw}'"
    return f'curl -u {cred} https://{pick(["jenkins." + org() + ".com/api/json", host() + "/api/v1/status"])}', pw, 'curl -u user:pw'

def hp_curl_bearer():
    tok, kind = pick([(V.gh_token(), 'ghp'), (V.openai_key(), 'openai'), (V.do_token(), 'digitalocean'),
                      (V.jwt(), 'jwt'), (V.hf_token(), 'huggingface'), (V.linear(), 'linear'), (V.grafana_sa(), 'grafana')])
    hdr = pick(['Authorization: Bearer ', 'Authorization: bearer ', 'authorization: Bearer '])
    return f'curl -s -H "{hdr}{tok}" https://api.{org()}.com/v2/me | jq .', tok, 'bearer ' + kind

def hp_curl_basic():
    import base64
    u, pw = user(), password()
    b = base64.b64encode(f'{u}:{pw}'.encode()).decode()
    return f'curl -H "Authorization: Basic {b}" https://registry.{org()}.com/v2/_catalog', b, 'basic base64(user:pw)'

def hp_curl_apikey():
    v = V.R.randrange(4)
    if v == 0:
        k = V.google_api(); return f'curl "https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={k}"', k, 'google api key in URL'
    if v == 1:
        k = V.glpat(); return f'curl --header "PRIVATE-TOKEN: {k}" https://gitlab.com/api/v4/projects', k, 'gitlab PRIVATE-TOKEN'
    if v == 2:
        k = V.sendgrid(); return f'curl -X POST https://api.sendgrid.com/v3/mail/send -H "Authorization: Bearer {k}" -H "Content-Type: application/json" -d @mail.json', k, 'sendgrid'
    k = V.anthropic_key(); return f'curl https://api.anthropic.com/v1/messages -H "x-api-key: {k}" -H "anthropic-version: 2023-06-01" -d @req.json', k, 'x-api-key anthropic'

def hp_httpie():
    v = V.R.randrange(3)
    if v == 0:
        pw, u = password(), user()
        cred = f'{u}:{pw}' if sq(pw) == pw else f"'{u}:{pw}'"
        return f'http -a {cred} GET https://{host()}/admin/stats', pw, 'http -a'
    if v == 1:
        t = V.gh_token(); return f'http GET https://api.github.com/user "Authorization:Bearer {t}"', t, 'httpie header'
    t = V.postman(); return f'https -A bearer -a {t} api.getpostman.com/collections', t, 'httpie bearer auth'

def hp_wget():
    pw = password()
    o = pick(['--password', '--http-password', '--ftp-password'])
    return f'wget --user={user()} {o}={sq(pw)} https://downloads.{org()}.com/releases/build-{V.version()}.tar.gz', pw, o

def hp_git_clone():
    v = V.R.randrange(3)
    if v == 0:
        t = V.gh_token(); return f'git clone https://{pick(["bob", "x-access-token", "mkeller"])}:{t}@github.com/{org()}/{repo()}.git', t, 'github token in URL'
    if v == 1:
        t = V.glpat(); return f'git clone https://oauth2:{t}@gitlab.com/{org()}/{repo()}.git', t, 'gitlab token URL'
    pw = url_pw(); return f'git clone https://{user()}:{pw}@git.{org()}.com/scm/ops/{repo()}.git', pw, 'password in URL'

def hp_git_remote():
    t = pick([V.gh_token(), V.gh_fine(), V.glpat(), V.gh_token('ghs')])
    return f'git remote set-url origin https://{user()}:{t}@{"gitlab.com" if t.startswith("glpat") else "github.com"}/{org()}/{repo()}.git', t, 'remote set-url'

def hp_docker_login():
    if V.R.random() < 0.5:
        pw = password(); return f'docker login -u {user()} -p {sq(pw)} registry.{org()}.com', pw, 'docker -p pw'
    t = pick([V.dckr_pat(), V.gh_token()])
    reg = 'ghcr.io' if t.startswith('ghp') else ''
    return f'docker login {reg} -u {user()} -p {t}'.replace('  ', ' '), t, 'docker -p token'

def hp_aws():
    s = V.aws_secret()
    if V.R.random() < 0.6:
        return f'aws configure set aws_secret_access_key {s} --profile {pick(["prod", "default", "backup"])}', s, 'aws configure set'
    return f'export AWS_ACCESS_KEY_ID={V.aws_akid()} AWS_SECRET_ACCESS_KEY={s}', s, 'export aws pair'

def hp_az():
    if V.R.random() < 0.5:
        pw = password(); return f'az login -u {user()}@{org()}.onmicrosoft.com -p {sq(pw)}', pw, 'az login -p pw'
    s = V.azure_secret()
    return f'az login --service-principal -u {V.uuid4()} -p {s} --tenant {V.uuid4()}', s, 'az sp secret'

def hp_gcloud_pasted():
    pem = V.rsa_pem(pkcs8=True)
    proj = org() + '-prod'
    d = {"type": "service_account", "project_id": proj, "private_key_id": V.sha1hex(),
         "private_key": pem, "client_email": f"ci-deployer@{proj}.iam.gserviceaccount.com",
         "client_id": str(V.R.randrange(10**20, 10**21)), "token_uri": "https://oauth2.googleapis.com/token"}
    import json
    js = json.dumps(d)
    return f"echo '{js}' > /tmp/sa.json && gcloud auth activate-service-account --key-file=/tmp/sa.json", 'BEGIN PRIVATE KEY', 'SA json pasted in echo'

def hp_kubectl():
    pw = password()
    return f'kubectl create secret generic {dbname()}-db --from-literal=username={user()} --from-literal=password={sq(pw)} -n prod', pw, 'from-literal'

def hp_vault_login():
    t = V.vault_token() if V.R.random() < 0.7 else 's.' + rs(V.ALNUM, 24)
    return f'vault login {t}', t, 'vault login token'

def hp_vault_put():
    pw = password()
    return f'vault kv put secret/{dbname()}/db username={user()} password={sq(pw)}', pw, 'vault kv put'

def hp_heroku():
    k, n = pick([(V.stripe_live(), 'STRIPE_SECRET_KEY'), (V.sendgrid(), 'SENDGRID_API_KEY'), (V.mailgun(), 'MAILGUN_API_KEY'),
                 (password(), 'ADMIN_PASSWORD')])
    return f'heroku config:set {n}={sq(k)} -a {org()}-web', k, n

def hp_gh():
    t = pick([V.gh_token(), V.gh_fine()])
    return pick([f'gh auth login --with-token <<< {t}', f'echo {t} | gh auth login --with-token']), t, 'gh --with-token literal'

def hp_npm():
    t = V.npm_token()
    return pick([f'npm config set //registry.npmjs.org/:_authToken {t}', f'npm config set //registry.npmjs.org/:_authToken={t}',
                 f'yarn config set npmAuthToken {t}']), t, 'npm token'

def hp_export():
    name, t = pick([('OPENAI_API_KEY', V.openai_key()), ('SLACK_BOT_TOKEN', V.slack_bot()), ('GITHUB_TOKEN', V.gh_fine()),
                    ('ANTHROPIC_API_KEY', V.anthropic_key()), ('SENDGRID_API_KEY', V.sendgrid()),
                    ('DIGITALOCEAN_TOKEN', V.do_token()), ('TF_VAR_db_password', password()), ('HF_TOKEN', V.hf_token()),
                    ('HCLOUD_TOKEN', rs(V.ALNUM, 64)), ('NEW_RELIC_API_KEY', V.newrelic()), ('DATABRICKS_TOKEN', V.databricks()),
                    ('TELEGRAM_BOT_TOKEN', V.telegram()), ('TWILIO_AUTH_TOKEN', V.twilio_auth()), ('NOTION_TOKEN', V.notion()),
                    ('HEROKU_API_KEY', V.heroku_key()), ('DISCORD_TOKEN', V.discord_bot()), ('PGPASSWORD', password()),
                    ('TS_AUTHKEY', V.tailscale()), ('SOPS_AGE_KEY', V.age_key()), ('JIRA_API_TOKEN', V.atlassian())])
    q = pick(['', '"']) if sq(t) == t else "'"
    return f'{pick(["export ", "export ", ""])}{name}={q}{t}{q}', t, name

def hp_sshkeygen():
    pw = password()
    if V.R.random() < 0.6:
        return f'ssh-keygen -t ed25519 -C "{user()}@laptop" -N {sq(pw)} -f ~/.ssh/id_{repo()}', pw, '-N passphrase'
    return f'ssh-keygen -p -P {sq(password())} -N {sq(pw)} -f ~/.ssh/id_ed25519', pw, '-p -P old -N new'

def hp_openssl():
    pw = password()
    return pick([f'openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:{sq(pw)}',
                 f'openssl rsa -in server.key.enc -out server.key -passin pass:{sq(pw)}',
                 f'openssl enc -aes-256-cbc -pbkdf2 -salt -in backup.tar -out backup.tar.enc -k {sq(pw)}']), pw, 'openssl pass:'

def hp_sshpass():
    pw = password()
    return f'sshpass -p {sq(pw)} ssh -o StrictHostKeyChecking=no {user()}@{host()}', pw, 'sshpass -p'

def hp_rclone():
    pw = password()
    return f'rclone config create nas sftp host {host()} user {user()} pass {sq(pw)}', pw, 'rclone pass'

def hp_restic():
    pw = password()
    return f'RESTIC_PASSWORD={sq(pw)} restic -r sftp:backup@{host()}:/srv/restic backup ~/Documents', pw, 'RESTIC_PASSWORD='

def hp_mc():
    s = rs(V.ALNUM, 40)
    return f'mc alias set myminio https://minio.{org()}.com {rs(V.UP + V.DIG, 20)} {s}', s, 'mc alias set'

def hp_s3cmd():
    s = V.aws_secret()
    return f's3cmd --access_key={V.aws_akid()} --secret_key={s} ls s3://{org()}-backups', s, 's3cmd secret_key'

def hp_ftp():
    pw = url_pw()
    return pick([f'wget ftp://{user()}:{pw}@ftp.{org()}.com/pub/export.csv',
                 f'lftp ftp://{user()}:{pw}@{host()}',
                 f'curl -T report.pdf ftp://{user()}:{pw}@ftp.{org()}.com/incoming/']), pw, 'ftp URL'

def hp_smb():
    pw = password().replace('%', '#')
    return f"smbclient //{host()}/share -U '{user()}%{pw}'", pw, 'user%pass'

def hp_nmcli():
    pw = password()
    return f'nmcli dev wifi connect "{V.ssid()}" password {sq(pw)}', pw, 'wifi password'

def hp_htpasswd():
    pw = password()
    return f'sudo htpasswd -b{pick(["", "B", "c"])} /etc/nginx/.htpasswd {user()} {sq(pw)}', pw, 'htpasswd -b'

def hp_ldap():
    pw = password()
    return f'ldapsearch -x -H ldaps://ldap.{org()}.com -D "cn=admin,dc={org()},dc=com" -w {sq(pw)} -b "ou=people,dc={org()},dc=com"', pw, 'ldapsearch -w'

def hp_ipmi():
    pw = password()
    return f'ipmitool -I lanplus -H 10.0.{V.R.randrange(256)}.{V.R.randrange(2, 250)} -U ADMIN -P {sq(pw)} chassis power status', pw, 'ipmitool -P'

def hp_psexec():
    pw = password()
    return pick([f"psexec.py CORP/{user()}:'{pw}'@10.0.0.{V.R.randrange(2, 250)}",
                 f"xfreerdp /v:{host()} /u:Administrator /p:'{pw}' /cert:ignore",
                 f"winexe -U 'CORP/{user()}%{pw}' //{host()} cmd.exe"]), pw, 'psexec-like'

def hp_sqlplus():
    pw = url_pw()
    return f'sqlplus {pick(["system", "scott", "app_owner"])}/{pw}@//{host()}:1521/ORCLPDB1', pw, 'sqlplus user/pw@db'

def hp_mysqldump():
    pw = password()
    return f'mysqldump -u{user()} -p{sq(pw)} --single-transaction {dbname()} > {dbname()}.sql', pw, 'mysqldump -p'

def hp_pgdump():
    pw = url_pw()
    return f'pg_dump "postgresql://{user()}:{pw}@{host()}/{dbname()}" -Fc -f backup.dump', pw, 'pg_dump URL'

def hp_influx():
    if V.R.random() < 0.5:
        pw = password(); return f'influx -host {host()} -username admin -password {sq(pw)} -database telegraf', pw, 'influx v1'
    t = V.influx_token(); return f'influx config create --config-name prod --host-url https://influx.{org()}.com --org {org()} --token {t} --active', t, 'influx token'

def hp_rabbit():
    pw = password()
    return pick([f'sudo rabbitmqctl add_user {user()} {sq(pw)}', f'rabbitmqctl change_password guest {sq(pw)}']), pw, 'rabbitmqctl'

def hp_keytool():
    pw = password()
    return f'keytool -genkeypair -alias release -keyalg RSA -keysize 4096 -keystore release.jks -storepass {sq(pw)} -keypass {sq(pw)} -dname "CN={org()}"', pw, 'keytool -storepass'

def hp_zip():
    pw = password()
    return pick([f'zip -P {sq(pw)} -r taxes-2023.zip Taxes/', f'7z a -p{sq(pw)} -mhe=on vault.7z ~/Private',
                 f'unzip -P {sq(pw)} statements.zip']), pw, 'zip/7z password'

def hp_gpg():
    pw = password()
    return f'gpg --batch --yes --pinentry-mode loopback --passphrase {sq(pw)} -c passwords.kdbx', pw, 'gpg --passphrase'

def hp_sudo():
    pw = password()
    return f"echo '{pw}' | sudo -S {pick(['apt-get -y upgrade', 'systemctl restart docker', 'reboot'])}", pw, 'sudo -S'

def hp_twine():
    t = V.pypi_token()
    return f'twine upload -u __token__ -p {t} dist/*', t, 'pypi token'

def hp_docker_run():
    pw = password()
    return f'docker run -d --name pg -e POSTGRES_PASSWORD={sq(pw)} -p 5432:5432 postgres:16', pw, 'docker -e PASSWORD='

def hp_terraform():
    pw = password()
    return f"terraform apply -var 'db_password={pw}' -auto-approve", pw, 'terraform -var'

def hp_helm():
    pw = password()
    return f'helm install mysql bitnami/mysql --set auth.rootPassword={sq(pw)} -n data', pw, 'helm --set'

def hp_kube_registry():
    pw = password()
    return f'kubectl create secret docker-registry regcred --docker-server=registry.{org()}.com --docker-username={user()} --docker-password={sq(pw)}', pw, 'docker-password'

def hp_gh_secret():
    k = pick([V.openai_key(), V.stripe_live(), V.slack_webhook()])
    return f"gh secret set API_KEY --body '{k}' -R {org()}/{repo()}", k, 'gh secret set --body'

def hp_mosquitto():
    pw = password()
    return f'mosquitto_pub -h {host()} -u {user()} -P {sq(pw)} -t home/lights -m on', pw, 'mosquitto -P'

def hp_snmp():
    pw = password()
    return f'snmpwalk -v3 -l authNoPriv -u monitor -a SHA -A {sq(pw)} {host()}', pw, 'snmp -A'

def hp_ansible():
    pw = password()
    q = '"' if ('$' not in pw and '!' not in pw) else "'"
    return f'ansible-playbook site.yml -e {q}ansible_become_password={pw}{q}', pw, 'become password'

def hp_slack_hook():
    u = V.slack_webhook()
    return f"curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deploy done\"}}' {u}", u, 'slack webhook'

def hp_telegram():
    t = V.telegram()
    return f'curl "https://api.telegram.org/bot{t}/sendMessage?chat_id={V.R.randrange(10**8, 10**9)}&text=backup+ok"', t, 'telegram bot'

def hp_netrc():
    pw = password()
    return f'echo "machine api.{org()}.com login {user()} password {pw}" >> ~/.netrc', pw, 'echo to netrc'

def hp_chpasswd():
    pw = password()
    return f"echo '{user()}:{pw}' | sudo chpasswd", pw, 'chpasswd'

def hp_cryptsetup():
    pw = password()
    return f"echo -n '{pw}' | sudo cryptsetup luksOpen /dev/sdb1 vault -", pw, 'luks passphrase'

def hp_wg():
    k = V.wg_priv()
    return f'echo "{k}" | sudo tee /etc/wireguard/private.key', k, 'wireguard private key'

def hp_google_oauth():
    s = V.google_client_secret()
    return f'curl -X POST https://oauth2.googleapis.com/token -d client_id={V.R.randrange(10**11, 10**12)}-{rs(V.LOW + V.DIG, 32)}.apps.googleusercontent.com -d client_secret={s} -d grant_type=refresh_token -d refresh_token=$REFRESH', s, 'client_secret'

def hp_doctl():
    t = V.do_token()
    return f'doctl auth init --context personal -t {t}', t, 'doctl'

def hp_bw():
    pw = password()
    return pick([f'bw unlock {sq(pw)}', f'bw login {user()}@{org()}.com {sq(pw)}']), pw, 'bitwarden master password'

def hp_git_cred():
    t = V.gh_token()
    return f'printf "protocol=https\\nhost=github.com\\nusername={user()}\\npassword={t}\\n" | git credential approve', t, 'git credential approve'

def hp_oc():
    if V.R.random() < 0.5:
        t = V.openshift(); return f'oc login --token={t} --server=https://api.{org()}.openshift.com:6443', t, 'oc token'
    pw = password(); return f'oc login -u developer -p {sq(pw)} https://api.crc.testing:6443', pw, 'oc -p'

def hp_argocd():
    pw = password()
    return f'argocd login argocd.{org()}.com --username admin --password {sq(pw)} --grpc-web', pw, 'argocd'

def hp_cf():
    pw = password()
    return f'cf login -a https://api.cf.{org()}.com -u {user()} -p {sq(pw)} -o {org()} -s dev', pw, 'cf login'

def hp_kinit():
    pw = password()
    return f"echo '{pw}' | kinit {user()}@{org().upper().replace('-', '')}.COM", pw, 'kinit stdin'

def hp_mount_cifs():
    pw = password().replace(',', '.')
    return f'sudo mount -t cifs //{host()}/media /mnt/media -o username={user()},password={pw},uid=1000' if sq(pw) == pw else \
        f"sudo mount -t cifs //{host()}/media /mnt/media -o 'username={user()},password={pw},uid=1000'", pw, 'mount cifs'

def hp_curl_url_userinfo():
    pw = url_pw()
    return f'curl -s "https://{user()}:{pw}@{host()}:9200/_cat/indices?v"', pw, 'URL userinfo'

def hp_mongodump():
    pw = url_pw()
    return f'mongodump --uri "mongodb://{user()}:{pw}@{host()}:27017/{dbname()}?authSource=admin" --out /backup/mongo', pw, 'mongodump uri'

def hp_stripe():
    k = V.stripe_live()
    return f'stripe customers list --api-key {k} --limit 5', k, 'stripe --api-key'

def hp_pip_index():
    pw = url_pw()
    return f'pip install --index-url https://{user()}:{pw}@nexus.{org()}.com/repository/pypi/simple internal-lib', pw, 'pip index url creds'

SHELL_POS = [v for k, v in sorted(globals().items()) if k.startswith('hp_')]

# ---- REPL / client histories (positive) ----
def mysql_hist_enc(s): return s.replace('\\', '\\\\').replace(' ', '\\040')

def ap_mysql():
    pw = password()
    line = f"CREATE USER '{user()}'@'%' IDENTIFIED BY '{pw}';" if V.R.random() < 0.5 else f"ALTER USER 'root'@'localhost' IDENTIFIED BY '{pw}';"
    path, c = app_history('.mysql_history', line, ['SHOW DATABASES;', 'USE app;', 'SHOW TABLES;', 'SELECT COUNT(*) FROM orders;'],
                          ['FLUSH PRIVILEGES;', 'exit', 'SELECT user, host FROM mysql.user;'],
                          encode=mysql_hist_enc if V.R.random() < 0.6 else None)
    return path, c, pw, 'mysql client history'

def ap_psql():
    pw = password()
    line = pick([f"ALTER ROLE {user()} WITH PASSWORD '{pw}';", f"CREATE USER {user()} WITH LOGIN PASSWORD '{pw}';"])
    path, c = app_history('.psql_history', line, ['\\dt', '\\l', 'select now();', '\\c app', 'SELECT * FROM pg_stat_activity;'],
                          ['\\du', '\\q', 'GRANT CONNECT ON DATABASE app TO reporting;'])
    return path, c, pw, 'psql history'

def ap_redis():
    pw = password()
    line = pick([f'AUTH {pw}', f'CONFIG SET requirepass "{pw}"', f'AUTH default {pw}'])
    path, c = app_history('.rediscli_history', line, ['PING', 'INFO memory', 'KEYS session:*', 'DBSIZE'], ['GET config:flags', 'TTL session:abc'])
    return path, c, pw, 'redis-cli history'

def ap_mongo():
    pw = password()
    line = f'db.createUser({{ user: "{user()}", pwd: "{pw}", roles: [ {{ role: "readWrite", db: "{dbname()}" }} ] }})'
    path, c = app_history('.mongodb/mongosh/mongosh_repl_history', line, ['show dbs', 'use admin', 'db.stats()'], ['show users', 'exit'])
    return path, c, pw, 'mongosh history'

def ap_python():
    k = pick([V.openai_key(), V.stripe_live(), V.anthropic_key(), V.hf_token()])
    line = pick([f'client = OpenAI(api_key="{k}")', f'stripe.api_key = "{k}"', f"headers = {{'Authorization': 'Bearer {k}'}}",
                 f'os.environ["API_KEY"] = "{k}"'])
    path, c = app_history('.python_history', line, ['import os', 'import requests', 'from openai import OpenAI', 'import stripe', 'len(data)'],
                          ['r = requests.get(url, headers=headers)', 'r.json()', 'exit()'])
    return path, c, k, 'python REPL history'

def ap_node():
    t = pick([V.gh_token(), V.slack_bot(), V.npm_token()])
    line = pick([f"const octokit = new Octokit({{ auth: '{t}' }})", f"const web = new WebClient('{t}')", f"process.env.TOKEN = '{t}'"])
    path, c = app_history('.node_repl_history', line, ['.help', 'const fs = require("fs")', '1+1'], ['await octokit.rest.users.getAuthenticated()', '.exit'])
    return path, c, t, 'node REPL history'

def ap_powershell():
    pw = password()
    line = pick([f"$pw = ConvertTo-SecureString '{pw}' -AsPlainText -Force",
                 f'net use Z: \\\\{host()}\\share {pw} /user:CORP\\{user()}' if sq(pw) == pw else f"cmdkey /generic:{host()} /user:{user()} /pass:'{pw}'",
                 f"Invoke-Sqlcmd -ServerInstance {host()} -Username sa -Password '{pw}' -Query 'SELECT 1'"])
    path, c = app_history('AppData/Roaming/Microsoft/Windows/PowerShell/PSReadLine/ConsoleHost_history.txt', line,
                          ['Get-ChildItem', 'cd C:\\Users\\bob\\Documents', 'winget upgrade --all', 'Get-Service wuauserv'],
                          ['Test-NetConnection ' + host() + ' -Port 445', 'exit'])
    return path, c, pw, 'PowerShell history'

APP_POS = [ap_mysql, ap_psql, ap_redis, ap_mongo, ap_python, ap_node, ap_powershell]

# ---------------------------------------------------------------- negatives
# each returns (cmd, note)
def hn_psql(): return pick([f'psql "postgresql://{user()}@{host()}:5432/{dbname()}?sslmode=require"', f'psql -h {host()} -U {user()} -W {dbname()}',
                            f'PGPASSFILE=~/.pgpass psql -h {host()} -U {user()} {dbname()}', f'psql "service={dbname()}"']), 'no password'
def hn_mysql(): return pick(['mysql -u root -p', f'mysql -u {user()} -p -h {host()} {dbname()}', 'mysql --defaults-extra-file=~/.my.cnf',
                             f'mysql --login-path=local {dbname()}', f'mysqldump -u root -p {dbname()} > {dbname()}.sql',
                             'mysql_config_editor set --login-path=local --host=localhost --user=root --password']), 'prompting -p'
def hn_mongo(): return f'mongosh "mongodb+srv://cluster0.{rs(V.LOW + V.DIG, 5)}.mongodb.net/{dbname()}" --username {user()}', 'prompt'
def hn_redis(): return pick([f'redis-cli -h {host()} --askpass', f'redis-cli -h {host()} -a "$REDIS_PASSWORD" --no-auth-warning']), 'askpass/env'
def hn_curl(): return pick(['curl -u "$API_USER:$API_PASS" https://api.example.com/v1/items',
                            'curl -H "Authorization: Bearer $TOKEN" https://api.github.com/user',
                            'curl -H "Authorization: Bearer $(gh auth token)" https://api.github.com/user/repos',
                            f'curl --netrc -O https://downloads.{org()}.com/file.iso', f'curl -u {user()} https://{host()}/api',
                            'curl -H "Accept: application/vnd.github+json" https://api.github.com/repos/cli/cli/releases/latest',
                            'curl -H "Authorization: token ${GITHUB_TOKEN}" https://api.github.com/rate_limit']), 'env var / prompt'
def hn_http(): return pick([f'http -a {user()} GET https://{host()}/admin', 'http GET https://api.github.com/user "Authorization:Bearer $GH_TOKEN"']), 'prompt/env'
def hn_wget(): return pick([f'wget --ask-password --user={user()} https://{host()}/backup.tgz', 'wget --password="$DL_PASS" https://example.org/f.zip',
                            'wget https://releases.ubuntu.com/24.04/ubuntu-24.04-desktop-amd64.iso']), 'ask-password'
def hn_git(): return pick([f'git clone https://github.com/{org()}/{repo()}.git', f'git clone git@github.com:{org()}/{repo()}.git',
                           f'git remote set-url origin git@gitlab.com:{org()}/{repo()}.git', f'git clone https://{user()}@bitbucket.org/{org()}/{repo()}.git',
                           f'git show {V.sha1hex()}', f'git cherry-pick {V.sha1hex()[:12]}', f'git reset --hard {V.sha1hex()}',
                           f'git revert {V.sha1hex()[:7]} --no-edit', 'git config --global credential.helper osxkeychain',
                           f'git config --global user.signingkey {V.gpg_fpr()[-16:]}']), 'no token'
def hn_docker(): return pick([f'docker login -u {user()} --password-stdin < ~/.config/docker/pat', f'cat ~/token.txt | docker login ghcr.io -u {user()} --password-stdin',
                              f'docker pull nginx@sha256:{V.sha256hex()}', 'docker run -e POSTGRES_PASSWORD_FILE=/run/secrets/pg -d postgres:16',
                              'docker run -d -e POSTGRES_PASSWORD -p 5432:5432 postgres:16', 'echo "$CR_PAT" | docker login ghcr.io -u USERNAME --password-stdin',
                              f'docker login registry.{org()}.com']), 'stdin/env'
def hn_aws(): return pick(['aws configure set region eu-central-1', 'aws configure --profile prod', 'aws sts get-caller-identity',
                           'export AWS_PROFILE=prod', 'aws sso login --profile dev', 'aws configure set aws_secret_access_key "$AWS_SECRET" --profile ci']), 'no key'
def hn_az(): return pick(['az login --use-device-code', 'az login', f'az login --service-principal -u {V.uuid4()} -p ~/certs/sp.pem --tenant {V.uuid4()}',
                          f'az account set --subscription {V.uuid4()}']), 'no secret'
def hn_gcloud(): return pick([f'gcloud auth activate-service-account --key-file=~/keys/{org()}-sa.json', 'gcloud auth login',
                              f'gcloud config set project {org()}-prod', 'gcloud auth application-default login']), 'key-file path only'
def hn_kubectl(): return pick([f'kubectl create secret generic db --from-file=password=./db-pass.txt -n prod',
                               'kubectl create secret generic db --from-literal=password="$DB_PASS"',
                               "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d",
                               'kubectl create secret tls web-tls --cert=tls.crt --key=tls.key']), 'file/env'
def hn_vault(): return pick(['vault login -method=oidc', 'vault kv get -field=password secret/app/db', 'vault kv put secret/app/db password=@db-pass.txt',
                             'vault write auth/approle/login role_id="$ROLE_ID" secret_id="$SECRET_ID"', 'vault login -method=userpass username=bob',
                             'vault token lookup']), 'no literal'
def hn_heroku(): return pick([f'heroku config:set LOG_LEVEL=debug -a {org()}-web', f'heroku config:get DATABASE_URL -a {org()}-web', 'heroku login']), 'no secret'
def hn_gh(): return pick(['gh auth login --with-token < ~/.config/gh/token.txt', 'gh auth login --web', 'gh auth status', 'gh auth token | pbcopy']), 'file/web'
def hn_npm(): return pick(["npm config set //registry.npmjs.org/:_authToken '${NPM_TOKEN}'", 'npm config set registry https://npm.pkg.github.com', 'npm login',
                           'npm whoami']), 'env ref'
def hn_export(): return pick(['export GITHUB_TOKEN=$(pass show github/token)', 'export OPENAI_API_KEY="$(op read op://Private/OpenAI/credential)"',
                              'export VAULT_TOKEN=$(cat ~/.vault-token)', 'export TOKEN_FILE=~/.config/app/token', 'export HISTCONTROL=ignorespace',
                              "export AWS_SECRET_ACCESS_KEY=$(security find-generic-password -s aws -w)", 'export PASSWORD_STORE_DIR=~/.password-store',
                              'export GPG_TTY=$(tty)', 'export SSH_AUTH_SOCK=$XDG_RUNTIME_DIR/ssh-agent.socket']), 'command substitution'
def hn_sshkeygen(): return pick([f'ssh-keygen -t ed25519 -C "{user()}@laptop" -N "" -f ~/.ssh/id_ci', 'ssh-keygen -lf ~/.ssh/id_ed25519.pub',
                                 'ssh-keygen -t ed25519 -a 100', 'ssh-keygen -R github.com', f'ssh-copy-id -i ~/.ssh/id_ed25519.pub {user()}@{host()}',
                                 'ssh-keyscan github.com >> ~/.ssh/known_hosts']), 'empty -N / no pass'
def hn_openssl(): return pick(['openssl pkcs12 -export -in cert.pem -inkey key.pem -out b.p12 -passout env:P12_PASS',
                               'openssl rsa -in key.enc -out key.pem -passin file:/root/.keypass', 'openssl rand -base64 32',
                               f'openssl x509 -in cert.pem -noout -fingerprint -sha256', 'openssl req -new -newkey rsa:4096 -nodes -keyout k.pem -out r.csr']), 'env:/file:'
def hn_sshpass(): return pick([f'sshpass -f ~/.ssh/.nas_pw ssh {user()}@{host()}', f'SSHPASS="$NAS_PW" sshpass -e ssh {user()}@{host()}']), 'file/env'
def hn_restic(): return pick([f'restic -r sftp:backup@{host()}:/srv/restic --password-file ~/.config/restic/pw backup ~', 'restic snapshots',
                              'export RESTIC_PASSWORD_COMMAND="pass show restic"']), 'password-file'
def hn_mc(): return f'mc alias set myminio https://minio.{org()}.com "$MINIO_ACCESS_KEY" "$MINIO_SECRET_KEY"', 'env'
def hn_smb(): return pick([f'smbclient //{host()}/share -U {user()}', f'smbclient //{host()}/share -A ~/.smbcredentials',
                           f'sudo mount -t cifs //{host()}/media /mnt/media -o credentials=/root/.smbcred,uid=1000']), 'prompt/cred file'
def hn_nmcli(): return pick([f'nmcli --ask dev wifi connect "{V.ssid()}"', 'nmcli dev wifi list', 'nmcli connection show']), 'ask'
def hn_htpasswd(): return pick([f'sudo htpasswd -B /etc/nginx/.htpasswd {user()}', f'pwgen -s 24 1 | sudo htpasswd -i /etc/nginx/.htpasswd {user()}']), 'prompt'
def hn_ldap(): return pick([f'ldapsearch -x -W -D "cn=admin,dc={org()},dc=com" -b "dc={org()},dc=com"', f'ldapsearch -x -y ~/.ldappw -D "cn=admin,dc=x,dc=com" uid=bob']), 'prompt/file'
def hn_ipmi(): return 'ipmitool -I lanplus -H 10.0.9.50 -U ADMIN -E chassis status', 'env'
def hn_sqlplus(): return pick(['sqlplus /nolog', f'sqlplus system@//{host()}:1521/ORCLPDB1', 'sqlplus / as sysdba']), 'prompt'
def hn_pgdump(): return f'pg_dump -h {host()} -U {user()} -d {dbname()} -Fc -f db.dump', 'no pass'
def hn_keytool(): return pick(['keytool -list -v -keystore release.jks', 'keytool -printcert -file cert.pem']), 'prompt'
def hn_zip(): return pick(['zip -e -r secret.zip docs/', '7z a -p archive.7z docs/', 'gpg -c notes.txt', 'gpg --batch --passphrase-file ~/.pp -c notes.txt',
                           f'gpg --recv-keys 0x{V.gpg_fpr()[-16:]}', f'gpg --verify SHA256SUMS.gpg SHA256SUMS', 'unzip archive.zip']), 'prompt/file'
def hn_read(): return pick(['read -s DB_PASS; export DB_PASS', "read -rsp 'Password: ' PW && echo", 'IFS= read -rs TOKEN']), 'read -s'
def hn_sudo(): return pick(['sudo -v', 'echo "$PW" | sudo -S true', 'sudo -k', 'sudo -i']), 'no literal'
def hn_terraform(): return pick(['terraform apply -var-file=secrets.tfvars', 'terraform init -backend-config=backend.hcl']), 'var-file'
def hn_bw(): return pick(['bw unlock --passwordenv BW_PASSWORD', 'bw unlock', 'export BW_SESSION="$(bw unlock --raw)"', 'bw get item github']), 'env/prompt'
def hn_oc(): return pick(['oc login --web https://api.crc.testing:6443', f'oc login -u developer https://api.{org()}.com:6443']), 'prompt'
def hn_rclone(): return pick(['rclone config', 'rclone config create s3remote s3 provider AWS env_auth true', 'rclone sync ~/Photos nas:photos -P']), 'no pass'
def hn_hash(): return pick([f'echo "{V.sha256hex()}  ubuntu-24.04-desktop-amd64.iso" | sha256sum -c', f'sha256sum backup.tar | grep {V.sha256hex()[:16]}',
                            f'b3sum --check <<< "{V.sha256hex()}  file.bin"']), 'checksum'
def hn_security(): return pick(['security add-generic-password -a bob -s github -w', 'pass insert email/work', 'pwgen 20 1', 'secret-tool store --label=nas nas password']), 'prompt'
def hn_uuid(): return pick([f'az vm show --ids /subscriptions/{V.uuid4()}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1',
                            f'virsh start {V.uuid4()}', f'curl https://api.{org()}.com/orders/{V.uuid4()}']), 'uuid id'

SHELL_NEG = [v for k, v in sorted(globals().items()) if k.startswith('hn_')]

def an_mysql():
    line = pick(['SELECT user, host, plugin FROM mysql.user;', "ALTER USER 'app'@'%' PASSWORD EXPIRE;", 'SHOW GRANTS FOR current_user();'])
    return app_history('.mysql_history', line, ['SHOW DATABASES;', 'USE app;'], ['exit'], encode=mysql_hist_enc), 'mysql history'
def an_psql():
    line = pick(['\\password app', 'SELECT usename, valuntil FROM pg_user;', "ALTER ROLE app VALID UNTIL '2025-01-01';"])
    return app_history('.psql_history', line, ['\\dt', '\\l'], ['\\q']), 'psql history'
def an_python():
    line = pick(['client = OpenAI()', 'key = os.environ["OPENAI_API_KEY"]', 'token = getpass.getpass()', f'hashlib.sha256(b"hello").hexdigest()'])
    return app_history('.python_history', line, ['import os', 'import getpass', 'from openai import OpenAI'], ['exit()']), 'python history'
def an_ps():
    line = pick(['$cred = Get-Credential', 'Connect-AzAccount', '$pw = Read-Host -AsSecureString', 'Connect-ExchangeOnline -UserPrincipalName bob@contoso.com'])
    return app_history('AppData/Roaming/Microsoft/Windows/PowerShell/PSReadLine/ConsoleHost_history.txt', line, ['Get-ChildItem', 'Get-Process'], ['exit']), 'PowerShell'
APP_NEG = [an_mysql, an_psql, an_python, an_ps]
