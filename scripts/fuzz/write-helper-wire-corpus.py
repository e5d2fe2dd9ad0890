#!/usr/bin/env python3
"""Writes the seed corpus of check-helper-wire-fuzzer (CheckHelperMessage's datagrams, format in
Sources/reachabilityd/CheckHelperMessage.swift): one file per message kind and outcome an honest
helper or daemon sends, named after it, and the forged answers the daemon must refuse.
Usage: scripts/fuzz/write-helper-wire-corpus.py CORPUS_DIR CRASHERS_DIR"""
import os
import struct
import sys


def integer(value):
    return struct.pack('<q', value)


def double(value):
    return struct.pack('<d', value)


def text(value):
    data = value if isinstance(value, bytes) else value.encode()
    return struct.pack('<I', len(data)) + data


def optional(value):
    return b'\x00' if value is None else b'\x01' + text(value)


def exchanged(token, outcome, seconds, lookup=b'\x00'):
    return b'\x04' + integer(token) + outcome + double(seconds) + lookup


def response(status, redirect=None, body=b''):
    return b'\x00' + integer(status) + optional(redirect) + text(body)


SEEDS = {
    'exchange-ipv4': b'\x01' + integer(1) + text('http://check.example/generate_204') + b'\x04' + text('eth0') + double(10) + optional(None) + optional(None),
    'exchange-ipv6-api': b'\x01' + integer(2) + text('https://[2001:db8::1]/api') + b'\x06' + text('wlan0') + double(0.5)
        + optional('application/captive+json') + optional('/etc/ca.pem'),
    'look-up': b'\x02' + integer(3) + text('ipv4only.arpa') + b'\x06',
    'cancel': b'\x03' + integer(4),
    'exchanged-204': exchanged(5, response(204), 0.012, b'\x01'),
    'exchanged-302': exchanged(6, response(302, 'http://portal.example/login'), 0.2),
    'exchanged-200-body': exchanged(7, response(200, None, '{"captive": true, "user-portal-url": "https://portal/"}'), 1),
    'exchanged-failed': exchanged(8, b'\x01' + text('Connection refused'), 0),
    'exchanged-silent-lookup-failed': exchanged(9, b'\x02' + text('Resolving timed out after 1000 milliseconds'), 1,
                                                b'\x02' + text('Temporary failure in name resolution')),
    'unavailable': b'\x05' + integer(10) + text('libcurl could not be loaded: libcurl.so.4: cannot open shared object file'),
    'looked-up': b'\x06' + integer(11) + integer(2) + text('64:ff9b::c000:aa') + text('64:ff9b::c000:ab'),
    'looked-up-none': b'\x06' + integer(12) + integer(0),
    'forged-infinite-seconds': exchanged(13, response(204), float('inf')),
    'forged-control-character': exchanged(14, b'\x01' + text('forged\nline'), 1),
    'forged-invalid-utf8': b'\x05' + integer(15) + text(b'\xff\xfe'),
    'forged-javascript-redirect': exchanged(16, response(302, 'javascript:alert(1)'), 1),
}
CRASHERS = {
    # Before the decoder checked seconds, this answer made the next Explain() trap the daemon.
    'nan-seconds': exchanged(1, response(204), float('nan')),
}

for directory, inputs in zip(sys.argv[1:3], (SEEDS, CRASHERS)):
    os.makedirs(directory, exist_ok=True)
    for name, data in inputs.items():
        with open(os.path.join(directory, name), 'wb') as output:
            output.write(data)
