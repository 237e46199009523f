#!/usr/bin/env python3
"""An HTTP fault proxy for the object-store tests: forwards each request to
UPSTREAM (one request per connection) and injects what a store on a bad day
does -- latency, connections dropped in the middle of a response body, and
bursts of 503 -- reproducibly from --seed. Prints counts of what it did to
--stats at exit (SIGTERM).

  fault_proxy.py --listen PORT --upstream HOST:PORT [--latency-ms 100]
      [--drop 0.01] [--burst-every 50 --burst-length 3] [--down-after N]
      [--seed 1] [--stats FILE]

--down-after N: every request after the N-th gets 503 (a store that stays
down).
"""
import argparse
import asyncio
import json
import random
import signal
import sys


def parse_args():
  p = argparse.ArgumentParser()
  p.add_argument('--listen', type=int, required=True)
  p.add_argument('--upstream', required=True)
  p.add_argument('--latency-ms', type=float, default=0)
  p.add_argument('--drop', type=float, default=0)
  p.add_argument('--burst-every', type=int, default=0)
  p.add_argument('--burst-length', type=int, default=0)
  p.add_argument('--down-after', type=int, default=-1)
  p.add_argument('--seed', type=int, default=1)
  p.add_argument('--stats', default='')
  return p.parse_args()


ARGS = parse_args()
RNG = random.Random(ARGS.seed)
STATS = {'requests': 0, 'dropped': 0, 'status_503': 0, 'forwarded': 0}


async def read_request(reader):
  head = await reader.readuntil(b'\r\n\r\n')
  length = 0
  for line in head.split(b'\r\n')[1:]:
    if line.lower().startswith(b'content-length:'):
      length = int(line.split(b':', 1)[1])
  body = await reader.readexactly(length) if length else b''
  return head, body


def with_close(head):
  lines = [l for l in head.split(b'\r\n') if l and not l.lower().startswith(b'connection:')]
  return b'\r\n'.join(lines) + b'\r\nConnection: close\r\n\r\n'


async def handle(reader, writer):
  try:
    head, body = await read_request(reader)
  except (asyncio.IncompleteReadError, ConnectionError):
    writer.close()
    return
  STATS['requests'] += 1
  n = STATS['requests']
  if ARGS.latency_ms:
    await asyncio.sleep(ARGS.latency_ms / 1000)
  burst = (ARGS.burst_every and n % ARGS.burst_every < ARGS.burst_length)
  down = ARGS.down_after >= 0 and n > ARGS.down_after
  if burst or down:
    STATS['status_503'] += 1
    writer.write(b'HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
    await writer.drain()
    writer.close()
    return
  host, port = ARGS.upstream.rsplit(':', 1)
  try:
    ur, uw = await asyncio.open_connection(host, int(port))
    uw.write(with_close(head) + body)
    await uw.drain()
    response = await ur.read()
    uw.close()
  except ConnectionError:
    writer.close()
    return
  if ARGS.drop and RNG.random() < ARGS.drop:
    # Headers and half of the body, then the connection drops.
    end = response.find(b'\r\n\r\n') + 4
    cut = end + max(1, (len(response) - end) // 2) if len(response) > end else end
    STATS['dropped'] += 1
    writer.write(response[:cut])
    await writer.drain()
    writer.transport.abort()
    return
  STATS['forwarded'] += 1
  writer.write(response)
  try:
    await writer.drain()
  except ConnectionError:
    pass
  writer.close()


async def main():
  server = await asyncio.start_server(handle, '127.0.0.1', ARGS.listen)
  stop = asyncio.Event()
  loop = asyncio.get_running_loop()
  loop.add_signal_handler(signal.SIGTERM, stop.set)
  loop.add_signal_handler(signal.SIGINT, stop.set)
  async with server:
    await stop.wait()
  if ARGS.stats:
    with open(ARGS.stats, 'w') as f:
      json.dump(STATS, f)


if __name__ == '__main__':
  asyncio.run(main())
