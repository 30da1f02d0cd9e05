"""Positive templates: each returns (home-relative path, content, secret-as-it-appears-in-file)."""
import textwrap, json, base64, string, sys
from vals import *

POS = []
def pos(f):
    POS.append(f)
    return f

def T(text, **kw):
    import sys
    loc = dict(sys._getframe(1).f_locals); loc.update(kw); kw = loc
    text = textwrap.dedent(text).lstrip('\n')
    for k, v in kw.items():
        text = text.replace('@@%s@@' % k, str(v))
    assert '@@' not in text, text
    return text

def proj():
    return R.choice(['src', 'code', 'projects', 'work', 'dev', 'git']) + '/' + R.choice(
        ['webshop', 'billing-api', 'infra', 'dashboard', 'mobile-app', 'notes-sync', 'ml-pipeline', 'crm', 'blog'])

def q(v, style=None):
    style = style or R.choice(['', '"', "'"])
    return style + v + style

def xml_safe_pw():
    return any_pw(safe=True)

# ======================= CI/CD & dev tooling =======================
@pos
def gh_workflow():
    c = R.randrange(4)
    name = R.choice(['deploy', 'release', 'ci', 'publish', 'nightly'])
    path = '%s/.github/workflows/%s.%s' % (proj(), name, R.choice(['yml', 'yaml']))
    if c == 0:
        s = npm_token()
        line = '      NODE_AUTH_TOKEN: %s' % q(s)
        extra = '    - run: npm publish\n'
    elif c == 1:
        s = docker_pat()
        line = '          password: %s' % q(s)
        extra = ''
    elif c == 2:
        s = gh_classic() if R.random() < .5 else gh_finegrained()
        line = '        run: curl -sS -H "Authorization: token %s" https://api.github.com/repos/acme/app/dispatches -d \'{"event_type":"go"}\'' % s
        extra = ''
    else:
        s = aws_secret()
        line = '      AWS_SECRET_ACCESS_KEY: %s' % q(s)
        extra = ''
    body = T('''
        name: @@name@@
        on:
          push:
            branches: [main]
        jobs:
          build:
            runs-on: ubuntu-latest
            env:
              AWS_REGION: eu-west-1
        @@line@@
            steps:
              - uses: actions/checkout@v4
              - uses: docker/login-action@v3
                with:
                  username: acmebot
        ''', name=name, line=line if c in (0, 3) else '      CI: "true"')
    if c == 1:
        body += line + '\n'
    if c == 2:
        body += '      - name: trigger\n' + line + '\n'
    body += extra
    return path, body, s

@pos
def gitlab_ci():
    c = R.randrange(3)
    s = [gitlab_pat, lambda: any_pw(), sonar][c]()
    key = ['DEPLOY_TOKEN', 'POSTGRES_PASSWORD', 'SONAR_TOKEN'][c]
    return proj() + '/.gitlab-ci.yml', T('''
        stages: [test, deploy]
        variables:
          POSTGRES_DB: app_test
          POSTGRES_USER: runner
          @@key@@: @@val@@
          GIT_DEPTH: "10"
        test:
          image: python:3.12
          services: [postgres:16]
          script:
            - pip install -r requirements.txt
            - pytest -q
        ''', key=key, val=q(s, R.choice(['"', "'"]) if c == 1 else None)), s

@pos
def jenkins_casc():
    s = R.choice([gh_classic, lambda: any_pw(), slack_bot])()
    return '.jenkins/casc/jenkins.yaml', T('''
        jenkins:
          systemMessage: "Build box"
        credentials:
          system:
            domainCredentials:
              - credentials:
                  - string:
                      scope: GLOBAL
                      id: "deploy-token"
                      secret: "@@s@@"
                      description: "deploy"
        ''', s=s), s

@pos
def jenkins_credentials_xml():
    if R.random() < 0.5:
        pem = privkey_pem(R.choice(['rsa-pkcs1', 'ed25519-openssh']))
        first = pem.splitlines()[0]
        return '.jenkins/credentials.xml', T('''
            <?xml version='1.1' encoding='UTF-8'?>
            <com.cloudbees.plugins.credentials.SystemCredentialsProvider plugin="credentials@1311.vcf0a_900b_37c">
              <domainCredentialsMap class="hudson.util.CopyOnWriteMap$Hash">
                <entry>
                  <com.cloudbees.plugins.credentials.domains.Domain><specifications/></com.cloudbees.plugins.credentials.domains.Domain>
                  <java.util.concurrent.CopyOnWriteArrayList>
                    <com.cloudbees.jenkins.plugins.sshcredentials.impl.BasicSSHUserPrivateKey plugin="ssh-credentials@308.ve4497b_ccd8f4">
                      <scope>GLOBAL</scope>
                      <id>git-deploy</id>
                      <username>git</username>
                      <privateKeySource class="com.cloudbees.jenkins.plugins.sshcredentials.impl.BasicSSHUserPrivateKey$DirectEntryPrivateKeySource">
                        <privateKey>@@pem@@</privateKey>
                      </privateKeySource>
                    </com.cloudbees.jenkins.plugins.sshcredentials.impl.BasicSSHUserPrivateKey>
                  </java.util.concurrent.CopyOnWriteArrayList>
                </entry>
              </domainCredentialsMap>
            </com.cloudbees.plugins.credentials.SystemCredentialsProvider>
            ''', pem=pem.rstrip()), first
    s = xml_safe_pw()
    return '.jenkins/credentials.xml', T('''
        <?xml version='1.1' encoding='UTF-8'?>
        <com.cloudbees.plugins.credentials.SystemCredentialsProvider plugin="credentials@1311.vcf0a_900b_37c">
          <domainCredentialsMap class="hudson.util.CopyOnWriteMap$Hash">
            <entry>
              <java.util.concurrent.CopyOnWriteArrayList>
                <com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>
                  <scope>GLOBAL</scope>
                  <id>nexus</id>
                  <username>deployer</username>
                  <password>@@s@@</password>
                </com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>
              </java.util.concurrent.CopyOnWriteArrayList>
            </entry>
          </domainCredentialsMap>
        </com.cloudbees.plugins.credentials.SystemCredentialsProvider>
        ''', s=s), s

