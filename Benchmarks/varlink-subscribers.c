// varlink-subscribers: COUNT Subscribe readers on the daemon's Varlink socket, for the
// benchmark's scale row "subscribers" (docs/benchmarks.md), beside bus-subscribers.c's COUNT
// D-Bus subscribers. Opens COUNT connections to SOCKET, calls
// org.reachabilityd.Reachability.Subscribe with "more" on each, prints "ready" once every one
// has its first reply (the current state), then reads and drops everything, counting the
// replies (NUL-terminated messages). SIGUSR1 prints "received <replies read so far>"; SIGTERM
// or SIGINT ends it (exit 0). A connection the daemon closes is an error (exit 1).
//
//   varlink-subscribers SOCKET COUNT
//
// Build: cc -O2 -o varlink-subscribers varlink-subscribers.c
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t stopping, reporting;

static void on_signal(int number) {
    if (number == SIGUSR1) reporting = 1;
    else stopping = 1;
}

static const char call[] = "{\"method\":\"org.reachabilityd.Reachability.Subscribe\",\"more\":true}";

int main(int argc, char **argv) {
    int count = argc > 2 ? atoi(argv[2]) : 0;
    if (count <= 0) {
        fprintf(stderr, "usage: varlink-subscribers SOCKET COUNT\n");
        return 2;
    }
    struct sigaction action = {.sa_handler = on_signal};
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGUSR1, &action, NULL);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s", argv[1]);
    int poller = epoll_create1(EPOLL_CLOEXEC);
    // Whether each connection (by its descriptor) has had its first reply.
    char *answered = calloc(65536, 1);
    if (poller < 0 || !answered) return 1;
    for (int i = 0; i < count; i++) {
        int descriptor = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (descriptor < 0 || descriptor >= 65536 || connect(descriptor, (struct sockaddr *)&address, sizeof address) < 0 ||
            send(descriptor, call, sizeof call, MSG_NOSIGNAL) != (ssize_t)sizeof call) {
            fprintf(stderr, "varlink-subscribers: failed to subscribe connection %d: %s\n", i + 1, strerror(errno));
            return 1;
        }
        struct epoll_event event = {.events = EPOLLIN, .data.fd = descriptor};
        if (epoll_ctl(poller, EPOLL_CTL_ADD, descriptor, &event) < 0) return 1;
    }
    unsigned long long received = 0;
    int waiting = count;
    char buffer[65536];
    struct epoll_event events[256];
    while (!stopping) {
        if (reporting) {
            reporting = 0;
            printf("received %llu\n", received);
            fflush(stdout);
        }
        int ready = epoll_wait(poller, events, 256, -1);
        if (ready < 0) {
            if (errno == EINTR) continue;
            perror("epoll_wait");
            return 1;
        }
        for (int e = 0; e < ready; e++) {
            int descriptor = events[e].data.fd;
            ssize_t length = recv(descriptor, buffer, sizeof buffer, MSG_DONTWAIT);
            if (length < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (length <= 0) {
                fprintf(stderr, "varlink-subscribers: the daemon closed a connection: %s\n", length < 0 ? strerror(errno) : "end of stream");
                return 1;
            }
            for (ssize_t b = 0; b < length; b++) {
                if (buffer[b] != 0) continue;
                received++;
                if (!answered[descriptor]) {
                    answered[descriptor] = 1;
                    if (--waiting == 0) {
                        printf("ready\n");
                        fflush(stdout);
                    }
                }
            }
        }
    }
    return 0;
}
