#!/usr/bin/env python3
"""A hostile local user against vendd's control socket, or against vendd-display's kiosk
server, for the hardening tests.

Usage: scripts/hostile-clients.py SOCKET [CONNECTIONS] [WAVES]
       scripts/hostile-clients.py --http HOST:PORT [CONNECTIONS] [WAVES]

Opens CONNECTIONS connections per wave (default 1100), as many as its own descriptor limit
allows (run it under `ulimit -n 1024`), in WAVES waves (default 3): a third sit idle, a third
send half a request line and stop, a third send garbage, oversized lines and valid requests in
a burst. Each wave holds its connections for 1 s, then drops them all. Never more than the
requested count; bounded in time (about 2 s per wave). Prints one summary line:
  hostile: 2200 attempted, 1998 connected, 37 refused at connect, 412 busy answers, 0 errors

With --http (the kiosk; default 300 connections per wave), a quarter sit idle, a quarter drip
half a request (slowloris), a quarter send garbage, a 70 KB header, a huge Content-Length or a
chunked body, and a quarter open /events and never read. "busy answers" counts 503s.
"""
import errno, json, os, signal, socket, sys, time

HTTP = len(sys.argv) > 2 and sys.argv[1] == "--http"
arguments = sys.argv[2:] if HTTP else sys.argv[1:]
SOCKET = arguments[0]
CONNECTIONS = int(arguments[1]) if len(arguments) > 1 else (300 if HTTP else 1100)
WAVES = int(arguments[2]) if len(arguments) > 2 else 3
if HTTP:
    HOST, PORT = SOCKET.rsplit(":", 1)
    HOST = HOST.strip("[]")
    PORT = int(PORT)

attempted = connected = refused = busy = 0
signal.alarm(120)   # whatever vendd does, the attack ends


HTTP_GARBAGE = [
    b"\x00\xff\x16\x03\x01 not http at all\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"y" * 70000 + b"\r\n\r\n",
    b"POST /select/A1 HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\n" + b"z" * 4096,
    b"POST /coin-return HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /restock/A1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
]


def behave_http(index, sock):
    kind = index % 4
    try:
        if kind == 1:
            sock.send(b"GET / HTTP/1.1\r\nHost: x\r\nX-Drip: ")   # and never the rest
        elif kind == 2:
            sock.send(HTTP_GARBAGE[(index // 4) % len(HTTP_GARBAGE)])
        elif kind == 3:
            sock.send(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")  # then never read
    except OSError:
        pass


def behave(index, sock):
    if HTTP:
        return behave_http(index, sock)
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
    busy += data.count(b" 503 ") if HTTP else data.count(b'"busy"')


for wave in range(WAVES):
    held = []
    for index in range(CONNECTIONS):
        attempted += 1
        try:
            if HTTP:
                sock = socket.socket(socket.AF_INET6 if ":" in HOST else socket.AF_INET, socket.SOCK_STREAM)
            else:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        except OSError as error:
            if error.errno in (errno.EMFILE, errno.ENFILE):
                break                                 # this user's own limit: the wave is as big as it gets
            raise
        try:
            sock.connect((HOST, PORT) if HTTP else SOCKET)   # blocking: waits while the backlog is full
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
