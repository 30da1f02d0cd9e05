"""Look-alike templates: each returns (home-relative path, content) with NO real secret."""
import json, base64, string, hashlib
from vals import *
from pos import T, proj, q

NEG = []
def neg(f):
    NEG.append(f)
    return f

def sops_enc(plain_len=None):
    n = plain_len or R.randint(8, 40)
    return 'ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:str]' % (b64(n).rstrip('=') + '=' * 0, b64(32), b64(16))

def ansible_vault_blob():
    hx = hexs(R.randint(300, 600) // 2 * 2)
    lines = [hx[i:i + 80] for i in range(0, len(hx), 80)]
    return '$ANSIBLE_VAULT;1.1;AES256\n' + '\n'.join(lines)

def placeholder():
    return R.choice(['${{ secrets.DEPLOY_TOKEN }}', '${DB_PASSWORD}', '$(API_TOKEN)', '{{ .Values.db.password }}',
                     'op://Private/prod-db/password', 'vault:secret/data/prod/db#password', '<YOUR_API_KEY>', 'changeme',
                     'REPLACE_ME', 'xxxxxxxxxxxxxxxxxxxx', '${env:STRIPE_KEY}', '%(DB_PASS)s', '<%= ENV["SECRET"] %>'])

# ======================= CI/CD =======================
@neg
def gh_workflow_secrets():
    return '%s/.github/workflows/%s.yml' % (proj(), R.choice(['deploy', 'ci', 'release'])), T('''
        name: deploy
        on: [push]
        permissions:
          id-token: write
          contents: read
        jobs:
          deploy:
            runs-on: ubuntu-latest
            env:
              NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}
              AWS_SECRET_ACCESS_KEY: ${{ secrets.AWS_SECRET_ACCESS_KEY }}
              GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}
            steps:
              - uses: actions/checkout@@@sha@@ # v4.1.1
              - uses: aws-actions/configure-aws-credentials@v4
                with:
                  role-to-assume: arn:aws:iam::123456789012:role/gha-deploy
                  aws-region: eu-west-1
              - uses: docker/login-action@v3
                with:
                  username: ${{ vars.DOCKERHUB_USER }}
                  password: ${{ secrets.DOCKERHUB_TOKEN }}
              - run: echo "::add-mask::${{ steps.token.outputs.token }}"
        ''', sha=sha1())

@neg
def gitlab_ci_vars():
    return proj() + '/.gitlab-ci.yml', T('''
        variables:
          DOCKER_DRIVER: overlay2
          POSTGRES_PASSWORD: $CI_DB_PASSWORD
          REGISTRY_TOKEN: ${CI_JOB_TOKEN}
          CACHE_KEY: "@@h@@"
        deploy:
          image: alpine@@@d@@
          script:
            - echo "$CI_REGISTRY_PASSWORD" | docker login -u "$CI_REGISTRY_USER" --password-stdin $CI_REGISTRY
            - vault kv get -field=password secret/prod/db > /tmp/pw
          id_tokens:
            VAULT_ID_TOKEN:
              aud: https://vault.corp.local
        ''', h=sha1(), d=image_digest())

@neg
def jenkinsfile():
    return proj() + '/Jenkinsfile', T('''
        pipeline {
          agent any
          environment {
            NEXUS = credentials('nexus-deployer')
            API_TOKEN = credentials('api-token')
          }
          stages {
            stage('Deploy') {
              steps {
                withCredentials([usernamePassword(credentialsId: 'db', usernameVariable: 'U', passwordVariable: 'P')]) {
                  sh 'mysql -u $U -p"$P" -e "select 1"'
                }
                sshagent(credentials: ['git-deploy']) { sh 'git push origin HEAD:main' }
              }
            }
          }
        }
        ''')

@neg
def jenkins_job_no_secret():
    return '.jenkins/jobs/build/config.xml', T('''
        <?xml version='1.1' encoding='UTF-8'?>
        <project>
          <scm class="hudson.plugins.git.GitSCM">
            <userRemoteConfigs><hudson.plugins.git.UserRemoteConfig>
              <url>git@github.com:acme/app.git</url>
              <credentialsId>@@u@@</credentialsId>
            </hudson.plugins.git.UserRemoteConfig></userRemoteConfigs>
          </scm>
          <builders><hudson.tasks.Shell><command>make test</command></hudson.tasks.Shell></builders>
          <buildWrappers>
            <org.jenkinsci.plugins.credentialsbinding.impl.SecretBuildWrapper>
              <bindings><org.jenkinsci.plugins.credentialsbinding.impl.StringBinding>
                <credentialsId>sonar-token</credentialsId><variable>SONAR_TOKEN</variable>
              </org.jenkinsci.plugins.credentialsbinding.impl.StringBinding></bindings>
            </org.jenkinsci.plugins.credentialsbinding.impl.SecretBuildWrapper>
          </buildWrappers>
        </project>
        ''', u=uid())

@neg
def circleci_ctx():
    return proj() + '/.circleci/config.yml', T('''
        version: 2.1
        orbs:
          aws-cli: circleci/aws-cli@4.1
        jobs:
          build:
            docker:
              - image: cimg/node:20.11@@@d@@
                auth:
                  username: $DOCKERHUB_USER
                  password: $DOCKERHUB_PASSWORD
            steps:
              - checkout
              - restore_cache:
                  keys: [deps-{{ checksum "package-lock.json" }}]
        workflows:
          main:
            jobs:
              - build:
                  context: [dockerhub, aws-prod]
        ''', d=image_digest())

@neg
def travis_secure():
    return proj() + '/.travis.yml', T('''
        language: python
        env:
          global:
            - secure: "@@a@@"
            - secure: "@@b@@"
        deploy:
          provider: pypi
          username: __token__
          password:
            secure: "@@c@@"
        ''', a=b64(256), b=b64(256), c=b64(256))

@neg
def makefile_vars():
    return proj() + '/Makefile', T('''
        REGISTRY ?= registry.acme.io
        GIT_SHA := $(shell git rev-parse HEAD)
        VERSION := 1.4.2
        CHECKSUM := @@h@@

        push:
        \techo "$$REGISTRY_PASSWORD" | docker login -u "$(REGISTRY_USER)" --password-stdin $(REGISTRY)
        \tdocker push $(REGISTRY)/app:$(GIT_SHA)

        migrate:
        \tPGPASSWORD=$(DB_PASSWORD) psql -h $(DB_HOST) -U app -f schema.sql
        ''', h=sha256())

@neg
def dockerfile_safe():
    return proj() + '/Dockerfile', T('''
        # syntax=docker/dockerfile:1.6
        FROM python:3.12-slim@@@d@@
        ARG PIP_INDEX_URL
        ARG NPM_TOKEN
        ENV PYTHONDONTWRITEBYTECODE=1 \\
            APP_SECRET_FILE=/run/secrets/app_secret
        RUN --mount=type=secret,id=pip_token \\
            PIP_TOKEN=$(cat /run/secrets/pip_token) pip install -r requirements.txt
        LABEL org.opencontainers.image.revision="@@sha@@"
        CMD ["gunicorn", "app:app"]
        ''', d=image_digest(), sha=sha1())

@neg
def compose_safe():
    return proj() + '/docker-compose.override.yml', T('''
        services:
          db:
            image: postgres:16@@@d@@
            environment:
              POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?set it in .env}
              POSTGRES_PASSWORD_FILE: /run/secrets/db_password
            secrets: [db_password]
        secrets:
          db_password:
            file: ./secrets/db_password.txt
        ''', d=image_digest())

@neg
def helm_values_safe():
    return proj() + '/charts/app/values.yaml', T('''
        image:
          repository: registry.acme.io/app
          digest: @@d@@
        postgresql:
          auth:
            existingSecret: app-db
            secretKeys:
              userPasswordKey: password
            password: ""
        externalSecrets:
          refreshInterval: 1h
          secretStoreRef: {name: aws-sm, kind: ClusterSecretStore}
          data:
            - secretKey: api-token
              remoteRef:
                key: arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/app/api-@@r@@
        podAnnotations:
          checksum/config: @@h@@
        ''', d=image_digest(), r=rs(6), h=sha256())

@neg
def helm_template():
    return proj() + '/charts/app/templates/secret.yaml', T('''
        apiVersion: v1
        kind: Secret
        metadata:
          name: {{ include "app.fullname" . }}
        type: Opaque
        stringData:
          DB_PASSWORD: {{ .Values.postgresql.auth.password | quote }}
          API_TOKEN: {{ required "apiToken is required" .Values.apiToken | quote }}
        ''')

@neg
def tfvars_safe():
    return 'infra/prod/terraform.tfvars', T('''
        region         = "eu-central-1"
        vpc_id         = "vpc-@@v@@"
        ami            = "ami-@@a@@"
        kms_key_arn    = "arn:aws:kms:eu-central-1:123456789012:key/@@u@@"
        db_secret_arn  = "arn:aws:secretsmanager:eu-central-1:123456789012:secret:prod/db-@@r@@"
        ssh_public_key = "@@pk@@"
        ''', v=hexs(17), a=hexs(17), u=uid(), r=rs(6), pk=ssh_pubkey())

@neg
def tf_variables():
    return 'infra/modules/db/variables.tf', T('''
        variable "db_password" {
          description = "Master password"
          type        = string
          sensitive   = true
        }
        data "aws_secretsmanager_secret_version" "db" {
          secret_id = var.db_secret_arn
        }
        locals {
          password = jsondecode(data.aws_secretsmanager_secret_version.db.secret_string)["password"]
        }
        ''')

@neg
def tfstate_safe():
    st = {'version': 4, 'terraform_version': '1.7.4', 'serial': R.randint(1, 300), 'lineage': uid(), 'outputs': {
        'bucket_arn': {'value': 'arn:aws:s3:::acme-assets-%s' % rs(6, LOWNUM), 'type': 'string'}},
        'resources': [
            {'mode': 'managed', 'type': 'aws_s3_object', 'name': 'index', 'provider': 'provider["registry.terraform.io/hashicorp/aws"]',
             'instances': [{'schema_version': 0, 'attributes': {'id': 'index.html', 'etag': md5(), 'source_hash': md5(),
                            'version_id': rs(32, B64URL.replace('-', '')), 'checksum_sha256': base64.b64encode(bytes.fromhex(sha256())).decode(),
                            'kms_key_id': None}}]},
            {'mode': 'managed', 'type': 'aws_lambda_function', 'name': 'api', 'provider': 'provider["registry.terraform.io/hashicorp/aws"]',
             'instances': [{'schema_version': 0, 'attributes': {'function_name': 'api', 'source_code_hash': base64.b64encode(bytes.fromhex(sha256())).decode(),
                            'arn': 'arn:aws:lambda:eu-west-1:123456789012:function:api', 'role': 'arn:aws:iam::123456789012:role/api',
                            'image_uri': '123456789012.dkr.ecr.eu-west-1.amazonaws.com/api@' + image_digest(),
                            'environment': [{'variables': {'DB_SECRET_ARN': 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-' + rs(6)}}]}}]},
            {'mode': 'managed', 'type': 'aws_db_instance', 'name': 'main', 'provider': 'provider["registry.terraform.io/hashicorp/aws"]',
             'instances': [{'schema_version': 2, 'attributes': {'id': 'db-' + rs(26, UPNUM), 'password': None, 'manage_master_user_password': True,
                            'master_user_secret': [{'kms_key_id': 'arn:aws:kms:eu-west-1:123456789012:key/' + uid(),
                                                    'secret_arn': 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:rds!db-' + uid() + '-' + rs(6)}],
                            'resource_id': 'db-' + rs(26, UPNUM)}, 'sensitive_attributes': [[{'type': 'get_attr', 'value': 'password'}]]}]}]}
    return 'infra/prod/terraform.tfstate', json.dumps(st, indent=2) + '\n'

@neg
def tf_lock():
    lines = ['# This file is maintained automatically by "terraform init".', '']
    for prov, ver in [('hashicorp/aws', '5.40.0'), ('hashicorp/random', '3.6.0')]:
        lines += ['provider "registry.terraform.io/%s" {' % prov, '  version     = "%s"' % ver, '  hashes = [',
                  '    "h1:%s",' % base64.b64encode(rb(32)).decode()]
        lines += ['    "zh:%s",' % sha256() for _ in range(5)]
        lines += ['  ]', '}', '']
    return 'infra/prod/.terraform.lock.hcl', '\n'.join(lines)

@neg
def pulumi_secure():
    return proj() + '/Pulumi.prod.yaml', T('''
        encryptionsalt: v1:@@salt@@:v1:@@a@@:@@b@@
        config:
          aws:region: us-east-1
          app:dbPassword:
            secure: v1:@@c@@:@@d@@
          app:stripeKey:
            secure: v1:@@e@@:@@f@@
        ''', salt=b64(8), a=b64(12), b=b64(32), c=b64(12), d=b64(40), e=b64(12), f=b64(60))

@neg
def serverless_refs():
    return proj() + '/serverless.yml', T('''
        service: billing
        provider:
          name: aws
          environment:
            STRIPE_SECRET: ${ssm:/billing/prod/stripe-secret}
            DB_PASSWORD: ${env:DB_PASSWORD}
            API_KEY: ${file(./secrets.${sls:stage}.yml):apiKey}
            SENTRY_DSN: ${param:sentryDsn}
          iam:
            role: arn:aws:iam::123456789012:role/billing
        ''')

@neg
def envrc_refs():
    return proj() + '/.envrc', T('''
        use flake
        export AWS_PROFILE=prod-readonly
        export GITHUB_TOKEN=$(gh auth token)
        export PGPASSWORD="$(pass show work/db/prod)"
        export OPENAI_API_KEY=$(op read "op://Private/OpenAI/credential")
        export VAULT_ADDR=https://vault.corp.local:8200
        export KUBECONFIG=$PWD/.kube/config
        dotenv_if_exists
        ''')

@neg
def vagrant_env():
    return proj() + '/Vagrantfile', T('''
        Vagrant.configure("2") do |config|
          config.vm.box = "ubuntu/jammy64"
          config.vm.box_download_checksum = "@@h@@"
          config.vm.box_download_checksum_type = "sha256"
          config.vm.provider :aws do |aws|
            aws.access_key_id = ENV["AWS_ACCESS_KEY_ID"]
            aws.secret_access_key = ENV.fetch("AWS_SECRET_ACCESS_KEY")
          end
          config.ssh.private_key_path = "~/.ssh/id_ed25519"
        end
        ''', h=sha256())

# ======================= Desktop / IDE =======================
@neg
def datagrip_safe():
    return proj() + '/.idea/dataSources.xml', T('''
        <?xml version="1.0" encoding="UTF-8"?>
        <project version="4">
          <component name="DataSourceManagerImpl" format="xml" multifile-model="true">
            <data-source source="LOCAL" name="app@localhost" uuid="@@u@@">
              <driver-ref>postgresql</driver-ref>
              <jdbc-url>jdbc:postgresql://localhost:5432/app</jdbc-url>
              <auth-provider>pgpass</auth-provider>
            </data-source>
          </component>
        </project>
        ''', u=uid())

@neg
def dbeaver_safe():
    cid = 'postgres-jdbc-%s-%s' % (hexs(11), hexs(16))
    d = {'folders': {}, 'connections': {cid: {'provider': 'postgresql', 'driver': 'postgres-jdbc', 'name': 'local', 'save-password': True,
         'configuration': {'host': 'localhost', 'port': '5432', 'database': 'app', 'url': 'jdbc:postgresql://localhost:5432/app',
                           'auth-model': 'native', 'type': 'dev'}}}}
    return '.local/share/DBeaverData/workspace6/General/.dbeaver/data-sources.json', json.dumps(d, indent='\t') + '\n'

@neg
def filezilla_nopass():
    return '.config/filezilla/sitemanager.xml', T('''
        <?xml version="1.0" encoding="UTF-8" standalone="yes" ?>
        <FileZilla3 version="3.66.4" platform="*nix">
            <Servers>
                <Server>
                    <Host>sftp.example.org</Host>
                    <Port>22</Port>
                    <Protocol>1</Protocol>
                    <User>deploy</User>
                    <Keyfile>/home/me/.ssh/id_ed25519</Keyfile>
                    <Logontype>5</Logontype>
                    <Name>web</Name>
                </Server>
            </Servers>
        </FileZilla3>
        ''')

@neg
def winscp_nopass():
    return 'Documents/WinSCP.ini', T('''
        [Sessions\\web@files.example.org]
        HostName=files.example.org
        UserName=web
        PublicKeyFile=C:%5CUsers%5Cme%5C.ssh%5Cid_ed25519.ppk
        PortNumber=22

        [SshHostKeys]
        ssh-ed25519@22:files.example.org=0x@@a@@,0x@@b@@
        ''', a=hexs(64), b=hexs(64))

@neg
def ssh_config():
    return '.ssh/config', T('''
        Host bastion
            HostName 203.0.113.10
            User ec2-user
            IdentityFile ~/.ssh/id_ed25519_work
            IdentitiesOnly yes
        Host *.corp.local
            ProxyJump bastion
            IdentityFile ~/.ssh/keys/corp_rsa
        # fingerprint SHA256:@@f@@
        ''', f=base64.b64encode(rb(32)).decode().rstrip('='))

@neg
def ssh_pub_and_known():
    pk = ssh_pubkey()
    c = R.randrange(3)
    if c == 0:
        return '.ssh/id_ed25519.pub', pk + ' me@laptop\n'
    if c == 1:
        return '.ssh/authorized_keys', '\n'.join(ssh_pubkey() + ' user%d@host' % i for i in range(3)) + '\n'
    return '.ssh/known_hosts', '\n'.join('|1|%s|%s %s' % (b64(20), b64(20), ssh_pubkey()) for _ in range(4)) + '\n'

@neg
def cert_file():
    return R.choice(['Documents/certs/corp-root-ca.pem', '.local/share/ca-certificates/corp.crt', 'Downloads/server.crt']), cert_pem()

@neg
def rsa_public_pem():
    return R.choice(['Documents/keys/jwt-public.pem', proj() + '/keys/public.pem']), rsa_pubkey_pem()

@neg
def gpg_public():
    return R.choice(['Documents/keys/dana-public.asc', '.gnupg/exported-pub.asc']), pgp_public()

@neg
def gpg_message():
    return R.choice(['Documents/notes/passwords.txt.asc', 'Documents/backup/secrets.env.gpg.asc']), pgp_message()

@neg
def sops_file():
    return proj() + '/secrets/' + R.choice(['prod.enc.yaml', 'secrets.yaml']), T('''
        db:
            password: @@a@@
            user: @@b@@
        stripe_key: @@c@@
        sops:
            kms: []
            age:
                - recipient: age1@@r@@
                  enc: |
                    -----BEGIN AGE ENCRYPTED FILE-----
                    @@e1@@
                    @@e2@@
                    -----END AGE ENCRYPTED FILE-----
            lastmodified: "2024-05-01T10:00:00Z"
            mac: ENC[AES256_GCM,data:@@m@@,iv:@@iv@@,tag:@@t@@,type:str]
            version: 3.8.1
        ''', a=sops_enc(), b=sops_enc(5), c=sops_enc(32), r=rs(58, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'),
        e1=b64(48), e2=b64(30), m=b64(64), iv=b64(32), t=b64(16))

@neg
def ansible_vault_file():
    c = R.randrange(2)
    if c == 0:
        return 'ansible/group_vars/prod/vault.yml', ansible_vault_blob() + '\n'
    blob = ansible_vault_blob().replace('\n', '\n          ')
    return 'ansible/group_vars/all.yml', 'db_user: app\ndb_password: !vault |\n          ' + blob + '\n'

@neg
def s3cfg_empty():
    return '.s3cfg', T('''
        [default]
        access_key =
        secret_key =
        host_base = s3.amazonaws.com
        host_bucket = %(bucket)s.s3.amazonaws.com
        gpg_command = /usr/bin/gpg
        gpg_passphrase =
        signature_v2 = False
        ''')

@neg
def docker_credstore():
    return '.docker/config.json', json.dumps({'auths': {'https://index.docker.io/v1/': {}, 'ghcr.io': {}},
                                              'credsStore': 'desktop', 'credHelpers': {'123456789012.dkr.ecr.eu-west-1.amazonaws.com': 'ecr-login'},
                                              'currentContext': 'desktop-linux'}, indent='\t') + '\n'

@neg
def kubeconfig_exec():
    ca = base64.b64encode(cert_pem().encode()).decode()
    cc = base64.b64encode(cert_pem().encode()).decode()
    return '.kube/config', T('''
        apiVersion: v1
        kind: Config
        clusters:
        - cluster:
            certificate-authority-data: @@ca@@
            server: https://@@h@@.gr7.eu-west-1.eks.amazonaws.com
          name: arn:aws:eks:eu-west-1:123456789012:cluster/prod
        contexts:
        - context: {cluster: arn:aws:eks:eu-west-1:123456789012:cluster/prod, user: eks}
          name: prod
        current-context: prod
        users:
        - name: eks
          user:
            exec:
              apiVersion: client.authentication.k8s.io/v1beta1
              command: aws
              args: [eks, get-token, --cluster-name, prod]
        - name: oidc
          user:
            client-certificate-data: @@cc@@
            auth-provider:
              name: oidc
              config:
                idp-issuer-url: https://sso.corp.local
                client-id: kubernetes
        ''', h=hexs(32).upper())

@neg
def gh_hosts_keyring():
    return '.config/gh/hosts.yml', 'github.com:\n    git_protocol: ssh\n    users:\n        dsmith:\n    user: dsmith\n'

@neg
def gcloud_config():
    return '.config/gcloud/configurations/config_default', T('''
        [core]
        account = dana@example.org
        project = my-project-@@n@@
        disable_usage_reporting = True

        [compute]
        region = europe-west1
        ''', n=R.randint(100000, 999999))

@neg
def gcloud_sa_pub():
    d = {'type': 'external_account', 'audience': '//iam.googleapis.com/projects/%d/locations/global/workloadIdentityPools/gh/providers/gh' % R.randint(10**11, 10**12),
         'subject_token_type': 'urn:ietf:params:oauth:token-type:jwt', 'token_url': 'https://sts.googleapis.com/v1/token',
         'service_account_impersonation_url': 'https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/deploy@proj.iam.gserviceaccount.com:generateAccessToken',
         'credential_source': {'file': '/var/run/secrets/token', 'format': {'type': 'text'}}}
    return '.config/gcloud/wif-config.json', json.dumps(d, indent=2) + '\n'

@neg
def mail_passwordeval():
    c = R.randrange(2)
    if c == 0:
        return '.msmtprc', 'account work\nhost smtp.office365.com\nport 587\nauth on\nuser me@corp.example\npasswordeval "pass show mail/work"\naccount default : work\n'
    return '.muttrc', 'set imap_user = "me@example.org"\nset imap_pass = "`pass show mail/imap`"\nsource "gpg -dq ~/.mutt/passwords.gpg |"\n'

@neg
def remmina_nopass():
    return '.local/share/remmina/group_ssh_nas_%s.remmina' % rs(6, LOWNUM), T('''
        [remmina]
        name=nas
        protocol=SSH
        server=192.168.1.20
        username=admin
        password=
        ssh_auth=3
        ssh_privatekey=/home/me/.ssh/id_ed25519
        ''')

@neg
def bitwarden_encrypted():
    enc = lambda: '2.%s|%s|%s' % (b64(16), b64(R.choice([32, 48, 64])), b64(32))
    d = {'encrypted': True, 'passwordProtected': True, 'salt': b64(16), 'kdfType': 0, 'kdfIterations': 600000,
         'encKeyValidation_DO_NOT_EDIT': enc(), 'data': enc()}
    return 'Downloads/bitwarden_encrypted_export_%d.json' % R.randint(20230101000000, 20241231000000), json.dumps(d, indent=2) + '\n'

@neg
def password_csv_template():
    return 'Documents/import-template.csv', 'name,url,username,password,note\nexample,https://example.com,user@example.com,<password>,\n'

@neg
def vscode_settings_safe():
    d = {'editor.fontSize': 14, 'workbench.colorTheme': 'Default Dark Modern', 'sqltools.connections': [{'server': 'localhost', 'port': 5432,
         'driver': 'PostgreSQL', 'name': 'local', 'database': 'app', 'username': 'app', 'askForPassword': True}],
         'rest-client.environmentVariables': {'prod': {'token': '{{$dotenv API_TOKEN}}'}}, 'telemetry.machineId': sha256()}
    return '.config/Code/User/settings.json', json.dumps(d, indent=4) + '\n'

@neg
def app_ids():
    d = {'installationId': uid(), 'deviceId': uid(), 'machineId': sha256(), 'sessionId': hexs(32), 'lastUpdateCheck': 1714550000,
         'clientId': uid(), 'state': base64.b64encode(json.dumps({'theme': 'dark', 'sidebar': True, 'recent': ['a.txt', 'b.txt']}).encode()).decode()}
    return R.choice(['.config/Slack/storage/root-state.json', '.config/someapp/state.json', '.config/Code/User/globalStorage/state.json']), json.dumps(d, indent=2) + '\n'

@neg
def ipynb_outputs():
    png = base64.b64encode(b'\x89PNG\r\n\x1a\n' + rb(R.randint(600, 1200))).decode()
    nb = {'cells': [{'cell_type': 'code', 'execution_count': 3, 'metadata': {}, 'source': ['import os\n', 'key = os.environ["OPENAI_API_KEY"]\n', 'plt.plot(x, y)'],
                     'outputs': [{'output_type': 'display_data', 'data': {'image/png': png, 'text/plain': ['<Figure size 640x480>']}, 'metadata': {}}]},
                    {'cell_type': 'code', 'execution_count': 4, 'metadata': {}, 'source': ['hashlib.sha256(b"abc").hexdigest()'],
                     'outputs': [{'output_type': 'execute_result', 'execution_count': 4, 'metadata': {}, 'data': {'text/plain': ["'%s'" % sha256()]}}]}],
          'metadata': {'kernelspec': {'name': 'python3', 'display_name': 'Python 3'}}, 'nbformat': 4, 'nbformat_minor': 5}
    return 'notebooks/analysis.ipynb', json.dumps(nb, indent=1) + '\n'

@neg
def css_data_uri():
    return proj() + '/static/css/app.css', '.logo{background:url("data:image/png;base64,%s") no-repeat}\n.font{src:url(data:font/woff2;base64,%s)}\n' % (
        base64.b64encode(b'\x89PNG\r\n\x1a\n' + rb(300)).decode(), b64(400))

# ======================= lock files / hashes / ids =======================
@neg
def package_lock():
    pk = {}
    for n in ['lodash', 'express', 'react', 'debug', 'ms', 'chalk']:
        pk['node_modules/' + n] = {'version': '%d.%d.%d' % (R.randint(1, 9), R.randint(0, 20), R.randint(0, 20)),
                                   'resolved': 'https://registry.npmjs.org/%s/-/%s-1.0.0.tgz' % (n, n), 'integrity': integrity()}
    return proj() + '/package-lock.json', json.dumps({'name': 'app', 'version': '1.0.0', 'lockfileVersion': 3, 'requires': True, 'packages': pk}, indent=2) + '\n'

@neg
def yarn_lock():
    out = ['# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.', '# yarn lockfile v1', '']
    for n in ['ansi-regex', 'balanced-match', 'brace-expansion', 'concat-map']:
        out += ['%s@^1.0.0:' % n, '  version "1.0.2"', '  resolved "https://registry.yarnpkg.com/%s/-/%s-1.0.2.tgz#%s"' % (n, n, sha1()),
                '  integrity %s' % integrity(), '']
    return proj() + '/yarn.lock', '\n'.join(out)

@neg
def go_sum():
    mods = ['github.com/spf13/cobra v1.8.0', 'golang.org/x/sys v0.18.0', 'github.com/google/uuid v1.6.0', 'gopkg.in/yaml.v3 v3.0.1']
    out = []
    for m in mods:
        out.append('%s h1:%s' % (m, base64.b64encode(rb(32)).decode()))
        out.append('%s/go.mod h1:%s' % (m, base64.b64encode(rb(32)).decode()))
    return proj() + '/go.sum', '\n'.join(out) + '\n'

@neg
def poetry_lock():
    out = []
    for n in ['requests', 'urllib3', 'idna']:
        out += ['[[package]]', 'name = "%s"' % n, 'version = "2.31.0"', 'files = [',
                '    {file = "%s-2.31.0-py3-none-any.whl", hash = "sha256:%s"},' % (n, sha256()),
                '    {file = "%s-2.31.0.tar.gz", hash = "sha256:%s"},' % (n, sha256()), ']', '']
    out += ['[metadata]', 'lock-version = "2.0"', 'content-hash = "%s"' % sha256()]
    return proj() + '/poetry.lock', '\n'.join(out) + '\n'

@neg
def cargo_lock():
    out = ['version = 3', '']
    for n in ['serde', 'tokio', 'anyhow']:
        out += ['[[package]]', 'name = "%s"' % n, 'version = "1.0.1"', 'source = "registry+https://github.com/rust-lang/crates.io-index"',
                'checksum = "%s"' % sha256(), '']
    return proj() + '/Cargo.lock', '\n'.join(out)

@neg
def composer_lock():
    d = {'content-hash': md5(), 'packages': [{'name': 'monolog/monolog', 'version': '3.5.0',
         'source': {'type': 'git', 'url': 'https://github.com/Seldaek/monolog.git', 'reference': sha1()},
         'dist': {'type': 'zip', 'url': 'https://api.github.com/repos/Seldaek/monolog/zipball/' + sha1(), 'reference': sha1(), 'shasum': ''}}]}
    return proj() + '/composer.lock', json.dumps(d, indent=4) + '\n'

@neg
def git_shas():
    c = R.randrange(2)
    if c == 0:
        return proj() + '/.git/packed-refs', '# pack-refs with: peeled fully-peeled sorted\n' + '\n'.join(
            '%s refs/remotes/origin/%s' % (sha1(), b) for b in ['main', 'develop', 'feature/login', 'release/1.2']) + '\n'
    return proj() + '/CHANGELOG.md', '# Changelog\n\n## 1.4.2\n' + '\n'.join(
        '- %s (%s)' % (R.choice(['fix login redirect', 'bump deps', 'add metrics']), sha1()) for _ in range(6)) + '\n'

@neg
def k8s_digests():
    return proj() + '/k8s/deployment.yaml', T('''
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: api
          annotations:
            kubectl.kubernetes.io/last-applied-configuration-hash: @@h@@
        spec:
          template:
            spec:
              containers:
                - name: api
                  image: ghcr.io/acme/api@@@d@@
                  env:
                    - name: DB_PASSWORD
                      valueFrom:
                        secretKeyRef: {name: api-db, key: password}
        ''', h=sha256(), d=image_digest())

@neg
def sha_sums():
    return 'Downloads/SHA256SUMS', '\n'.join('%s  %s' % (sha256(), f) for f in ['ubuntu-24.04-desktop-amd64.iso', 'ubuntu-24.04-live-server-amd64.iso']) + '\n'

@neg
def aws_example_docs():
    return 'Documents/notes/aws-setup.md', T('''
        # AWS CLI setup

        Example from the AWS docs (not a real key):

        ```
        [default]
        aws_access_key_id = AKIAIOSFODNN7EXAMPLE
        aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
        ```

        Our real keys live in 1Password: op://Work/aws-prod/credentials
        ''')

@neg
def test_fixtures():
    c = R.randrange(3)
    if c == 0:
        d = {'username': 'test_user', 'password': 'dummy-password', 'api_key': 'fake-api-key-for-tests', 'token': 'xxxxxxxxxxxxxxxxxxxxxxxx'}
        return proj() + '/tests/fixtures/fake_credentials.json', json.dumps(d, indent=2) + '\n'
    if c == 1:
        return proj() + '/tests/test_auth.py', T('''
            DUMMY_PASSWORD = "password123"  # test fixture
            FAKE_TOKEN = "test-token"

            def test_login(client):
                r = client.post("/login", json={"user": "alice", "password": DUMMY_PASSWORD})
                assert r.status_code == 200
            ''')
    return proj() + '/spec/fixtures/dummy.env', 'API_KEY=your-api-key-here\nDB_PASSWORD=changeme\nSECRET_KEY=<generate-me>\n'

@neg
def env_example():
    return proj() + '/' + R.choice(['.env.example', '.env.sample', '.env.dist']), T('''
        APP_NAME=Shop
        APP_ENV=local
        APP_KEY=
        DB_HOST=127.0.0.1
        DB_PASSWORD=
        STRIPE_SECRET=sk_live_XXXXXXXXXXXXXXXXXXXXXXXX
        MAIL_PASSWORD=null
        AWS_SECRET_ACCESS_KEY=
        SENTRY_LARAVEL_DSN=
        ''')

# ======================= Languages =======================
@neg
def django_env():
    return proj() + '/mysite/settings.py', T('''
        import os
        from django.core.management.utils import get_random_secret_key
        SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or get_random_secret_key()
        DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "PASSWORD": os.environ["DB_PASSWORD"]}}
        AUTH_PASSWORD_VALIDATORS = [{"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"}]
        PASSWORD_HASHERS = ["django.contrib.auth.hashers.Argon2PasswordHasher"]
        ''')

@neg
def rails_env_yml():
    c = R.randrange(2)
    if c == 0:
        return proj() + '/config/database.yml', T('''
            production:
              adapter: postgresql
              database: app_production
              username: app
              password: <%= ENV["APP_DATABASE_PASSWORD"] %>
              url: <%= ENV.fetch("DATABASE_URL") %>
            ''')
    return proj() + '/config/secrets.yml', 'production:\n  secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>\n'

@neg
def rails_credentials_enc():
    return proj() + '/config/credentials.yml.enc', '%s--%s--%s' % (b64(R.randint(200, 500)), b64(12), b64(16))

@neg
def spring_refs():
    return proj() + '/src/main/resources/application.yml', T('''
        spring:
          datasource:
            url: jdbc:postgresql://${DB_HOST:localhost}:5432/app
            username: ${DB_USER}
            password: ${DB_PASSWORD}
          cloud:
            vault:
              uri: https://vault.corp.local
              authentication: KUBERNETES
        jwt:
          secret: ${JWT_SECRET:}
          public-key-location: classpath:keys/jwt.pub
        ''')

@neg
def node_env_mapping():
    d = {'db': {'password': 'DB_PASSWORD', 'user': 'DB_USER'}, 'stripe': {'secretKey': 'STRIPE_SECRET_KEY'}, 'jwt': {'secret': {'__name': 'JWT_SECRET'}}}
    return proj() + '/config/custom-environment-variables.json', json.dumps(d, indent=2) + '\n'

@neg
def php_env():
    return proj() + '/config/database.php', T('''
        <?php
        return [
            'mysql' => [
                'driver' => 'mysql',
                'host' => env('DB_HOST', '127.0.0.1'),
                'password' => env('DB_PASSWORD', ''),
                'unix_socket' => env('DB_SOCKET', ''),
            ],
        ];
        ''')

@neg
def go_env_source():
    return proj() + '/internal/config/config.go', T('''
        package config

        import "os"

        // knownSHA is the sha256 of the bundled schema (not a secret).
        const knownSHA = "@@h@@"

        var apiKey = os.Getenv("API_KEY")
        var passwordRegex = `(?i)password\\s*[:=]\\s*\\S+`

        func DSN() string {
        \treturn "postgres://" + os.Getenv("DB_USER") + ":" + os.Getenv("DB_PASSWORD") + "@db:5432/app"
        }
        ''', h=sha256())

@neg
def python_safe_source():
    return proj() + '/app/auth.py', T('''
        import getpass, hashlib, os
        import keyring

        PASSWORD_MIN_LENGTH = 12
        TOKEN_HEADER = "Authorization"
        EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

        def get_password():
            return os.environ.get("APP_PASSWORD") or keyring.get_password("app", "admin") or getpass.getpass("Password: ")

        def hash_password(password: str, salt: bytes) -> str:
            return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 600_000).hex()
        ''')

@neg
def ruby_env():
    return proj() + '/config/initializers/stripe.rb', 'Stripe.api_key = ENV.fetch("STRIPE_SECRET_KEY")\nStripe.api_version = "2023-10-16"\nRails.configuration.stripe = { publishable_key: ENV["STRIPE_PUBLISHABLE_KEY"] }\n'

@neg
def java_props_refs():
    return proj() + '/src/main/resources/application.properties', T('''
        spring.datasource.url=jdbc:mysql://db:3306/app
        spring.datasource.username=app
        spring.datasource.password=${DB_PASSWORD}
        spring.security.oauth2.client.registration.google.client-secret=${GOOGLE_CLIENT_SECRET}
        management.endpoints.web.exposure.include=health
        app.build.commit=@@sha@@
        ''', sha=sha1())

@neg
def appsettings_safe():
    d = {'ConnectionStrings': {'Default': 'Server=(localdb)\\mssqllocaldb;Database=App;Trusted_Connection=True;MultipleActiveResultSets=true',
                               'Prod': 'Server=tcp:sql.corp.local,1433;Database=App;Authentication=Active Directory Default;'},
         'KeyVault': {'Uri': 'https://kv-acme-prod.vault.azure.net/'}, 'AzureAd': {'TenantId': uid(), 'ClientId': uid(), 'Instance': 'https://login.microsoftonline.com/'}}
    return proj() + '/appsettings.json', json.dumps(d, indent=2) + '\n'

@neg
def android_safe():
    c = R.randrange(2)
    if c == 0:
        return proj() + '/local.properties', '## This file must *NOT* be checked into Version Control Systems\nsdk.dir=/home/me/Android/Sdk\n'
    return proj() + '/gradle.properties', 'org.gradle.jvmargs=-Xmx2048m -Dfile.encoding=UTF-8\nandroid.useAndroidX=true\nkotlin.code.style=official\nRELEASE_STORE_PASSWORD=\n'

@neg
def export_options_plist():
    return proj() + '/ios/ExportOptions.plist', T('''
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
            <key>method</key><string>app-store</string>
            <key>teamID</key><string>@@team@@</string>
            <key>provisioningProfiles</key>
            <dict><key>com.acme.app</key><string>@@u@@</string></dict>
            <key>signingCertificate</key><string>Apple Distribution</string>
        </dict>
        </plist>
        ''', team=rs(10, UPNUM), u=uid())

@neg
def postman_env_empty():
    d = {'id': uid(), 'name': 'prod', 'values': [{'key': 'baseUrl', 'value': 'https://api.example.com', 'type': 'default', 'enabled': True},
                                                 {'key': 'token', 'value': '', 'type': 'secret', 'enabled': True},
                                                 {'key': 'userId', 'value': uid(), 'type': 'default', 'enabled': True}],
         '_postman_variable_scope': 'environment'}
    return 'Documents/postman/prod.postman_environment.json', json.dumps(d, indent='\t') + '\n'

@neg
def http_file_vars():
    return proj() + '/requests.http', T('''
        @baseUrl = https://api.example.com
        @requestId = @@u@@

        ### list
        GET {{baseUrl}}/v1/items
        Authorization: Bearer {{token}}

        ### create
        POST {{baseUrl}}/v1/items
        X-Api-Key: {{$dotenv API_KEY}}
        If-None-Match: @@e@@
        ''', u=uid(), e=etag())

@neg
def public_client_keys():
    c = R.randrange(3)
    if c == 0:
        return proj() + '/src/stripe.js', 'export const stripe = Stripe("%s");\n' % stripe_pub()
    if c == 1:
        return proj() + '/src/sentry.js', 'Sentry.init({ dsn: "%s", tracesSampleRate: 0.2 });\n' % sentry_dsn_public()
    return proj() + '/src/map.js', 'mapboxgl.accessToken = "%s";\n' % mapbox_public()

@neg
def jwt_public_jwks():
    d = {'keys': [{'kty': 'RSA', 'kid': b64u(20), 'use': 'sig', 'alg': 'RS256', 'n': b64u(256), 'e': 'AQAB'}]}
    return proj() + '/config/jwks.json', json.dumps(d, indent=2) + '\n'

# ======================= Shell =======================
SAFE_HIST = ['export AWS_PROFILE=prod', 'aws sso login --profile prod', 'gh auth login --with-token < ~/token.txt',
             'echo "$REGISTRY_PASSWORD" | docker login -u dsmith --password-stdin registry.acme.io',
             'read -s PGPASSWORD && export PGPASSWORD', 'mysql -h db.local -u root -p shop', 'vault login -method=oidc',
             'kubectl get secret api-db -o jsonpath="{.data.password}" | base64 -d', 'sha256sum ubuntu.iso',
             'git checkout %s' % 'a' * 0 + 'git show HEAD~3', 'export OPENAI_API_KEY=$(pass show openai)',
             'curl -H "Authorization: token $GITHUB_TOKEN" https://api.github.com/user', 'ssh-keygen -t ed25519 -C me@laptop',
             'docker pull nginx@sha256:0000', 'export PASSWORD_STORE_DIR=~/.pass', 'psql "$DATABASE_URL"', 'htop', 'ls -la', 'git log --oneline -5']

def safe_hist_lines():
    ls = R.sample(SAFE_HIST, 10)
    return [l.replace('sha256:0000', image_digest()) for l in ls] + ['git cherry-pick ' + sha1(), 'aws sts get-caller-identity']

@neg
def bash_history_safe():
    return '.bash_history', '\n'.join(safe_hist_lines()) + '\n'

@neg
def zsh_history_safe():
    t = R.randint(1690000000, 1710000000)
    out = []
    for l in safe_hist_lines():
        t += R.randint(3, 900)
        out.append(': %d:%d;%s' % (t, R.randint(0, 30), l))
    return '.zsh_history', '\n'.join(out) + '\n'

@neg
def crontab_safe():
    return 'crontab.bak', T('''
        MAILTO=me@example.org
        0 3 * * * . $HOME/.backup.env && restic backup --password-file ~/.config/restic/pw /home/me/Documents
        */5 * * * * curl -fsS -m 10 --retry 5 https://hc-ping.com/@@u@@ > /dev/null
        @weekly /usr/bin/certbot renew --quiet
        ''', u=uid())

@neg
def sshpass_safe():
    c = R.randrange(2)
    if c == 0:
        return 'bin/deploy.sh', '#!/bin/bash\nset -euo pipefail\nexport SSHPASS="$(pass show deploy/web1)"\nsshpass -e rsync -az ./dist/ deploy@web1:/var/www/\n'
    return 'bin/sync.sh', '#!/bin/sh\nsshpass -f "$HOME/.config/deploy/pass" ssh deploy@web1 uptime\n'

@neg
def expect_safe():
    return 'bin/login.exp', T('''
        #!/usr/bin/expect -f
        set password [lindex $argv 0]
        set otp $env(OTP_CODE)
        spawn ssh admin@192.168.1.1
        expect "password:"
        send "$password\\r"
        expect "Verification code:"
        send "$otp\\r"
        interact
        ''')

@neg
def secretsmanager_refs():
    return proj() + '/deploy/task-definition.json', json.dumps({'family': 'api', 'containerDefinitions': [{'name': 'api', 'image': '123456789012.dkr.ecr.eu-west-1.amazonaws.com/api@' + image_digest(),
        'secrets': [{'name': 'DB_PASSWORD', 'valueFrom': 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-%s:password::' % rs(6)},
                    {'name': 'API_KEY', 'valueFrom': 'arn:aws:ssm:eu-west-1:123456789012:parameter/prod/api-key'}]}]}, indent=2) + '\n'

@neg
def gitconfig_safe():
    return '.gitconfig', T('''
        [user]
        \tname = Dana Smith
        \temail = dana@example.org
        \tsigningkey = @@k@@
        [gpg]
        \tformat = ssh
        [credential]
        \thelper = libsecret
        [url "git@github.com:"]
        \tinsteadOf = https://github.com/
        ''', k=ssh_pubkey())

@neg
def wireguard_pub():
    return 'Documents/vpn/peers.txt', 'server PublicKey = %s\nlaptop PublicKey = %s\nphone PublicKey = %s\nEndpoint = vpn.example.net:51820\n' % (wg_key(), wg_key(), wg_key())

@neg
def ovpn_safe():
    return 'Documents/vpn/office.ovpn', 'client\ndev tun\nremote vpn.example.net 1194\nauth-user-pass ~/.config/vpn/creds\n<ca>\n%s</ca>\n<cert>\n%s</cert>\nkey /home/me/.config/vpn/client.key\n' % (cert_pem(), cert_pem())

@neg
def nuget_placeholders():
    return '.nuget/NuGet/NuGet.Config', T('''
        <?xml version="1.0" encoding="utf-8"?>
        <configuration>
          <packageSources><add key="github" value="https://nuget.pkg.github.com/acme/index.json" /></packageSources>
          <packageSourceCredentials>
            <github>
              <add key="Username" value="%NUGET_USER%" />
              <add key="ClearTextPassword" value="%NUGET_TOKEN%" />
            </github>
          </packageSourceCredentials>
        </configuration>
        ''')

@neg
def m2_encrypted():
    return '.m2/settings.xml', '<settings>\n  <servers>\n    <server>\n      <id>nexus</id>\n      <username>${env.NEXUS_USER}</username>\n      <password>${env.NEXUS_PASSWORD}</password>\n    </server>\n  </servers>\n</settings>\n'
