"""Value generators for the p8 corpus. Every generator takes the per-seed G object."""
import base64, hashlib, json, string, struct, zlib, hmac
import keys as K

UP = string.ascii_uppercase; LO = string.ascii_lowercase; DG = string.digits
AN = UP + LO + DG; HEX = '0123456789abcdef'; B62 = DG + UP + LO
URLSAFE = AN + '_-'; B64 = AN + '+/'

FIRST = ['alice', 'bruno', 'chen', 'dana', 'emeka', 'farah', 'goran', 'hana', 'ivan', 'jules', 'kofi', 'lena',
         'mateo', 'nadia', 'omar', 'priya', 'quinn', 'rosa', 'sven', 'tomas', 'uma', 'viktor', 'wen', 'yusuf', 'zoe']
LAST = ['okafor', 'lindqvist', 'moreau', 'tanaka', 'kowalski', 'haddad', 'silva', 'novak', 'brennan', 'iyer',
        'schulz', 'petrov', 'garcia', 'nakamura', 'dubois', 'olsen']
WORDS = ['maple', 'harbor', 'copper', 'violet', 'tundra', 'falcon', 'ember', 'quartz', 'meadow', 'cobalt', 'lantern',
         'river', 'saffron', 'glacier', 'pepper', 'orbit', 'willow', 'basalt', 'cinder', 'juniper', 'mango', 'nimbus',
         'otter', 'prairie', 'raven', 'sierra', 'thistle', 'umber', 'velvet', 'walnut', 'yarrow', 'zephyr', 'badger',
         'canyon', 'dolphin', 'fjord', 'garnet', 'hazel', 'indigo', 'jasper', 'kestrel', 'lichen', 'marble', 'nectar']
PROJ = ['invoice-api', 'photo-sorter', 'homelab', 'dotfiles', 'blog', 'shopfront', 'data-pipeline', 'ml-experiments',
        'infra', 'mobile-app', 'crm-sync', 'weather-bot', 'ledger', 'inventory-svc', 'portfolio', 'chat-relay',
        'telemetry', 'billing-worker', 'wiki', 'status-page']
COMPANY = ['acmecorp', 'northwind', 'globex', 'initech', 'umbrella-labs', 'hooli', 'vandelay', 'stark-ind',
           'wayne-ent', 'tyrell', 'cyberdyne', 'soylent', 'aperture-sci', 'massive-dyn', 'oceanic-air']
TLD = ['com', 'io', 'net', 'dev', 'co', 'org', 'app', 'cloud']
REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-2', 'ap-northeast-1', 'ca-central-1']
BIP = ['abandon', 'ability', 'able', 'about', 'above', 'absent', 'absorb', 'abstract', 'absurd', 'abuse', 'access',
       'accident', 'account', 'accuse', 'achieve', 'acid', 'acoustic', 'acquire', 'across', 'act', 'action', 'actor',
       'actress', 'actual', 'adapt', 'add', 'addict', 'address', 'adjust', 'admit', 'adult', 'advance', 'advice',
       'aerobic', 'affair', 'afford', 'afraid', 'again', 'age', 'agent', 'agree', 'ahead', 'aim', 'air', 'airport',
       'aisle', 'alarm', 'album', 'alcohol', 'alert', 'alien', 'all', 'alley', 'allow', 'almost', 'alone', 'alpha',
       'already', 'also', 'alter', 'always', 'amateur', 'amazing', 'among', 'amount', 'amused', 'analyst', 'anchor',
       'ancient', 'anger', 'angle', 'angry', 'animal', 'ankle', 'announce', 'annual', 'another', 'answer', 'antenna',
       'bacon', 'badge', 'bag', 'balance', 'balcony', 'ball', 'bamboo', 'banana', 'banner', 'bar', 'barely',
       'bargain', 'barrel', 'base', 'basic', 'basket', 'battle', 'beach', 'bean', 'beauty', 'because', 'become',
       'cabbage', 'cabin', 'cable', 'cactus', 'cage', 'cake', 'call', 'calm', 'camera', 'camp', 'canal', 'cancel',
       'dad', 'damage', 'damp', 'dance', 'danger', 'daring', 'dash', 'daughter', 'dawn', 'day', 'deal', 'debate',
       'eager', 'eagle', 'early', 'earn', 'earth', 'easily', 'east', 'easy', 'echo', 'ecology', 'economy', 'edge',
       'fabric', 'face', 'faculty', 'fade', 'faint', 'faith', 'fall', 'false', 'fame', 'family', 'famous', 'fan',
       'gadget', 'gain', 'galaxy', 'gallery', 'game', 'gap', 'garage', 'garbage', 'garden', 'garlic', 'garment',
       'habit', 'hair', 'half', 'hammer', 'hamster', 'hand', 'happy', 'harbor', 'hard', 'harsh', 'harvest', 'hat',
       'ice', 'icon', 'idea', 'identify', 'idle', 'ignore', 'ill', 'illegal', 'illness', 'image', 'imitate',
       'jacket', 'jaguar', 'jar', 'jazz', 'jealous', 'jeans', 'jelly', 'jewel', 'job', 'join', 'joke', 'journey',
       'kangaroo', 'keen', 'keep', 'ketchup', 'key', 'kick', 'kid', 'kidney', 'kind', 'kingdom', 'kiss', 'kit',
       'label', 'labor', 'ladder', 'lady', 'lake', 'lamp', 'language', 'laptop', 'large', 'later', 'latin', 'laugh',
       'machine', 'mad', 'magic', 'magnet', 'maid', 'mail', 'main', 'major', 'make', 'mammal', 'man', 'manage',
       'naive', 'name', 'napkin', 'narrow', 'nasty', 'nation', 'nature', 'near', 'neck', 'need', 'negative',
       'oak', 'obey', 'object', 'oblige', 'obscure', 'observe', 'obtain', 'obvious', 'occur', 'ocean', 'october',
       'paddle', 'page', 'pair', 'palace', 'palm', 'panda', 'panel', 'panic', 'panther', 'paper', 'parade',
       'quality', 'quantum', 'quarter', 'question', 'quick', 'quit', 'quiz', 'quote', 'rabbit', 'raccoon', 'race',
       'sad', 'saddle', 'sadness', 'safe', 'sail', 'salad', 'salmon', 'salon', 'salt', 'salute', 'same', 'sample',
       'table', 'tackle', 'tag', 'tail', 'talent', 'talk', 'tank', 'tape', 'target', 'task', 'taste', 'tattoo',
       'ugly', 'umbrella', 'unable', 'unaware', 'uncle', 'uncover', 'under', 'undo', 'unfair', 'unfold', 'unhappy',
       'vacant', 'vacuum', 'vague', 'valid', 'valley', 'valve', 'van', 'vanish', 'vapor', 'various', 'vast',
       'wage', 'wagon', 'wait', 'walk', 'wall', 'walnut', 'want', 'warfare', 'warm', 'warrior', 'wash', 'wasp',
       'yard', 'year', 'yellow', 'you', 'young', 'youth', 'zebra', 'zero', 'zone', 'zoo']

