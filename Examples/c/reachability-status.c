/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reads reachabilityd's status with sd-bus and follows StatusChanged.
 *
 *   cc reachability-status.c $(pkg-config --cflags --libs libsystemd) -o reachability-status
 *   ./reachability-status              prints the status and exits
 *   ./reachability-status --changes N  then prints N StatusChanged signals and exits
 *
 * The system bus is $DBUS_SYSTEM_BUS_ADDRESS when set, else the usual socket. Exits 69 when
 * reachabilityd is not running (as reachabilityctl does), 1 on any other failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#define NAME "org.reachabilityd.Reachability1"
#define PATH "/org/reachabilityd/Reachability1"

static int changes_left;

static int on_status_changed(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void) userdata;
    (void) error;
    const char *status;
    int r = sd_bus_message_read(message, "s", &status);
    if (r < 0) {
        fprintf(stderr, "Failed to read StatusChanged: %s\n", strerror(-r));
        return r;
    }
    printf("StatusChanged: %s\n", status);
    fflush(stdout);
    changes_left--;
    return 0;
}

int main(int argc, char *argv[]) {
    if (argc == 3 && strcmp(argv[1], "--changes") == 0) {
        changes_left = atoi(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [--changes N]\n", argv[0]);
        return 64;
    }

    sd_bus *bus = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    char *status = NULL, *interface = NULL;
    int r = sd_bus_open_system(&bus);
    if (r < 0) {
        fprintf(stderr, "Failed to connect to the system bus: %s\n", strerror(-r));
        return 1;
    }
    /* Subscribe first, so that no change between the read and the subscription is lost. */
    r = sd_bus_match_signal(bus, NULL, NAME, PATH, NAME, "StatusChanged", on_status_changed, NULL);
    if (r >= 0)
        r = sd_bus_get_property_string(bus, NAME, PATH, NAME, "Status", &error, &status);
    if (r >= 0)
        r = sd_bus_get_property_string(bus, NAME, PATH, NAME, "Interface", &error, &interface);
    if (r < 0) {
        int not_running = sd_bus_error_has_name(&error, SD_BUS_ERROR_SERVICE_UNKNOWN) ||
                          sd_bus_error_has_name(&error, SD_BUS_ERROR_NAME_HAS_NO_OWNER);
        fprintf(stderr, "Failed to read reachabilityd's Status: %s\n", error.message ? error.message : strerror(-r));
        sd_bus_error_free(&error);
        sd_bus_unref(bus);
        return not_running ? 69 : 1;
    }
    printf("Status: %s via %s\n", status, interface[0] ? interface : "-");
    fflush(stdout);
    free(status);
    free(interface);

    while (changes_left > 0) {
        r = sd_bus_process(bus, NULL);
        if (r < 0) {
            fprintf(stderr, "Failed to process the bus: %s\n", strerror(-r));
            break;
        }
        if (r == 0 && (r = sd_bus_wait(bus, UINT64_MAX)) < 0) {
            fprintf(stderr, "Failed to wait on the bus: %s\n", strerror(-r));
            break;
        }
    }
    sd_bus_flush_close_unref(bus);
    return r < 0 ? 1 : 0;
}