@pos
def jenkins_job_config():
    c = R.randrange(2)
    if c == 0:
        s = R.choice([gh_classic, slack_bot, databricks])()
        inner = '<hudson.model.StringParameterDefinition>\n          <name>API_TOKEN</name>\n          <defaultValue>%s</defaultValue>\n        </hudson.model.StringParameterDefinition>' % s
        cmd = './deploy.sh'
    else:
        s = xml_safe_pw()
        inner = ''
        cmd = 'curl -fsS -u admin:%s https://nexus.corp.local/service/rest/v1/components?repository=releases -F raw.asset1=@dist/app.tgz' % s
    return '.jenkins/jobs/deploy-prod/config.xml', T('''
        <?xml version='1.1' encoding='UTF-8'?>
        <project>
          <description>prod deploy</description>
          <properties>
            <hudson.model.ParametersDefinitionProperty>
              <parameterDefinitions>
                @@inner@@
              </parameterDefinitions>
            </hudson.model.ParametersDefinitionProperty>
          </properties>
          <builders>
            <hudson.tasks.Shell>
              <command>@@cmd@@</command>
            </hudson.tasks.Shell>
          </builders>
        </project>
        ''', inner=inner, cmd=cmd), s

@pos
def circleci():
    s = R.choice([docker_pat, lambda: any_pw(), do_token, gh_classic])()
    return proj() + '/.circleci/config.yml', T('''
        version: 2.1
        jobs:
          build:
            docker:
              - image: cimg/node:20.11
                auth:
                  username: acmeci
                  password: @@s@@
            steps:
              - checkout
              - run: npm ci && npm test
        workflows:
          main:
            jobs: [build]
        ''', s=q(s, R.choice(['"', "'"]))), s

@pos
def travis():
    c = R.randrange(2)
    if c == 0:
        s = R.choice([npm_token, gh_classic])()
        return proj() + '/.travis.yml', T('''
            language: node_js
            node_js: [18]
            deploy:
              provider: npm
              email: dev@acme.io
              api_key: "@@s@@"
              on:
                tags: true
            '''), s
    s = R.choice([aws_secret, lambda: rand_pw(20, safe=True)])()
    return proj() + '/.travis.yml', T('''
        language: python
        python: ["3.11"]
        env:
          global:
            - AWS_ACCESS_KEY_ID=@@ak@@
            - AWS_SECRET_ACCESS_KEY=@@s@@
        script: pytest
        ''', ak=aws_akid(), s=s), s

@pos
def makefile():
    c = R.randrange(3)
    if c == 0:
        s = any_pw(safe=True)
        line = 'REGISTRY_PASSWORD ?= %s' % s
    elif c == 1:
        s = api_token_any()
        line = 'API_TOKEN := %s' % s
    else:
        s = any_pw(safe=True)
        line = '\tmysql -h db.internal -u deploy -p%s app < schema.sql' % s
    pre = line + '\n' if c < 2 else ''
    rule = '' if c < 2 else line + '\n'
    return proj() + '/Makefile', T('''
        .PHONY: build push migrate
        IMAGE := registry.acme.io/app
        @@pre@@
        build:
        \tdocker build -t $(IMAGE):latest .

        push: build
        \tdocker push $(IMAGE):latest

        migrate:
        ''', pre=pre.rstrip('\n')).replace('\\t', '\t') + rule, s

@pos
def dockerfile():
    c = R.randrange(3)
    if c == 0:
        s = npm_token(); line = 'ENV NPM_TOKEN=%s' % s
    elif c == 1:
        s = any_pw(safe=True); line = 'ARG DB_PASSWORD=%s' % s
    else:
        s = R.choice([openai_key, stripe_live, sendgrid])(); line = 'ENV API_KEY="%s"' % s
    return proj() + '/' + R.choice(['Dockerfile', 'docker/Dockerfile.prod', 'Containerfile']), T('''
        FROM node:20-alpine AS build
        WORKDIR /app
        @@line@@
        COPY package*.json ./
        RUN npm ci --omit=dev
        COPY . .
        CMD ["node", "server.js"]
        ''', line=line), s

@pos
def compose_override():
    s = R.choice([lambda: any_pw(), aws_secret, stripe_live])()
    key = R.choice(['POSTGRES_PASSWORD', 'MYSQL_ROOT_PASSWORD', 'SECRET_TOKEN', 'MINIO_ROOT_PASSWORD'])
    style = R.randrange(2)
    env = ('      %s: %s' % (key, q(s, R.choice(['"', "'"])))) if style == 0 else ('      - %s=%s' % (key, s))
    return proj() + '/' + R.choice(['docker-compose.override.yml', 'compose.override.yaml', 'docker-compose.local.yml']), T('''
        services:
          db:
            image: postgres:16
            environment:
        @@env@@
            ports:
              - "5432:5432"
        ''', env=env), s

@pos
def helm_values():
    s = R.choice([lambda: any_pw(), slack_webhook, lambda: hexs(64)])()
    return proj() + '/charts/app/' + R.choice(['values.yaml', 'values-prod.yaml']), T('''
        replicaCount: 2
        image:
          repository: registry.acme.io/app
          tag: "1.8.3"
        postgresql:
          auth:
            username: app
            password: @@s@@
            database: app
        ingress:
          enabled: true
        ''', s=q(s, R.choice(['"', "'"]))), s

@pos
def tfvars():
    c = R.randrange(3)
    if c == 0:
        s = any_pw(); line = 'db_password = "%s"' % s.replace('\\', '')
    elif c == 1:
        s = do_token(); line = 'do_token    = "%s"' % s
    elif R.random() < .5:
        s = rs(40, B64URL); line = 'cloudflare_api_token = "%s"' % s
    else:
        s = R.choice([tfc_token, gh_classic])(); line = 'github_token = "%s"' % s
    return 'infra/' + R.choice(['prod', 'staging', 'env/prod']) + '/' + R.choice(['terraform.tfvars', 'secrets.auto.tfvars', 'prod.tfvars']), T('''
        region        = "eu-central-1"
        instance_type = "t3.medium"
        @@line@@
        tags = {
          owner = "platform"
        }
        ''', line=line), s

@pos
def tfstate():
    c = R.randrange(3)
    if c == 0:
        s = aws_secret()
        res = {'mode': 'managed', 'type': 'aws_iam_access_key', 'name': 'ci', 'provider': 'provider["registry.terraform.io/hashicorp/aws"]',
               'instances': [{'schema_version': 0, 'attributes': {'id': aws_akid(), 'user': 'ci-bot', 'secret': s,
                              'ses_smtp_password_v4': None, 'status': 'Active', 'create_date': '2024-03-01T10:00:00Z'}, 'sensitive_attributes': []}]}
    elif c == 1:
        s = any_pw()
        res = {'mode': 'managed', 'type': 'aws_db_instance', 'name': 'main', 'provider': 'provider["registry.terraform.io/hashicorp/aws"]',
               'instances': [{'schema_version': 2, 'attributes': {'id': 'db-' + rs(26, UPNUM), 'engine': 'postgres', 'username': 'app',
                              'password': s, 'port': 5432, 'arn': 'arn:aws:rds:eu-west-1:%d:db:main' % R.randint(10**11, 10**12)}}]}
    else:
        s = rand_pw(R.randint(16, 32), alpha=ALNUM + '!#$%&*()-_=+[]{}<>:?')
        res = {'mode': 'managed', 'type': 'random_password', 'name': 'db', 'provider': 'provider["registry.terraform.io/hashicorp/random"]',
               'instances': [{'schema_version': 3, 'attributes': {'id': 'none', 'length': len(s), 'special': True,
                              'result': s, 'bcrypt_hash': '$2a$10$' + rs(53, ALNUM + './')}, 'sensitive_attributes': []}]}
    st = {'version': 4, 'terraform_version': '1.7.4', 'serial': R.randint(1, 300), 'lineage': uid(), 'outputs': {}, 'resources': [res], 'check_results': None}
    txt = json.dumps(st, indent=2) + '\n'
    enc = json.dumps(s)[1:-1]
    return 'infra/' + R.choice(['prod', 'legacy']) + '/terraform.tfstate' + R.choice(['', '.backup']), txt, enc

