#!/usr/bin/python3
# Captures real rtnetlink datagrams as seed corpora for the fuzzers (issue 6):
#   scripts/fuzz/capture-corpus.py NETLINK_DIR [REDUCER_DIR]
# As root: makes a scratch namespace with two veth pairs (one a port of a bridge), IPv4/IPv6
# addresses, routes (default, unreachable, a table route) and a rule, and enters it. Saves every
# datagram of the link, address, route and rule dumps, the answers of route lookups to 8.8.8.8,
# 8.8.4.4 and 2001:4860:4860::8888 (plain and RTM_F_FIB_MATCH), and the events seen while links,
# addresses, routes and rules change step by step, with the lookups again after each step; then
# deletes the namespace. NETLINK_DIR gets one file per datagram (the parser fuzzer's seeds),
# REDUCER_DIR the status reducer fuzzer's seeds: those datagrams in the order the engine met
# them, as records of (role, little-endian UInt16 length, datagram) as
# Tests/ReachabilityEngineTests/StatusReducerOracle.swift reads them. Files are named by SHA-1.
import ctypes, hashlib, os, socket, struct, subprocess, sys

netlink_out = sys.argv[1]
reducer_out = sys.argv[2] if len(sys.argv) > 2 else None
ns = f"fuzzseed-{os.getpid()}"

# ReducerFuzzInput.Role
DUMP, EVENTS, IPV4_ANSWER, IPV4_MATCHED_ENTRY, IPV6_ANSWER, IPV6_MATCHED_ENTRY = range(6)
NLMSG_ERROR, NLMSG_DONE = 2, 3

def ip(*args):
    subprocess.run(["ip", "-n", ns, *args], check=True)

def write(directory, data):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)

def message_types(datagram):
    types, offset = [], 0
    while offset + 16 <= len(datagram):
        length, kind = struct.unpack_from("=IH", datagram, offset)
        types.append(kind)
        offset += max((length + 3) & ~3, 16)
    return types

def receive(sock, until):
    """Datagrams until the one that ends a dump ("dump") or answers a lookup ("lookup"), or
    (events) until 0.3 s of quiet."""
    datagrams = []
    sock.settimeout(0.3 if until == "events" else 2)
    try:
        while True:
            datagram = sock.recv(65536)
            write(netlink_out, datagram)
            datagrams.append(datagram)
            if until == "lookup" or until == "dump" and {NLMSG_DONE, NLMSG_ERROR} & set(message_types(datagram)):
                return datagrams
    except socket.timeout:
        return datagrams