VAL = {}
def v(name):
    def deco(f):
        VAL[name] = f
        return f
    return deco

# ---------- non-secret context values ----------
@v('user')
def _user(g): return g.pick(FIRST)
@v('fullname')
def _fullname(g): return g.pick(FIRST).title() + ' ' + g.pick(LAST).title()
@v('company')
def _company(g): return g.pick(COMPANY)
@v('domain')
def _domain(g): return g.pick(COMPANY) + '.' + g.pick(TLD)
@v('email')
def _email(g): return '%s.%s@%s.%s' % (g.pick(FIRST), g.pick(LAST), g.pick(COMPANY), g.pick(TLD))
@v('host')
def _host(g): return '%s-%02d.%s.%s' % (g.pick(['db', 'pg', 'mysql', 'app', 'api', 'cache', 'mq', 'build']), g.r.randrange(1, 20), g.pick(['internal', 'prod', 'stage', 'lan']), g.pick(COMPANY) + '.' + g.pick(TLD))
@v('ip')
def _ip(g): return g.pick(['10.%d.%d.%d' % (g.r.randrange(256), g.r.randrange(256), g.r.randrange(1, 255)), '192.168.%d.%d' % (g.r.randrange(10), g.r.randrange(2, 250)), '172.%d.%d.%d' % (g.r.randrange(16, 32), g.r.randrange(256), g.r.randrange(1, 255))])
@v('pubip')
def _pubip(g): return '%d.%d.%d.%d' % (g.pick([51, 34, 52, 88, 95, 159, 167, 178, 185, 203]), g.r.randrange(256), g.r.randrange(256), g.r.randrange(1, 255))
@v('proj')
def _proj(g): return g.pick(PROJ)
@v('word')
def _word(g): return g.pick(WORDS)
@v('db')
def _db(g): return g.pick(['app', 'app_prod', 'analytics', 'billing', 'crm', 'inventory', 'wiki', 'shop'])
@v('dbuser')
def _dbuser(g): return g.pick(['app', 'admin', 'svc_api', 'readonly', 'postgres', 'root', 'deploy', 'etl'])
@v('port')
def _port(g): return str(g.pick([5432, 3306, 6379, 27017, 5672, 8080, 8443, 9000]))
@v('uuid')
def _uuid(g): h = g.hx(32); return '%s-%s-4%s-%s%s-%s' % (h[:8], h[8:12], h[13:16], g.pick('89ab'), h[17:20], h[20:32])
@v('hex8')
def _hex8(g): return g.hx(8)
@v('hex40')
def _hex40(g): return g.hx(40)
@v('hex64')
def _hex64(g): return g.hx(64)
@v('sha256')
def _sha256(g): return g.hx(64)
@v('ts')
def _ts(g): return str(g.r.randrange(1690000000, 1760000000))
@v('date')
def _date(g): return '20%02d-%02d-%02d' % (g.r.randrange(23, 26), g.r.randrange(1, 13), g.r.randrange(1, 29))
@v('region')
def _region(g): return g.pick(REGIONS)
@v('acct')
def _acct(g): return ''.join(g.pick(DG) for _ in range(12))
@v('n')
def _n(g): return str(g.r.randrange(2, 99))
@v('aws_id')
def _aws_id(g): return 'AKIA' + g.s(16, UP + '234567')
@v('asia_id')
def _asia_id(g): return 'ASIA' + g.s(16, UP + '234567')
@v('twilio_sid')
def _twsid(g): return 'AC' + g.hx(32)
@v('gcp_proj')
def _gcpp(g): return '%s-%s-%d' % (g.pick(WORDS), g.pick(['prod', 'dev', 'staging', 'lab']), g.r.randrange(100000, 999999))
@v('scw_access')
def _scwa(g): return 'SCW' + g.s(17, UP + DG)
@v('ocid')
def _ocid(g): return 'ocid1.%s.oc1..aaaaaaaa%s' % (g.pick(['user', 'tenancy', 'compartment']), g.s(52, LO + DG))
@v('fpr_colon')
def _fprc(g): return ':'.join(g.hx(2) for _ in range(16))
@v('hist')
def _hist(g):
    cmds = ['ls -la', 'cd ~/projects/%s' % g.pick(PROJ), 'git status', 'git pull --rebase', 'git log --oneline -20',
            'docker ps', 'kubectl get pods -n %s' % g.pick(['default', 'prod', 'monitoring']), 'vim ~/.zshrc',
            'make test', 'npm run dev', 'python3 -m venv .venv', 'source .venv/bin/activate',
            'pip install -r requirements.txt', 'htop', 'df -h', 'ssh %s@%s' % (g.pick(FIRST), g.pick(['bastion', 'nas', 'pi4', 'build01'])),
            'tail -f /var/log/syslog', 'brew upgrade', 'sudo apt update && sudo apt upgrade -y', 'terraform plan',
            'cargo build --release', 'go test ./...', 'rg TODO', 'tmux attach -t main', 'git checkout -b fix/%s' % g.pick(WORDS),
            'docker compose up -d', 'journalctl --user -u syncthing -f', 'ping -c 3 1.1.1.1', 'du -sh * | sort -h',
            'code .', 'gh pr list', 'aws s3 ls', 'history | grep ssh', 'z %s' % g.pick(PROJ), 'exit']
    return '\n'.join(g.pick(cmds) for _ in range(g.r.randrange(6, 14)))
