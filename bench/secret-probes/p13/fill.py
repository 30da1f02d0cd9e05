"""p13 bulk filler: large, boring, credential-free content (configs, logs, dumps, HAR) that
positives hide one secret in and look-alikes are made of."""
import json

from vals import rs, rhex, rbytes, b64, guid, sha256hex, WORDS, B62, LO, DG, UP, domain, host, ts, username, email, bcrypt_hash

LEVELS = ['INFO'] * 12 + ['DEBUG'] * 6 + ['WARN'] * 2 + ['ERROR']
COMPONENTS = ['scheduler', 'http.server', 'db.pool', 'cache', 'sync.worker', 'auth', 'indexer', 'metrics', 'updater', 'fs.watch']


def _msg(r):
    k = r.randrange(9)
    if k == 0:
        return 'GET /api/v1/%s/%s 200 %dms' % (r.choice(['items', 'users', 'files', 'jobs']), guid(r), r.randrange(2, 900))
    if k == 1:
        return 'cache %s key=%s ttl=%d' % (r.choice(['hit', 'miss', 'evict']), rhex(r, 16), r.randrange(60, 3600))
    if k == 2:
        return 'synced %d files (%d bytes) in %.2fs' % (r.randrange(1, 400), r.randrange(10 ** 3, 10 ** 8), r.random() * 20)
    if k == 3:
        return 'job %s state=%s attempt=%d' % (guid(r), r.choice(['queued', 'running', 'done', 'failed']), r.randrange(1, 4))
    if k == 4:
        return 'connection pool size=%d idle=%d waiting=%d' % (r.randrange(5, 50), r.randrange(0, 20), r.randrange(0, 5))
    if k == 5:
        return 'etag mismatch for %s: %s != %s' % (r.choice(WORDS) + '.json', rhex(r, 32), rhex(r, 32))
    if k == 6:
        return 'user %s logged in from %d.%d.%d.%d (session %s)' % (username(r), r.randrange(10, 250), r.randrange(256),
                                                                   r.randrange(256), r.randrange(1, 255), rhex(r, 12))
    if k == 7:
        return 'checksum sha256=%s ok' % sha256hex(r)
    return ' '.join(r.choice(WORDS) for _ in range(r.randrange(4, 14)))


def app_log(r, size, win=False):
    lines, n = [], 0
    t = ts(r)
    sec = int(t.timestamp())
    import datetime
    while n < size:
        sec += r.randrange(0, 3)
        d = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc)
        if win:
            l = '%s,%03d %-5s [%s] %s' % (d.strftime('%Y-%m-%d %H:%M:%S'), r.randrange(1000), r.choice(LEVELS),
                                        r.choice(COMPONENTS), _msg(r))
        else:
            l = '%s.%03dZ %s %s: %s' % (d.strftime('%Y-%m-%dT%H:%M:%S'), r.randrange(1000), r.choice(LEVELS),
                                      r.choice(COMPONENTS), _msg(r))
        lines.append(l)
        n += len(l) + 1
    return lines


def app_config(r, size):
    cfg = {'version': '%d.%d.%d' % (r.randrange(1, 9), r.randrange(30), r.randrange(99)), 'buildId': rhex(r, 40),
           'env': 'production', 'services': {}, 'features': {}, 'routes': [], 'i18n': {}}
    for s in r.sample(['search', 'analytics', 'payments', 'maps', 'mail', 'storage', 'chat', 'auth', 'cdn'], 6):
        cfg['services'][s] = {'baseUrl': 'https://%s.%s' % (s, domain(r)), 'timeoutMs': r.choice([3000, 5000, 10000]),
                              'retries': r.randrange(4), 'region': r.choice(['eu-west-1', 'us-east-1', 'ap-south-1'])}
    n = len(json.dumps(cfg))
    while n < size:
        k = r.randrange(3)
        if k == 0:
            name = '%s_%s_%d' % (r.choice(WORDS), r.choice(WORDS), r.randrange(1000))
            v = {'enabled': r.random() < 0.5, 'rollout': r.randrange(101), 'variant': rhex(r, 8), 'updated': ts(r).isoformat()}
            cfg['features'][name] = v
            n += len(name) + 80
        elif k == 1:
            v = {'path': '/' + '/'.join(r.choice(WORDS) for _ in range(r.randrange(1, 4))), 'chunk': '%s.%s.js' % (r.choice(WORDS), rhex(r, 8)),
                 'id': guid(r), 'integrity': 'sha384-' + b64(rbytes(r, 48))}
            cfg['routes'].append(v)
            n += 190
        else:
            key = '%s.%s.%s' % (r.choice(WORDS), r.choice(WORDS), r.choice(['title', 'label', 'help', 'placeholder']))
            v = ' '.join(r.choice(WORDS) for _ in range(r.randrange(2, 12))).capitalize()
            cfg['i18n'][key] = v
            n += len(key) + len(v) + 6
    return cfg


