// The sd-bus vtable of org.reachabilityd.Reachability1: its macros use designated initialisers,
// which Swift cannot import. Everything is prefixed `CReach_`.
#ifndef CBUS_SHIMS_H
#define CBUS_SHIMS_H

#include <systemd/sd-bus.h>

// MARK: - sd-bus object

/// The handlers behind the static `org.reachabilityd.Reachability1` vtable: ReachabilityBus's
/// `BusObject`, the only user. `context` is passed back unchanged (an unmanaged Swift object).
typedef struct CReach_BusHandlers {
    void *context;
    /// Appends the value of `property` to `reply`; returns >= 0 or -errno.
    int (*get_property)(void *context, const char *property, sd_bus_message *reply, sd_bus_error *error);
    /// Takes the call of method `member`, to reply now or later; returns >= 0 or -errno (with `error` set).
    int (*call_method)(void *context, const char *member, sd_bus_message *message, sd_bus_error *error);
} CReach_BusHandlers;

/// The vtable of interface `org.reachabilityd.Reachability1`; its userdata must be a
/// `CReach_BusHandlers *` that outlives the object registration.
const sd_bus_vtable *CReach_reachability_vtable(void);

#endif
