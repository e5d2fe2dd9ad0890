// Why this exists: libdispatch, linked into the executables with the static Swift standard
// library, starts every worker thread by setting the thread's nice value from its root queue's
// QoS, as an absolute value (swift-corelibs-libdispatch, src/queue.c, _dispatch_worker_thread:
// setpriority(PRIO_PROCESS, 0, nice)): 0 for the default QoS, which every queue of ours has,
// and -4 for the user-interactive root queue, whose thread is libdispatch's manager (it waits
// for the events of every Dispatch source). Lowering a thread's nice value needs CAP_SYS_NICE or
// an RLIMIT_NICE of at least 20 - nice. An unprivileged user (make run, reachabilityctl) has
// neither, nor has a service whose manager cannot raise LimitNICE= (systemd in a container): the
// call then fails and libdispatch writes "Failed to set thread priority for worker thread: ...
// errno=13" through syslog(3), to the journal, at every start.
//
// The executables are linked with --wrap=setpriority (Package.swift), which sends here the
// calls of the objects linked in statically: libdispatch's, the only caller among them, in the
// release builds (--static-swift-stdlib: make run, the package, the benchmark). Shared
// libraries keep libc's, as does a debug build's libdispatch.so. A thread that asks for its own
// nice value is never taken below the one it has, so every thread keeps the nice value the
// process started with (0, or the unit's Nice=), and a request that would change nothing makes
// no system call: the units deny setpriority(2) with the rest of @resources, and need no
// LimitNICE=. A higher nice value (a lower QoS) still goes to the kernel, as does any other
// request.
#include "dispatch_nice.h"

#include <errno.h>

// libc's setpriority(2), as the linker names it under --wrap.
int __real_setpriority(__priority_which_t which, id_t who, int value);

int __wrap_setpriority(__priority_which_t which, id_t who, int value) {
    if (which == PRIO_PROCESS && who == 0) {
        int saved_errno = errno;
        errno = 0;
        int current = getpriority(PRIO_PROCESS, 0);   // -1 is a nice value too: errno tells
        if (errno == 0 && value <= current) {
            errno = saved_errno;
            return 0;
        }
        errno = saved_errno;
    }
    return __real_setpriority(which, who, value);
}
