// The entries of sd-bus vtables: their macros use designated initialisers, which Swift cannot
// import. ReachabilityBus assembles a vtable from them at run time. Everything is prefixed `CReach_`.
#ifndef CBUS_SHIMS_H
#define CBUS_SHIMS_H

#include <systemd/sd-bus.h>

// MARK: - sd-bus object

/// The handlers behind a vtable built from these entries: ReachabilityBus's
/// `BusObject`, the only user. `context` is passed back unchanged (an unmanaged Swift object).
typedef struct CReach_BusHandlers {
    void *context;
    /// Appends the value of `property` to `reply`; returns >= 0 or -errno.
    int (*get_property)(void *context, const char *property, sd_bus_message *reply, sd_bus_error *error);
    /// Takes the call of method `member`, to reply now or later; returns >= 0 or -errno (with `error` set).
    int (*call_method)(void *context, const char *member, sd_bus_message *message, sd_bus_error *error);
} CReach_BusHandlers;

/// The first entry of every vtable.
sd_bus_vtable CReach_vtable_start(void);

/// A read-only property entry whose value the handlers' `get_property` appends; it emits
/// `PropertiesChanged` with its value. `name` and `signature` must outlive the vtable.
sd_bus_vtable CReach_vtable_property(const char *name, const char *signature);

/// The last entry of every vtable.
sd_bus_vtable CReach_vtable_end(void);

/// The methods and signals of interface `org.reachabilityd.Reachability1` (`*count` entries,
/// without start or end), to follow its properties in a vtable whose userdata is a
/// `CReach_BusHandlers *` that outlives the object registration.
const sd_bus_vtable *CReach_reachability_members(size_t *count);

#endif
