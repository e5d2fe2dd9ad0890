#if canImport(Glibc)
import Glibc
#endif
import CProcessShims
import RTNetlink
import SystemSupport

/// The check helper's seccomp filter, a classic-BPF program built with RTNetlink's assembler:
/// an allowlist of system calls (CProcessShims' `checkHelperSyscalls`: memory, threads, time,
/// the descriptors it has, sockets), `socket` only for `AF_INET` and `AF_INET6` (the exchange
/// and the resolver's DNS), `socketpair` only for stream sockets (libcurl's wake-up pair),
/// `open`/`openat` only without `O_WRONLY`/`O_RDWR`/`O_CREAT`/`O_TRUNC` (libraries, CA files,
/// `/etc/hosts`: read, never written). Anything else fails with `EPERM`, as the unit's
/// `SystemCallErrorNumber=` says: no program started, no file written, no netlink, packet or
/// Unix socket (so no connection to the bus, the journal or any local service: a connected
/// stream pair sends to no address), no other process touched. Another architecture's calls
/// (and x86-64's x32 calls) kill the process.
///
/// Name lookups therefore take nsswitch.conf's `files` and `dns`: glibc's nscd client and
/// systemd-resolved's NSS module (`resolve`, varlink over a Unix socket) find their socket
/// refused and give way, the module with `UNAVAIL`, which `resolve [!UNAVAIL=return] dns` (its
/// documented line) passes on to `dns`, so a host running resolved is asked through its stub
/// listener (127.0.0.53, resolv.conf's nameserver) with the same answers.
enum CheckHelperSandbox {
    /// The program for this architecture; nil where the shim knows no architecture.
    static func program() -> [BPFInstruction]? {
        let architecture = CReachProcess_auditArchitecture()
        guard architecture != 0 else { return nil }
        var count = 0
        let list = CReachProcess_checkHelperSyscalls(&count)!
        let allowed = (0..<count).map { UInt32(list[$0]) }
        let open = CReachProcess_syscallOpen()
        return program(
            architecture: architecture, x32Bit: CReachProcess_x32SyscallBit(), allowed: allowed,
            socket: UInt32(CReachProcess_syscallSocket()), socketFamilies: [UInt32(AF_INET), UInt32(AF_INET6)],
            socketpair: UInt32(CReachProcess_syscallSocketpair()), socketpairType: UInt32(SOCK_STREAM.rawValue),
            socketTypeFlags: UInt32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue),
            openat: UInt32(CReachProcess_syscallOpenat()), open: open < 0 ? nil : UInt32(open),
            writingFlags: CReachProcess_openWritingFlags()
        )
    }

    /// The program from its parts (the numbers of this architecture).
    static func program(
        architecture: UInt32, x32Bit: UInt32, allowed: [UInt32], socket: UInt32, socketFamilies: [UInt32],
        socketpair: UInt32, socketpairType: UInt32, socketTypeFlags: UInt32,
        openat: UInt32, open: UInt32?, writingFlags: UInt32
    ) -> [BPFInstruction] {
        typealias Op = LinuxBPF
        let allow = UInt32(SECCOMP_RET_ALLOW), refuse = UInt32(SECCOMP_RET_ERRNO) | UInt32(EPERM), kill = UInt32(SECCOMP_RET_KILL_PROCESS)
        // struct seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8i (its low half first on
        // a little-endian machine).
        let littleEndian = UInt16(1).littleEndian == 1
        func argument(_ index: UInt32) -> UInt32 { 16 + 8 * index + (littleEndian ? 0 : 4) }
        var assembler = BPFAssembler()
        // (Each refusal next to its test: a conditional jump reaches 255 instructions at most.)
        assembler.statement(Op.ld | Op.w | Op.abs, 4)
        assembler.jump(Op.jmp | Op.jeq | Op.k, architecture, ifTrue: "native", ifFalse: nil)
        assembler.statement(Op.ret | Op.k, kill)
        assembler.label("native")
        assembler.statement(Op.ld | Op.w | Op.abs, 0)
        if x32Bit != 0 {
            assembler.jump(Op.jmp | Op.jge | Op.k, x32Bit, ifTrue: nil, ifFalse: "not-x32")
            assembler.statement(Op.ret | Op.k, kill)
            assembler.label("not-x32")
        }
        for number in allowed {
            assembler.jump(Op.jmp | Op.jeq | Op.k, number, ifTrue: nil, ifFalse: "not-\(number)")
            assembler.statement(Op.ret | Op.k, allow)
            assembler.label("not-\(number)")
        }
        // socket(family, …): the families listed.
        assembler.jump(Op.jmp | Op.jeq | Op.k, socket, ifTrue: nil, ifFalse: "not-socket")
        assembler.statement(Op.ld | Op.w | Op.abs, argument(0))
        for family in socketFamilies {
            assembler.jump(Op.jmp | Op.jeq | Op.k, family, ifTrue: "allow", ifFalse: nil)
        }
        assembler.always("refuse")
        assembler.label("not-socket")
        // socketpair(family, type, …): a stream pair (its flags aside), whatever the family
        // (only AF_UNIX makes pairs).
        assembler.jump(Op.jmp | Op.jeq | Op.k, socketpair, ifTrue: nil, ifFalse: "not-socketpair")
        assembler.statement(Op.ld | Op.w | Op.abs, argument(1))
        assembler.statement(Op.alu | Op.and | Op.k, ~socketTypeFlags)
        assembler.jump(Op.jmp | Op.jeq | Op.k, socketpairType, ifTrue: "allow", ifFalse: "refuse")
        assembler.label("not-socketpair")
        // openat(directory, path, flags, …) and open(path, flags, …): read-only.
        let opens = [(openat, UInt32(2))] + (open.map { [($0, UInt32(1))] } ?? [])
        for (number, flagsArgument) in opens {
            assembler.jump(Op.jmp | Op.jeq | Op.k, number, ifTrue: nil, ifFalse: "not-open-\(number)")
            assembler.statement(Op.ld | Op.w | Op.abs, argument(flagsArgument))
            assembler.statement(Op.alu | Op.and | Op.k, writingFlags)
            assembler.jump(Op.jmp | Op.jeq | Op.k, 0, ifTrue: "allow", ifFalse: "refuse")
            assembler.label("not-open-\(number)")
        }
        assembler.label("refuse")
        assembler.statement(Op.ret | Op.k, refuse)
        assembler.label("allow")
        assembler.statement(Op.ret | Op.k, allow)
        return assembler.assemble()
    }

    /// Installs the filter on the calling thread and every thread it starts afterwards (no new
    /// privileges first, as the kernel requires of an unprivileged process).
    ///
    /// - Throws: `SystemError` when `prctl` refuses it.
    static func install(_ program: [BPFInstruction]) throws(SystemError) {
        let filter = program.map { sock_filter(code: $0.code, jt: $0.jumpIfTrue, jf: $0.jumpIfFalse, k: $0.constant) }
        try valueOrErrno("install the check helper's seccomp filter (prctl)") {
            filter.withUnsafeBufferPointer { CReachProcess_installSeccompFilter($0.baseAddress, UInt16($0.count)) }
        }
    }
}
