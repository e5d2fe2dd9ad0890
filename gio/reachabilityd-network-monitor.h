/* SPDX-License-Identifier: Apache-2.0
 *
 * What the files of the GIO module share (reachabilityd-network-monitor.c says what each holds):
 * the monitor's structure, its constants and the functions one file calls in another. Not
 * installed; the module exports only its load/unload/query entry points (-fvisibility=hidden).
 */
#pragma once

#include <pthread.h>

#include <gio/gio.h>

#include "reachabilityd-contract.h"

/* Above NetworkManager's monitor (30) and GLib's netlink monitor (20): reachabilityd's answer
 * is the better one when it runs; below the portal's (40), which only initialises inside a
 * Flatpak sandbox and whose host side asks the host's default monitor, i.e. this module. */
#define REACHABILITYD_MONITOR_PRIORITY 35
/* How long a call to the daemon may take (the initial read activates the daemon if needed). */
#define REACHABILITYD_CALL_TIMEOUT_MS 5000
/* How long initialisation waits for a running daemon's properties: its answer takes about a
 * millisecond (a few with both cores busy), so an owner that has not answered by then is
 * stalled (stopped, or hung), and the application, blocked in g_network_monitor_get_default(),
 * does not wait for it any longer: the monitor starts with GLib's answer and reads the daemon's
 * asynchronously. Not shorter: a busy daemon answering late costs a wrong first state and a
 * network-changed; and not 0, for the same reason (applications read the state right away). */
#define REACHABILITYD_INIT_READ_TIMEOUT_MS 500
/* How long the daemon may be away before the module answers as GLib's netlink monitor does:
 * a restart (systemd's RestartSec=100ms, then under 0.1 s to the daemon's first answer) stays
 * well within it; an application does not keep a stopped daemon's last word for longer. */
#define REACHABILITYD_ABSENCE_GRACE_MS 3000
/* Reading the properties of an owner that did not answer again: 0.5 s after the failure, the
 * wait doubling up to 8 s, while that owner keeps the name. */
#define REACHABILITYD_REREAD_FIRST_MS 500
#define REACHABILITYD_REREAD_LONGEST_MS 8000
/* Connecting to a bus that went away again: 0.1 s after, doubling up to 5 s (as the client
 * library does). */
#define REACHABILITYD_RECONNECT_FIRST_MS 100
#define REACHABILITYD_RECONNECT_LONGEST_MS 5000

#define FREEDESKTOP_DBUS_NAME "org.freedesktop.DBus"
#define FREEDESKTOP_DBUS_PATH "/org/freedesktop/DBus"
#define FREEDESKTOP_PROPERTIES "org.freedesktop.DBus.Properties"

/* The daemon's statuses without a route: their StatusChanged says all the monitor exposes. */
static const gchar *const NO_ROUTE_STATUSES[] = { REACHABILITYD_STATUS_NOT_REACHABLE, REACHABILITYD_STATUS_UNKNOWN };

/** What the monitor publishes: its three properties. */
typedef struct {
  gboolean available;
  gboolean metered;
  GNetworkConnectivity connectivity;
} PublishedState;

/** Where the published state comes from. */
typedef enum {
  FROM_DAEMON,      /* the daemon's properties, read and followed */
  FROM_LAST_WORD,   /* the daemon is away, for less than the grace period: its last state */
  FROM_FALLBACK,    /* the daemon is away for longer: GLib's netlink monitor's answers */
} StateSource;

