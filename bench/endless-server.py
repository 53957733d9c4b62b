#!/usr/bin/env python3
"""endless-server.py PORT - a fake API server on 127.0.0.1:PORT answering every request with
a chunked body of spaces that does not end (512 MiB per request at most). For measuring what a
LIST that grows without end costs the plugin (bench/RESULTS.md, "Hostile input, round two"):

    python3 bench/endless-server.py 28980 &
    printf '%s\n' 'apiVersion: v1' 'kind: Config' \
      "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:28980'}}]" \
      'users: [{name: u, user: {token: t}}]' \
      'contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]' \
      'current-context: x' > /tmp/kc-endless
    /usr/bin/time -f '%e s %M KB' kubectl-quota check -f examples/app.yaml --kubeconfig /tmp/kc-endless
"""
import socket
import sys
import threading


def serve(c):
    try:
        c.settimeout(5)
        c.recv(65536)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
        for _ in range(8192):
            c.sendall(chunk)
    except OSError:
        pass
    finally:
        c.close()


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
while True:
    conn, _ = s.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
