// sdbus-floor: the least a truthful reachability daemon must do per change, in plain C with
// sd-bus: the floor the daemon's latency and CPU per change are compared to (docs/benchmarks.md).
//
// Subscribes to RTNLGRP_IPV4_ROUTE and RTNLGRP_IPV6_ROUTE. On each wake-up it drains every queued
// datagram; if any of them carried a RTM_NEWROUTE / RTM_DELROUTE, it asks the kernel, on a second
// netlink socket, one RTM_GETROUTE per family for the route to the daemon's probe addresses
// (8.8.8.8, 2001:4860:4860::8888), and when the answer changed (a unicast route for either
// family: "reachable", else "not-reachable") it emits one signal
//   org.reachabilityd.BenchFloor.StatusChanged(s status)  on /org/reachabilityd/BenchFloor
// on the bus $DBUS_SYSTEM_BUS_ADDRESS names, and flushes it to the bus socket. Messages the bus
// sends it are read and dropped. Prints "ready" once subscribed and connected; SIGTERM or SIGINT
// ends it (exit 0).
//
// Build: cc -O2 -o sdbus-floor sdbus-floor.c $(pkg-config --cflags --libs libsystemd)
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

static void on_signal(int number) {
    (void)number;
    stopping = 1;
}

static int fail(const char *what, int error) {
    fprintf(stderr, "sdbus-floor: failed to %s: %s\n", what, strerror(error));
    return 1;
}

// Asks the kernel for the route to `address` (4 or 16 bytes of `family`); returns 1 when it
// answers with a unicast route, 0 when it has none (an error such as ENETUNREACH), -1 on failure.
static int has_route(int fd, unsigned char family, const void *address, unsigned int sequence) {
    struct {
        struct nlmsghdr header;
        struct rtmsg route;
        struct rtattr destination;
        unsigned char bytes[16];
    } request = {0};
    size_t length = family == AF_INET ? 4 : 16;
    request.header.nlmsg_len = NLMSG_LENGTH(sizeof request.route) + RTA_LENGTH(length);
    request.header.nlmsg_type = RTM_GETROUTE;
    request.header.nlmsg_flags = NLM_F_REQUEST;
    request.header.nlmsg_seq = sequence;
    request.route.rtm_family = family;
    request.route.rtm_dst_len = length * 8;
    request.destination.rta_type = RTA_DST;
    request.destination.rta_len = RTA_LENGTH(length);
    memcpy(request.bytes, address, length);
    if (send(fd, &request, request.header.nlmsg_len, 0) < 0) return -1;
    static char reply[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
    for (;;) {
        ssize_t count = recv(fd, reply, sizeof reply, 0);
        if (count < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        int remaining = (int)count;
        for (struct nlmsghdr *header = (struct nlmsghdr *)reply; NLMSG_OK(header, remaining); header = NLMSG_NEXT(header, remaining)) {
            if (header->nlmsg_seq != sequence) continue;
            if (header->nlmsg_type == NLMSG_ERROR) return 0;
            if (header->nlmsg_type == RTM_NEWROUTE) return ((struct rtmsg *)NLMSG_DATA(header))->rtm_type == RTN_UNICAST;
        }
    }
}

int main(void) {
    struct sigaction action = {.sa_handler = on_signal};
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);

    int events = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    int queries = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (events < 0 || queries < 0) return fail("open netlink sockets", errno);
    struct sockaddr_nl local = {.nl_family = AF_NETLINK};
    if (bind(events, (struct sockaddr *)&local, sizeof local) < 0) return fail("bind", errno);
    int groups[] = {RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE};
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
        if (setsockopt(events, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &groups[i], sizeof groups[i]) < 0) return fail("subscribe", errno);

    sd_bus *bus = NULL;
    int result = sd_bus_open_system(&bus);
    if (result < 0) return fail("connect to the bus", -result);
    unsigned char probe4[4], probe6[16];
    inet_pton(AF_INET, "8.8.8.8", probe4);
    inet_pton(AF_INET6, "2001:4860:4860::8888", probe6);
    unsigned int sequence = 0;
    // The first answer is the status to start from, not a change.
    int first4 = has_route(queries, AF_INET, probe4, ++sequence), first6 = has_route(queries, AF_INET6, probe6, ++sequence);
    if (first4 < 0 || first6 < 0) return fail("ask the kernel for the probes' routes", errno);
    int status = first4 || first6;
    printf("ready\n");
    fflush(stdout);

    static char buffer[64 * 1024] __attribute__((aligned(NLMSG_ALIGNTO)));
    while (!stopping) {
        struct pollfd fds[2] = {{.fd = events, .events = POLLIN}, {.fd = sd_bus_get_fd(bus), .events = (short)sd_bus_get_events(bus)}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return fail("poll", errno);
        }
        if (fds[1].revents) {
            while ((result = sd_bus_process(bus, NULL)) > 0) {}
            if (result < 0) return fail("process bus messages", -result);
        }
        if (!fds[0].revents) continue;
        int routes = 0;
        for (;;) {
            ssize_t count = recv(events, buffer, sizeof buffer, 0);
            if (count < 0) {
                if (errno == EINTR) continue;
                if (errno == ENOBUFS) { routes = 1; continue; }  // lost events: ask again
                if (errno == EAGAIN) break;
                return fail("read netlink events", errno);
            }
            int remaining = (int)count;
            for (struct nlmsghdr *header = (struct nlmsghdr *)buffer; NLMSG_OK(header, remaining); header = NLMSG_NEXT(header, remaining))
                if (header->nlmsg_type == RTM_NEWROUTE || header->nlmsg_type == RTM_DELROUTE) routes = 1;
        }
        if (!routes) continue;
        int v4 = has_route(queries, AF_INET, probe4, ++sequence), v6 = has_route(queries, AF_INET6, probe6, ++sequence);
        if (v4 < 0 || v6 < 0) return fail("ask the kernel for the probes' routes", errno);
        if ((v4 || v6) == status) continue;
        status = v4 || v6;
        result = sd_bus_emit_signal(bus, "/org/reachabilityd/BenchFloor", "org.reachabilityd.BenchFloor", "StatusChanged", "s",
                                    status ? "reachable" : "not-reachable");
        if (result >= 0) result = sd_bus_flush(bus);
        if (result < 0) return fail("emit StatusChanged", -result);
    }
    sd_bus_flush_close_unref(bus);
    return 0;
}
