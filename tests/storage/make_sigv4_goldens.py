#!/usr/bin/env python3
"""Writes tests/testdata/storage/sigv4_goldens.json: AWS Signature Version 4
Authorization headers computed by botocore itself (botocore.auth.S3SigV4Auth,
with UNSIGNED-PAYLOAD as t5xx sends) for fixed requests, credentials and
time -- the oracle of tests/storage/aws_signer_test.cc.

  ~/.cache/t5xx/test-venv/bin/python3 tests/storage/make_sigv4_goldens.py \
      > tests/testdata/storage/sigv4_goldens.json

(made with botocore 1.44.18 from PyPI)
"""
import datetime
import json
from unittest import mock

import botocore
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

WHEN = datetime.datetime(2026, 12, 6, 1, 2, 3)


class Unsigned(S3SigV4Auth):
  def _should_sha256_sign_payload(self, request):
    return False


CASES = [
    # name, method, url, extra headers, session token, region
    ('get_range', 'GET', 'http://127.0.0.1:9000/bucket/run/checkpoint_4/checkpoint',
     {'Range': 'bytes=0-16777215'}, '', 'us-east-1'),
    ('put_escaped', 'PUT', 'https://my-bucket.s3.eu-west-1.amazonaws.com/a%20b/c%2Bd.txt',
     {'Content-Type': 'application/octet-stream'}, '', 'eu-west-1'),
    ('list_v2', 'GET',
     'http://localhost:5000/bucket?list-type=2&prefix=run%2Fcheckpoint_&delimiter=%2F', {}, '',
     'us-east-1'),
    ('session_token', 'HEAD', 'http://127.0.0.1:9000/bucket/vocab/spm.model', {}, 'FQoGZXIvYXdzEXAMPLE',
     'us-west-2'),
    ('multipart_part', 'PUT', 'http://127.0.0.1:9000/bucket/big.bin?partNumber=2&uploadId=abc%2Fdef', {}, '',
     'us-east-1'),
    ('create_multipart', 'POST', 'http://127.0.0.1:9000/bucket/big.bin?uploads=', {}, '', 'us-east-1'),
]


def main():
  out = {'botocore': botocore.__version__, 'amz_date': WHEN.strftime('%Y%m%dT%H%M%SZ'),
         'access_key_id': 'AKIDEXAMPLE', 'secret_access_key': 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
         'cases': []}
  for name, method, url, headers, token, region in CASES:
    creds = Credentials(out['access_key_id'], out['secret_access_key'], token or None)
    req = AWSRequest(method=method, url=url, headers=dict(headers), data=b'')
    with mock.patch('botocore.auth.get_current_datetime', return_value=WHEN):
      Unsigned(creds, 's3', region).add_auth(req)
    out['cases'].append({'name': name, 'method': method, 'url': url, 'headers': headers,
                         'session_token': token, 'region': region,
                         'authorization': req.headers['Authorization']})
  print(json.dumps(out, indent=1))


if __name__ == '__main__':
  main()
