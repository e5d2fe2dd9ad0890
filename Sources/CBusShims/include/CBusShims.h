// The entries of sd-bus vtables: their macros use designated initialisers, which Swift cannot
// import. ReachabilityBus assembles a vtable from them at run time, one entry per row of an
// interface's properties, methods and signals; no interface is spelled in C. Everything is prefixed `CReach_`.
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

/// A method entry, callable by any user (`SD_BUS_VTABLE_UNPRIVILEGED`; the bus policy decides
/// who may call), whose calls go to the handlers' `call_method`. `input` and `output` are type
/// signatures; `names` holds the input arguments' names and then the output arguments', each
/// followed by a NUL ("" when the method has no arguments). All must outlive the vtable.
sd_bus_vtable CReach_vtable_method(const char *name, const char *input, const char *output, const char *names);

/// A signal entry: its arguments' `signature` and `names` (each name followed by a NUL, "" for
/// none). All must outlive the vtable.
sd_bus_vtable CReach_vtable_signal(const char *name, const char *signature, const char *names);

/// The last entry of every vtable.
sd_bus_vtable CReach_vtable_end(void);

#endif