@v('zhist')
def _zhist(g):
    t = g.r.randrange(1700000000, 1750000000)
    out = []
    for line in _hist(g).split('\n'):
        t += g.r.randrange(5, 900)
        out.append(': %d:0;%s' % (t, line))
    return '\n'.join(out)
@v('zts')
def _zts(g): return ': %d:0;' % g.r.randrange(1750000000, 1760000000)

# ---------- passwords ----------
PWSYM = '!*-_.+'
@v('pw')
def pw(g):
    st = g.r.randrange(5)
    if st == 0:
        return g.pick(UP + LO) + ''.join(g.pick(AN + PWSYM) for _ in range(g.r.randrange(13, 22)))
    if st == 1:
        return '%s-%s-%d%s' % (g.pick(WORDS).title(), g.pick(WORDS).title(), g.r.randrange(10, 9999), g.pick('!*.+'))
    if st == 2:
        return '.'.join(g.pick(WORDS) for _ in range(3)) + '.%d' % g.r.randrange(10, 99)
    if st == 3:
        return g.pick(LO) + g.s(19, AN)
    return '%s%s%d%s' % (g.pick(WORDS).title(), g.pick(['#', '@', '&', '']), g.r.randrange(1970, 2026), g.pick('!?*'))
@v('pw_url')
def pw_url(g):
    st = g.r.randrange(3)
    if st == 0: return g.pick(LO) + g.s(g.r.randrange(15, 26), AN)
    if st == 1: return g.pick(UP) + g.s(11, AN) + g.pick('-_.~') + g.s(6, AN)
    return '%s%s%d' % (g.pick(WORDS), g.pick(WORDS).title(), g.r.randrange(100, 9999))
@v('pw_b64')
def _pwb64(g): return base64.b64encode(pw(g).encode()).decode()
@v('basic_b64')
def _basicb64(g): return base64.b64encode(('%s:%s' % (g.pick(FIRST), pw_url(g))).encode()).decode()
@v('psk')
def _psk(g): return g.pick([lambda: '%s %s %s %d' % (g.pick(WORDS), g.pick(WORDS), g.pick(WORDS), g.r.randrange(10, 99)), lambda: g.s(16, AN), lambda: '%s%s%d!' % (g.pick(WORDS).title(), g.pick(WORDS).title(), g.r.randrange(100, 999))])()
@v('gmail_app')
def _gapp(g): return ' '.join(g.s(4, LO) for _ in range(4))

