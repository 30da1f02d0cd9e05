#!/usr/bin/env bash
# haven on S3 (a real radosgw, tests/tools/s3_lib.sh) with bad input:
#   wrong secret key -> exit 1, "access denied", the key never printed
#   missing bucket / missing prefix on open -> exit 10 (as a missing local repository)
#   wrong repository password -> exit 12
#   unreachable host -> exit 1 with a clear message after bounded retries (< 60 s, no hang)
#   no credentials, credentials inside the URL -> exit 1, nothing secret printed
#   AWS_PROFILE + a credentials file works; AWS_CA_BUNDLE set with a plain-http endpoint works
#   unknown -o s3.* option -> exit 1
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../tools/s3_lib.sh
source "$(dirname "$0")/../tools/s3_lib.sh"
setup "$@"
need_haven
s3_setup

REPO="$(s3_repo repo)"
mkdir -p "$W/src" && echo hello >"$W/src/a"
run_ok hv -r "$REPO" init
run_ok hv -r "$REPO" backup "$W/src"

check "wrong secret key: exit 1, access denied, the key not printed"
WRONG_SECRET="wrong-secret-$RANDOM$RANDOM-xyz"
expect_exit 1 env AWS_SECRET_ACCESS_KEY="$WRONG_SECRET" "$HAVEN" --no-cache -r "$REPO" snapshots
assert_grep 'access denied' "$ERR"
assert_grep 'SignatureDoesNotMatch|403' "$ERR"
assert_no_secrets "$WRONG_SECRET"

check "missing bucket on open: exit 10"
expect_exit 10 hv -r "s3:$S3_ENDPOINT/no-such-bucket-$RANDOM/x" snapshots
assert_grep 'does not exist' "$ERR"

check "missing prefix in an existing bucket: exit 10"
expect_exit 10 hv -r "$(s3_repo no-such-prefix)" snapshots

check "wrong repository password: exit 12"
expect_exit 12 env HAVEN_PASSWORD=not-the-password "$HAVEN" --no-cache -r "$REPO" snapshots

check "unreachable host: exit 1 after bounded retries, within 60 s"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start=$SECONDS
CMD_TIMEOUT=90 expect_exit 1 hv -r "s3:http://127.0.0.1:$PORT/bucket" snapshots
took=$((SECONDS - start))
[ "$took" -lt 60 ] || fail "gave up only after $took s"
assert_grep 'gave up after [0-9]+ attempts' "$ERR"
assert_grep "127.0.0.1.*$PORT|Couldn't connect|Connection refused" "$ERR"
log "unreachable host: failed after $took s"

check "no credentials at all: exit 1, a clear message"
expect_exit 1 env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_SHARED_CREDENTIALS_FILE="$W/none" \
  "$HAVEN" --no-cache -r "$REPO" snapshots
assert_grep 'no credentials' "$ERR"

check "credentials inside the URL are refused without printing them"
URL_SECRET="UrlSecret$RANDOM$RANDOM"
expect_exit 1 hv -r "s3:http://AKID:$URL_SECRET@127.0.0.1:1/bucket" snapshots
assert_no_secrets "$URL_SECRET"

check "AWS_PROFILE with a credentials file"
printf '[other]\naws_access_key_id = x\naws_secret_access_key = y\n[test]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
  "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" >"$W/credentials"
run_ok env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_SHARED_CREDENTIALS_FILE="$W/credentials" \
  AWS_PROFILE=test "$HAVEN" --no-cache -r "$REPO" snapshots
assert_grep '1 snapshots' "$OUT"

check "AWS_CA_BUNDLE set (even to a missing file) is harmless for a plain-http endpoint"
run_ok env AWS_CA_BUNDLE="$W/no-such-ca.pem" "$HAVEN" --no-cache -r "$REPO" snapshots

check "options: s3.connections, s3.region, s3.bucket-lookup=path accepted; unknown option exit 1"
run_ok hv -o s3.connections=3 -o s3.region=us-east-1 -o s3.bucket-lookup=path -r "$REPO" snapshots
expect_exit 1 hv -o s3.bogus=1 -r "$REPO" snapshots
expect_exit 1 hv -o s3.connections=0 -r "$REPO" snapshots

check "no secret key or password in any output"
assert_no_secrets

pass "bad input on S3 is reported clearly"
