#!/usr/bin/env python3
"""A point-to-point link with latency and loss between two network
namespaces, in user space: what `tc qdisc ... netem delay 100ms loss 1%`
does, for kernels without the sch_netem module (the multi-host rig's
fallback; multihost_test.sh uses netem where the kernel has it).

Makes two TUN devices (IFF_TUN | IFF_NO_PI: whole IPv4 packets), prints
"ready" once both exist -- the caller then moves each into its namespace
and gives it an address (a TUN device keeps its file descriptor when moved)
-- and carries every packet read from one to the other after --delay_ms,
dropping each with probability --loss, until killed. Standard library only.

Usage: link_emulator.py TUN_A TUN_B [--delay_ms 100] [--loss 0.01] [--seed 0]
"""
import argparse
import fcntl
import heapq
import os
import random
import select
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000


def open_tun(name):
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    os.set_blocking(fd, False)
    return fd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tun_a")
    ap.add_argument("tun_b")
    ap.add_argument("--delay_ms", type=float, default=100.0)
    ap.add_argument("--loss", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    fa, fb = open_tun(a.tun_a), open_tun(a.tun_b)
    other = {fa: fb, fb: fa}
    print("ready", flush=True)
    queue = []  # (due time, sequence, destination fd, packet)
    seq = 0
    carried = dropped = 0
    while True:
        timeout = max(0.0, queue[0][0] - time.monotonic()) if queue else 1.0
        readable, _, _ = select.select([fa, fb], [], [], timeout)
        now = time.monotonic()
        for fd in readable:
            while True:
                try:
                    packet = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if rng.random() < a.loss:
                    dropped += 1
                    continue
                heapq.heappush(queue, (now + a.delay_ms / 1000.0, seq, other[fd], packet))
                seq += 1
        while queue and queue[0][0] <= time.monotonic():
            _, _, fd, packet = heapq.heappop(queue)
            try:
                os.write(fd, packet)
                carried += 1
            except OSError:
                pass  # the device is down: the packet is lost, as on a cut link


if __name__ == "__main__":
    sys.exit(main())