# ---------- provider tokens ----------
def _b62(n, w):
    s = ''
    while n:
        n, r = divmod(n, 62); s = B62[r] + s
    return s.rjust(w, '0')
def gh_checksum_token(g, prefix):
    body = g.s(30, AN)
    return prefix + body + _b62(zlib.crc32(body.encode()) & 0xffffffff, 6)
@v('ghp')
def _ghp(g): return gh_checksum_token(g, 'ghp_')
@v('gho')
def _gho(g): return gh_checksum_token(g, 'gho_')
@v('ghs')
def _ghs(g): return gh_checksum_token(g, 'ghs_')
@v('gh_fine')
def _ghf(g): return 'github_pat_11' + g.s(20, UP + DG) + '_' + g.s(59, AN)
@v('gh_hex40')
def _ghh(g): return g.hx(40)
@v('npm')
def _npm(g): return gh_checksum_token(g, 'npm_')
@v('glpat')
def _glpat(g): return 'glpat-' + g.s(20, URLSAFE)
@v('xoxb')
def _xoxb(g): return 'xoxb-%s-%s-%s' % (g.s(11, DG), g.s(13, DG), g.s(24, AN))
@v('xoxp')
def _xoxp(g): return 'xoxp-%s-%s-%s-%s' % (g.s(11, DG), g.s(11, DG), g.s(13, DG), g.hx(32))
@v('slack_hook')
def _slh(g): return 'https://hooks.slack.com/services/T%s/B%s/%s' % (g.s(8, UP + DG), g.s(10, UP + DG), g.s(24, AN))
@v('discord_hook')
def _dh(g): return 'https://discord.com/api/webhooks/%s/%s' % ('1' + g.s(18, DG), g.s(68, URLSAFE))
@v('teams_hook')
def _th(g): return 'https://%s.webhook.office.com/webhookb2/%s@%s/IncomingWebhook/%s/%s' % (g.pick(COMPANY).replace('-', ''), _uuid(g), _uuid(g), g.hx(32), _uuid(g))
@v('mm_hook')
def _mmh(g): return 'https://chat.%s/hooks/%s' % (_domain(g), g.s(26, LO + DG))
@v('gchat_hook')
def _gch(g): return 'https://chat.googleapis.com/v1/spaces/AAAA%s/messages?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token=%s%%3D' % (g.s(7, URLSAFE), g.s(43, URLSAFE))
@v('tg_bot')
def _tg(g): return '%s%s:AA%s' % (g.pick('5678'), g.s(9, DG), g.s(33, URLSAFE))
@v('discord_bot')
def _dbot(g): return '%s.%s.%s' % (base64.b64encode(('1' + g.s(18, DG)).encode()).decode().rstrip('='), g.s(6, URLSAFE), g.s(38, URLSAFE))
@v('aws_secret')
def _aws_secret(g): return g.s(40, AN + '/+')
@v('aws_session')
def _aws_sess(g): return 'IQoJb3JpZ2luX2VjE' + g.s(g.r.randrange(300, 400), AN + '/+') + '='
@v('openai')
def _oai(g): return 'sk-proj-' + g.s(74, URLSAFE) + 'T3BlbkFJ' + g.s(74, URLSAFE)
@v('openai_legacy')
def _oail(g): return 'sk-' + g.s(20, AN) + 'T3BlbkFJ' + g.s(20, AN)
@v('anthropic')
def _ant(g): return 'sk-ant-api03-' + g.s(93, URLSAFE) + 'AA'
@v('google_api')
def _gapi(g): return 'AIza' + g.s(35, URLSAFE)
@v('gocspx')
def _gocspx(g): return 'GOCSPX-' + g.s(28, URLSAFE)
@v('stripe')
def _stripe(g): return g.pick(['sk_live_' + g.s(24, AN), 'sk_live_51' + g.s(97, AN)])
@v('stripe_rk')
def _stripe_rk(g): return 'rk_live_51' + g.s(97, AN)
@v('sendgrid')
def _sg(g): return 'SG.' + g.s(22, URLSAFE) + '.' + g.s(43, URLSAFE)
@v('mailgun')
def _mg(g): return 'key-' + g.hx(32)
@v('hex32')
def _hex32(g): return g.hx(32)
@v('groq')
def _groq(g): return 'gsk_' + g.s(52, AN)
@v('hf')
def _hf(g): return 'hf_' + g.s(34, UP + LO)
@v('replicate')
def _rep(g): return 'r8_' + g.s(37, AN)
@v('notion')
def _notion(g): return g.pick(['secret_' + g.s(43, AN), 'ntn_' + g.s(11, DG) + g.s(35, AN)])
@v('linear')
def _lin(g): return 'lin_api_' + g.s(40, AN)
@v('airtable')
def _air(g): return 'pat' + g.s(14, AN) + '.' + g.hx(64)
@v('shopify')
def _shop(g): return 'shpat_' + g.hx(32)
@v('cf_token')
def _cft(g): return g.s(40, URLSAFE)
@v('cf_global')
def _cfg(g): return g.hx(37)
@v('nrak')
def _nrak(g): return 'NRAK-' + g.s(27, UP + DG)
@v('dapi')
def _dapi(g): return 'dapi' + g.hx(32)
@v('fcm')
def _fcm(g): return 'AAAA' + g.s(7, URLSAFE) + ':APA91b' + g.s(134, URLSAFE)
@v('sntryu')
def _sntryu(g): return 'sntryu_' + g.hx(64)
@v('dop')
def _dop(g): return 'dop_v1_' + g.hx(64)
@v('hcloud')
def _hcl(g): return g.s(64, AN)
@v('hvs')
def _hvs(g): return 'hvs.CAESI' + g.s(86, URLSAFE)
@v('tfc')
def _tfc(g): return g.s(14, AN) + '.atlasv1.' + g.s(67, AN)
@v('dckr')
def _dckr(g): return 'dckr_pat_' + g.s(27, URLSAFE)
@v('azure_secret')
def _azs(g): return g.s(3, AN) + g.pick(DG) + 'Q~' + g.s(34, AN + '_-.~')
@v('azure_storage_key')
def _azk(g): return base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(64))).decode()
@v('linode')
def _lin_t(g): return g.hx(64)
@v('cio')
def _cio(g): return 'cio' + g.s(32, AN)
@v('rubygems')
def _rg(g): return 'rubygems_' + g.hx(48)
@v('nuget')
def _nuget(g): return 'oy2' + g.s(43, LO + DG)
@v('pypi')
def _pypi(g): return 'pypi-AgEIcHlwaS5vcmcCJ' + g.s(g.r.randrange(150, 190), URLSAFE)
@v('pulumi')
def _pul(g): return 'pul-' + g.hx(40)
@v('nfp')
def _nfp(g): return 'nfp_' + g.s(36, AN)
@v('vercel')
def _vercel(g): return g.s(24, AN)
@v('fly')
def _fly(g): return 'fo1_' + g.s(43, URLSAFE)
@v('circle')
def _circle(g): return 'CCIPAT_' + g.s(22, AN) + '_' + g.hx(40)
@v('atlassian')
def _atl(g): return 'ATATT3xFfGF0' + g.s(170, URLSAFE) + '=' + g.hx(8).upper()
@v('exo_key')
def _exok(g): return 'EXO' + g.hx(24)
@v('exo_secret')
def _exos(g): return g.s(43, URLSAFE)
@v('aliyun_id')
def _aliid(g): return 'LTAI5t' + g.s(18, AN)
@v('aliyun_secret')
def _alis(g): return g.s(30, AN)
@v('jenkins')
def _jen(g): return '11' + g.hx(32)
@v('bkua')
def _bkua(g): return 'bkua_' + g.hx(40)
@v('okta')
def _okta(g): return '00' + g.s(40, URLSAFE)
@v('squ')
def _squ(g): return 'squ_' + g.hx(40)
@v('pmak')
def _pmak(g): return 'PMAK-' + g.hx(24) + '-' + g.hx(34)
@v('hex128')
def _hex128(g): return g.hx(128)
@v('django_key')
def _dj(g): return g.s(50, LO + DG + '!@#%^&*(-_=+)')
@v('alnum32')
def _an32(g): return g.s(32, AN)
@v('alnum40')
def _an40(g): return g.s(40, AN)
@v('b64_32')
def _b6432(g): return base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(32))).decode()
@v('ya29')
def _ya29(g): return 'ya29.a0' + g.s(g.r.randrange(160, 200), URLSAFE)
@v('g_refresh')
def _gref(g): return '1//0' + g.pick(['g', '3', '9', 'e', '5']) + g.s(g.r.randrange(95, 105), URLSAFE)
@v('totp_secret')
def _totp(g): return g.s(32, UP + '234567')
@v('rclone_obscured')
def _rclo(g): return K.b64u(bytes(g.r.getrandbits(8) for _ in range(16 + g.r.randrange(10, 24))))
@v('gh_session')
def _ghsess(g): return g.s(48, URLSAFE)
@v('django_session')
def _djs(g): return g.s(32, LO + DG)
@v('psid')
def _psid(g): return 'g.a000' + g.s(g.r.randrange(60, 70), URLSAFE) + '0076'
@v('heroku_uuid')
def _hru(g): return _uuid(g)
@v('doppler')
def _doppler(g): return 'dp.pt.' + g.s(43, AN)
@v('op_sa')
def _opsa(g): return 'ops_eyJ' + g.s(g.r.randrange(600, 700), URLSAFE)
@v('glsa')
def _glsa(g): return 'glsa_' + g.s(32, AN) + '_' + g.hx(8)
@v('recovery_codes_gh')
def _rcgh(g): return '\n'.join('%s-%s' % (g.hx(5), g.hx(5)) for _ in range(16))
@v('backup_codes_google')
def _bcg(g): return '\n'.join('%d. %s %s' % (i + 1, g.s(4, DG), g.s(4, DG)) for i in range(10))
@v('seed12')
def _seed(g): return ' '.join(g.pick(BIP) for _ in range(12))
@v('api32')
def _api32(g): return g.s(32, AN)

