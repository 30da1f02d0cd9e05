#!/usr/bin/env bash
# start_sshd.sh DIR: runs OpenSSH's sshd in the foreground on a free loopback port for the
# current user, with a host key, a client key and authorized_keys generated in DIR (nothing
# outside DIR is touched but /run/sshd, sshd's privilege-separation folder). Before sshd
# starts, DIR/port holds the port and DIR/ssh_args the ssh options a client needs (-i key,
# known hosts, BatchMode); its log is DIR/sshd.log. Run it in the background, wait until
# the port accepts connections (wait_sshd in tests/integration/sftp_sshd.sh), kill it to stop.
set -euo pipefail
dir="$1"
mkdir -p "$dir"
chmod 700 "$dir"
SSHD=/usr/sbin/sshd
[ -x "$SSHD" ] || { echo "start_sshd: $SSHD is missing (package openssh-server)" >&2; exit 1; }
ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key" </dev/null
ssh-keygen -q -t ed25519 -N '' -f "$dir/client_key" </dev/null
cp "$dir/client_key.pub" "$dir/authorized_keys"
chmod 600 "$dir/authorized_keys"
printf '[127.0.0.1]:*,127.0.0.1 %s\n' "$(cut -d' ' -f1,2 "$dir/host_key.pub")" >"$dir/known_hosts"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$dir/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
Subsystem sftp /usr/lib/openssh/sftp-server
CONF
mkdir -p /run/sshd
chmod 755 /run/sshd
echo "-i $dir/client_key -o IdentitiesOnly=yes -o UserKnownHostsFile=$dir/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=10" >"$dir/ssh_args"
echo "$port" >"$dir/port"
exec "$SSHD" -D -e -f "$dir/sshd_config" </dev/null >/dev/null 2>>"$dir/sshd.log"
