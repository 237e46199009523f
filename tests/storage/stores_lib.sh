# Sourced by the tests that need object stores: moto's S3 server and
# gcp-storage-emulator from the test venv, started on 127.0.0.1 with a
# bucket "t5xx-test" each. Expects $work; sets $py, $venv, $s3, $gcs and
# the AWS variables moto accepts; exits 77 (skip) with the reason when the
# venv lacks them, 1 when they do not start. The caller's EXIT trap should
# kill its jobs.
venv="${T5XX_TEST_VENV:-$HOME/.cache/t5xx/test-venv}"
py="$venv/bin/python3"
if ! "$py" -c 'import moto.server, gcp_storage_emulator, boto3' >/dev/null 2>&1; then
  echo "SKIP: moto[server], gcp-storage-emulator and boto3 are not in $venv"
  echo "      (scripts/setup.sh --test installs them)"
  exit 77
fi
port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 100); do
    "$py" -c "import socket; socket.create_connection(('127.0.0.1', $1), 0.2)" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
s3=$(port); gcs=$(port)
"$venv/bin/moto_server" -H 127.0.0.1 -p "$s3" >"$work/moto.log" 2>&1 &
"$venv/bin/gcp-storage-emulator" start --host=127.0.0.1 --port="$gcs" --in-memory \
  --default-bucket=t5xx-test >"$work/gcs.log" 2>&1 &
if ! wait_port "$s3" || ! wait_port "$gcs"; then
  echo "FAIL: the object-store servers did not start"; cat "$work/moto.log" "$work/gcs.log"; exit 1
fi
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1
"$py" -c "import boto3; boto3.client('s3', endpoint_url='http://127.0.0.1:$s3').create_bucket(Bucket='t5xx-test')"
# upload SCHEME LOCAL_DIR PREFIX: every file under LOCAL_DIR to
# SCHEME://t5xx-test/PREFIX/<relative path>, by boto3 or the JSON API.
upload() {
  "$py" - "$1" "$2" "$3" "$s3" "$gcs" <<'PY'
import os, sys, urllib.parse, urllib.request
import boto3
scheme, root, prefix, s3, gcs = sys.argv[1:]
c = boto3.client('s3', endpoint_url=f'http://127.0.0.1:{s3}')
for d, _, files in os.walk(root):
  for f in files:
    path = os.path.join(d, f)
    key = prefix + '/' + os.path.relpath(path, root)
    data = open(path, 'rb').read()
    if scheme == 's3':
      c.put_object(Bucket='t5xx-test', Key=key, Body=data)
    else:
      base = f'http://127.0.0.1:{gcs}/upload/storage/v1/b/t5xx-test/o'
      if data:
        req = urllib.request.Request(base + '?uploadType=media&name=' + urllib.parse.quote(key, safe=''),
                                     data=data, method='POST')
      else:  # (the emulator takes an empty object only as a multipart upload)
        body = ('--b\r\nContent-Type: application/json\r\n\r\n{"name": "%s"}\r\n--b\r\n'
                'Content-Type: application/octet-stream\r\n\r\n\r\n--b--\r\n' % key).encode()
        req = urllib.request.Request(base + '?uploadType=multipart', data=body, method='POST',
                                     headers={'Content-Type': 'multipart/related; boundary=b'})
      urllib.request.urlopen(req).read()
PY
}
# fetch URL DIR: every object under URL to DIR (boto3, or the JSON API).
fetch() {
  "$py" - "$1" "$2" "$s3" "$gcs" <<'PY'
import json, os, sys, urllib.parse, urllib.request
import boto3
url, out, s3, gcs = sys.argv[1:]
scheme, rest = url.split('://')
bucket, prefix = rest.split('/', 1)
prefix += '/'
names = []
if scheme == 's3':
  c = boto3.client('s3', endpoint_url=f'http://127.0.0.1:{s3}')
  for page in c.get_paginator('list_objects_v2').paginate(Bucket=bucket, Prefix=prefix):
    names += [(o['Key'], None) for o in page.get('Contents', [])]
  get = lambda k: c.get_object(Bucket=bucket, Key=k)['Body'].read()
else:
  base = f'http://127.0.0.1:{gcs}/storage/v1/b/{bucket}/o'
  token = ''
  while True:
    q = urllib.parse.urlencode({'prefix': prefix, **({'pageToken': token} if token else {})})
    r = json.load(urllib.request.urlopen(base + '?' + q))
    names += [(o['name'], None) for o in r.get('items', [])]
    token = r.get('nextPageToken')
    if not token:
      break
  get = lambda k: urllib.request.urlopen(base + '/' + urllib.parse.quote(k, safe='') + '?alt=media').read()
for key, _ in names:
  path = os.path.join(out, key[len(prefix):])
  os.makedirs(os.path.dirname(path), exist_ok=True)
  open(path, 'wb').write(get(key))
PY
}