# ---------- JWT-ish ----------
@v('jwt_service_role')
def _jwtsr(g):
    ref = g.s(20, LO)
    iat = g.r.randrange(1690000000, 1720000000)
    return K.jwt_hs256({'alg': 'HS256', 'typ': 'JWT'}, {'iss': 'supabase', 'ref': ref, 'role': 'service_role', 'iat': iat, 'exp': iat + 315360000}, g.r.getrandbits(256).to_bytes(32, 'big'))
@v('jwt_access')
def _jwta(g):
    iat = g.r.randrange(1750000000, 1760000000)
    return K.jwt_hs256({'alg': 'HS256', 'typ': 'JWT'}, {'sub': _uuid(g), 'email': _email(g), 'scope': 'read write', 'iat': iat, 'exp': iat + 86400 * 30}, g.r.getrandbits(256).to_bytes(32, 'big'))
@v('k8s_sa_token')
def _k8ssa(g):
    h = K.b64u(json.dumps({'alg': 'RS256', 'kid': g.s(43, URLSAFE)}, separators=(',', ':')).encode())
    ns = g.pick(['default', 'ci', 'kube-system', 'monitoring'])
    p = K.b64u(json.dumps({'iss': 'kubernetes/serviceaccount', 'kubernetes.io/serviceaccount/namespace': ns,
                           'kubernetes.io/serviceaccount/secret.name': 'deployer-token-' + g.s(5, LO + DG),
                           'kubernetes.io/serviceaccount/service-account.name': 'deployer',
                           'kubernetes.io/serviceaccount/service-account.uid': _uuid(g), 'sub': 'system:serviceaccount:%s:deployer' % ns},
                          separators=(',', ':')).encode())
    return h + '.' + p + '.' + K.b64u(bytes(g.r.getrandbits(8) for _ in range(256)))
