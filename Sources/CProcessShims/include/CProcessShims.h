// Process-wide glibc calls Swift's Glibc module does not export, for the daemon's executable:
// signalfd(2), through which it reads its signals, and mallopt(3), with which it gives large
// freed buffers back to the kernel; and what the connectivity check's helper process needs:
// its start (posix_spawn with a chosen set of descriptors), its seccomp filter's system call
// numbers and installation (prctl is variadic: Swift cannot call it); and the Varlink socket's
// peer credentials. No libsystemd, no netlink.
#ifndef CPROCESS_SHIMS_H
#define CPROCESS_SHIMS_H

#include <sys/signalfd.h>
#include <malloc.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

/// The AUDIT_ARCH_* value seccomp reports for this build's system calls; 0 when the shim does
/// not know this architecture (the helper then runs without its own filter).
unsigned int CReachProcess_auditArchitecture(void);
/// The system calls the check helper may make without an argument rule (see
/// Sources/reachabilityd/CheckHelperSandbox.swift); *count gets their number.
const int *CReachProcess_checkHelperSyscalls(size_t *count);
/// The numbers of the system calls the filter allows with a rule on an argument: socket (its
/// family), socketpair (its type), openat and open (read-only); -1 for one this architecture
/// lacks (open on arm64).
int CReachProcess_syscallSocket(void);
int CReachProcess_syscallSocketpair(void);
int CReachProcess_syscallOpenat(void);
int CReachProcess_syscallOpen(void);
/// The flags of open/openat that write: O_WRONLY | O_RDWR | O_CREAT | O_TRUNC.
unsigned int CReachProcess_openWritingFlags(void);
/// The x32 ABI's system call bit on x86-64 (those calls are refused); 0 elsewhere.
unsigned int CReachProcess_x32SyscallBit(void);

/// prctl(PR_SET_NO_NEW_PRIVS, 1), then prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, program):
/// returns 0, or -1 with errno set.
int CReachProcess_installSeccompFilter(const struct sock_filter *program, unsigned short length);
/// The user of the peer of the connected AF_UNIX socket `descriptor`, from SO_PEERCRED (struct
/// ucred needs _GNU_SOURCE, which Swift's Glibc module does not define): returns 0, or -1 with
/// errno set. A peer whose uid its user namespace does not map into the daemon's shows the
/// overflow uid (/proc/sys/kernel/overflowuid, 65534).
int CReachProcess_peerUser(int descriptor, uid_t *user);
/// accept4(listening, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC) (a GNU call): the new
/// connection's descriptor, or -1 with errno set.
int CReachProcess_acceptConnection(int listening);
/// Closes every descriptor above `last` (close_range, or one by one before Linux 5.9).
void CReachProcess_closeDescriptorsAbove(int last);

/// Starts `path` with `arguments` (NULL-terminated) and an empty environment, its descriptors 0, 1
/// and 2 on /dev/null, `socket` as its descriptor 3 and no other descriptor, every signal
/// unblocked and at its default action. Returns 0 with *pid set, else an errno value.
/// The corresponding C function is `posix_spawn`.
int CReachProcess_spawnWithSocket(const char *path, char *const arguments[], int socket, pid_t *pid);

#endif