/** The monitor: the daemon's last known state, and what follows it on the bus. */
typedef struct {
  GObject parent_instance;

  /* Set by init, constant afterwards. */
  GMainContext *context; /* where every callback below runs and signals are emitted */
  gchar *bus_address;    /* the system bus's, to connect to again */

  /* Touched only in `context` (and by finalize). */
  guint watch_id;
  gulong closed_handler;
  guint properties_subscription;    /* the owner's PropertiesChanged */
  guint status_subscriptions[2];    /* its StatusChanged to each of NO_ROUTE_STATUSES */
  gchar *owner;           /* the unique name whose properties are read and followed */
  GCancellable *reading;  /* the owner's GetAll, while pending */
  guint failed_reads;     /* of the owner's GetAll, since it was last read */
  GSource *reread;        /* the owner's next GetAll, after a failed one */
  GSource *grace;         /* the end of the grace period, while the daemon is away */
  GSource *reconnection;  /* the next attempt to connect, while the bus is gone */
  guint failed_connections;
  StateSource source;
  gulong fallback_changed_handler;
  gchar *daemon_status;   /* the daemon's last Status, Connectivity, Reachable, Metered */
  gchar *daemon_connectivity;
  gboolean daemon_reachable;
  gboolean daemon_metered;
  gchar *published_status; /* the daemon's Status when its state was last published */

  /* Written in `context`, read from any thread: under `lock`. */
  pthread_rwlock_t lock;
  GDBusConnection *bus;       /* NULL while the bus is gone */
  GNetworkMonitor *fallback;  /* GLib's netlink monitor, while the daemon is away */
  PublishedState published;
} ReachabilitydNetworkMonitor;

typedef struct {
  GObjectClass parent_class;
} ReachabilitydNetworkMonitorClass;


#define REACHABILITYD_NETWORK_MONITOR(o) ((ReachabilitydNetworkMonitor *) (o))

/* reachabilityd-network-monitor.c: timers, contexts and the lock */
guint backoff_ms (guint failures, guint first, guint longest);
void start_timer (ReachabilitydNetworkMonitor *self, GSource **source, guint delay_ms, GSourceFunc callback);
void cancel_timer (GSource **source);
void enter_context (ReachabilitydNetworkMonitor *self);
void leave_context (ReachabilitydNetworkMonitor *self);
void lock_for_reading (ReachabilitydNetworkMonitor *self);
void lock_for_writing (ReachabilitydNetworkMonitor *self);
void unlock (ReachabilitydNetworkMonitor *self);

/* reachabilityd-follow.c: the published state, following the daemon, the bus */
PublishedState read_published (ReachabilitydNetworkMonitor *self);
void publish (ReachabilitydNetworkMonitor *self, PublishedState state, gboolean changed_otherwise, gboolean emit_signals);
void publish_daemon_state (ReachabilitydNetworkMonitor *self, gboolean emit_signals);
void sync_properties (ReachabilitydNetworkMonitor *self, GVariant *properties, gboolean emit_signals);
void read_owner (ReachabilitydNetworkMonitor *self);
void unfollow_owner (ReachabilitydNetworkMonitor *self, GDBusConnection *bus);
void follow_owner (ReachabilitydNetworkMonitor *self, GDBusConnection *bus, const gchar *owner);
void drop_bus (ReachabilitydNetworkMonitor *self);
void adopt_bus (ReachabilitydNetworkMonitor *self, GDBusConnection *bus);

/* reachabilityd-fallback.c: GLib's own monitor, while the daemon is away */
GNetworkMonitor *new_fallback_monitor (void);
PublishedState fallback_state (GNetworkMonitor *fallback);
void start_fallback (ReachabilitydNetworkMonitor *self);
void begin_absence (ReachabilitydNetworkMonitor *self);
void stop_fallback (ReachabilitydNetworkMonitor *self);
void end_absence (ReachabilitydNetworkMonitor *self);

/* reachabilityd-can-reach.c: can_reach() */
void reachabilityd_network_monitor_can_reach_async (GNetworkMonitor *monitor, GSocketConnectable *connectable, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
gboolean reachabilityd_network_monitor_can_reach_finish (GNetworkMonitor *monitor, GAsyncResult *result, GError **error);
gboolean reachabilityd_network_monitor_can_reach (GNetworkMonitor *monitor, GSocketConnectable *connectable, GCancellable *cancellable, GError **error);
