import re, base64, json
import vals as V

PLAIN_OK = re.compile(r'^[A-Za-z_][A-Za-z0-9_./+=@-]*$')
YAML_SPECIAL = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}


def b64(s):
    return base64.b64encode(s.encode() if isinstance(s, str) else s).decode()


def yq(r, s, force=None):
    ok = PLAIN_OK.match(s) and s.lower() not in YAML_SPECIAL
    m = force or r.choice(["plain", "single", "double"] if ok else ["single", "double"])
    if m == "plain":
        return s
    if m == "single":
        return "'" + s.replace("'", "''") + "'"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def shq(r, s):
    if re.match(r'^[A-Za-z0-9_./=+:-]+$', s):
        return r.choice([s, "'" + s + "'", '"' + s + '"'])
    if "$" in s or "!" in s or "`" in s:
        return "'" + s + "'"
    return r.choice(["'" + s + "'", '"' + s + '"'])


def envq(r, s):
    if re.match(r'^[A-Za-z0-9_./=+:@-]+$', s):
        return r.choice([s, s, '"' + s + '"', "'" + s + "'"])
    if "$" in s:
        return "'" + s + "'"
    return r.choice(['"' + s + '"', "'" + s + "'"])


def dq(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def nodollar(r, s):
    """passwords for contexts where $ / # would be interpolated or commented."""
    return s.replace("$", "!").replace("#", "%")


def home(r):
    return "home/" + r.choice(V.FIRST)


def proj(r, app=None):
    app = app or r.choice(V.APPS)
    return "%s/%s/%s%s" % (home(r), r.choice(["projects", "src", "work", "code", "git"]),
                           app, r.choice(["", "-api", "-service", "-infra", "-deploy", "-app"]))


# ---------------- filler (non-secret) ----------------
SECTIONS = ["logging", "metrics", "cache", "server", "ui", "scheduler", "resources", "probes",
            "tracing", "storage", "queue", "mailer_templates", "features", "i18n", "search",
            "uploads", "webhooks_retry", "gc", "pool", "http", "grpc", "cors", "rate_limit",
            "health", "backup_schedule", "retention", "replication", "sharding", "frontend", "cdn"]
KEYS = ["timeout", "retries", "replicas", "level", "port", "host", "enabled", "path",
        "max_connections", "ttl", "region", "image", "tag", "pull_policy", "cpu", "memory",
        "interval", "threshold", "buffer_size", "workers", "locale", "timezone", "endpoint",
        "bucket", "queue_name", "topic", "format", "compression", "batch_size", "min_idle",
        "max_idle", "backoff", "jitter", "sample_rate", "directory", "owner_team", "color",
        "page_size", "strategy", "mode", "ratio", "name", "description", "version"]


def fval(r, k):
    if k in ("timeout", "interval", "ttl", "backoff"):
        return r.choice(["30s", "5m", "1h", "250ms", str(r.randrange(1, 600))])
    if k in ("retries", "replicas", "port", "max_connections", "buffer_size", "workers",
             "batch_size", "min_idle", "max_idle", "page_size", "threshold"):
        return str(r.choice([1, 2, 3, 5, 8, 10, 16, 32, 64, 100, 128, 512, 1024, 8080, 9090, 5432]))
    if k in ("enabled",):
        return r.choice(["true", "false"])
    if k in ("level",):
        return r.choice(["info", "debug", "warn", "error"])
    if k in ("host", "endpoint"):
        return r.choice(["%s.internal" % r.choice(V.APPS), "0.0.0.0", "127.0.0.1",
                         "https://%s.example.com/api" % r.choice(V.APPS)])
    if k in ("path", "directory"):
        return "/var/lib/%s/%s" % (r.choice(V.APPS), r.choice(["data", "cache", "tmp", "spool"]))
    if k == "region":
        return r.choice(["eu-west-1", "us-east-1", "ap-southeast-2", "europe-west4"])
    if k == "image":
        return "registry.example.com/%s/%s" % (r.choice(V.APPS), r.choice(V.APPS))
    if k == "tag" or k == "version":
        return "%d.%d.%d" % (r.randrange(5), r.randrange(20), r.randrange(30))
    if k == "pull_policy":
        return r.choice(["IfNotPresent", "Always"])
    if k == "cpu":
        return r.choice(["100m", "250m", "500m", "1"])
    if k == "memory":
        return r.choice(["128Mi", "256Mi", "1Gi", "2Gi"])
    if k in ("sample_rate", "ratio", "jitter"):
        return r.choice(["0.1", "0.25", "0.5", "1.0"])
    if k == "color":
        return r.choice(["blue", "green", "amber", "grey"])
    if k in ("locale",):
        return r.choice(["en_US", "de_DE", "fr_FR", "ja_JP"])
    if k == "timezone":
        return r.choice(["UTC", "Europe/Berlin", "America/New_York"])
    if k in ("description", "name", "owner_team"):
        return r.choice(V.WORDS) + "-" + r.choice(V.WORDS)
    return r.choice(["json", "gzip", "none", "round_robin", "lru", "strict", "auto", "default"])


def fill_yaml(r, n, indent=0, used=None):
    out, pad = [], " " * indent
    used = used if used is not None else set()
    while len(out) < n:
        sec = r.choice(SECTIONS)
        if sec in used:
            sec = sec + "_" + r.choice(V.APPS)
            if sec in used:
                continue
        used.add(sec)
        out.append(pad + sec + ":")
        ks = r.sample(KEYS, r.randrange(3, 9))
        for k in ks:
            out.append(pad + "  " + k + ": " + fval(r, k))
        if r.random() < 0.3:
            out.append(pad + "  # " + r.choice(["see runbook", "tuned for prod", "do not lower",
                                                 "TODO revisit", "matches upstream default"]))
    return out


def fill_env(r, n):
    out, used = [], set()
    while len(out) < n:
        key = r.choice(KEYS)
        k = (r.choice(SECTIONS) + "_" + key).upper()
        if k in used:
            continue
        used.add(k)
        if r.random() < 0.1:
            out.append("")
            out.append("# " + r.choice(SECTIONS).replace("_", " "))
        out.append(k + "=" + fval(r, key))
    return out


def fill_props(r, n, prefix=None):
    out, used = [], set()
    while len(out) < n:
        key = r.choice(KEYS)
        k = "%s.%s.%s" % (prefix or r.choice(V.APPS), r.choice(SECTIONS).replace("_", "-"), key.replace("_", "-"))
        if k in used:
            continue
        used.add(k)
        if r.random() < 0.08:
            out.append("")
            out.append("# ---- " + r.choice(SECTIONS) + " ----")
        out.append(k + "=" + fval(r, key))
    return out


def fill_ini(r, n, used=None):
    out = []
    used = used if used is not None else set()
    while len(out) < n:
        sec = r.choice(SECTIONS)
        if sec in used:
            continue
        used.add(sec)
        out.append("")
        out.append("[%s]" % sec)
        for k in r.sample(KEYS, r.randrange(3, 8)):
            out.append("%s = %s" % (k, fval(r, k)))
        if len(used) >= len(SECTIONS):
            break
    return out


def fill_shell(r, n):
    out = []
    while len(out) < n:
        c = r.randrange(5)
        if c == 0:
            out.append('echo "[%s] %s ..."' % (r.choice(SECTIONS), r.choice(["starting", "syncing", "checking", "rotating logs"])))
        elif c == 1:
            k = r.choice(KEYS)
            out.append('%s_%s="%s"' % (r.choice(SECTIONS).upper(), k.upper(), fval(r, k)))
        elif c == 2:
            f = r.choice(SECTIONS)
            out += ["", "%s() {" % f, '  local dir="/var/lib/%s"' % r.choice(V.APPS),
                    '  mkdir -p "$dir" && cd "$dir" || return 1', '  find . -mtime +%d -delete' % r.randrange(3, 30), "}"]
        elif c == 3:
            out.append("# %s" % r.choice(["retry a few times, the API is flaky", "keep in sync with ansible role",
                                            "see OPS-%d" % r.randrange(100, 999), "runs as root"]))
        else:
            out.append("sleep %d" % r.randrange(1, 10))
    return out


def fill_dict(r, n):
    d = {}
    cnt = 0
    while cnt < n:
        sec = r.choice(SECTIONS)
        if sec in d:
            continue
        d[sec] = {k: fval(r, k) for k in r.sample(KEYS, r.randrange(3, 8))}
        cnt += len(d[sec]) + 2
    return d