@pos
def pulumi_stack():
    s = R.choice([lambda: any_pw(safe=True), stripe_live, aws_secret])()
    return proj() + '/Pulumi.' + R.choice(['dev', 'prod']) + '.yaml', T('''
        config:
          aws:region: us-east-1
          app:dbUser: app
          app:dbPassword: @@s@@
          app:replicas: "3"
        ''', s=q(s, R.choice(['"', "'"]))), s

@pos
def serverless():
    s = R.choice([stripe_live, sendgrid, lambda: any_pw(), mailgun])()
    key = R.choice(['STRIPE_SECRET', 'SENDGRID_KEY', 'DB_PASSWORD', 'MAILGUN_KEY'])
    return proj() + '/serverless.yml', T('''
        service: billing
        provider:
          name: aws
          runtime: nodejs20.x
          environment:
            NODE_ENV: production
            @@k@@: @@s@@
        functions:
          webhook:
            handler: src/webhook.handler
        ''', k=key, s=q(s, R.choice(['"', "'"]))), s

@pos
def envrc():
    s = R.choice([aws_secret, lambda: any_pw(), hf_token, anthropic_key, vault_token])()
    key = R.choice(['AWS_SECRET_ACCESS_KEY', 'PGPASSWORD', 'HF_TOKEN', 'ANTHROPIC_API_KEY', 'VAULT_TOKEN'])
    return proj() + '/.envrc', T('''
        use nix
        layout python3
        export AWS_PROFILE=dev
        export @@k@@=@@s@@
        dotenv_if_exists .env.local
        ''', k=key, s="'%s'" % s), s

@pos
def vagrantfile():
    c = R.randrange(2)
    if c == 0:
        s = aws_secret()
        line = '    aws.secret_access_key = "%s"' % s
    else:
        s = any_pw(safe=True)
        line = '  config.ssh.password = "%s"' % s
    return proj() + '/Vagrantfile', T('''
        Vagrant.configure("2") do |config|
          config.vm.box = "ubuntu/jammy64"
          config.vm.provider :aws do |aws, override|
            aws.access_key_id = "@@ak@@"
        @@line@@
            aws.region = "eu-west-1"
          end
        end
        ''', ak=aws_akid(), line=line), s

@pos
def gradle_user_props():
    s = any_pw()
    return '.gradle/gradle.properties', T('''
        org.gradle.jvmargs=-Xmx4g
        signing.keyId=@@kid@@
        signing.password=@@s@@
        signing.secretKeyRingFile=/home/me/.gnupg/secring.gpg
        ossrhUsername=acme
        ''', kid=hexs(8).upper(), s=s), s

@pos
def yarnrc():
    s = npm_token()
    return proj() + '/.yarnrc.yml', T('''
        nodeLinker: node-modules
        npmScopes:
          acme:
            npmRegistryServer: "https://npm.pkg.github.com"
            npmAuthToken: "@@s@@"
        '''), s

@pos
def gitconfig_url():
    c = R.randrange(2)
    s = gitlab_pat() if c == 0 else gh_classic()
    host = 'gitlab.com' if c == 0 else 'github.com'
    return '.gitconfig', T('''
        [user]
        \tname = Dana Smith
        \temail = dana@example.org
        [url "https://oauth2:@@s@@@@@h@@/"]
        \tinsteadOf = https://@@h@@/
        [pull]
        \trebase = true
        ''', s=s, h=host).replace('\\t', '\t'), s

@pos
def composer_auth():
    s = gh_classic()
    return '.config/composer/auth.json', json.dumps({'github-oauth': {'github.com': s}, 'http-basic': {}}, indent=4) + '\n', s

@pos
def cargo_creds():
    s = cratesio()
    return '.cargo/credentials.toml', '[registry]\ntoken = "%s"\n' % s, s

@pos
def tf_credentials():
    s = tfc_token()
    return '.terraform.d/credentials.tfrc.json', json.dumps({'credentials': {'app.terraform.io': {'token': s}}}, indent=2) + '\n', s

@pos
def m2_settings():
    s = xml_safe_pw()
    return '.m2/settings.xml', T('''
        <settings>
          <servers>
            <server>
              <id>nexus-releases</id>
              <username>deploy</username>
              <password>@@s@@</password>
            </server>
          </servers>
        </settings>
        '''), s

@pos
def nuget_config():
    s = xml_safe_pw() if R.random() < .5 else gh_classic()
    return '.nuget/NuGet/NuGet.Config', T('''
        <?xml version="1.0" encoding="utf-8"?>
        <configuration>
          <packageSources>
            <add key="github" value="https://nuget.pkg.github.com/acme/index.json" />
          </packageSources>
          <packageSourceCredentials>
            <github>
              <add key="Username" value="acme-ci" />
              <add key="ClearTextPassword" value="@@s@@" />
            </github>
          </packageSourceCredentials>
        </configuration>
        '''), s

@pos
def pip_conf():
    s = rand_pw(R.randint(12, 30), safe=True)
    return '.config/pip/pip.conf', T('''
        [global]
        index-url = https://deploy:@@s@@@pypi.corp.example.com/simple
        timeout = 60
        '''), s

@pos
def rclone_conf():
    s = aws_secret()
    return '.config/rclone/rclone.conf', T('''
        [b2backup]
        type = s3
        provider = Wasabi
        access_key_id = @@ak@@
        secret_access_key = @@s@@
        endpoint = s3.wasabisys.com
        ''', ak=rs(20, UPNUM)), s

