#!/usr/bin/env python3
"""Where a running daemon's resident memory is (docs/benchmarks.md, "Where the idle RSS goes").

    Benchmarks/resident-memory.py PID

Two tables, in KiB. By mapping kind, from /proc/PID/smaps: the daemon's own binary by segment
(headers and Swift metadata r--, code r-x, relocated read-only data, data), anonymous memory
(heap, stacks, .bss) and the shared libraries, each with RSS, the part other processes map too
(shared), the private part and the anonymous part. Then the binary's resident pages by ELF
section (readelf -S; /proc/PID/pagemap, which needs root), which says what the pages hold.
Start the daemon and let it idle first, e.g. with scripts/run-daemon.sh.
"""
import collections
import os
import re
import struct
import subprocess
import sys

PAGE = 4096
FIELDS = ("Rss", "Shared", "Private", "Anonymous")


def mappings(pid):
    """One dict per line of /proc/PID/smaps: start, end, perms, offset, path and its kB fields."""
    rows = []
    with open(f"/proc/{pid}/smaps") as smaps:
        for line in smaps:
            header = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \S+\s*(.*)$", line)
            if header:
                rows.append({"start": int(header[1], 16), "end": int(header[2], 16), "perms": header[3],
                             "offset": int(header[4], 16), "path": header[5]})
            elif line.rstrip().endswith(" kB"):
                key, _, value = line.partition(":")
                rows[-1][key] = int(value.split()[0])
    return rows


def kind(row, binary):
    if row["path"] == binary:
        return {"r--p": "binary r-- (headers, Swift metadata, .eh_frame, .rodata when read-only)",
                "r-xp": "binary r-x (.text)", "rw-p": "binary rw- (.data, .rodata, .got.plt)"}.get(
                    row["perms"], f"binary {row['perms']}")
    if row["path"].startswith("/"):
        return f"library {os.path.basename(row['path'])}" if "lib" in row["path"] else row["path"]
    return f"anonymous {row['path'] or '(.bss, malloc arenas, thread stacks)'}"


def by_kind(rows, binary):
    totals = collections.defaultdict(collections.Counter)
    previous = None
    for row in rows:
        name = kind(row, binary)
        # The binary's relocated read-only data (GNU_RELRO: .data.rel.ro, .got) is the r-- mapping
        # that follows its code; every page of it holds a relocated pointer, so it is all copied.
        if row["path"] == binary and row["perms"] == "r--p" and previous == "r-xp":
            name = "binary r-- after relocation (.data.rel.ro, .got)"
        previous = row["perms"] if row["path"] == binary else previous
        counter = totals[name]
        counter["Rss"] += row.get("Rss", 0)
        counter["Shared"] += row.get("Shared_Clean", 0) + row.get("Shared_Dirty", 0)
        counter["Private"] += row.get("Private_Clean", 0) + row.get("Private_Dirty", 0)
        counter["Anonymous"] += row.get("Anonymous", 0)
    return totals


def resident_pages(pid, rows, binary):
    """Page numbers (from the file's first mapped address) of the binary's resident pages."""
    own = [row for row in rows if row["path"] == binary]
    base = own[0]["start"] - own[0]["offset"]
    present = set()
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for row in own:
            pagemap.seek(row["start"] // PAGE * 8)
            entries = pagemap.read((row["end"] - row["start"]) // PAGE * 8)
            for index in range(len(entries) // 8):
                (entry,) = struct.unpack_from("<Q", entries, index * 8)
                if entry >> 63 & 1:
                    present.add((row["start"] - base) // PAGE + index)
    return present


def sections(binary):
    """(name, address, size) of the allocated sections, from readelf -S."""
    listing = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout
    found = []
    for line in listing.splitlines():
        match = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if match and int(match[2], 16) and int(match[3], 16):
            found.append((match[1], int(match[2], 16), int(match[3], 16)))
    return found


def main():
    pid = sys.argv[1]
    binary = os.path.realpath(f"/proc/{pid}/exe")
    rows = mappings(pid)
    totals = by_kind(rows, binary)
    print(f"{'RSS':>7} {'shared':>7} {'private':>7} {'anon':>7}  mapping")
    for name, counter in sorted(totals.items(), key=lambda item: -item[1]["Rss"]):
        if counter["Rss"]:
            print(" ".join(f"{counter[field]:7}" for field in FIELDS) + f"  {name}")
    overall = sum(totals.values(), collections.Counter())
    print(" ".join(f"{overall[field]:7}" for field in FIELDS) + "  total")
    present = resident_pages(pid, rows, binary)
    print(f"\n{'size':>7} {'resident':>8}  section of {binary} (KiB)")
    for name, address, size in sections(binary):
        pages = range(address // PAGE, (address + size - 1) // PAGE + 1)
        resident = sum(1 for page in pages if page in present) * PAGE // 1024
        if resident:
            print(f"{size // 1024:7} {resident:8}  {name}")
    # Pages shared by two sections are counted in both: the sum can exceed the mappings' RSS.


if __name__ == "__main__":
    main()
