// The daemon's process shims (CProcessShims.h): the check helper's start and sandbox.
#define _GNU_SOURCE
#include "CProcessShims.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

unsigned int CReachProcess_auditArchitecture(void) {
#if defined(__x86_64__)
    return AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    return AUDIT_ARCH_AARCH64;
#else
    return 0;
#endif
}

// What libcurl, its TLS library, glibc's resolver (files, dns), libdispatch's threads and the
// Swift runtime were seen to call in the helper (strace -f over the connectivity tests), besides
// socket/socketpair/openat/open, filtered on an argument. Nothing here creates, renames, removes
// or changes a file, starts a program, or reaches another process (only the helper's own
// threads: tgkill); with no AF_UNIX socket but a connected stream pair, connect and sendto reach
// no local socket either.
static const int checkHelperSyscalls[] = {
    // Memory, threads, time, signals.
    __NR_brk, __NR_mmap, __NR_munmap, __NR_mremap, __NR_mprotect, __NR_madvise,
    __NR_clone, __NR_clone3, __NR_set_robust_list, __NR_rseq, __NR_futex, __NR_exit, __NR_exit_group,
    __NR_sched_yield, __NR_sched_getaffinity, __NR_gettid, __NR_getpid, __NR_getppid, __NR_tgkill,
    __NR_getuid, __NR_geteuid, __NR_getgid, __NR_getegid, __NR_prlimit64, __NR_prctl,
    __NR_rt_sigaction, __NR_rt_sigprocmask, __NR_rt_sigreturn, __NR_rt_sigsuspend, __NR_sigaltstack,
    __NR_clock_gettime, __NR_clock_getres, __NR_gettimeofday, __NR_clock_nanosleep, __NR_nanosleep,
    __NR_timerfd_create, __NR_timerfd_settime, __NR_timerfd_gettime, __NR_getrandom, __NR_uname,
    __NR_sysinfo,
    // Descriptors the helper has or opens read-only.
    __NR_read, __NR_readv, __NR_pread64, __NR_write, __NR_writev, __NR_close, __NR_lseek,
    __NR_fstat, __NR_newfstatat, __NR_statx, __NR_fstatfs, __NR_statfs, __NR_fcntl, __NR_ioctl,
    __NR_getdents64, __NR_readlinkat, __NR_faccessat, __NR_faccessat2, __NR_getcwd,
    __NR_fadvise64, __NR_dup, __NR_dup3,
    __NR_eventfd2, __NR_pipe2, __NR_epoll_create1, __NR_epoll_ctl, __NR_epoll_pwait, __NR_ppoll, __NR_pselect6,
    // Sockets (made by socket(), filtered on its family).
    __NR_connect, __NR_bind, __NR_setsockopt, __NR_getsockopt, __NR_getsockname,
    __NR_getpeername, __NR_sendto, __NR_recvfrom, __NR_sendmsg, __NR_recvmsg, __NR_sendmmsg,
    __NR_recvmmsg, __NR_shutdown,
#if defined(__x86_64__)
    __NR_arch_prctl, __NR_pause, __NR_stat, __NR_lstat, __NR_access, __NR_readlink, __NR_poll, __NR_select,
    __NR_epoll_wait, __NR_epoll_create, __NR_eventfd, __NR_pipe, __NR_dup2, __NR_getdents,
#endif
};

const int *CReachProcess_checkHelperSyscalls(size_t *count) {
    *count = sizeof checkHelperSyscalls / sizeof checkHelperSyscalls[0];
    return checkHelperSyscalls;
}

int CReachProcess_syscallSocket(void) { return __NR_socket; }
int CReachProcess_syscallSocketpair(void) { return __NR_socketpair; }
int CReachProcess_syscallOpenat(void) { return __NR_openat; }
int CReachProcess_syscallOpen(void) {
#ifdef __NR_open
    return __NR_open;
#else
    return -1;
#endif
}

unsigned int CReachProcess_openWritingFlags(void) { return O_WRONLY | O_RDWR | O_CREAT | O_TRUNC; }

unsigned int CReachProcess_x32SyscallBit(void) {
#if defined(__x86_64__)
    return 0x40000000u;
#else
    return 0;
#endif
}

int CReachProcess_installSeccompFilter(const struct sock_filter *program, unsigned short length) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    struct sock_fprog filter = { .len = length, .filter = (struct sock_filter *)program };
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter, 0, 0);
}

void CReachProcess_closeDescriptorsAbove(int last) {
    if (close_range((unsigned int)last + 1, ~0u, 0) == 0) return;
    long limit = sysconf(_SC_OPEN_MAX);
    for (int descriptor = last + 1; descriptor < (limit > 0 && limit < 65536 ? limit : 65536); descriptor++) close(descriptor);
}

int CReachProcess_spawnWithSocket(const char *path, char *const arguments[], int socket, pid_t *pid) {
    // dup2 onto itself would leave the descriptor close-on-exec: move it off 3 first.
    int moved = -1;
    if (socket == 3) {
        moved = fcntl(socket, F_DUPFD_CLOEXEC, 4);
        if (moved < 0) return errno;
        socket = moved;
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int error = posix_spawn_file_actions_init(&actions);
    if (error != 0) goto closeMoved;
    error = posix_spawnattr_init(&attributes);
    if (error != 0) goto destroyActions;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if ((error = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDWR, 0)) == 0
        && (error = posix_spawn_file_actions_adddup2(&actions, 0, 1)) == 0
        && (error = posix_spawn_file_actions_adddup2(&actions, 0, 2)) == 0
        && (error = posix_spawn_file_actions_adddup2(&actions, socket, 3)) == 0
        && (error = posix_spawn_file_actions_addclosefrom_np(&actions, 4)) == 0
        && (error = posix_spawnattr_setsigmask(&attributes, &none)) == 0
        && (error = posix_spawnattr_setsigdefault(&attributes, &all)) == 0
        && (error = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) == 0) {
        // No environment: the daemon's holds what the helper must not have (NOTIFY_SOCKET,
        // JOURNAL_STREAM, the configuration's path...), and the exchange needs none (libcurl's
        // proxy is set off, the resolver reads its files).
        char *const environment[] = { NULL };
        error = posix_spawn(pid, path, &actions, &attributes, arguments, environment);
    }
    posix_spawnattr_destroy(&attributes);
destroyActions:
    posix_spawn_file_actions_destroy(&actions);
closeMoved:
    if (moved >= 0) close(moved);
    return error;
}

int CReachProcess_peerUser(int descriptor, uid_t *user) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) < 0) return -1;
    *user = credentials.uid;
    return 0;
}

int CReachProcess_acceptConnection(int listening) {
    return accept4(listening, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
