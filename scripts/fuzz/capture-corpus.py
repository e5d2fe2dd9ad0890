#!/usr/bin/python3
# Captures real rtnetlink datagrams as a seed corpus for the parser fuzzer (issue 6):
#   scripts/fuzz/capture-corpus.py OUTPUT_DIR
# As root: makes a scratch namespace with a veth pair, IPv4/IPv6 addresses, routes (default,
# unreachable, multipath-free table routes) and a rule; saves every datagram of the link,
# address, route and rule dumps, the answers of route lookups to 8.8.8.8 and
# 2001:4860:4860::8888 (plain and RTM_F_FIB_MATCH), and the events seen while links, addresses
# and routes change; then deletes the namespace. One file per datagram, named by its SHA-1.
import hashlib, os, socket, struct, subprocess, sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
ns = f"fuzzseed-{os.getpid()}"

def ip(*args):
    subprocess.run(["ip", "-n", ns, *args], check=True)

def save(datagram):
    with open(os.path.join(out, hashlib.sha1(datagram).hexdigest()), "wb") as f:
        f.write(datagram)

def receive_all(sock):
    sock.settimeout(0.3)
    try:
        while True:
            save(sock.recv(65536))
    except socket.timeout:
        pass

subprocess.run(["ip", "netns", "add", ns], check=True)
try:
    ip("link", "add", "fz0", "type", "veth", "peer", "name", "fz1")
    ip("link", "set", "lo", "up")
    for link in ["fz0", "fz1"]:
        ip("link", "set", link, "up")
    ip("addr", "add", "10.88.0.2/24", "dev", "fz0")
    ip("addr", "add", "2001:db8:88::2/64", "dev", "fz0", "nodad")
    ip("route", "add", "default", "via", "10.88.0.1", "dev", "fz0", "metric", "100")
    ip("route", "add", "unreachable", "192.0.2.0/24")
    ip("route", "add", "8.8.8.0/24", "via", "10.88.0.1", "table", "100")
    ip("-6", "route", "add", "default", "via", "2001:db8:88::1", "dev", "fz0")
    ip("rule", "add", "to", "8.8.4.0/24", "table", "100")
    pid = os.fork()
    if pid == 0:
        fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)
        import ctypes  # os.setns needs Python 3.12; Debian 12 has 3.11
        if ctypes.CDLL(None, use_errno=True).setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
            os._exit(1)
        monitor = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        # RTMGRP_LINK | IPV4_IFADDR | IPV4_ROUTE | IPV6_IFADDR | IPV6_ROUTE | IPV4_RULE
        monitor.bind((0, 0x1 | 0x10 | 0x40 | 0x100 | 0x400 | 0x80))
        query = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        query.bind((0, 0))
        sequence = 1
        for kind, body in [(18, struct.pack("=BxHiII", 0, 0, 0, 0, 0)),          # RTM_GETLINK
                           (22, struct.pack("=BBBBi", 0, 0, 0, 0, 0)),             # RTM_GETADDR
                           (26, struct.pack("=BBBBBBBBI", 0, 0, 0, 0, 0, 0, 0, 0, 0)),  # RTM_GETROUTE
                           (34, struct.pack("=BBBBBBBBI", 0, 0, 0, 0, 0, 0, 0, 0, 0))]:  # RTM_GETRULE
            query.send(struct.pack("=IHHII", 16 + len(body), kind, 0x301, sequence, 0) + body)
            sequence += 1
            receive_all(query)
        for family, address in [(socket.AF_INET, socket.inet_pton(socket.AF_INET, "8.8.8.8")),
                                (socket.AF_INET6, socket.inet_pton(socket.AF_INET6, "2001:4860:4860::8888")),
                                (socket.AF_INET, socket.inet_pton(socket.AF_INET, "8.8.4.4"))]:
            for flags in [0, 0x2000 | 0x1000]:  # plain; RTM_F_FIB_MATCH | RTM_F_LOOKUP_TABLE
                attribute = struct.pack("=HH", 4 + len(address), 1) + address  # RTA_DST
                body = struct.pack("=BBBBBBBBI", family, len(address) * 8, 0, 0, 0, 0, 0, 0, flags) + attribute
                query.send(struct.pack("=IHHII", 16 + len(body), 26, 0x1, sequence, 0) + body)
                sequence += 1
                receive_all(query)
        # Events: the parent makes changes after a short pause.
        monitor.settimeout(1.5)
        try:
            while True:
                save(monitor.recv(65536))
        except socket.timeout:
            pass
        os._exit(0)
    import time
    time.sleep(0.8)
    ip("link", "set", "fz1", "down")
    ip("link", "set", "fz1", "up")
    ip("addr", "add", "10.88.1.2/32", "dev", "fz0")
    ip("addr", "del", "10.88.1.2/32", "dev", "fz0")
    ip("route", "replace", "default", "via", "10.88.0.3", "dev", "fz0", "metric", "100")
    ip("route", "del", "default")
    ip("-6", "route", "del", "default")
    ip("rule", "del", "to", "8.8.4.0/24", "table", "100")
    ip("link", "set", "fz0", "name", "fz9")
    os.waitpid(pid, 0)
finally:
    subprocess.run(["ip", "netns", "delete", ns])
print(len(os.listdir(out)), "datagrams in", out)