@pos
def ansible_inventory():
    s = any_pw(safe=True)
    k = R.choice(['ansible_password', 'ansible_become_pass', 'ansible_ssh_pass'])
    return 'ansible/inventory/' + R.choice(['hosts.ini', 'production']), T('''
        [web]
        web1.corp.local ansible_host=10.0.4.11
        web2.corp.local ansible_host=10.0.4.12

        [web:vars]
        ansible_user=deploy
        @@k@@=@@s@@
        '''), s

@pos
def wp_config():
    c = R.randrange(2)
    s = any_pw(safe=True) if c == 0 else rs(64, ALNUM + '!#$%&()*+,-./:;<=>?@[]^_{|}~ ')
    s = s.replace("'", '')
    lines = ["define( 'DB_NAME', 'wordpress' );", "define( 'DB_USER', 'wp' );"]
    if c == 0:
        lines.append("define( 'DB_PASSWORD', '%s' );" % s)
    else:
        lines.append("define( 'DB_PASSWORD', getenv('WP_DB_PASS') );")
        lines.append("define( 'AUTH_KEY',         '%s' );" % s)
    return 'www/blog/wp-config.php', '<?php\n' + '\n'.join(lines) + "\n$table_prefix = 'wp_';\n", s

@pos
def wireguard():
    s = wg_key()
    return R.choice(['Documents/vpn/wg0.conf', '.config/wireguard/home.conf', 'Downloads/peer3.conf']), T('''
        [Interface]
        PrivateKey = @@s@@
        Address = 10.8.0.3/24
        DNS = 1.1.1.1

        [Peer]
        PublicKey = @@pk@@
        Endpoint = vpn.example.net:51820
        AllowedIPs = 0.0.0.0/0
        ''', pk=wg_key()), s

@pos
def ovpn_inline_key():
    pem = privkey_pem(R.choice(['rsa-pkcs8', 'ec']))
    return R.choice(['Documents/vpn/office.ovpn', 'Downloads/client.ovpn']), T('''
        client
        dev tun
        proto udp
        remote vpn.example.net 1194
        <ca>
        @@ca@@
        </ca>
        <key>
        @@k@@
        </key>
        ''', ca=cert_pem().rstrip(), k=pem.rstrip()), pem.splitlines()[0]

@pos
def vault_token_file():
    s = vault_token()
    return '.vault-token', s, s

# ======================= Desktop / IDE / app configs =======================
@pos
def datagrip():
    s = rand_pw(R.randint(10, 24), safe=True)
    return proj() + '/.idea/dataSources.xml', T('''
        <?xml version="1.0" encoding="UTF-8"?>
        <project version="4">
          <component name="DataSourceManagerImpl" format="xml" multifile-model="true">
            <data-source source="LOCAL" name="prod@db" uuid="@@u@@">
              <driver-ref>postgresql</driver-ref>
              <synchronize>true</synchronize>
              <jdbc-driver>org.postgresql.Driver</jdbc-driver>
              <jdbc-url>jdbc:postgresql://db.prod.internal:5432/app?user=report&amp;password=@@s@@</jdbc-url>
              <working-dir>$ProjectFileDir$</working-dir>
            </data-source>
          </component>
        </project>
        ''', u=uid()), s

@pos
def dbeaver_creds_plain():
    s = any_pw()
    cid = 'postgres-jdbc-%s-%s' % (hexs(11), hexs(16))
    return '.local/share/DBeaverData/workspace6/General/.dbeaver/credentials-config.json', json.dumps(
        {cid: {'#connection': {'user': 'analyst', 'password': s}}}) + '\n', json.dumps(s)[1:-1]

@pos
def dbeaver_datasources():
    s = any_pw()
    cid = 'mysql8-%s-%s' % (hexs(11), hexs(16))
    d = {'folders': {}, 'connections': {cid: {'provider': 'mysql', 'driver': 'mysql8', 'name': 'shop prod', 'save-password': True,
         'configuration': {'host': 'mysql.prod.local', 'port': '3306', 'database': 'shop', 'url': 'jdbc:mysql://mysql.prod.local:3306/shop',
                           'type': 'prod', 'auth-model': 'native', 'user': 'shop_ro', 'password': s}}}}
    return '.local/share/DBeaverData/workspace6/General/.dbeaver/data-sources.json', json.dumps(d, indent='\t') + '\n', json.dumps(s)[1:-1]

@pos
def filezilla_sitemanager():
    pw = any_pw(safe=True)
    s = base64.b64encode(pw.encode()).decode()
    return '.config/filezilla/sitemanager.xml', T('''
        <?xml version="1.0" encoding="UTF-8" standalone="yes" ?>
        <FileZilla3 version="3.66.4" platform="*nix">
            <Servers>
                <Server>
                    <Host>ftp.example-hosting.net</Host>
                    <Port>21</Port>
                    <Protocol>0</Protocol>
                    <Type>0</Type>
                    <User>site42</User>
                    <Pass encoding="base64">@@s@@</Pass>
                    <Logontype>1</Logontype>
                    <Name>hosting</Name>
                </Server>
            </Servers>
        </FileZilla3>
        '''), s

@pos
def filezilla_recent():
    pw = any_pw(safe=True)
    s = base64.b64encode(pw.encode()).decode()
    return '.config/filezilla/recentservers.xml', T('''
        <?xml version="1.0" encoding="UTF-8" standalone="yes" ?>
        <FileZilla3 version="3.66.4" platform="*nix">
            <RecentServers>
                <Server>
                    <Host>203.0.113.20</Host>
                    <Port>22</Port>
                    <Protocol>1</Protocol>
                    <Type>0</Type>
                    <User>root</User>
                    <Pass encoding="base64">@@s@@</Pass>
                    <Logontype>1</Logontype>
                </Server>
            </RecentServers>
        </FileZilla3>
        '''), s

@pos
def winscp():
    pw = any_pw(safe=True)
    user, host = 'deploy', 'files.example.org'
    s = winscp_obfuscate(pw, user, host)
    return R.choice(['.wine/drive_c/users/me/AppData/Roaming/WinSCP.ini', 'Documents/WinSCP.ini']), T('''
        [Sessions\\deploy@files.example.org]
        HostName=@@h@@
        UserName=@@u@@
        Password=@@s@@
        PortNumber=22
        FSProtocol=2

        [Configuration\\Interface]
        RandomSeedFile=%APPDATA%\\winscp.rnd
        ''', h=host, u=user).replace('\\\\', '\\'), s

@pos
def remmina():
    s = b64(R.choice([16, 24, 32]))
    return '.local/share/remmina/group_rdp_office_%s.remmina' % rs(6, LOWNUM), T('''
        [remmina]
        name=office
        protocol=RDP
        server=10.20.0.5
        username=jdoe
        domain=CORP
        password=@@s@@
        colordepth=32
        '''), s

