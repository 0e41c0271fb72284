#!/usr/bin/env python3
# A service manager's notification socket for tests (sd_notify(3)'s side that systemd holds):
# binds an AF_UNIX datagram socket at argv[1] ("@NAME": an abstract one) and prints one JSON line per datagram: the message,
# the sender's pid (SCM_CREDENTIALS, as NotifyAccess=main checks it), the time, and, with
# --probe MOUNTPOINT, whether MOUNTPOINT was a mount and what `ls` showed when the datagram came.
# Prints {"listening": PATH} first; ends on SIGTERM or when stdin closes. Run by the test, never
# by the process that serves the mount (the probe reads the mount synchronously).
import json
import os
import select
import signal
import socket
import struct
import sys
import time

path = sys.argv[1]
probe = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == '--probe' else None
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
sock.bind('\0' + path[1:] if path.startswith('@') else path)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))


def emit(record):
    sys.stdout.write(json.dumps(record) + '\n')
    sys.stdout.flush()


def look(mountpoint):
    try:
        return {'mounted': os.path.ismount(mountpoint), 'ls': sorted(os.listdir(mountpoint))}
    except OSError as error:
        return {'mounted': os.path.ismount(mountpoint), 'error': error.strerror}


emit({'listening': path})
credentials_size = struct.calcsize('3i')
while True:
    readable, _, _ = select.select([sock, sys.stdin], [], [])
    if sys.stdin in readable and sys.stdin.buffer.read1(4096) == b'':
        break
    if sock not in readable:
        continue
    data, ancillary, _, _ = sock.recvmsg(65536, socket.CMSG_SPACE(credentials_size))
    pid = None
    for level, kind, value in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = struct.unpack('3i', value[:credentials_size])[0]
    record = {'message': data.decode('utf-8', 'replace'), 'pid': pid, 'atMs': int(time.time() * 1000)}
    if probe is not None:
        record['probe'] = look(probe)
    emit(record)
