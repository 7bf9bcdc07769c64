"""Bring the loopback interface up (in a new network namespace it starts down), without iproute2."""

import fcntl
import socket
import struct

SIOCSIFFLAGS = 0x8914
IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x1, 0x8, 0x40

with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
    request = struct.pack("16sH14x", b"lo", IFF_UP | IFF_LOOPBACK | IFF_RUNNING)
    fcntl.ioctl(sock, SIOCSIFFLAGS, request)