@pos
def mail_rc():
    c = R.randrange(4)
    s = any_pw(safe=True)
    if c == 0:
        return '.msmtprc', T('''
            defaults
            auth on
            tls on
            account work
            host smtp.office365.com
            port 587
            from me@corp.example
            user me@corp.example
            password @@s@@
            account default : work
            '''), s
    if c == 1:
        return '.muttrc', T('''
            set from = "me@example.org"
            set imap_user = "me@example.org"
            set imap_pass = "@@s@@"
            set folder = "imaps://imap.example.org:993"
            set spoolfile = "+INBOX"
            '''), s
    if c == 2:
        return '.offlineimaprc', T('''
            [general]
            accounts = Main
            [Account Main]
            localrepository = Local
            remoterepository = Remote
            [Repository Remote]
            type = IMAP
            remotehost = imap.example.org
            remoteuser = me@example.org
            remotepass = @@s@@
            '''), s
    return '.fetchmailrc', T('''
        set daemon 300
        poll pop.example.org protocol POP3
          user "me@example.org" there with password "@@s@@" is me here
          ssl
        '''), s

@pos
def s3cfg():
    s = aws_secret()
    return '.s3cfg', T('''
        [default]
        access_key = @@ak@@
        secret_key = @@s@@
        host_base = s3.amazonaws.com
        host_bucket = %(bucket)s.s3.amazonaws.com
        use_https = True
        ''', ak=aws_akid()), s

@pos
def boto():
    c = R.randrange(2)
    if c == 0:
        s = aws_secret()
        return '.boto', T('''
            [Credentials]
            aws_access_key_id = @@ak@@
            aws_secret_access_key = @@s@@
            [Boto]
            https_validate_certificates = True
            ''', ak=aws_akid()), s
    s = google_refresh()
    return '.boto', T('''
        [Credentials]
        gs_oauth2_refresh_token = @@s@@
        [GSUtil]
        default_project_id = my-proj-123
        '''), s

@pos
def gcloud_adc():
    c = R.randrange(2)
    if c == 0:
        s = google_refresh()
    else:
        s = google_oauth_secret()
    d = {'account': '', 'client_id': google_client_id(), 'client_secret': google_oauth_secret() if c == 0 else s,
         'refresh_token': s if c == 0 else google_refresh(), 'type': 'authorized_user', 'universe_domain': 'googleapis.com'}
    if c == 1:
        d['client_secret'] = s
    return R.choice(['.config/gcloud/application_default_credentials.json',
                     '.config/gcloud/legacy_credentials/me@example.org/adc.json']), json.dumps(d, indent=2) + '\n', s

@pos
def gcloud_oauth_client():
    s = google_oauth_secret()
    d = {'installed': {'client_id': google_client_id(), 'project_id': 'scripts-%d' % R.randint(1000, 9999),
                       'auth_uri': 'https://accounts.google.com/o/oauth2/auth', 'token_uri': 'https://oauth2.googleapis.com/token',
                       'client_secret': s, 'redirect_uris': ['http://localhost']}}
    return R.choice(['Downloads/client_secret_%d.json' % R.randint(10**11, 10**12), proj() + '/credentials.json']), json.dumps(d) + '\n', s

@pos
def hub_config():
    s = gh_classic() if R.random() < .6 else hexs(40)
    return '.config/hub', T('''
        github.com:
        - user: dsmith
          oauth_token: @@s@@
          protocol: https
        '''), s

@pos
def gh_hosts():
    s = gh_oauth()
    return '.config/gh/hosts.yml', T('''
        github.com:
            users:
                dsmith:
                    oauth_token: @@s@@
            git_protocol: ssh
            oauth_token: @@s@@
            user: dsmith
        '''), s

@pos
def docker_config():
    user = R.choice(['dsmith', 'acmeci', 'ops'])
    pw = R.choice([docker_pat, lambda: any_pw(safe=True), gh_classic])()
    s = base64.b64encode(('%s:%s' % (user, pw)).encode()).decode()
    reg = R.choice(['https://index.docker.io/v1/', 'ghcr.io', 'registry.gitlab.com', '123456789012.dkr.ecr.eu-west-1.amazonaws.com'])
    return '.docker/config.json', json.dumps({'auths': {reg: {'auth': s}}, 'currentContext': 'default'}, indent='\t') + '\n', s

@pos
def kubeconfig():
    c = R.randrange(3)
    if c == 0:
        s = k8s_sa_jwt(); user = '    token: ' + s
    elif c == 1:
        s = base64.b64encode(privkey_pem('ec').encode()).decode()
        user = '    client-certificate-data: %s\n    client-key-data: %s' % (base64.b64encode(cert_pem().encode()).decode(), s)
    else:
        s = 'kubeconfig-u-%s:%s' % (rs(5, LOWNUM), rs(54, LOWNUM))  # rancher style token
        user = '    token: ' + s
    ca = base64.b64encode(cert_pem().encode()).decode()
    return R.choice(['.kube/config', '.kube/config-prod', 'Downloads/kubeconfig.yaml']), T('''
        apiVersion: v1
        kind: Config
        clusters:
        - cluster:
            certificate-authority-data: @@ca@@
            server: https://k8s.prod.internal:6443
          name: prod
        contexts:
        - context:
            cluster: prod
            user: deployer
          name: prod
        current-context: prod
        users:
        - name: deployer
          user:
        @@u@@
        ''', ca=ca, u=user), s

@pos
def stray_private_key():
    kind = R.choice(['ed25519-openssh', 'rsa-openssh', 'rsa-pkcs1', 'ec', 'rsa-pkcs8'])
    pem = privkey_pem(kind)
    c = R.randrange(4)
    first = pem.splitlines()[0]
    if c == 0:
        return R.choice(['Downloads/id_ed25519', 'Downloads/id_rsa (1)', 'Desktop/server_key']), pem, first
    if c == 1:
        return 'Documents/notes/%s.md' % R.choice(['servers', 'homelab', 'onboarding']), (
            '# Homelab\n\nSSH into the NAS with this key (TODO: move to vault):\n\n```\n' + pem + '```\n\nPorts: 22, 443\n'), first
    if c == 2:
        return R.choice(['Desktop/key.txt', 'Documents/backup/keys.txt']), 'prod bastion key\n\n' + pem + '\n', first
    d = {'name': 'bastion', 'user': 'ec2-user', 'private_key': pem}
    return 'Documents/exports/bastion.json', json.dumps(d, indent=2) + '\n', json.dumps(first)[1:-1]

@pos
def gpg_secret_export():
    arm = pgp_secret()
    return R.choice(['Documents/backup/secret-key.asc', 'gpg-backup/private.asc', 'Desktop/0x%s-sec.asc' % hexs(16).upper()]), arm, '-----BEGIN PGP PRIVATE KEY BLOCK-----'

