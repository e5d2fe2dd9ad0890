// netlink-floor: the cheapest possible watcher of routes, the floor the daemon is compared to.
//
// Subscribes to RTNLGRP_IPV4_ROUTE and RTNLGRP_IPV6_ROUTE (and RTNLGRP_LINK, the address groups
// so that its idle figures are comparable with the daemon's), reads every datagram, and for each
// RTM_NEWROUTE / RTM_DELROUTE of a default route (rtm_dst_len 0) prints "<CLOCK_MONOTONIC ns> new|del" on
// stdout, flushed at once. Every other message is only counted. SIGUSR1 prints
// "counts <datagrams> <messages> <overruns> <largest messages per datagram>"; SIGTERM or SIGINT
// prints the same and exits 0.
//
//   netlink-floor [RECEIVE-BUFFER-BYTES]   (default 8 MiB, forced with SO_RCVBUFFORCE like the daemon)
//
// Build: cc -O2 -o netlink-floor netlink-floor.c
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stopping, reporting;

static void on_signal(int number) {
    if (number == SIGUSR1) reporting = 1;
    else stopping = 1;
}

int main(int argc, char **argv) {
    int buffer_bytes = argc > 1 ? atoi(argv[1]) : 8 * 1024 * 1024;
    // No SA_RESTART: the blocking recv returns EINTR when asked to stop.
    struct sigaction action = {.sa_handler = on_signal};
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGUSR1, &action, NULL);

    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) { perror("socket"); return 1; }
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer_bytes, sizeof buffer_bytes) < 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
    struct sockaddr_nl local = {.nl_family = AF_NETLINK};
    if (bind(fd, (struct sockaddr *)&local, sizeof local) < 0) { perror("bind"); return 1; }
    int groups[] = {RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR};
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &groups[i], sizeof groups[i]) < 0) {
            perror("NETLINK_ADD_MEMBERSHIP");
            return 1;
        }
    }
    printf("ready\n");
    fflush(stdout);

    static char buffer[64 * 1024] __attribute__((aligned(NLMSG_ALIGNTO)));
    unsigned long long datagrams = 0, messages = 0, overruns = 0, most_per_datagram = 0;
    while (!stopping) {
        if (reporting) {
            reporting = 0;
            printf("counts %llu %llu %llu %llu\n", datagrams, messages, overruns, most_per_datagram);
            fflush(stdout);
        }
        ssize_t count = recv(fd, buffer, sizeof buffer, 0);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (count < 0) {
            if (errno == EINTR) continue;
            if (errno == ENOBUFS) { overruns++; continue; }
            perror("recv");
            return 1;
        }
        datagrams++;
        int remaining = (int)count;
        unsigned long long in_datagram = 0;
        for (struct nlmsghdr *header = (struct nlmsghdr *)buffer; NLMSG_OK(header, remaining);
             header = NLMSG_NEXT(header, remaining)) {
            messages++;
            if (++in_datagram > most_per_datagram) most_per_datagram = in_datagram;
            if (header->nlmsg_type != RTM_NEWROUTE && header->nlmsg_type != RTM_DELROUTE) continue;
            if (header->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg))) continue;
            const struct rtmsg *route = NLMSG_DATA(header);
            if (route->rtm_dst_len != 0 || route->rtm_table != RT_TABLE_MAIN) continue;
            printf("%lld %s\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec,
                   header->nlmsg_type == RTM_NEWROUTE ? "new" : "del");
            fflush(stdout);
        }
    }
    printf("counts %llu %llu %llu %llu\n", datagrams, messages, overruns, most_per_datagram);
    return 0;
}