@v('jfrog_token')
def _jfrog(g):
    h = K.b64u(json.dumps({'ver': '2', 'typ': 'JWT', 'alg': 'RS256', 'kid': g.s(43, URLSAFE)}, separators=(',', ':')).encode())
    p = K.b64u(json.dumps({'sub': 'jfrt@01h%s/users/%s' % (g.s(23, LO + DG), g.pick(FIRST)), 'scp': 'applied-permissions/user', 'aud': '*@*', 'iss': 'jfrt@01h' + g.s(23, LO + DG), 'iat': g.r.randrange(1700000000, 1750000000)}, separators=(',', ':')).encode())
    return h + '.' + p + '.' + K.b64u(bytes(g.r.getrandbits(8) for _ in range(256)))

# ---------- private keys ----------
@v('ssh_ed25519')
def _sshed(g): return K.openssh_priv(K.ed_key(g.r), g.r, '%s@%s' % (g.pick(FIRST), g.pick(['laptop', 'thinkpad', 'mbp', 'desktop', 'workstation'])))
@v('ssh_rsa')
def _sshrsa(g): return K.openssh_priv(K.rsa_key(g.r), g.r, '%s@%s' % (g.pick(FIRST), g.pick(['laptop', 'thinkpad', 'mbp'])))
@v('ssh_ecdsa')
def _sshec(g): return K.openssh_priv(K.ec_key(g.r), g.r, '%s@%s' % (g.pick(FIRST), g.pick(['nas', 'pi4', 'desktop'])))
@v('rsa_pkcs1')
def _rsap1(g): return K.pem_trad(K.rsa_key(g.r))
@v('rsa1024_pkcs1')
def _rsa1k(g): return K.pem_trad(K.rsa_key(g.r, 1024))
@v('rsa_pkcs8')
def _rsap8(g): return K.pem_pkcs8(K.rsa_key(g.r))
@v('ec_sec1')
def _ecs1(g): return K.pem_trad(K.ec_key(g.r))
@v('ec384_sec1')
def _ecs384(g): return K.pem_trad(K.ec_key(g.r, 'p384'))
@v('ec_pkcs8')
def _ecp8(g): return K.pem_pkcs8(K.ec_key(g.r))
@v('ed_pkcs8')
def _edp8(g): return K.pem_pkcs8(K.ed_key(g.r))
@v('ec_pkcs8_escaped')
def _ecp8e(g): return K.pem_pkcs8(K.ec_key(g.r)).replace('\n', '\\n')
@v('ec_pkcs8_b64')
def _ecp8b(g): return base64.b64encode(K.pem_trad(K.ec_key(g.r)).encode()).decode()
@v('ec_pkcs8_b64_p8')
def _ecp8b8(g): return base64.b64encode(K.pem_pkcs8(K.ec_key(g.r)).encode()).decode()
@v('ec_pkcs8_indent4')
def _ecp8i(g): return K.pem_pkcs8(K.ec_key(g.r)).strip().replace('\n', '\n    ')
@v('ec_pkcs8_indent6')
def _ecp8i6(g): return K.pem_pkcs8(K.ec_key(g.r)).strip().replace('\n', '\n      ')
@v('pgp_priv')
def _pgpp(g):
    s, _, _ = K.pgp_keys(K.ed_key(g.r), '%s <%s>' % (_fullname(g), _email(g)), g.r.randrange(1600000000, 1750000000))
    return s