@pos
def keepass_csv():
    s = any_pw()
    s2 = s.replace('"', '')
    return R.choice(['Documents/keepass-export.csv', 'Desktop/Passwords.csv']), T('''
        "Group","Title","Username","Password","URL","Notes","TOTP","Icon","Last Modified","Created"
        "Root/Internet","Forum","dana_s","@@s@@","https://forum.example.net","","","0","2024-05-11T09:12:44Z","2021-02-01T10:00:00Z"
        "Root/Email","Webmail","dana@example.org","@@s2@@","https://mail.example.org","","","19","2024-06-01T09:12:44Z","2020-01-01T10:00:00Z"
        ''', s=s2, s2=rand_pw(14, safe=True)), s2

@pos
def chrome_csv():
    s = any_pw(safe=R.random() < .5)
    s2 = s.replace('"', '')
    cell = '"%s"' % s2 if any(ch in s2 for ch in ',;') or R.random() < .3 else s2
    return R.choice(['Downloads/Chrome Passwords.csv', 'Downloads/passwords.csv', 'Documents/Microsoft Edge Passwords.csv']), T('''
        name,url,username,password,note
        accounts.example.com,https://accounts.example.com/signin,dana@example.org,@@c@@,
        shop.example.net,https://shop.example.net/login,dana,@@o@@,old account
        ''', c=cell, o=rand_pw(12, safe=True)), s2

@pos
def bitwarden_json():
    s = any_pw()
    d = {'encrypted': False, 'folders': [], 'items': [{'id': uid(), 'organizationId': None, 'folderId': None, 'type': 1, 'reprompt': 0,
         'name': 'Bank', 'notes': None, 'favorite': False,
         'login': {'uris': [{'match': None, 'uri': 'https://bank.example.com'}], 'username': 'dana', 'password': s, 'totp': None},
         'collectionIds': None}]}
    return 'Downloads/bitwarden_export_%d.json' % R.randint(20230101000000, 20241231000000), json.dumps(d, indent=2) + '\n', json.dumps(s)[1:-1]

@pos
def vscode_settings():
    s = any_pw(safe=True)
    d = {'editor.fontSize': 14, 'sqltools.connections': [{'previewLimit': 50, 'server': 'localhost', 'port': 5432, 'driver': 'PostgreSQL',
         'name': 'local', 'database': 'app', 'username': 'app', 'password': s}]}
    return '.config/Code/User/settings.json', json.dumps(d, indent=4) + '\n', s

@pos
def ai_tool_config():
    c = R.randrange(3)
    if c == 0:
        s = anthropic_key()
        return '.config/aichat/config.yaml', 'model: claude:claude-3-5-sonnet\nclients:\n- type: claude\n  api_key: %s\n' % s, s
    if c == 1:
        s = openai_key()
        return '.continue/config.json', json.dumps({'models': [{'title': 'GPT-4o', 'provider': 'openai', 'model': 'gpt-4o', 'apiKey': s}]}, indent=2) + '\n', s
    s = google_api()
    return '.config/llm/keys.json', json.dumps({'gemini': s}, indent=2) + '\n', s

@pos
def jupyter_nb():
    s = R.choice([openai_key, hf_token, anthropic_key])()
    src = ['import os\n', 'os.environ["OPENAI_API_KEY"] = "%s"\n' % s, 'client = OpenAI()']
    nb = {'cells': [{'cell_type': 'code', 'execution_count': 1, 'metadata': {}, 'outputs': [], 'source': src}],
          'metadata': {'kernelspec': {'name': 'python3', 'display_name': 'Python 3'}}, 'nbformat': 4, 'nbformat_minor': 5}
    return 'notebooks/%s.ipynb' % R.choice(['explore', 'Untitled1', 'rag-test']), json.dumps(nb, indent=1) + '\n', s

# ======================= Languages / frameworks =======================
@pos
def django_settings():
    s = django_key()
    qt = R.choice(['"', "'"])
    s = s.replace(qt, '')
    return proj() + '/' + R.choice(['mysite', 'config', 'backend']) + '/settings.py', T('''
        from pathlib import Path
        BASE_DIR = Path(__file__).resolve().parent.parent
        # SECURITY WARNING: keep the secret key used in production secret!
        SECRET_KEY = @@s@@
        DEBUG = False
        ALLOWED_HOSTS = ["app.example.com"]
        ''', s=qt + s + qt), s

@pos
def rails_secrets_yml():
    s = rails_skb()
    return proj() + '/config/secrets.yml', T('''
        development:
          secret_key_base: @@d@@
        production:
          secret_key_base: @@s@@
        ''', d='<%= ENV["DEV_SECRET"] %>'.replace('"', "'"), s=s), s

@pos
def rails_master_key():
    s = rails_master()
    return proj() + '/config/master.key', s, s

@pos
def rails_database_yml():
    s = any_pw(safe=True)
    return proj() + '/config/database.yml', T('''
        default: &default
          adapter: postgresql
          encoding: unicode
          pool: 5
        production:
          <<: *default
          database: app_production
          username: app
          password: @@s@@
          host: db.prod.internal
        ''', s=q(s)).replace('<<: *default', '<<: *default'), s

@pos
def laravel_env():
    s = laravel_key()
    return proj() + '/.env', T('''
        APP_NAME=Shop
        APP_ENV=production
        APP_KEY=@@s@@
        APP_DEBUG=false
        APP_URL=https://shop.example.com
        DB_CONNECTION=mysql
        DB_HOST=127.0.0.1
        '''), s

@pos
def spring_yml():
    c = R.randrange(2)
    s = any_pw() if c == 0 else R.choice([lambda: b64(48), lambda: hexs(64), lambda: rand_pw(40, alpha=ALNUM)])()
    if c == 0:
        inner = 'spring:\n  datasource:\n    url: jdbc:postgresql://db:5432/app\n    username: app\n    password: %s\n' % q(s, R.choice(['"', "'"]))
    else:
        inner = 'spring:\n  application:\n    name: auth\njwt:\n  secret: %s\n  expiration: 86400\n' % q(s, R.choice(['"', "'", '']))
    return proj() + '/src/main/resources/' + R.choice(['application.yml', 'application-prod.yml']), 'server:\n  port: 8080\n' + inner, s

@pos
def node_config_json():
    c = R.randrange(3)
    s = [stripe_live, lambda: any_pw(), lambda: hexs(64)][c]()
    key = ['stripeSecretKey', 'password', 'jwtSecret'][c]
    d = {'port': 3000, 'db': {'host': 'localhost', 'user': 'app'}, 'auth': {}}
    if c == 1:
        d['db'][key] = s
    else:
        d['auth'][key] = s
    return proj() + '/config/' + R.choice(['production.json', 'default.json', 'local.json']), json.dumps(d, indent=2) + '\n', json.dumps(s)[1:-1]

