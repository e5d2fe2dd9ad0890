// swift-tools-version:6.0
import PackageDescription

// The test tiers: REACHABILITYD_TESTS=unit (make unit) leaves the integration suites out of the
// package. On Linux SwiftPM links every test target into one bundle, so otherwise each unit run
// builds them, and rebuilds them after every change to a type they use, without running them.
let testTier = Context.environment["REACHABILITYD_TESTS"]

// The integration suites: the daemon (and the client library, the CLI, the GIO module) as a
// child in a network namespace on a private bus; root (docs/testing.md). make check runs them.
let integrationTestTargets: [Target] = [
    .testTarget(name: "IntegrationTests", dependencies: ["ReachabilityProperties", "ReachabilityBus", "ReachabilityCore", "TestSupport"]),
    // The client library and the CLI against the daemon.
    .testTarget(name: "ClientIntegrationTests", dependencies: ["ReachabilityClient", "ReachabilityNotifications", "ReachabilityProperties", "ReachabilityCore", "TestSupport"]),
]

let package = Package(
    name: "reachabilityd",
    defaultLocalization: "en",
    products: [
        .executable(name: "reachabilityd", targets: ["reachabilityd"]),
        .library(name: "ReachabilityCore", targets: ["ReachabilityCore"]),
        .library(name: "ReachabilityClient", targets: ["ReachabilityClient"]),
        .library(name: "ReachabilityNotifications", targets: ["ReachabilityNotifications"]),
        .library(name: "ReachabilityInProcess", targets: ["ReachabilityInProcess"]),
        .executable(name: "reachabilityctl", targets: ["reachabilityctl"]),
    ],
    targets: [
        // libsystemd (sd-bus, sd-daemon) through pkg-config.
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // Tiny C shims for what Swift cannot import: the netlink macros, IFF_* flags, BPF structs
        // (no libsystemd)...
        .target(name: "CNetlinkShims"),
        // ...the daemon's process-wide glibc calls, signalfd and mallopt...
        .target(name: "CProcessShims"),
        // ...and the sd-bus vtable of the exported object (its macros use designated initialisers);
        // only ReachabilityBus uses it.
        .target(name: "CBusShims", dependencies: ["CSystemd"]),
        // libcurl for the opt-in connectivity check, loaded with dlopen when a check is configured
        // (only its headers at build time: nothing links libcurl).
        .target(name: "CCurlShims", linkerSettings: [.linkedLibrary("dl")]),
        // The check's HTTP client: libcurl's multi interface on Dispatch sources.
        .target(name: "CurlTransport", dependencies: ["CCurlShims", "ReachabilityCore", "SystemSupport"]),
        // Both executables: libdispatch's worker threads never ask for a nice value below the one
        // they have (a wrapper of setpriority(2) for the statically linked callers; its source says why).
        .target(name: "CDispatchNice", linkerSettings: [.unsafeFlags(["-Xlinker", "--wrap=setpriority"])]),
        // The one errno-checked helper every C call goes through, and the journald-style logger.
        .target(name: "SystemSupport"),
        // The address types under both RTNetlink and ReachabilityCore: IPAddress, AddressFamily,
        // AddressScope, InterfaceIndex (ReachabilityCore re-exports them). No I/O.
        .target(name: "NetworkTypes"),
        // Pure decision logic: facts in, status out. No I/O.
        .target(name: "ReachabilityCore", dependencies: ["NetworkTypes"]),
        // rtnetlink: socket, requests, parser, Dispatch-driven monitor; its messages carry
        // NetworkTypes' values, and the kernel's numbers for them stop here.
        .target(name: "RTNetlink", dependencies: ["CNetlinkShims", "NetworkTypes", "SystemSupport"]),
        // The engine: mirrors links and addresses, asks the kernel for routes, applies the rule.
        .target(name: "ReachabilityEngine", dependencies: ["RTNetlink", "ReachabilityCore", "SystemSupport"]),
        // The bus core both sides use: an sd-bus connection on one serial queue, messages, slots,
        // matches, typed calls and errors, its value type (BusValue), and exported objects whose
        // interfaces are rows of properties, methods with their handlers and signals (the C
        // trampolines of CBusShims' vtable stay in it). It knows no interface of reachabilityd's.
        .target(name: "ReachabilityBus", dependencies: ["CSystemd", "CBusShims", "SystemSupport"]),
        // The property table of org.reachabilityd.Reachability1 and the bus form of Core's
        // values (Interfaces' entries, CheckDestination's reply): what the daemon publishes and
        // the client, the CLI and the tests read back, above the bus core's value type and Core.
        .target(name: "ReachabilityProperties", dependencies: ["ReachabilityBus", "ReachabilityCore"]),
        // The daemon's side of the bus: the exported object, its signals and call admission,
        // sd_notify, and the readers of systemd-networkd's and NetworkManager's captive portals.
        .target(name: "ReachabilityService", dependencies: ["ReachabilityBus", "ReachabilityProperties", "CSystemd", "ReachabilityCore", "SystemSupport"]),
        .executableTarget(
            name: "reachabilityd",
            dependencies: [
                "ReachabilityEngine", "ReachabilityBus", "ReachabilityService", "ReachabilityCore", "SystemSupport", "CProcessShims", "CurlTransport",
                "CDispatchNice", "RTNetlink", "CSystemd",
            ],
            exclude: ["reachabilityd.order", "link"],
            // Linked by lld with packed relative relocations (DT_RELR, glibc >= 2.36) and no
            // exported symbols: the static standard library's relative relocations take a few
            // pages instead of a .rela.dyn that the dynamic loader read at every start, and it
            // has no symbol table of ours to read; still a PIE (ASLR, lintian's hardening check).
            // Every build of the daemon gets it: make, the benchmark, debian/rules.
            // ...and with the functions its start-up runs placed together, in the order
            // Sources/reachabilityd/reachabilityd.order lists them (scripts/update-link-order.sh
            // writes it from a profile; a function it does not name is linked as before): a page
            // fault maps a block around the page, so start-up code scattered over the text kept
            // much more of it resident. Code gets pages of its own (-z separate-code, GNU ld's
            // default: no data bytes executable), which kept less of it resident too.
            // ...and with GCC's C++ runtime linked in, not loaded: the static standard library
            // calls a few functions of libstdc++ and libgcc_s, whose shared libraries cost
            // resident memory that no other process of a server may share. Each step's figures:
            // docs/benchmarks.md, "Private memory". The -L
            // directory's libstdc++.so is a linker script that points -lstdc++ (which the
            // toolchain's static-stdlib-args.lnk adds before these flags) at libstdc++.a, and
            // libgcc_eh.a gives the unwinder; both come with the GCC the toolchain links with.
            linkerSettings: [.unsafeFlags([
                "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
                "-Xlinker", "-z", "-Xlinker", "separate-code",
                "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/reachabilityd/reachabilityd.order",
                "-Xlinker", "--no-warn-symbol-ordering",
                "-L\(Context.packageDirectory)/Sources/reachabilityd/link",
            ]), .linkedLibrary("gcc_eh")]
        ),
        // The client library: ReachabilityManager over the daemon's D-Bus API. No engine, service
        // or curl code: a service that links it links no daemon (scripts/public-api.sh checks).
        .target(name: "ReachabilityClient", dependencies: ["ReachabilityBus", "ReachabilityProperties", "ReachabilityCore", "SystemSupport"]),
        // The manager's in-process sources (.inProcess, .automatic): the daemon's engine, with its
        // connectivity check, inside the client's process.
        .target(
            name: "ReachabilityInProcess",
            dependencies: ["ReachabilityClient", "ReachabilityCore", "ReachabilityEngine", "ReachabilityService", "CurlTransport", "SystemSupport"]
        ),
        // The AFNetworking-style NotificationCenter delivery: the one part of the client that
        // needs Foundation, in a module of its own.
        .target(name: "ReachabilityNotifications", dependencies: ["ReachabilityClient"]),
        // The command line client: status, monitor, wait, check, explain, metrics.
        .executableTarget(
            name: "reachabilityctl",
            dependencies: ["ReachabilityClient", "ReachabilityInProcess", "ReachabilityProperties", "ReachabilityCore", "ReachabilityEngine", "RTNetlink", "SystemSupport", "CDispatchNice"]
        ),
        // What the test targets share: the daemon harness (private bus, namespaces, the daemon as a
        // child, busctl, signal recording) and the committed fuzz inputs. Only test targets use it.
        .target(name: "TestSupport", dependencies: ["ReachabilityProperties", "ReachabilityBus", "ReachabilityCore"], path: "Tests/TestSupport"),
        // The pure rules, table by table (with the property table and the bus form of Core's
        // values, which these tests read through); replays the Varlink codec's fuzz corpus.
        .testTarget(name: "ReachabilityCoreTests", dependencies: ["ReachabilityCore", "ReachabilityProperties", "ReachabilityBus", "TestSupport"]),
        .testTarget(name: "ReachabilityClientTests", dependencies: ["ReachabilityClient", "ReachabilityProperties", "ReachabilityBus", "ReachabilityCore"]),
        .testTarget(name: "RTNetlinkTests", dependencies: ["RTNetlink", "NetworkTypes", "TestSupport"]),
        // The status reducer and the parse-error log, without sockets; replays the reducer's fuzz corpus.
        .testTarget(name: "ReachabilityEngineTests", dependencies: ["ReachabilityEngine", "RTNetlink", "NetworkTypes", "ReachabilityCore", "SystemSupport", "TestSupport"]),
        // The bus core against a private dbus-daemon.
        .testTarget(name: "ReachabilityBusTests", dependencies: ["ReachabilityBus", "SystemSupport", "TestSupport"]),
        // The daemon's side of the bus: the captive-portal readers' parsing, and the exported
        // interface against the XML on a private dbus-daemon.
        .testTarget(name: "ReachabilityServiceTests", dependencies: ["ReachabilityService", "ReachabilityBus", "ReachabilityProperties", "ReachabilityCore", "SystemSupport", "TestSupport"]),
        // The executable's own types, through @testable import: the command line, the journal
        // fields, the check helper's messages (and their fuzzing corpus) and seccomp filter.
        .testTarget(name: "ReachabilityDaemonTests", dependencies: ["reachabilityd", "ReachabilityEngine", "ReachabilityService", "SystemSupport", "ReachabilityCore", "RTNetlink", "TestSupport"]),
    ] + (testTier == "unit" ? [] : integrationTestTargets),
    swiftLanguageModes: [.v6]
)