def ext_storage(r, size):
    st = {'settings': {'theme': r.choice(['dark', 'light', 'auto']), 'syncEnabled': True, 'shortcut': 'Alt+Shift+S',
                       'installId': guid(r), 'lastSeenVersion': '%d.%d.%d' % (r.randrange(1, 6), r.randrange(20), r.randrange(50))},
          'cache': {}, 'history': [], 'stats': {'opened': r.randrange(10000), 'lastOpen': int(ts(r).timestamp() * 1000)}}
    n = 300
    while n < size:
        if r.random() < 0.5:
            k = 'repo:%s/%s' % (username(r), r.choice(WORDS) + '-' + r.choice(WORDS))
            st['cache'][k] = {'sha': rhex(r, 40), 'tree': rhex(r, 40), 'fetched': int(ts(r).timestamp() * 1000),
                              'etag': 'W/"%s"' % rhex(r, 32)}
            n += len(k) + 160
        else:
            st['history'].append({'url': 'https://%s/%s' % (domain(r), '/'.join(r.choice(WORDS) for _ in range(3))),
                                  'title': ' '.join(r.choice(WORDS) for _ in range(4)).title(), 'visitId': guid(r),
                                  'ts': int(ts(r).timestamp() * 1000)})
            n += 170
    return st


def sql_dump(r, size, secret_row=None, hashes=False):
    """mysqldump-like text. Returns (lines, index of the wp_options INSERT line)."""
    out = ['-- MySQL dump 10.13  Distrib 8.0.%d, for Linux (x86_64)' % r.randrange(20, 36), '--',
           '-- Host: localhost    Database: wordpress', '-- ------------------------------------------------------',
           '-- Server version\t8.0.%d' % r.randrange(20, 36), '',
           '/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;', '/*!50503 SET NAMES utf8mb4 */;', '']
    n = sum(len(l) + 1 for l in out)
    # users
    out += ['DROP TABLE IF EXISTS `wp_users`;', 'CREATE TABLE `wp_users` (', '  `ID` bigint unsigned NOT NULL AUTO_INCREMENT,',
            '  `user_login` varchar(60) NOT NULL,', '  `user_pass` varchar(255) NOT NULL,', '  `user_email` varchar(100) NOT NULL,',
            '  PRIMARY KEY (`ID`)', ') ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;', '']
    rows = []
    for i in range(1, r.randrange(20, 200)):
        ph = bcrypt_hash(r) if hashes else '$P$B' + rs(r, B62 + './', 30)
        rows.append("(%d,'%s','%s','%s')" % (i, username(r), ph, email(r)))
    out.append('INSERT INTO `wp_users` VALUES ' + ','.join(rows) + ';')
    # options (the secret row goes here)
    out += ['', 'DROP TABLE IF EXISTS `wp_options`;', 'CREATE TABLE `wp_options` (', '  `option_id` bigint unsigned NOT NULL AUTO_INCREMENT,',
            '  `option_name` varchar(191) NOT NULL,', '  `option_value` longtext NOT NULL,', '  `autoload` varchar(20) NOT NULL,',
            '  PRIMARY KEY (`option_id`)', ') ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;', '']
    rows = []
    for i in range(1, r.randrange(150, 400)):
        rows.append("(%d,'%s_%s','%s','%s')" % (i, r.choice(WORDS), r.choice(WORDS),
                                               r.choice([str(r.randrange(1000)), 'a:0:{}', guid(r), ' '.join(r.sample(WORDS, 3)), rhex(r, 32)]),
                                               r.choice(['yes', 'no'])))
    if secret_row:
        rows.insert(r.randrange(len(rows)), secret_row)
    out.append('INSERT INTO `wp_options` VALUES ' + ','.join(rows) + ';')
    opt_idx = len(out) - 1
    # posts: bulk
    out += ['', 'DROP TABLE IF EXISTS `wp_posts`;', 'CREATE TABLE `wp_posts` (', '  `ID` bigint unsigned NOT NULL AUTO_INCREMENT,',
            '  `post_content` longtext NOT NULL,', '  `post_title` text NOT NULL,', '  `guid` varchar(255) NOT NULL,',
            '  PRIMARY KEY (`ID`)', ') ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;', '']
    n = sum(len(l) + 1 for l in out)
    pid = 1
    while n < size:
        rows = []
        m = 0
        while m < r.randrange(40000, 120000):
            body = ' '.join(r.choice(WORDS) for _ in range(r.randrange(20, 200)))
            row = "(%d,'<p>%s</p>','%s','https://%s/?p=%d')" % (pid, body, ' '.join(r.sample(WORDS, 3)).title(), 'blog.example.org', pid)
            rows.append(row)
            m += len(row) + 1
            pid += 1
        l = 'INSERT INTO `wp_posts` VALUES ' + ','.join(rows) + ';'
        out.append(l)
        n += len(l) + 1
    out += ['/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;', '', '-- Dump completed on %s' % ts(r)]
    return out, opt_idx