@pos
def php_config():
    s = any_pw(safe=True) if R.random() < .5 else stripe_live()
    return proj() + '/config/' + R.choice(['database.php', 'services.php', 'config.inc.php']), T('''
        <?php
        return [
            'driver' => 'mysql',
            'host' => '127.0.0.1',
            'username' => 'shop',
            'password' => '@@s@@',
            'charset' => 'utf8mb4',
        ];
        '''), s

@pos
def go_source():
    c = R.randrange(2)
    if c == 0:
        s = R.choice([stripe_live, sendgrid, slack_bot, openai_key])()
        line = 'const apiKey = "%s"' % s
    else:
        pw = rand_pw(R.randint(10, 20), safe=True)
        s = 'postgres://app:%s@db.prod.internal:5432/app?sslmode=require' % pw
        line = '\tdsn := "%s"' % s
        s = pw
    return proj() + '/internal/' + R.choice(['client', 'store', 'notify']) + '/' + R.choice(['client.go', 'db.go', 'main.go']), T('''
        package client

        import (
        \t"net/http"
        \t"time"
        )

        @@line@@

        func New() *http.Client {
        \treturn &http.Client{Timeout: 10 * time.Second}
        }
        ''', line=line).replace('\\t', '\t'), s

@pos
def python_source():
    c = R.randrange(3)
    if c == 0:
        s = R.choice([openai_key, anthropic_key, gh_classic, slack_bot, sendgrid])()
        line = 'API_KEY = "%s"' % s
    elif c == 1:
        s = sentry_dsn_secret(); line = 'sentry_sdk.init(dsn="%s", traces_sample_rate=0.1)' % s
    else:
        pw = rand_pw(R.randint(10, 20), safe=True)
        line = 'engine = create_engine("mysql+pymysql://etl:%s@10.1.2.3/warehouse")' % pw
        s = pw
    return proj() + '/' + R.choice(['app.py', 'etl/run.py', 'bot/main.py', 'scripts/sync.py']), T('''
        import os
        import sentry_sdk
        from sqlalchemy import create_engine

        @@line@@

        def main():
            print("ok")
        ''', line=line), s

@pos
def ruby_source():
    s = R.choice([stripe_live, shopify, twilio_sk, mailgun])()
    return proj() + '/' + R.choice(['lib/payments.rb', 'config/initializers/stripe.rb']), T('''
        require "stripe"

        Stripe.api_key = "@@s@@"
        Stripe.api_version = "2023-10-16"
        '''), s

@pos
def java_properties():
    c = R.randrange(2)
    s = any_pw() if c == 0 else R.choice([aws_secret, sendgrid])()
    key = 'spring.datasource.password' if c == 0 else R.choice(['aws.secretKey', 'mail.api.key'])
    sep = R.choice(['=', ' = ', ': '])
    return proj() + '/src/main/resources/' + R.choice(['application.properties', 'db.properties', 'config-prod.properties']), T('''
        # generated
        server.port=8080
        spring.datasource.url=jdbc:mysql://db:3306/app
        spring.datasource.username=app
        @@key@@@@sep@@@@s@@
        logging.level.root=INFO
        '''), s

@pos
def appsettings():
    pw = any_pw(safe=True).replace(';', '')
    s = pw
    cs = 'Server=tcp:sql-%s.database.windows.net,1433;Initial Catalog=app;User ID=appadmin;Password=%s;Encrypt=True;' % (rs(6, LOWNUM), pw)
    if R.random() < .3:
        s = azure_conn(); cs = s
    d = {'Logging': {'LogLevel': {'Default': 'Information'}}, 'ConnectionStrings': {'Default': cs}, 'AllowedHosts': '*'}
    return proj() + '/' + R.choice(['appsettings.json', 'appsettings.Production.json']), json.dumps(d, indent=2) + '\n', s

@pos
def firebase_sa():
    pem = privkey_pem('rsa-pkcs8')
    pid = R.choice(['shop', 'chat', 'iot']) + '-' + rs(5, LOWNUM)
    d = {'type': 'service_account', 'project_id': pid, 'private_key_id': sha1(), 'private_key': pem,
         'client_email': 'firebase-adminsdk-%s@%s.iam.gserviceaccount.com' % (rs(5, LOWNUM), pid), 'client_id': str(R.randint(10**20, 10**21)),
         'auth_uri': 'https://accounts.google.com/o/oauth2/auth', 'token_uri': 'https://oauth2.googleapis.com/token'}
    return R.choice([proj() + '/serviceAccountKey.json', 'Downloads/%s-firebase-adminsdk-%s.json' % (pid, hexs(10))]), json.dumps(d, indent=2) + '\n', '-----BEGIN PRIVATE KEY-----'

@pos
def android_props():
    s = any_pw(safe=True)
    if R.random() < .5:
        return proj() + '/local.properties', T('''
            sdk.dir=/home/me/Android/Sdk
            storeFile=/home/me/keys/release.jks
            storePassword=@@s@@
            keyAlias=release
            keyPassword=@@s@@
            '''), s
    return proj() + '/keystore.properties', 'storePassword=%s\nkeyPassword=%s\nkeyAlias=upload\nstoreFile=upload.jks\n' % (s, s), s

@pos
def fastlane_env():
    s = any_pw(safe=True)
    k = R.choice(['FASTLANE_PASSWORD', 'MATCH_PASSWORD', 'FASTLANE_APPLE_APPLICATION_SPECIFIC_PASSWORD'])
    if k.endswith('SPECIFIC_PASSWORD'):
        s = '-'.join(rs(4, string.ascii_lowercase) for _ in range(4))
    return proj() + '/fastlane/.env', 'FASTLANE_USER=dev@example.com\n%s=%s\nFASTLANE_TEAM_ID=%s\n' % (k, s, rs(10, UPNUM)), s

@pos
def postman_env():
    s = R.choice([postman_key, gh_classic, lambda: jwt(), stripe_live])()
    d = {'id': uid(), 'name': 'prod', 'values': [{'key': 'baseUrl', 'value': 'https://api.example.com', 'type': 'default', 'enabled': True},
                                                 {'key': 'token', 'value': s, 'type': 'secret', 'enabled': True}],
         '_postman_variable_scope': 'environment', '_postman_exported_at': '2024-05-01T10:00:00.000Z', '_postman_exported_using': 'Postman/10.24.0'}
    return 'Documents/postman/prod.postman_environment.json', json.dumps(d, indent='\t') + '\n', s

