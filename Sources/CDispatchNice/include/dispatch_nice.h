// The wrapper the executables' linker puts in place of setpriority(2) for the statically linked
// objects (-Xlinker --wrap=setpriority, Package.swift); dispatch_nice.c says why. Nothing calls
// it by name.
#ifndef DISPATCH_NICE_H
#define DISPATCH_NICE_H

#include <sys/resource.h>

/// setpriority(2), except that a request for the calling thread's own nice value never lowers it.
int __wrap_setpriority(__priority_which_t which, id_t who, int value);

#endif