subprocess.run(["ip", "netns", "add", ns], check=True)
try:
    ip("link", "add", "fz0", "type", "veth", "peer", "name", "fz1")
    ip("link", "add", "fz2", "type", "veth", "peer", "name", "fz3")
    ip("link", "add", "fzbr0", "type", "bridge")
    ip("link", "set", "fz2", "master", "fzbr0")
    for link in ["lo", "fz0", "fz1", "fz2", "fz3", "fzbr0"]:
        ip("link", "set", link, "up")
    ip("addr", "add", "10.88.0.2/24", "dev", "fz0")
    ip("addr", "add", "2001:db8:88::2/64", "dev", "fz0", "nodad")
    ip("addr", "add", "10.89.0.2/24", "dev", "fzbr0")
    ip("route", "add", "default", "via", "10.88.0.1", "dev", "fz0", "metric", "100")
    ip("route", "add", "unreachable", "192.0.2.0/24")
    ip("route", "add", "8.8.8.0/24", "via", "10.88.0.1", "table", "100")
    ip("-6", "route", "add", "default", "via", "2001:db8:88::1", "dev", "fz0")
    ip("rule", "add", "to", "8.8.4.0/24", "table", "100")

    fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)  # os.setns needs Python 3.12; Debian 12 has 3.11
    if ctypes.CDLL(None, use_errno=True).setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
        sys.exit(f"setns: errno {ctypes.get_errno()}")
    monitor = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    # RTMGRP_LINK | IPV4_IFADDR | IPV4_ROUTE | IPV6_IFADDR | IPV6_ROUTE | IPV4_RULE
    monitor.bind((0, 0x1 | 0x10 | 0x40 | 0x100 | 0x400 | 0x80))
    query = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    query.bind((0, 0))
    sequence = 0

    def request(kind, flags, body, until):
        global sequence
        sequence += 1
        query.send(struct.pack("=IHHII", 16 + len(body), kind, flags, sequence, 0) + body)
        return receive(query, until)

    def dump(kind, body):
        return request(kind, 0x301, body, "dump")  # NLM_F_REQUEST | NLM_F_DUMP

    def lookup(family, text, fib_match):
        address = socket.inet_pton(family, text)
        attribute = struct.pack("=HH", 4 + len(address), 1) + address  # RTA_DST
        flags = 0x2000 | 0x1000 if fib_match else 0  # RTM_F_FIB_MATCH | RTM_F_LOOKUP_TABLE
        body = struct.pack("=BBBBBBBBI", family, len(address) * 8, 0, 0, 0, 0, 0, 0, flags) + attribute
        return request(26, 0x1, body, "lookup")  # RTM_GETROUTE, NLM_F_REQUEST

    def records(role, datagrams):
        return b"".join(struct.pack("<BH", role, len(d)) + d for d in datagrams)

    def link_and_address_dump():
        return records(DUMP, dump(18, struct.pack("=BxHiII", 0, 0, 0, 0, 0))     # RTM_GETLINK
                             + dump(22, struct.pack("=BBBBi", 0, 0, 0, 0, 0)))  # RTM_GETADDR

    def probe_answers(ipv4_destination="8.8.8.8"):
        return (records(IPV4_ANSWER, lookup(socket.AF_INET, ipv4_destination, False))
                + records(IPV4_MATCHED_ENTRY, lookup(socket.AF_INET, ipv4_destination, True))
                + records(IPV6_ANSWER, lookup(socket.AF_INET6, "2001:4860:4860::8888", False))
                + records(IPV6_MATCHED_ENTRY, lookup(socket.AF_INET6, "2001:4860:4860::8888", True)))

    initial_dump = link_and_address_dump()
    dump(26, struct.pack("=BBBBBBBBI", 0, 0, 0, 0, 0, 0, 0, 0, 0))  # RTM_GETROUTE (parser seeds only)
    dump(34, struct.pack("=BBBBBBBBI", 0, 0, 0, 0, 0, 0, 0, 0, 0))  # RTM_GETRULE
    # The engine evaluates a dump with the kernel's answers of that moment: they come first.
    answers = probe_answers()
    seeds = [initial_dump, answers, probe_answers("8.8.4.4") + initial_dump]
    full = answers + initial_dump
    for step in [["link", "set", "fz1", "down"],  # fz0 loses its carrier
                 ["link", "set", "fz1", "up"],
                 ["addr", "add", "10.88.1.2/32", "dev", "fz0"],
                 ["addr", "del", "10.88.1.2/32", "dev", "fz0"],
                 ["route", "replace", "default", "via", "10.88.0.3", "dev", "fz0", "metric", "100"],
                 ["route", "replace", "default", "via", "10.89.0.1", "dev", "fzbr0", "metric", "100"],
                 ["route", "del", "default"],
                 ["-6", "route", "del", "default"],
                 ["rule", "del", "to", "8.8.4.0/24", "table", "100"],
                 ["link", "set", "fz0", "name", "fz9"]]:
        ip(*step)
        # The engine asks the kernel again after each batch of events: the answers come first.
        events = records(EVENTS, receive(monitor, "events"))
        after = probe_answers()
        seeds.append(answers + initial_dump + after + events)
        answers = after
        full += after + events
    seeds.append(full + link_and_address_dump())  # a resynchronisation at the end
    if reducer_out:
        for seed in seeds:
            write(reducer_out, seed)
finally:
    subprocess.run(["ip", "netns", "delete", ns])
print(len(os.listdir(netlink_out)), "datagrams in", netlink_out)
if reducer_out:
    print(len(os.listdir(reducer_out)), "inputs in", reducer_out)
