# shellcheck shell=bash
# S3 helpers for tests/integration/s3_*.sh, sourced after lib.sh's setup. The server is the
# ctest fixture's radosgw (tests/tools/ceph-s3-start, CMakeLists.txt "ceph_s3"): its state
# directory comes in HAVEN_TEST_S3_STATE. Run alone, a script starts its own server in $W
# and stops it on exit. A missing server is a failure, never a skip.
#
#   s3_setup                 # exports AWS_ACCESS_KEY_ID/SECRET, S3_ENDPOINT, S3_BUCKET
#   s3_repo NAME             # echoes s3:$S3_ENDPOINT/$S3_BUCKET/NAME
#   assert_no_secrets        # no stdout/stderr file of this test holds a key or password

s3_setup() {
  need_cmd curl curl
  local state="${HAVEN_TEST_S3_STATE:-}"
  if [ -z "$state" ]; then
    state="$W/ceph-s3"
    log "HAVEN_TEST_S3_STATE not set: starting a server of this test's own in $state"
    "$TOOLS/ceph-s3-start" "$state" >/dev/null || fail "cannot start the Ceph S3 server"
    S3_OWN_STATE="$state"
    trap 'rc=$?; s3_stop_own; (exit $rc); _cleanup' EXIT
  fi
  [ -f "$state/env" ] || fail "no S3 server state in $state/env (the ceph_s3 fixture did not run?)"
  set -a
  # shellcheck disable=SC1091
  . "$state/env"
  set +a
  S3_ENDPOINT="$HAVEN_TEST_S3_ENDPOINT"
  curl -s -o /dev/null -m 5 "$S3_ENDPOINT/" || fail "the S3 server at $S3_ENDPOINT does not answer"
  S3_BUCKET="haven-$(echo "$TEST_NAME" | tr '_' '-')-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
  export S3_ENDPOINT S3_BUCKET
  unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_REGION AWS_REGION
  log "S3 server $S3_ENDPOINT, bucket $S3_BUCKET"
}

s3_stop_own() { [ -n "${S3_OWN_STATE:-}" ] && "$TOOLS/ceph-s3-start" --stop "$S3_OWN_STATE"; return 0; }

s3_repo() { echo "s3:$S3_ENDPOINT/$S3_BUCKET/$1"; }

assert_no_secrets() {
  local f secret
  for secret in "$AWS_SECRET_ACCESS_KEY" "$HAVEN_PASSWORD" "$@"; do
    for f in "$W"/out.* "$W"/err.*; do
      [ -f "$f" ] || continue
      if LC_ALL=C grep -aqF -- "$secret" "$f"; then fail "a secret appears in $f"; fi
    done
  done
}
