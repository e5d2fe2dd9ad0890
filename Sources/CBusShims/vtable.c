#include "CBusShims.h"

// sd-bus calls property getters with the property name; forward to Swift.
static int creach_get_property(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error) {
    (void)bus; (void)path; (void)interface;
    const CReach_BusHandlers *handlers = userdata;
    return handlers->get_property(handlers->context, property, reply, error);
}

static int creach_call_method(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    const CReach_BusHandlers *handlers = userdata;
    return handlers->call_method(handlers->context, sd_bus_message_get_member(message), message, error);
}

sd_bus_vtable CReach_vtable_start(void) {
    return (sd_bus_vtable) SD_BUS_VTABLE_START(0);
}

sd_bus_vtable CReach_vtable_property(const char *name, const char *signature) {
    return (sd_bus_vtable) SD_BUS_PROPERTY(name, signature, creach_get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE);
}

// SD_BUS_METHOD_WITH_NAMES concatenates its two name lists (string literals) into one buffer;
// the caller hands that buffer over already joined.
sd_bus_vtable CReach_vtable_method(const char *name, const char *input, const char *output, const char *names) {
    sd_bus_vtable entry = (sd_bus_vtable) SD_BUS_METHOD_WITH_NAMES(NULL, NULL, "", NULL, "", creach_call_method,
                                                                   SD_BUS_VTABLE_UNPRIVILEGED);
    entry.x.method.member = name;
    entry.x.method.signature = input;
    entry.x.method.result = output;
    entry.x.method.names = names;
    return entry;
}

sd_bus_vtable CReach_vtable_signal(const char *name, const char *signature, const char *names) {
    sd_bus_vtable entry = (sd_bus_vtable) SD_BUS_SIGNAL_WITH_NAMES(NULL, NULL, "", 0);
    entry.x.signal.member = name;
    entry.x.signal.signature = signature;
    entry.x.signal.names = names;
    return entry;
}

sd_bus_vtable CReach_vtable_end(void) {
    return (sd_bus_vtable) SD_BUS_VTABLE_END;
}