@pos
def insomnia_export():
    s = R.choice([gh_classic, lambda: jwt(), linear_key, newrelic])()
    d = {'_type': 'export', '__export_format': 4, '__export_source': 'insomnia.desktop.app:v2023.5.8',
         'resources': [{'_id': 'req_' + hexs(32), '_type': 'request', 'name': 'list repos', 'method': 'GET', 'url': 'https://api.example.com/v1/repos',
                        'headers': [{'name': 'Authorization', 'value': 'Bearer ' + s}], 'body': {}}]}
    return 'Documents/Insomnia_%s.json' % '2024-05-01', json.dumps(d, indent=2) + '\n', s

@pos
def http_file():
    c = R.randrange(2)
    if c == 0:
        s = R.choice([gh_classic, lambda: jwt(), openai_key, linear_key])()
        hdr = 'Authorization: Bearer ' + s
    else:
        s = hexs(32); hdr = 'X-Api-Key: ' + s
    return proj() + '/' + R.choice(['requests.http', 'api/test.rest', 'scratch.http']), T('''
        ### list items
        GET https://api.example.com/v1/items?limit=10
        Accept: application/json
        @@h@@

        ###
        ''', h=hdr), s

# ======================= Shell =======================
def hist_cmd():
    c = R.randrange(12)
    pw = rand_pw(R.randint(10, 24), safe=True)
    if c == 0: s = aws_secret(); return 'export AWS_SECRET_ACCESS_KEY=%s' % s, s
    if c == 1: return "mysql -h db.prod.local -u root -p'%s' shop" % pw, pw
    if c == 2: return 'psql "postgresql://app:%s@db.prod.local:5432/app"' % pw, pw
    if c == 3: s = gh_classic(); return 'curl -H "Authorization: token %s" https://api.github.com/user/repos' % s, s
    if c == 4: s = aws_secret(); return 'aws configure set aws_secret_access_key %s' % s, s
    if c == 5: s = gh_classic(); return 'echo %s | gh auth login --with-token' % s, s
    if c == 6: s = vault_token(); return 'vault login %s' % s, s
    if c == 7: s = k8s_sa_jwt(); return 'kubectl --token=%s get pods -n prod' % s, s
    if c == 8: return 'docker login -u dsmith -p %s registry.acme.io' % pw, pw
    if c == 9: s = openai_key(); return 'export OPENAI_API_KEY="%s"' % s, s
    if c == 10: return 'sshpass -p \'%s\' ssh root@10.0.0.5' % pw, pw
    return 'curl -u admin:%s -X POST https://jenkins.corp.local/job/deploy/build' % pw, pw

BENIGN = ['ls -la', 'cd ~/src/webshop', 'git status', 'git pull --rebase', 'vim ~/.zshrc', 'make test', 'docker ps',
          'kubectl get pods -A', 'htop', 'python3 -m venv .venv', 'source .venv/bin/activate', 'pip install -r requirements.txt',
          'ssh bastion', 'terraform plan', 'npm run dev', 'grep -rn TODO src/', 'df -h', 'sudo apt upgrade']

@pos
def bash_history():
    cmd, s = hist_cmd()
    lines = R.sample(BENIGN, 8)
    lines.insert(R.randrange(9), cmd)
    return '.bash_history', '\n'.join(lines) + '\n', s

@pos
def zsh_history():
    cmd, s = hist_cmd()
    lines = R.sample(BENIGN, 8)
    lines.insert(R.randrange(9), cmd)
    t = R.randint(1690000000, 1710000000)
    out = []
    for l in lines:
        t += R.randint(3, 900)
        out.append(': %d:%d;%s' % (t, R.randint(0, 30), l))
    return R.choice(['.zsh_history', '.histfile', '.local/share/zsh/history']), '\n'.join(out) + '\n', s

@pos
def crontab():
    pw = rand_pw(R.randint(10, 20), safe=True)
    c = R.randrange(2)
    if c == 0:
        line = '0 3 * * * PGPASSWORD=%s pg_dump -h db.local -U backup app | gzip > /backup/app.sql.gz' % pw; s = pw
    else:
        s = slack_webhook()
        line = '*/15 * * * * /home/me/bin/check.sh || curl -X POST -d \'{"text":"down"}\' %s' % s
    return R.choice(['crontab.bak', '.config/crontab', 'bin/crontab.txt']), T('''
        # m h  dom mon dow   command
        MAILTO=""
        @@l@@
        @reboot /home/me/bin/start-agent.sh
        ''', l=line), s

@pos
def sshpass_script():
    pw = rand_pw(R.randint(10, 20), safe=True)
    v = R.randrange(2)
    line = ("sshpass -p '%s' rsync -az ./dist/ deploy@web1:/var/www/" % pw) if v == 0 else ('PASS="%s"\nsshpass -p "$PASS" ssh deploy@web1 uptime' % pw)
    return 'bin/' + R.choice(['deploy.sh', 'sync-web.sh']), '#!/bin/bash\nset -e\nnpm run build\n' + line + '\n', pw

@pos
def expect_script():
    pw = rand_pw(R.randint(10, 20), safe=True)
    return 'bin/' + R.choice(['login.exp', 'switch-backup.exp']), T('''
        #!/usr/bin/expect -f
        set timeout 20
        spawn ssh admin@192.168.1.1
        expect "password:"
        send "@@p@@\\r"
        expect "#"
        send "copy running-config tftp://10.0.0.2/backup.cfg\\r"
        expect eof
        ''', p=pw).replace('\\\\r', '\\r'), pw

# ------------- misc service tokens in plain .env-like places -------------
@pos
def dotenv_misc():
    gens = [(slack_bot, 'SLACK_BOT_TOKEN'), (sendgrid, 'SENDGRID_API_KEY'), (twilio_sk, 'TWILIO_API_KEY'),
            (shopify, 'SHOPIFY_ACCESS_TOKEN'), (pypi_token, 'TWINE_PASSWORD'), (databricks, 'DATABRICKS_TOKEN'),
            (linear_key, 'LINEAR_API_KEY'), (newrelic, 'NEW_RELIC_API_KEY'), (postman_key, 'POSTMAN_API_KEY'),
            (gitlab_runner, 'RUNNER_TOKEN'), (hf_token, 'HUGGING_FACE_HUB_TOKEN'), (lambda: hexs(32), 'DATADOG_API_KEY'),
            (lambda: hexs(32), 'TWILIO_AUTH_TOKEN'), (azure_conn, 'AZURE_STORAGE_CONNECTION_STRING')]
    f, k = R.choice(gens)
    s = f()
    return proj() + '/' + R.choice(['.env.production', '.env.local', 'deploy/.env']), 'NODE_ENV=production\nPORT=8080\n%s=%s\nLOG_LEVEL=info\n' % (k, q(s, R.choice(['"', '']))), s
