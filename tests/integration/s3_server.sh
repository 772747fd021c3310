#!/usr/bin/env bash
# A real S3 server for the tests: a one-node Ceph cluster (one monitor, one
# memstore OSD, no cephx) and radosgw, all under one temp folder, on free
# ports, with a user of fixed keys and one bucket.
#
#   s3_server.sh start DIR   start it in DIR (created; must be absent or
#                            empty); on success prints one line
#                              s3 ready endpoint=http://127.0.0.1:PORT bucket=NAME
#                            and writes DIR/env (shell assignments:
#                            S3_ENDPOINT, S3_BUCKET, S3_REGION,
#                            S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY,
#                            S3_HTTPS_ENDPOINT, S3_CA_FILE) and DIR/pids.
#                            The same radosgw also answers HTTPS
#                            (https://localhost:PORT, a certificate of a
#                            private CA made here with openssl, S3_CA_FILE
#                            the CA's), virtual-hosted requests
#                            (BUCKET.localhost:PORT; rgw dns name is
#                            localhost), with S3_STS=1 STS too
#                            (GetSessionToken; it turns a bad signature's
#                            SignatureDoesNotMatch into AccessDenied), and
#                            collects deleted objects' space within
#                            seconds.  Waits at most S3_START_TIMEOUT
#                            seconds (default 90).  The store holds at
#                            most S3_MEMSTORE_BYTES (default 2 GiB; deleted
#                            objects free their space only later).  On failure prints
#                            "s3_server: why", stops what it started, exits 1.
#                            With S3_OWNER_PID set, a watchdog stops it
#                            when that process is gone.
#   s3_server.sh stop DIR    kill the daemons by their pids, remove DIR.
#   s3_server.sh available   exit 0 when the Ceph and radosgw programs and
#                            python3-boto3 are installed (scripts/setup
#                            installs them), else 1 with "s3_server: why".
#
# Tests use it through tests/unit/s3_server.c (C) or s3_server.py (Python).
set -u

S3_BUCKET=${S3_BUCKET:-floe-test}
S3_REGION=us-east-1
S3_ACCESS_KEY_ID=FLOETESTACCESSKEY000
S3_SECRET_ACCESS_KEY=floetestsecretkey0000000000000000000000000

die() {
  echo "s3_server: $*" >&2
  exit 1
}

available() {
  local p
  for p in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph openssl; do
    command -v "$p" >/dev/null 2>&1 ||
      die "$p is not installed (scripts/setup installs ceph-mon ceph-osd radosgw openssl)"
  done
  python3 -c 'import boto3' 2>/dev/null || die "python3-boto3 is not installed (scripts/setup installs it)"
}

# A TCP port nobody listens on now (the kernel's pick for port 0).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# A private CA (DIR/ca.pem) and a certificate it signed for localhost,
# BUCKET.localhost (virtual-hosted requests) and 127.0.0.1 (DIR/server.*).
tls() {
  local d=$1 bucket=$2
  openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -days 2 \
    -subj /CN=floe-test-ca -keyout "$d/ca.key" -out "$d/ca.pem" &&
    openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -subj /CN=localhost \
      -keyout "$d/server.key" -out "$d/server.csr" &&
    printf 'subjectAltName=DNS:localhost,DNS:%s.localhost,IP:127.0.0.1\n' "$bucket" >"$d/ext" &&
    openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
      -days 2 -extfile "$d/ext" -out "$d/server.pem"
}

stop() {
  local dir=$1 pid
  if [ -f "$dir/pids" ]; then
    # radosgw first, the monitor last (the OSD and radosgw talk to it)
    for pid in $(tac "$dir/pids"); do kill "$pid" 2>/dev/null; done
    for _ in $(seq 50); do
      local alive=0
      for pid in $(cat "$dir/pids"); do kill -0 "$pid" 2>/dev/null && alive=1; done
      [ $alive = 0 ] && break
      sleep 0.1
    done
    for pid in $(cat "$dir/pids"); do kill -9 "$pid" 2>/dev/null; done
  fi
  rm -rf "$dir"
}