@v('ppk')
def _ppk(g): return K.ppk_ed25519(K.ed_key(g.r), 'eddsa-key-2024%02d%02d' % (g.r.randrange(1, 13), g.r.randrange(1, 29)))
def _age_ctx(g):
    if 'age' not in g.ctx:
        g.ctx['age'] = K.age_pair(g.r)
    return g.ctx['age']
@v('age_secret')
def _agesec(g): return _age_ctx(g)[0]
@v('age_pub_ctx')
def _agepubc(g): return _age_ctx(g)[1]
@v('age_pub')
def _agepub(g): return K.age_pair(g.r)[1]
@v('wg_priv')
def _wgp(g): s, p = K.wg_pair(g.r); return s
@v('wg_pub')
def _wgpub(g): return K.wg_pair(g.r)[1]
@v('gcp_sa_key')
def _gcpsa(g): return K.pem_pkcs8(K.rsa_key(g.r)).replace('\n', '\\n')
@v('jwk_private')
def _jwkp(g):
    d = K.jwk_ec_private(K.ec_key(g.r)); d['kid'] = g.s(16, URLSAFE); d['use'] = 'sig'; d['alg'] = 'ES256'
    return json.dumps({'keys': [d]}, indent=2)
@v('cert_key_bundle')
def _ckb(g):
    k = K.ec_key(g.r); cn = 'www.' + _domain(g)
    return K.cert(k, cn, serial=g.r.getrandbits(64), sans=[cn]) + K.pem_pkcs8(k)
@v('ovpn_bundle')
def _ovpn(g):
    ca = K.ed_key(g.r); k = K.ec_key(g.r)
    return '<ca>\n%s</ca>\n<cert>\n%s</cert>\n<key>\n%s</key>' % (
        K.cert(ca, 'OpenVPN CA', ca=True, serial=g.r.getrandbits(64)),
        K.cert(k, 'client-' + g.pick(FIRST), issuer_key=ca, issuer_cn='OpenVPN CA', serial=g.r.getrandbits(64)),
        K.pem_pkcs8(k))
@v('cloudflared_cert')
def _cfcert(g):
    k = K.ec_key(g.r)
    tok = base64.b64encode(json.dumps({'zoneID': g.hx(32), 'accountID': g.hx(32), 'apiToken': g.s(40, URLSAFE)}).encode()).decode()
    tl = '\n'.join(tok[i:i + 64] for i in range(0, len(tok), 64))
    return K.pem_pkcs8(k) + K.cert(k, 'cloudflared', serial=g.r.getrandbits(64)) + '-----BEGIN ARGO TUNNEL TOKEN-----\n' + tl + '\n-----END ARGO TUNNEL TOKEN-----\n'

# ---------- public material (negatives) ----------
@v('ssh_pub_ed')
def _spe(g): return K.ssh_pub(K.ed_key(g.r), '%s@%s' % (g.pick(FIRST), g.pick(['laptop', 'mbp', 'desktop'])))
@v('ssh_pub_ec')
def _spec(g): return K.ssh_pub(K.ec_key(g.r), '%s@%s' % (g.pick(FIRST), g.pick(['nas', 'pi4'])))
@v('pgp_pub')
def _pgppub(g):
    _, p, _ = K.pgp_keys(K.ed_key(g.r), '%s <%s>' % (_fullname(g), _email(g)), g.r.randrange(1600000000, 1750000000)); return p
@v('pem_pub')
def _pempub(g): return K.pem_pub(K.ec_key(g.r))
@v('cert')
def _cert(g):
    k = K.ed_key(g.r); cn = 'www.' + _domain(g); return K.cert(k, cn, serial=g.r.getrandbits(64), sans=[cn])
@v('cert_ca')
def _certca(g): return K.cert(K.ed_key(g.r), '%s Root CA' % g.pick(COMPANY).title(), ca=True, serial=g.r.getrandbits(64))
@v('cert_b64')
def _certb64(g): return base64.b64encode(_certca(g).encode()).decode()
@v('pgp_msg')
def _pgpmsg(g): return K.pgp_message(g.r, g.r.randrange(200, 500))
@v('jwk_pub_set')
def _jwks(g):
    ks = []
    for _ in range(2):
        d = K.jwk_ec_private(K.ec_key(g.r)); d.pop('d'); d['kid'] = g.s(16, URLSAFE); d['use'] = 'sig'; d['alg'] = 'ES256'; ks.append(d)
    return json.dumps({'keys': ks}, indent=2)
