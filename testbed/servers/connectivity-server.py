#!/usr/bin/env python3
"""The connectivity tests' servers, run inside a test's router namespace (never elsewhere).

HTTP on [::]:8080 (IPv4 and IPv6):
  /check   answers as the file STATE/mode says (read at every request; default 204):
             204         204 No Content
             redirect    302 to http://10.77.0.1:8080/portal
             html        200 with an HTML page
             body        200 with "success\\n"
             slow        204 after 1.5 s
             hang        never answers (past any check's timeout)
             reset       TCP reset (SO_LINGER 0)
             reset-once  TCP reset, then the mode becomes STATE/next-mode's (default 204)
             endless     200 with an HTML body that never ends (sent until the client stops
                         reading; the bytes sent are appended to STATE/endless-bytes)
             session     204 while /session's session lasts, then 302 to http://10.77.0.1:8080/portal
  /portal  200 with an HTML page
HTTPS on [::]:8443 (a test CA, made here; STATE/ca.pem is its certificate):
  /captive  {"captive": true, "user-portal-url": "https://HOST/portal"} (HOST: the request's Host)
  /open     {"captive": false}
  /javascript  {"captive": true, "user-portal-url": "javascript:alert(1)"}
  /session  a session of STATE/session-seconds seconds (default 3600) from its first request:
            {"captive": false, "seconds-remaining": LEFT, "bytes-remaining": 1000000,
            "venue-info-url": "https://HOST/venue", "can-extend-session": true} while it lasts, then
            {"captive": true, "user-portal-url": "https://HOST/portal", "venue-info-url": ...}
Every request is appended to STATE/requests ("METHOD PATH ACCEPT CLIENT-ADDRESS").
Usage: connectivity-server.py STATE_DIRECTORY
"""
import http.server
import json
import os
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time

state = sys.argv[1]
session_start = None


def session_left():
    """The seconds /session's session has left (it starts at the first call), rounded up."""
    global session_start
    if session_start is None:
        session_start = time.monotonic()
    try:
        with open(os.path.join(state, "session-seconds")) as f:
            length = float(f.read().strip())
    except FileNotFoundError:
        length = 3600
    return max(0, int(-(-(length - (time.monotonic() - session_start)) // 1)))


def make_certificates():
    """A CA and a server certificate for the routers' addresses (the integration tests' 10.77.0.1
    and fd00::1, the benchmark's 10.88.0.1, the end-to-end test's 10.99.0.1), signed by it."""
    ca_key, ca, key, csr, cert = (os.path.join(state, n) for n in ("ca.key", "ca.pem", "server.key", "server.csr", "server.pem"))
    run = lambda *args: subprocess.run(args, check=True, capture_output=True)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2",
        "-subj", "/CN=reachabilityd test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=10.77.0.1")
    extensions = os.path.join(state, "server.ext")
    with open(extensions, "w") as f:
        f.write("subjectAltName=IP:10.77.0.1,IP:fd00::1,IP:10.88.0.1,IP:10.99.0.1\nbasicConstraints=CA:FALSE\n")
    run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert, "-days", "2",
        "-extfile", extensions)
    return cert, key


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", content_type="text/html", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if status != 204:
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status != 204:
            self.wfile.write(body)

    def do_GET(self):
        with open(os.path.join(state, "requests"), "a") as log:
            log.write(f"GET {self.path} {self.headers.get('Accept', '-')} {self.client_address[0]}\n")
        if self.path == "/check":
            try:
                with open(os.path.join(state, "mode")) as f:
                    mode = f.read().strip()
            except FileNotFoundError:
                mode = "204"
            if mode == "204":
                self.answer(204)
            elif mode == "redirect":
                self.answer(302, headers=[("Location", "http://10.77.0.1:8080/portal")])
            elif mode == "html":
                self.answer(200, b"<html><body>Welcome to the hotel network</body></html>")
            elif mode == "body":
                self.answer(200, b"success\n", "text/plain")
            elif mode == "endless":
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                chunk, sent = b"<html><body>" + b"x" * 65536, 0
                try:
                    while True:
                        self.wfile.write(chunk)
                        sent += len(chunk)
                except OSError:
                    pass
                with open(os.path.join(state, "endless-bytes"), "a") as f:
                    f.write(f"{sent}\n")
                self.close_connection = True
            elif mode == "session":
                if session_start is not None and session_left() == 0:
                    self.answer(302, headers=[("Location", "http://10.77.0.1:8080/portal")])
                else:
                    self.answer(204)
            elif mode == "slow":
                time.sleep(1.5)
                self.answer(204)
            elif mode == "hang":
                time.sleep(3600)
            elif mode in ("reset", "reset-once"):
                if mode == "reset-once":
                    try:
                        with open(os.path.join(state, "next-mode")) as f:
                            following = f.read().strip()
                    except FileNotFoundError:
                        following = "204"
                    with open(os.path.join(state, "mode"), "w") as f:
                        f.write(following + "\n")
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
        elif self.path == "/portal":
            self.answer(200, b"<html><body>Log in</body></html>")
        elif self.path == "/captive":
            portal = f"https://{self.headers.get('Host', '10.77.0.1:8443')}/portal"
            self.answer(200, json.dumps({"captive": True, "user-portal-url": portal}).encode(), "application/captive+json")
        elif self.path == "/javascript":
            self.answer(200, json.dumps({"captive": True, "user-portal-url": "javascript:alert(1)"}).encode(), "application/captive+json")
        elif self.path == "/session":
            host = self.headers.get('Host', '10.77.0.1:8443')
            left = session_left()
            answer = {"captive": left == 0, "venue-info-url": f"https://{host}/venue"}
            if left > 0:
                answer.update({"seconds-remaining": left, "bytes-remaining": 1000000, "can-extend-session": True})
            else:
                answer["user-portal-url"] = f"https://{host}/portal"
            self.answer(200, json.dumps(answer).encode(), "application/captive+json")
        elif self.path == "/open":
            self.answer(200, json.dumps({"captive": False}).encode(), "application/captive+json")
        else:
            self.answer(404, b"not found")


class Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
    daemon_threads = True

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


def main():
    cert, key = make_certificates()
    plain = Server(("::", 8080), Handler)
    secure = Server(("::", 8443), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    secure.socket = context.wrap_socket(secure.socket, server_side=True)
    threading.Thread(target=secure.serve_forever, daemon=True).start()
    with open(os.path.join(state, "ready"), "w") as f:
        f.write("ready\n")
    plain.serve_forever()


main()
