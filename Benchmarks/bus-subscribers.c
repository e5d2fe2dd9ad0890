// bus-subscribers: COUNT subscribers on the bus, for the benchmark's scale row "subscribers"
// (docs/benchmarks.md). Opens COUNT connections to $DBUS_SYSTEM_BUS_ADDRESS, each with the
// match rules a client of the daemon holds (its object's signals) plus one for the sd-bus floor's
// signals, prints "ready" once every match is installed, then reads and drops every message.
// SIGUSR1 prints "received <messages read so far>"; SIGTERM or SIGINT ends it (exit 0).
//
//   bus-subscribers COUNT
//
// The bus must allow COUNT connections of one user (max_connections_per_user).
// Build: cc -O2 -o bus-subscribers bus-subscribers.c $(pkg-config --cflags --libs libsystemd)
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

static volatile sig_atomic_t stopping, reporting;

static void on_signal(int number) {
    if (number == SIGUSR1) reporting = 1;
    else stopping = 1;
}

static const char *const matches[] = {
    "type='signal',path='/org/reachabilityd/Reachability1',interface='org.reachabilityd.Reachability1'",
    "type='signal',path='/org/reachabilityd/Reachability1',interface='org.freedesktop.DBus.Properties'",
    "type='signal',path='/org/reachabilityd/BenchFloor'",
};

int main(int argc, char **argv) {
    int count = argc > 1 ? atoi(argv[1]) : 0;
    if (count <= 0) {
        fprintf(stderr, "usage: bus-subscribers COUNT\n");
        return 2;
    }
    struct sigaction action = {.sa_handler = on_signal};
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGUSR1, &action, NULL);
    sd_bus **buses = calloc(count, sizeof *buses);
    struct pollfd *fds = calloc(count, sizeof *fds);
    if (!buses || !fds) return 1;
    for (int i = 0; i < count; i++) {
        int result = sd_bus_open_system(&buses[i]);
        for (size_t m = 0; result >= 0 && m < sizeof matches / sizeof matches[0]; m++)
            result = sd_bus_add_match(buses[i], NULL, matches[m], NULL, NULL);
        if (result < 0) {
            fprintf(stderr, "bus-subscribers: failed to subscribe connection %d: %s\n", i + 1, strerror(-result));
            return 1;
        }
    }
    printf("ready\n");
    fflush(stdout);
    unsigned long long received = 0;
    while (!stopping) {
        if (reporting) {
            reporting = 0;
            printf("received %llu\n", received);
            fflush(stdout);
        }
        for (int i = 0; i < count; i++) fds[i] = (struct pollfd){.fd = sd_bus_get_fd(buses[i]), .events = (short)sd_bus_get_events(buses[i])};
        if (poll(fds, count, -1) < 0) {
            if (errno == EINTR) continue;
            perror("poll");
            return 1;
        }
        for (int i = 0; i < count; i++) {
            if (!fds[i].revents) continue;
            sd_bus_message *message = NULL;
            int result;
            while ((result = sd_bus_process(buses[i], &message)) > 0) {
                if (message) received++;
                message = sd_bus_message_unref(message);
            }
            if (result < 0) {
                fprintf(stderr, "bus-subscribers: connection %d: %s\n", i + 1, strerror(-result));
                return 1;
            }
        }
    }
    for (int i = 0; i < count; i++) sd_bus_flush_close_unref(buses[i]);
    return 0;
}
