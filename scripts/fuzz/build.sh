#!/bin/sh
# Builds the libFuzzer target for the rtnetlink parser with Swift's own sanitizers:
#   scripts/fuzz/build.sh [OUTPUT_DIR]        (default .build-fuzz)
# then runs it, e.g. for 60 s on the committed seed corpus (copied, so that new inputs stay out
# of the repository):
#   cp -r Tests/Fuzz/corpus/netlink .build-fuzz/corpus
#   .build-fuzz/netlink-parser-fuzzer -max_total_time=60 -max_len=4096 .build-fuzz/corpus
# Crashers are written to ./crash-*; commit them under Tests/Fuzz/crashers/netlink/.
#
# SwiftPM's own fuzzer support (`swift build -Xswiftc -sanitize=fuzzer`) instruments every target
# and then fails linking the executables (each has its own main, libFuzzer brings another), so the
# parser is compiled here module by module with swiftc, Swift 6.3.1 at /opt/swift:
#   1. the C shim with clang -fsanitize=fuzzer-no-link,address,
#   2. SystemSupport and RTNetlink as modules (-sanitize=fuzzer,address instruments them),
#   3. the entry point (@_cdecl LLVMFuzzerTestOneInput) linked with libFuzzer's main.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/.build-fuzz}
SWIFT_BIN=${SWIFT_BIN:-/opt/swift/usr/bin}
mkdir -p "$OUT/modules"
SANITIZE="-sanitize=fuzzer,address"
SWIFTFLAGS="-O -g -parse-as-library -swift-version 6 -I $OUT/modules"

# The C shim as a Clang module, as SwiftPM would present it.
cat > "$OUT/modules/module.modulemap" <<MAP
module CReachabilityShims {
    header "$ROOT/Sources/CReachabilityShims/include/CReachabilityShims.h"
    export *
}
MAP
"$SWIFT_BIN/clang" -O1 -g -fsanitize=fuzzer-no-link,address -I "$ROOT/Sources/CReachabilityShims/include" \
    -c "$ROOT/Sources/CReachabilityShims/shims.c" -o "$OUT/shims.o"

"$SWIFT_BIN/swiftc" $SWIFTFLAGS $SANITIZE -module-name SystemSupport -emit-module -emit-module-path "$OUT/modules/SystemSupport.swiftmodule" \
    -c "$ROOT"/Sources/SystemSupport/*.swift -wmo -o "$OUT/SystemSupport.o"
"$SWIFT_BIN/swiftc" $SWIFTFLAGS $SANITIZE -module-name RTNetlink -emit-module -emit-module-path "$OUT/modules/RTNetlink.swiftmodule" \
    -c "$ROOT"/Sources/RTNetlink/*.swift -wmo -o "$OUT/RTNetlink.o"
"$SWIFT_BIN/swiftc" $SWIFTFLAGS $SANITIZE -module-name NetlinkParserFuzzer \
    "$ROOT/scripts/fuzz/NetlinkParserFuzzer.swift" "$OUT/RTNetlink.o" "$OUT/SystemSupport.o" "$OUT/shims.o" \
    -use-ld=lld -lsystemd -o "$OUT/netlink-parser-fuzzer"
echo "$OUT/netlink-parser-fuzzer"
