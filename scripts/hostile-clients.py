#!/usr/bin/env python3
"""A hostile local user against vendd's control socket, for the hardening test.

Usage: scripts/hostile-clients.py SOCKET [CONNECTIONS] [WAVES]

Opens CONNECTIONS connections per wave (default 1100), as many as its own descriptor limit
allows (run it under `ulimit -n 1024`), in WAVES waves (default 3): a third sit idle, a third
send half a request line and stop, a third send garbage, oversized lines and valid requests in
a burst. Each wave holds its connections for 1 s, then drops them all. Never more than the
requested count; bounded in time (about 2 s per wave). Prints one summary line:
  hostile: 2200 attempted, 1998 connected, 37 refused at connect, 412 busy answers, 0 errors
"""
import errno, json, os, signal, socket, sys, time

SOCKET = sys.argv[1]
CONNECTIONS = int(sys.argv[2]) if len(sys.argv) > 2 else 1100
WAVES = int(sys.argv[3]) if len(sys.argv) > 3 else 3

attempted = connected = refused = busy = 0
signal.alarm(120)   # whatever vendd does, the attack ends


def behave(index, sock):
    kind = index % 3
    try:
        if kind == 1:
            sock.send(b'{"v":1,"op":"sta')          # half a line, then silence
        elif kind == 2:
            sock.send(b"\x00\xff garbage\n" + b"x" * 70000 + b"\n"
                      + json.dumps({"v": 1, "op": "status"}).encode() + b"\n"
                      + b'{"v":1,"op":"restock","slot":"A1","count":5}\n')
    except OSError:
        pass


def count_busy(sock):
    global busy
    try:
        data = sock.recv(65536, socket.MSG_DONTWAIT)
    except OSError:
        return
    busy += data.count(b'"busy"')


for wave in range(WAVES):
    held = []
    for index in range(CONNECTIONS):
        attempted += 1
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        except OSError as error:
            if error.errno in (errno.EMFILE, errno.ENFILE):
                break                                 # this user's own limit: the wave is as big as it gets
            raise
        try:
            sock.connect(SOCKET)                      # blocking: waits while vendd's backlog is full
        except OSError:
            refused += 1
            sock.close()
            continue
        sock.settimeout(0.5)
        connected += 1
        behave(index, sock)
        held.append(sock)
    time.sleep(1)
    for sock in held:
        count_busy(sock)
        sock.close()
    time.sleep(0.5)

print(f"hostile: {attempted} attempted, {connected} connected, {refused} refused at connect, {busy} busy answers")