start() {
  local dir=$1
  available
  mkdir -p "$dir" || die "cannot create $dir"
  [ -z "$(ls -A "$dir")" ] || die "$dir is not empty"
  dir=$(cd "$dir" && pwd)
  local deadline=$((SECONDS + ${S3_START_TIMEOUT:-90}))
  local mon_port rgw_port tls_port fsid conf="$dir/ceph.conf"
  mon_port=$(free_port) && rgw_port=$(free_port) && tls_port=$(free_port) || die "no free port"
  fsid=$(python3 -c 'import uuid; print(uuid.uuid4())')
  mkdir -p "$dir/mon" "$dir/osd" "$dir/rgw" "$dir/run" "$dir/log" "$dir/tls"
  : >"$dir/pids"
  tls "$dir/tls" "$S3_BUCKET" >>"$dir/log/setup.out" 2>&1 || die "openssl cannot make the certificates"
  local sts=""
  # STS answers a bad signature with AccessDenied, not SignatureDoesNotMatch
  [ "${S3_STS:-0}" = 1 ] && sts=$'rgw sts key = floetestststkey1\nrgw s3 auth use sts = true\n'
  cat >"$conf" <<EOF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$mon_port
public addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon max pg per osd = 1000
osd crush chooseleaf type = 0
osd crush update on start = false
osd class update on start = false
paxos propose interval = 0.05
osd objectstore = memstore
memstore device bytes = ${S3_MEMSTORE_BYTES:-2147483648}
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
pid file = $dir/run/\$name.pid
mon data = $dir/mon
osd data = $dir/osd
keyring = $dir/keyring
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$rgw_port ssl_endpoint=127.0.0.1:$tls_port ssl_certificate=$dir/tls/server.pem ssl_private_key=$dir/tls/server.key
rgw data = $dir/rgw
rgw dns name = localhost
${sts}rgw gc obj min wait = 0
rgw gc processor period = 1
rgw gc processor max time = 1
EOF
  # From here on, a failure stops whatever already runs.
  fail() {
    echo "s3_server: $*" >&2
    echo "s3_server: cluster: $(timeout 5 ceph -c "$conf" -s 2>&1 | tr -s ' \n' ' ' | head -c 700)" >&2
    local l
    for l in "$dir"/log/*.log; do
      [ -f "$l" ] && echo "s3_server: last line of $(basename "$l"): $(tail -n 1 "$l")" >&2
    done
    stop "$dir"
    exit 1
  }
  run() { "$@" -c "$conf" >>"$dir/log/setup.out" 2>&1 || fail "$1 failed: $(tail -n 1 "$dir/log/setup.out")"; }
  monmaptool --create --fsid "$fsid" --addv a "[v1:127.0.0.1:$mon_port]" "$dir/monmap" \
    >>"$dir/log/setup.out" 2>&1 || fail "monmaptool failed"
  run ceph-mon --mkfs -i a --monmap "$dir/monmap"
  ceph-mon -c "$conf" -i a -f >>"$dir/log/mon.out" 2>&1 &
  echo $! >>"$dir/pids"
  local uuid
  uuid=$(python3 -c 'import uuid; print(uuid.uuid4())')
  local id=""
  while [ $SECONDS -lt $deadline ]; do
    id=$(timeout 10 ceph -c "$conf" --connect-timeout 5 osd new "$uuid" 2>>"$dir/log/setup.out") && break
    id=""
    sleep 0.2
  done
  [ -n "$id" ] || fail "the monitor did not answer in time"
  run ceph-osd -i "$id" --mkfs --osd-uuid "$uuid"
  ceph-osd -c "$conf" -i "$id" -f >>"$dir/log/osd.out" 2>&1 &
  echo $! >>"$dir/pids"
  run timeout 20 ceph osd crush add "osd.$id" 1 root=default host=localhost
  radosgw -c "$conf" -n client.rgw -f >>"$dir/log/rgw.out" 2>&1 &
  echo $! >>"$dir/pids"
  local up=0
  while [ $SECONDS -lt $deadline ]; do
    if python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$rgw_port/', timeout=2)" 2>/dev/null; then
      up=1
      break
    fi
    sleep 0.2
  done
  [ $up = 1 ] || fail "radosgw did not answer on port $rgw_port in time"
  timeout 30 radosgw-admin -c "$conf" -n client.rgw user create --uid=floe --display-name=floe \
    --access-key="$S3_ACCESS_KEY_ID" --secret-key="$S3_SECRET_ACCESS_KEY" --caps="user-policy=*" \
    >>"$dir/log/setup.out" 2>&1 || fail "radosgw-admin user create failed"
  local left=$((deadline - SECONDS))
  [ $left -gt 0 ] || fail "out of time before creating the bucket"
  timeout "$left" python3 - "$rgw_port" "$S3_BUCKET" "$S3_ACCESS_KEY_ID" "$S3_SECRET_ACCESS_KEY" \
    >>"$dir/log/setup.out" 2>&1 <<'EOF' || fail "cannot create the bucket"
import json, sys, time, boto3
from botocore.config import Config
port, bucket, key, secret = sys.argv[1:5]
s3 = boto3.client('s3', endpoint_url='http://127.0.0.1:%s' % port, region_name='us-east-1',
                  aws_access_key_id=key, aws_secret_access_key=secret,
                  config=Config(s3={'addressing_style': 'path'}))
for i in range(100):  # the user may take a moment to be seen
    try:
        s3.create_bucket(Bucket=bucket)
        break
    except Exception as e:
        if i == 99:
            raise
        time.sleep(0.2)
# radosgw grants GetSessionToken only through a user policy
iam = boto3.client('iam', endpoint_url='http://127.0.0.1:%s' % port, region_name='us-east-1',
                   aws_access_key_id=key, aws_secret_access_key=secret)
iam.put_user_policy(UserName='floe', PolicyName='sts', PolicyDocument=json.dumps({
    'Version': '2012-10-17',
    'Statement': [{'Effect': 'Allow', 'Action': ['sts:GetSessionToken'], 'Resource': '*'}]}))
EOF
  cat >"$dir/env" <<EOF
S3_ENDPOINT=http://127.0.0.1:$rgw_port
S3_BUCKET=$S3_BUCKET
S3_REGION=$S3_REGION
S3_ACCESS_KEY_ID=$S3_ACCESS_KEY_ID
S3_SECRET_ACCESS_KEY=$S3_SECRET_ACCESS_KEY
S3_HTTPS_ENDPOINT=https://localhost:$tls_port
S3_CA_FILE=$dir/tls/ca.pem
EOF
  # With S3_OWNER_PID, a watchdog stops the server once that process is
  # gone, however it ended (a crash, a SIGKILL, an exit without stop).
  if [ -n "${S3_OWNER_PID:-}" ]; then
    setsid "$0" watch "$S3_OWNER_PID" "$dir" </dev/null >/dev/null 2>&1 &
  fi
  echo "s3 ready endpoint=http://127.0.0.1:$rgw_port bucket=$S3_BUCKET"
}

watch() {
  local owner=$1 dir=$2
  while kill -0 "$owner" 2>/dev/null && [ -d "$dir" ]; do sleep 1; done
  [ -d "$dir" ] && stop "$dir"
  return 0
}

# A one-node Ceph fails to come up now and then (radosgw waits forever
# for the cluster); a second try in a fresh folder, within the same time
# bound, starts it.
start_retrying() {
  local dir=$1 t0=$SECONDS total=${S3_START_TIMEOUT:-90} out
  available
  for attempt in 1 2; do
    local left=$((total - (SECONDS - t0)))
    [ $left -ge 10 ] || break
    if out=$(S3_START_TIMEOUT=$(( attempt == 1 ? left * 2 / 3 : left )) "$0" start-once "$dir" 2>&1); then
      echo "$out"
      return 0
    fi
    echo "s3_server: attempt $attempt: $(echo "$out" | head -n 1)" >&2
  done
  die "no S3 server within ${total}s"
}

case "${1:-}" in
start) [ $# = 2 ] || die "usage: s3_server.sh start DIR"; start_retrying "$2" ;;
start-once) start "$2" ;;
watch) watch "$2" "$3" ;;
stop) [ $# = 2 ] || die "usage: s3_server.sh stop DIR"; stop "$2" ;;
available) available ;;
*) die "usage: s3_server.sh start DIR | stop DIR | available" ;;
esac