def har(r, size, secret_header=None):
    entries = []
    n = 0
    origin = 'https://app.%s' % domain(r)
    while n < size:
        hdrs = [{'name': 'Accept', 'value': 'application/json'}, {'name': 'User-Agent', 'value': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36'},
                {'name': 'X-Request-Id', 'value': guid(r)}]
        body = json.dumps({'items': [{'id': guid(r), 'name': ' '.join(r.sample(WORDS, 2)), 'rev': rhex(r, 12)} for _ in range(r.randrange(1, 30))]})
        e = {'startedDateTime': ts(r).isoformat() + 'Z', 'time': r.random() * 300,
             'request': {'method': 'GET', 'url': '%s/api/%s?page=%d' % (origin, r.choice(WORDS), r.randrange(20)), 'httpVersion': 'HTTP/2',
                         'headers': hdrs, 'queryString': [], 'cookies': [], 'headersSize': -1, 'bodySize': 0},
             'response': {'status': 200, 'statusText': '', 'httpVersion': 'HTTP/2', 'headers': [{'name': 'content-type', 'value': 'application/json'}],
                          'cookies': [], 'content': {'size': len(body), 'mimeType': 'application/json', 'text': body},
                          'redirectURL': '', 'headersSize': -1, 'bodySize': len(body)},
             'cache': {}, 'timings': {'send': 0.1, 'wait': r.random() * 200, 'receive': r.random() * 5}}
        entries.append(e)
        n += len(body) + 900
    if secret_header:
        e = r.choice(entries)
        e['request']['headers'].insert(1, {'name': secret_header[0], 'value': secret_header[1]})
    d = {'log': {'version': '1.2', 'creator': {'name': 'WebInspector', 'version': '537.36'},
                 'pages': [{'startedDateTime': ts(r).isoformat() + 'Z', 'id': 'page_1', 'title': origin, 'pageTimings': {}}],
                 'entries': entries}}
    return json.dumps(d, indent=2) + '\n'


def vscode_items(r):
    return [('workbench.panel.markers.hidden', '[{"id":"workbench.panel.markers","isHidden":false}]'),
            ('telemetry.firstSessionDate', ts(r).strftime('%a, %d %b %Y %H:%M:%S GMT')),
            ('telemetry.machineId', sha256hex(r)),
            ('workbench.activity.pinnedViewlets2', json.dumps([{'id': 'workbench.view.explorer', 'pinned': True, 'order': 0}])),
            ('history.recentlyOpenedPathsList', json.dumps({'entries': [{'folderUri': 'file:///home/%s/src/%s' % (username(r), w)} for w in r.sample(WORDS, 4)]})),
            ('colorThemeData', json.dumps({'id': 'vs-dark vscode-theme-defaults-themes-dark_modern-json', 'label': 'Dark Modern'})),
            ('__$__isNewStorageMarker', 'true'), ('__$__targetStorageMarker', '{}')]
