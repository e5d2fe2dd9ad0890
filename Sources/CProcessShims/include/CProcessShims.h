// Process-wide glibc calls Swift's Glibc module does not export, for the daemon's executable:
// signalfd(2), through which it reads its signals, and mallopt(3), with which it gives large
// freed buffers back to the kernel. Headers only; no libsystemd, no netlink.
#ifndef CPROCESS_SHIMS_H
#define CPROCESS_SHIMS_H

#include <sys/signalfd.h>
#include <malloc.h>

#endif
