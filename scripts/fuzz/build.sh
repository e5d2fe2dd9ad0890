#!/bin/sh
# Builds the libFuzzer targets with Swift's own sanitizers:
#   scripts/fuzz/build.sh [OUTPUT_DIR]        (default .build-fuzz)
# - netlink-parser-fuzzer: one datagram through the rtnetlink parser;
# - status-reducer-fuzzer: datagrams as dumps, events and route-lookup answers through the
#   parser, the link table and the decision rule (the engine without its sockets);
# - check-helper-wire-fuzzer: one datagram from the check helper through the daemon's decoder;
# - varlink-call-fuzzer: what a Varlink peer sends, through the framer and the call decoder.
# Then run one on a copy of its committed seed corpus (so that new inputs stay out of the
# repository), e.g. for 60 s:
#   export SWIFT_BACKTRACE=enable=no   # else a trap hangs in Swift's backtracer under ASan
#   cp -r Tests/Fuzz/corpus/netlink .build-fuzz/corpus-netlink
#   .build-fuzz/netlink-parser-fuzzer -max_total_time=60 -max_len=4096 .build-fuzz/corpus-netlink
#   cp -r Tests/Fuzz/corpus/reducer .build-fuzz/corpus-reducer
#   .build-fuzz/status-reducer-fuzzer -max_total_time=60 -timeout=10 .build-fuzz/corpus-reducer
#   cp -r Tests/Fuzz/corpus/helper-wire .build-fuzz/corpus-helper-wire
#   .build-fuzz/check-helper-wire-fuzzer -max_total_time=60 -max_len=70000 .build-fuzz/corpus-helper-wire
#   cp -r Tests/Fuzz/corpus/varlink .build-fuzz/corpus-varlink
#   .build-fuzz/varlink-call-fuzzer -max_total_time=60 -max_len=20000 .build-fuzz/corpus-varlink
# Crashers are written to ./crash-*; commit them under Tests/Fuzz/crashers/netlink/,
# Tests/Fuzz/crashers/reducer/, Tests/Fuzz/crashers/helper-wire/ or Tests/Fuzz/crashers/varlink/, where the replay tests run
# them on every `swift test`.
#
# SwiftPM's own fuzzer support (`swift build -Xswiftc -sanitize=fuzzer`) instruments every target
# and then fails linking the executables (each has its own main, libFuzzer brings another), so the
# modules are compiled here one by one with swiftc, Swift 6.3.1 at /opt/swift:
#   1. the netlink C shim (no libsystemd) with clang -fsanitize=fuzzer-no-link,address,
#   2. SystemSupport, NetworkTypes, RTNetlink, ReachabilityCore and ReachabilityEngine as modules
#      (-sanitize=fuzzer,address instruments them; the engine with -enable-testing, for the
#      oracle's @testable import), and the check helper's message codec alone as the module
#      reachabilityd (its oracle's @testable import),
#   3. each entry point (@_cdecl LLVMFuzzerTestOneInput) linked with libFuzzer's main.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/.build-fuzz}
SWIFT_BIN=${SWIFT_BIN:-/opt/swift/usr/bin}
mkdir -p "$OUT/modules"
SANITIZE="-sanitize=fuzzer,address"
SWIFTFLAGS="-O -g -parse-as-library -swift-version 6 -package-name reachabilityd -I $OUT/modules"

# The C shim as a Clang module, as SwiftPM would present it.
cat > "$OUT/modules/module.modulemap" <<MAP
module CNetlinkShims {
    header "$ROOT/Sources/CNetlinkShims/include/CNetlinkShims.h"
    export *
}
MAP
"$SWIFT_BIN/clang" -O1 -g -fsanitize=fuzzer-no-link,address -I "$ROOT/Sources/CNetlinkShims/include" \
    -c "$ROOT/Sources/CNetlinkShims/shims.c" -o "$OUT/shims.o"

# module NAME [EXTRA_FLAGS]: Sources/NAME as an instrumented module and object file.
module() {
    "$SWIFT_BIN/swiftc" $SWIFTFLAGS $SANITIZE ${2:-} -module-name "$1" -emit-module -emit-module-path "$OUT/modules/$1.swiftmodule" \
        -c "$ROOT/Sources/$1"/*.swift -wmo -o "$OUT/$1.o"
}
module SystemSupport
module NetworkTypes
module RTNetlink
module ReachabilityCore
module ReachabilityEngine -enable-testing
"$SWIFT_BIN/swiftc" $SWIFTFLAGS $SANITIZE -enable-testing -module-name reachabilityd -emit-module -emit-module-path "$OUT/modules/reachabilityd.swiftmodule" \
    -c "$ROOT/Sources/reachabilityd/CheckHelperMessage.swift" -wmo -o "$OUT/CheckHelperMessage.o"

"$SWIFT_BIN/swiftc" $SWIFTFLAGS $SANITIZE -module-name NetlinkParserFuzzer \
    "$ROOT/scripts/fuzz/NetlinkParserFuzzer.swift" "$OUT/RTNetlink.o" "$OUT/NetworkTypes.o" "$OUT/SystemSupport.o" "$OUT/shims.o" \
    -use-ld=lld -o "$OUT/netlink-parser-fuzzer"
"$SWIFT_BIN/swiftc" $SWIFTFLAGS $SANITIZE -module-name StatusReducerFuzzer \
    "$ROOT/scripts/fuzz/StatusReducerFuzzer.swift" "$ROOT/Tests/ReachabilityEngineTests/StatusReducerOracle.swift" \
    "$OUT/ReachabilityEngine.o" "$OUT/ReachabilityCore.o" "$OUT/RTNetlink.o" "$OUT/NetworkTypes.o" "$OUT/SystemSupport.o" "$OUT/shims.o" \
    -use-ld=lld -o "$OUT/status-reducer-fuzzer"
"$SWIFT_BIN/swiftc" $SWIFTFLAGS $SANITIZE -module-name CheckHelperWireFuzzer \
    "$ROOT/scripts/fuzz/CheckHelperWireFuzzer.swift" "$ROOT/Tests/ReachabilityDaemonTests/CheckHelperWireOracle.swift" \
    "$OUT/CheckHelperMessage.o" "$OUT/ReachabilityCore.o" "$OUT/NetworkTypes.o" -use-ld=lld -o "$OUT/check-helper-wire-fuzzer"
"$SWIFT_BIN/swiftc" $SWIFTFLAGS $SANITIZE -module-name VarlinkCallFuzzer \
    "$ROOT/scripts/fuzz/VarlinkCallFuzzer.swift" "$ROOT/Tests/ReachabilityCoreTests/VarlinkCallOracle.swift" \
    "$OUT/ReachabilityCore.o" "$OUT/NetworkTypes.o" -use-ld=lld -o "$OUT/varlink-call-fuzzer"
echo "$OUT/netlink-parser-fuzzer"
echo "$OUT/status-reducer-fuzzer"
echo "$OUT/check-helper-wire-fuzzer"
echo "$OUT/varlink-call-fuzzer"
