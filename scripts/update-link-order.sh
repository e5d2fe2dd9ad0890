#!/usr/bin/env bash
# Rewrites Sources/reachabilityd/reachabilityd.order, the daemon's symbol ordering file: the
# functions of the release binary that its start-up, a GetAll and a CheckAddress run, found by
# running it under valgrind's callgrind on a private bus (scripts/run-daemon.sh). The link places
# them together (Package.swift), so that the 64 KiB a page fault maps around each page hold
# code the daemon runs rather than code it never does. Run it after a change that adds or
# renames much of what start-up runs, then commit the file; a stale file costs resident memory,
# never correctness (lld links a name it does not find as before). Needs valgrind.
#   scripts/update-link-order.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
swift=${SWIFT:-swift}
work=$(mktemp -d /tmp/reachabilityd-order.XXXXXX)
trap 'rm -rf "$work"' EXIT

cd "$repo"
"$swift" build -c release --static-swift-stdlib --product reachabilityd -Xlinker "-Map=$work/reachabilityd.map" -Xlinker --no-demangle
binary=$(
  "$swift" build -c release --static-swift-stdlib --show-bin-path
)/reachabilityd
# valgrind cannot read the DWARF 5 the compiler writes; the symbol table is all it needs.
strip --strip-debug -o "$work/reachabilityd" "$binary"
cat > "$work/profiled" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind --demangle=no --callgrind-out-file=$work/callgrind.out $work/reachabilityd "\$@"
EOF
chmod +x "$work/profiled"

touch "$work/run.log"
scripts/run-daemon.sh "$work/profiled" > /dev/null 2> "$work/run.log" &
runner=$!
address=
for _ in $(seq 600); do
  address=$(sed -n 's/^ *busctl \(--address=[^ ]*\) get-property.*/\1/p' "$work/run.log")
  [ -n "$address" ] && break
  kill -0 "$runner" 2>/dev/null || { cat "$work/run.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$address" ] || { echo "update-link-order: the daemon did not serve" >&2; cat "$work/run.log" >&2; exit 1; }
object=(org.reachabilityd.Reachability1 /org/reachabilityd/Reachability1)
busctl "$address" call "${object[@]}" org.freedesktop.DBus.Properties GetAll s org.reachabilityd.Reachability1 > /dev/null
busctl "$address" call "${object[@]}" org.reachabilityd.Reachability1 CheckAddress s 127.0.0.1 > /dev/null
sleep 2
daemon=$(pgrep -f "^[^ ]*valgrind[^ ]* --tool=callgrind .*$work/reachabilityd")
kill -TERM "$daemon"
wait "$runner" || true

python3 - "$work/callgrind.out" "$work/reachabilityd.map" "$repo/Sources/reachabilityd/reachabilityd.order" <<'EOF'
import re, sys
profile, link_map, order = sys.argv[1:4]
# The functions callgrind saw run in the daemon's own binary (not in libc or libsystemd).
objects, names, ran, current = {}, {}, set(), None
for line in open(profile):
    m = re.match(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
    if not m:
        continue
    kind, key, name = m.groups()
    table = objects if kind.endswith("ob") else names
    if name:
        table[key] = name
    if kind == "ob":
        current = objects[key]
    elif kind == "fn" and current and current.endswith("/reachabilityd"):
        ran.add(names[key].split("'")[0])
# The input section each function of .text is in, with its address and size (lld's -Map).
section_of, address_of, output = {}, {}, None
for line in open(link_map):
    m = re.match(r"\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+ (\s*)(\S.*)$", line)
    if not m:
        continue
    address, size, indent, text = int(m[1], 16), int(m[2], 16), len(m[3]), m[4]
    if indent == 0:
        output = text
    elif output == ".text" and indent == 8:
        section = (address, size)
    elif output == ".text" and indent == 16:
        section_of[text], address_of[text] = section, address
# Moving a section larger than the 64 KiB a fault maps gains nothing: only functions in smaller
# sections are listed, in the order they lie in now.
listed = sorted((address_of[n], n) for n in ran if n in section_of and section_of[n][1] <= 65536)
with open(order, "w") as out:
    out.write("".join(name + "\n" for _, name in listed))
print(f"update-link-order: {len(listed)} of the {len(ran)} functions that ran written to {order}")
EOF