@v('known_hosts_line')
def _khl(g):
    salt = base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(20))).decode()
    hh = base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(20))).decode()
    return '|1|%s|%s %s' % (salt, hh, K.ssh_pub(K.ed_key(g.r)))
@v('keygrip')
def _kg(g): return g.hx(40).upper()
@v('fpr')
def _fpr(g): return g.hx(40).upper()
@v('sshfp')
def _sshfp(g): return 'SHA256:' + base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(32))).decode().rstrip('=')
@v('sri')
def _sri(g): return 'sha384-' + base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(48))).decode()
@v('sha512_integrity')
def _sha512i(g): return 'sha512-' + base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(64))).decode()
@v('bcrypt')
def _bcrypt(g): return '$2y$10$' + g.s(53, AN + './')
@v('sha512crypt')
def _sha512c(g): return '$6$' + g.s(16, AN + './') + '$' + g.s(86, AN + './')
@v('argon2')
def _argon(g): return '$argon2id$v=19$m=65536,t=3,p=4$' + K.b64u(bytes(g.r.getrandbits(8) for _ in range(16))) + '$' + K.b64u(bytes(g.r.getrandbits(8) for _ in range(32)))
@v('pbkdf2')
def _pbkdf2(g): return 'pbkdf2_sha256$600000$' + g.s(22, AN) + '$' + base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(32))).decode()
@v('vault_blob')
def _vblob(g):
    h = g.hx(80 * 6 + 40)
    return '\n'.join(h[i:i + 80] for i in range(0, len(h), 80))
@v('sops_enc')
def _sopse(g): return 'ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:str]' % (base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(g.r.randrange(12, 30)))).decode(), base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(32))).decode(), base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(16))).decode())
@v('age_armored')
def _agearm(g):
    b = base64.b64encode(b'age-encryption.org/v1\n-> X25519 ' + K.b64u(bytes(g.r.getrandbits(8) for _ in range(32))).encode() + b'\n' + bytes(g.r.getrandbits(8) for _ in range(g.r.randrange(150, 300)))).decode()
    return '-----BEGIN AGE ENCRYPTED FILE-----\n' + '\n'.join(b[i:i + 64] for i in range(0, len(b), 64)) + '\n-----END AGE ENCRYPTED FILE-----'
@v('sealed')
def _sealed(g): return 'AgB' + base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(g.r.randrange(500, 700)))).decode()
@v('fernet')
def _fernet(g): return 'gAAAAAB' + K.b64u(bytes(g.r.getrandbits(8) for _ in range(g.r.randrange(80, 120))))
@v('png_b64')
def _pngb64(g): return base64.b64encode(b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR' + bytes(g.r.getrandbits(8) for _ in range(g.r.randrange(120, 260)))).decode()
@v('docker_id')
def _dockid(g): return g.hx(64)
@v('eth_addr')
def _eth(g): return '0x' + g.s(40, '0123456789abcdefABCDEF')
@v('btc_addr')
def _btc(g): return K.bech32('bc', bytes([0]) + bytes(g.r.getrandbits(8) for _ in range(20)))[:3] + g.s(39, '023456789acdefghjklmnpqrstuvwxyz')
@v('cid')
def _cid(g): return 'bafybei' + g.s(52, 'abcdefghijklmnopqrstuvwxyz234567')
@v('nix_hash')
def _nixh(g): return g.s(32, '0123456789abcdfghijklmnpqrsvwxyz')
@v('narhash')
def _narh(g): return 'sha256-' + base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(32))).decode()
@v('go_h1')
def _goh1(g): return 'h1:' + base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(32))).decode()
@v('trace')
def _trace(g): return g.hx(32)
@v('span')
def _span(g): return g.hx(16)
@v('arn_role')
def _arnr(g): return 'arn:aws:iam::%s:role/%s' % (_acct(g), g.pick(['DeployRole', 'ReadOnly', 'TerraformApply', 'ci-runner']))
@v('gclient_id')
def _gcid(g): return '%s-%s.apps.googleusercontent.com' % (g.s(12, DG), g.s(32, LO + DG))
@v('machine_id')
def _mid(g): return g.hx(64)
@v('slack_chan')
def _slc(g): return 'C0' + g.s(9, UP + DG)
@v('git_sha')
def _gsha(g): return g.hx(40)
@v('short_sha')
def _ssha(g): return g.hx(7)
@v('keyid')
def _keyid(g): return g.hx(16).upper()
@v('pin')
def _pin(g): return base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(32))).decode()
@v('chunkhash')
def _chh(g): return g.hx(20)
@v('b64_blob')
def _b64blob(g): return base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(g.r.randrange(40, 80)))).decode()
@v('apple_kid')
def _akid(g): return g.s(10, UP + DG)
