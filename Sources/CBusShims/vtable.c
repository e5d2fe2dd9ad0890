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

sd_bus_vtable CReach_vtable_end(void) {
    return (sd_bus_vtable) SD_BUS_VTABLE_END;
}

// The methods and signals of org.reachabilityd.Reachability1, in the order of
// dbus/org.reachabilityd.Reachability1.xml (the integration test compares); its properties come
// from ReachabilityCore's property table at run time.
static const sd_bus_vtable creach_reachability_members[] = {
    SD_BUS_METHOD_WITH_NAMES("CheckAddress", "s", SD_BUS_PARAM(address),
                             "ss", SD_BUS_PARAM(status) SD_BUS_PARAM(interface),
                             creach_call_method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("CheckDestination", "s", SD_BUS_PARAM(address),
                             "a{sv}", SD_BUS_PARAM(destination),
                             creach_call_method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("Explain", "", "",
                             "s", SD_BUS_PARAM(report),
                             creach_call_method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("Metrics", "", "",
                             "s", SD_BUS_PARAM(metrics),
                             creach_call_method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("CheckConnectivity", "", "",
                             "s", SD_BUS_PARAM(connectivity),
                             creach_call_method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_NAMES("StatusChanged", "s", SD_BUS_PARAM(status), 0),
    SD_BUS_SIGNAL_WITH_NAMES("ConnectivityChanged", "s", SD_BUS_PARAM(connectivity), 0),
    SD_BUS_SIGNAL("RoutesChanged", "", 0),
};

const sd_bus_vtable *CReach_reachability_members(size_t *count) {
    *count = sizeof(creach_reachability_members) / sizeof(creach_reachability_members[0]);
    return creach_reachability_members;
}
