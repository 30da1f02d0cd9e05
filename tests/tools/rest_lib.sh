# shellcheck shell=bash
# REST helpers for tests/integration/rest_*.sh and rclone_*.sh, sourced after lib.sh's
# setup: `rclone serve restic` servers on loopback ports through tests/tools/rclone-rest-start,
# each stopped when the test exits. A missing rclone is installed, else the test fails.
#
#   rest_setup                      # rclone present (installs it), cleanup registered
#   rest_start NAME [OPTIONS...]    # a server with state in $W/rest-NAME; sets REST_URL
#                                   # (http://127.0.0.1:PORT/); OPTIONS: --append-only,
#                                   # --user U --pass-file F
#   rest_stop NAME                  # stops it (the files stay in $W/rest-NAME/data)
#   assert_no_secrets [SECRET...]   # no stdout/stderr file of this test holds one

REST_NAMES=()

rest_setup() {
  need_cmd rclone rclone
  trap 'rc=$?; _rest_stop_all; (exit $rc); _cleanup' EXIT
}

_rest_stop_all() {
  local n
  for n in "${REST_NAMES[@]+"${REST_NAMES[@]}"}"; do "$TOOLS/rclone-rest-start" --stop "$W/rest-$n" || true; done
}

rest_start() {
  local name="$1"; shift
  REST_URL=$("$TOOLS/rclone-rest-start" "$W/rest-$name" "$@") || fail "cannot start rclone serve restic ($name)"
  REST_NAMES+=("$name")
  export REST_URL
  log "rclone serve restic ($name) at $REST_URL"
}

rest_stop() { "$TOOLS/rclone-rest-start" --stop "$W/rest-$1"; }

assert_no_secrets() {
  local f secret
  for secret in "$HAVEN_PASSWORD" "$@"; do
    for f in "$W"/out.* "$W"/err.*; do
      [ -f "$f" ] || continue
      if LC_ALL=C grep -aqF -- "$secret" "$f"; then fail "a secret appears in $f"; fi
    done
  done
}
