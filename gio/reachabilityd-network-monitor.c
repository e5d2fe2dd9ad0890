/* SPDX-License-Identifier: Apache-2.0
 *
 * A GIO module: GNetworkMonitor on top of reachabilityd (extension point "gio-network-monitor",
 * name "reachabilityd", priority 35, see REACHABILITYD_MONITOR_PRIORITY). One file, as GLib's
 * own monitors are: one GObject type with its GNetworkMonitor and GInitable interfaces and the
 * module's load/unload/query entry points.
 *
 *   network-available  = the daemon's Reachable
 *   network-metered    = Metered
 *   connectivity       = Connectivity: none -> LOCAL, limited -> LIMITED, portal -> PORTAL,
 *                        full -> FULL; unknown (no evidence, checks off) -> FULL when reachable
 *                        (GLib's own meaning of "reachable, nothing known against it")
 *   network-changed    once per change of the daemon's Status, Reachable, Metered or
 *                      Connectivity (a change of Status alone, e.g. Wi-Fi to Ethernet, is a
 *                      network change for applications holding connections), never twice for
 *                      the same state: at its StatusChanged when that names a status without a
 *                      route (it implies the rest), else at its PropertiesChanged; emitted in
 *                      the thread-default main context of the thread that created the monitor,
 *                      as GLib's own monitors do
 *   can_reach()        every address the connectable enumerates (names resolved by GResolver),
 *                      each asked with CheckDestination (CheckAddress of an older daemon);
 *                      reachable when one is as GLib connects it: an IPv4 one only through
 *                      NAT64 is not (GLib connects it over an IPv4 socket), through a CLAT is
 *
 * GInitable: fails at once, without waiting, when the bus name has no owner and is not
 * activatable, so that g_network_monitor_get_default() falls back to GLib's own monitors. An
 * owner that does not answer within REACHABILITYD_INIT_READ_TIMEOUT_MS (stopped, hung) does not
 * fail it: the monitor starts as while the daemon is away, and reads the owner asynchronously.
 *
 * Afterwards the module never takes the process down and never keeps a stale state: it talks
 * over a bus connection of its own (not the shared one, whose exit-on-close raises SIGTERM in
 * the application when the bus goes away) and follows the name. While the daemon is away (no
 * owner of its name, a new owner whose properties are not read yet, or no bus) the last state
 * stays for REACHABILITYD_ABSENCE_GRACE_MS (a restart is not a network change); then the monitor
 * answers as GLib's own netlink monitor does (it runs one, the "fallback", and relays it), and
 * can_reach() gives that monitor's answer as soon as the daemon is away. A lost bus is
 * connected again, a GetAll that failed is tried again, each with a bounded back-off, and once
 * the daemon's properties are read the monitor follows the daemon again.
 *
 * Threads: everything but the property getters and can_reach() runs in the context that
 * created the monitor. What those two read from other threads (the published state, the
 * connection, the fallback) is behind one read-write lock: Evolution's worker threads read
 * the properties.
 */
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

enum { PROP_0, PROP_NETWORK_AVAILABLE, PROP_NETWORK_METERED, PROP_CONNECTIVITY };

static void reachabilityd_network_monitor_iface_init (GNetworkMonitorInterface *iface);
static void reachabilityd_network_monitor_initable_iface_init (GInitableIface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (ReachabilitydNetworkMonitor, reachabilityd_network_monitor, G_TYPE_OBJECT, 0,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,
                                                               reachabilityd_network_monitor_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_NETWORK_MONITOR,
                                                               reachabilityd_network_monitor_iface_init))

#define REACHABILITYD_NETWORK_MONITOR(o) ((ReachabilitydNetworkMonitor *) (o))

static void read_owner (ReachabilitydNetworkMonitor *self);
static void adopt_bus (ReachabilitydNetworkMonitor *self, GDBusConnection *bus);
static gboolean on_reconnection_due (gpointer user_data);

/* ---- time and contexts -------------------------------------------------------------------- */

/* The wait before attempt `failures` + 1 after `failures` failed ones: `first`, doubling, at
 * most `longest`. */
static guint
backoff_ms (guint failures, guint first, guint longest)
{
  guint wait = first;

  for (guint i = 1; i < failures && wait < longest; i++)
    wait *= 2;
  return MIN (wait, longest);
}

/* Calls `callback` once after `delay_ms`, in the monitor's context; *source holds it until
 * then (cancel_timer() cancels it). */
static void
start_timer (ReachabilitydNetworkMonitor *self, GSource **source, guint delay_ms, GSourceFunc callback)
{
  *source = g_timeout_source_new (delay_ms);
  g_source_set_callback (*source, callback, self, NULL);
  g_source_attach (*source, self->context);
}

/* Cancels the timer in *source, if any; also how a timer's callback forgets its own. */
static void
cancel_timer (GSource **source)
{
  if (*source == NULL)
    return;
  g_source_destroy (*source);
  g_clear_pointer (source, g_source_unref);
}

/* Callbacks that start calls, subscriptions or monitors make the monitor's context the
 * thread-default one meanwhile: GIO attaches what they start to the thread-default context, and
 * the thread dispatching `context` may have pushed another (or none). */
static void
enter_context (ReachabilitydNetworkMonitor *self)
{
  g_main_context_push_thread_default (self->context);
}

static void
leave_context (ReachabilitydNetworkMonitor *self)
{
  g_main_context_pop_thread_default (self->context);
}

/* ---- the lock ----------------------------------------------------------------------------- */

/* The module takes pthread's rwlock itself, where GLib's GRWLock would wrap the same calls: a
 * ThreadSanitizer build checks the calls instrumented code makes, and GLib is not built with
 * it (the tests leave GLib's own code out of the check). Failing, the lock is corrupt: abort,
 * as GLib does. */
static void
check_lock (int status, const gchar *call)
{
  if (status != 0)
    g_error ("reachabilityd: %s failed: %s", call, g_strerror (status));
}

static void
lock_for_reading (ReachabilitydNetworkMonitor *self)
{
  check_lock (pthread_rwlock_rdlock (&self->lock), "pthread_rwlock_rdlock");
}

static void
lock_for_writing (ReachabilitydNetworkMonitor *self)
{
  check_lock (pthread_rwlock_wrlock (&self->lock), "pthread_rwlock_wrlock");
}

static void
unlock (ReachabilitydNetworkMonitor *self)
{
  check_lock (pthread_rwlock_unlock (&self->lock), "pthread_rwlock_unlock");
}

/* ---- the published state ------------------------------------------------------------------ */

/* The daemon's Connectivity in GLib's terms (see the header comment). */
static GNetworkConnectivity
glib_connectivity (const gchar *connectivity, gboolean reachable)
{
  if (g_strcmp0 (connectivity, REACHABILITYD_CONNECTIVITY_FULL) == 0)
    return G_NETWORK_CONNECTIVITY_FULL;
  if (g_strcmp0 (connectivity, REACHABILITYD_CONNECTIVITY_PORTAL) == 0)
    return G_NETWORK_CONNECTIVITY_PORTAL;
  if (g_strcmp0 (connectivity, REACHABILITYD_CONNECTIVITY_LIMITED) == 0)
    return G_NETWORK_CONNECTIVITY_LIMITED;
  if (g_strcmp0 (connectivity, REACHABILITYD_CONNECTIVITY_NONE) == 0)
    return G_NETWORK_CONNECTIVITY_LOCAL;
  /* unknown, or a value from a newer daemon: the route decides, as GLib's own monitors do. */
  return reachable ? G_NETWORK_CONNECTIVITY_FULL : G_NETWORK_CONNECTIVITY_LOCAL;
}

/* The published state, from any thread. */
static PublishedState
read_published (ReachabilitydNetworkMonitor *self)
{
  lock_for_reading (self);
  PublishedState state = self->published;
  unlock (self);
  return state;
}

/* Publishes `state` and, if `emit_signals` (always but at initialisation, where nobody listens
 * yet), notifies each property that changed and emits network-changed once if any did, or if
 * `changed_otherwise` (the daemon's Status, or GLib's monitor's own signal). */
static void
publish (ReachabilitydNetworkMonitor *self, PublishedState state, gboolean changed_otherwise, gboolean emit_signals)
{
  lock_for_writing (self);
  PublishedState old = self->published;
  self->published = state;
  unlock (self);

  if (!emit_signals)
    return;
  gboolean available_changed = old.available != state.available;
  gboolean metered_changed = old.metered != state.metered;
  gboolean connectivity_changed = old.connectivity != state.connectivity;

  if (available_changed)
    g_object_notify (G_OBJECT (self), "network-available");
  if (metered_changed)
    g_object_notify (G_OBJECT (self), "network-metered");
  if (connectivity_changed)
    g_object_notify (G_OBJECT (self), "connectivity");
  if (available_changed || metered_changed || connectivity_changed || changed_otherwise)
    g_signal_emit_by_name (self, "network-changed", state.available);
}

/* Publishes the daemon's state (while it comes from the daemon). */
static void
publish_daemon_state (ReachabilitydNetworkMonitor *self, gboolean emit_signals)
{
  gboolean status_changed = g_strcmp0 (self->daemon_status, self->published_status) != 0;
  PublishedState state = {
    .available = self->daemon_reachable,
    .metered = self->daemon_metered,
    .connectivity = glib_connectivity (self->daemon_connectivity, self->daemon_reachable),
  };

  g_free (self->published_status);
  self->published_status = g_strdup (self->daemon_status);
  publish (self, state, status_changed, emit_signals);
}

/* The one place the daemon's properties are read, as GLib's own monitors' sync_properties():
 * takes those the monitor exposes from `properties` (a{sv}: the GetAll at initialisation or of a
 * new owner, or a PropertiesChanged) into the daemon's state, and publishes it while the state
 * comes from the daemon (while it is away, it waits for the daemon's return: end_absence()).
 * `emit_signals` is FALSE only at initialisation. */
static void
sync_properties (ReachabilitydNetworkMonitor *self, GVariant *properties, gboolean emit_signals)
{
  const gchar *status, *connectivity;

  if (g_variant_lookup (properties, REACHABILITYD_PROPERTY_STATUS, "&s", &status))
    {
      g_free (self->daemon_status);
      self->daemon_status = g_strdup (status);
    }
  if (g_variant_lookup (properties, REACHABILITYD_PROPERTY_CONNECTIVITY, "&s", &connectivity))
    {
      g_free (self->daemon_connectivity);
      self->daemon_connectivity = g_strdup (connectivity);
    }
  g_variant_lookup (properties, REACHABILITYD_PROPERTY_REACHABLE, "b", &self->daemon_reachable);
  g_variant_lookup (properties, REACHABILITYD_PROPERTY_METERED, "b", &self->daemon_metered);
  if (self->source == FROM_DAEMON)
    publish_daemon_state (self, emit_signals);
}

/* ---- GLib's own monitor, while the daemon is away ----------------------------------------- */

/* A new instance of the monitor GLib would use without this module and NetworkManager: its
 * netlink monitor, else its base monitor (always available); NULL if neither initialises. It
 * emits in the thread-default context. */
static GNetworkMonitor *
new_fallback_monitor (void)
{
  static const gchar *const names[] = { "netlink", "base" };
  GIOExtensionPoint *point = g_io_extension_point_lookup (G_NETWORK_MONITOR_EXTENSION_POINT_NAME);

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      GIOExtension *extension = g_io_extension_point_get_extension_by_name (point, names[i]);
      GError *error = NULL;

      if (extension == NULL)
        continue;
      GNetworkMonitor *monitor = g_initable_new (g_io_extension_get_type (extension), NULL, &error, NULL);
      if (monitor != NULL)
        return monitor;
      g_debug ("reachabilityd: GLib's %s monitor failed to initialise: %s", names[i], error->message);
      g_error_free (error);
    }
  return NULL;
}

/* The fallback's state, as it publishes it. */
static PublishedState
fallback_state (GNetworkMonitor *fallback)
{
  PublishedState state = {
    .available = g_network_monitor_get_network_available (fallback),
    .metered = g_network_monitor_get_network_metered (fallback),
    .connectivity = g_network_monitor_get_connectivity (fallback),
  };
  return state;
}

/* GLib's monitor changed: after the grace period, relay it as it is (GLib's own semantics). */
static void
on_fallback_changed (GNetworkMonitor *fallback, gboolean available, gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);

  if (self->source == FROM_FALLBACK)
    publish (self, fallback_state (fallback), TRUE, TRUE);
}

static gboolean
on_grace_over (gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);

  g_clear_pointer (&self->grace, g_source_unref);
  self->source = FROM_FALLBACK;
  if (self->fallback != NULL)
    publish (self, fallback_state (self->fallback), FALSE, TRUE);
  return G_SOURCE_REMOVE;
}

/* Starts GLib's monitor, relayed by on_fallback_changed(), if it initialises. */
static void
start_fallback (ReachabilitydNetworkMonitor *self)
{
  GNetworkMonitor *fallback = new_fallback_monitor ();
  if (fallback == NULL)
    return;
  self->fallback_changed_handler = g_signal_connect (fallback, "network-changed", G_CALLBACK (on_fallback_changed), self);
  lock_for_writing (self);
  self->fallback = fallback;
  unlock (self);
}

/* The daemon cannot be followed (its name lost its owner, or the bus is gone): start GLib's
 * monitor for can_reach() now, and for the state once the grace period is over. */
static void
begin_absence (ReachabilitydNetworkMonitor *self)
{
  if (self->source != FROM_DAEMON)
    return;
  self->source = FROM_LAST_WORD;
  start_timer (self, &self->grace, REACHABILITYD_ABSENCE_GRACE_MS, on_grace_over);
  start_fallback (self);
}

/* Stops GLib's monitor, if it runs. */
static void
stop_fallback (ReachabilitydNetworkMonitor *self)
{
  lock_for_writing (self);
  GNetworkMonitor *fallback = g_steal_pointer (&self->fallback);
  unlock (self);
  if (fallback == NULL)
    return;
  g_clear_signal_handler (&self->fallback_changed_handler, fallback);
  g_object_unref (fallback);
}

/* The daemon's properties are read: publish them, and stop GLib's monitor. */
static void
end_absence (ReachabilitydNetworkMonitor *self)
{
  cancel_timer (&self->grace);
  self->source = FROM_DAEMON;
  stop_fallback (self);
  publish_daemon_state (self, TRUE);
}

/* ---- following the daemon ----------------------------------------------------------------- */

static void
on_properties_changed (GDBusConnection *connection, const gchar *sender, const gchar *path,
                       const gchar *interface, const gchar *signal, GVariant *parameters, gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);
  const gchar *changed_interface;
  GVariant *changed;

  if (!g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(sa{sv}as)")))
    return;
  g_variant_get (parameters, "(&s@a{sv}as)", &changed_interface, &changed, NULL);
  /* Before its GetAll is answered, a new owner's changes wait for that answer (end_absence()). */
  if (g_strcmp0 (changed_interface, REACHABILITYD_INTERFACE) == 0)
    sync_properties (self, changed, TRUE);
  g_variant_unref (changed);
}

/* StatusChanged comes just before the PropertiesChanged of the same change (at a GLib
 * application): naming a status without a route (the only ones subscribed to), it
 * says all the monitor exposes, so the change is published at once. The daemon's rule: without a route Reachable and
 * Metered are false and Connectivity is none (unknown before the first evaluation), i.e.
 * unavailable, not metered, LOCAL (ReachabilityRuleEvaluateTests.testThatNotReachableSnapshotHasNoInterface…,
 * ReachabilitySnapshotTests.testThatConnectivityIsNoneWithoutARoute…). The PropertiesChanged that
 * follows then changes nothing and emits nothing (one network-changed per change); were it to
 * say otherwise, it would be published as any change is. A reachable status leaves Metered and
 * Connectivity open: its PropertiesChanged publishes it. */
static void
on_status_changed (GDBusConnection *connection, const gchar *sender, const gchar *path,
                   const gchar *interface, const gchar *signal, GVariant *parameters, gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);
  const gchar *status;
  GVariantDict implied;

  if (!g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(s)")))
    return;
  g_variant_get (parameters, "(&s)", &status);
  gboolean evaluated = g_strcmp0 (status, REACHABILITYD_STATUS_UNKNOWN) != 0;
  g_variant_dict_init (&implied, NULL);
  g_variant_dict_insert (&implied, REACHABILITYD_PROPERTY_STATUS, "s", status);
  g_variant_dict_insert (&implied, REACHABILITYD_PROPERTY_REACHABLE, "b", FALSE);
  g_variant_dict_insert (&implied, REACHABILITYD_PROPERTY_METERED, "b", FALSE);
  g_variant_dict_insert (&implied, REACHABILITYD_PROPERTY_CONNECTIVITY, "s",
                         evaluated ? REACHABILITYD_CONNECTIVITY_NONE : REACHABILITYD_CONNECTIVITY_UNKNOWN);
  GVariant *properties = g_variant_ref_sink (g_variant_dict_end (&implied));
  sync_properties (self, properties, TRUE);
  g_variant_unref (properties);
}

static gboolean
on_reread_due (gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);

  g_clear_pointer (&self->reread, g_source_unref);
  enter_context (self);
  read_owner (self);
  leave_context (self);
  return G_SOURCE_REMOVE;
}

/* The owner's GetAll ended. The call holds a reference on the monitor. */
static void
on_read (GObject *source, GAsyncResult *result, gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);
  GError *error = NULL;
  GVariant *reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (reply == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      /* The owner went away (forget_owner()): its successor, if any, is read when it appears. */
      g_error_free (error);
      g_object_unref (self);
      return;
    }
  g_clear_object (&self->reading);
  if (reply == NULL)
    {
      /* A daemon that stalls (or a policy refusing the call): ask it again while it owns the
       * name. Not a warning: it would land in every GLib application's log. */
      self->failed_reads++;
      g_debug ("reachabilityd: failed to read the properties of %s (attempt %u): %s", self->owner,
               self->failed_reads, error->message);
      start_timer (self, &self->reread,
                   backoff_ms (self->failed_reads, REACHABILITYD_REREAD_FIRST_MS, REACHABILITYD_REREAD_LONGEST_MS),
                   on_reread_due);
      g_error_free (error);
      g_object_unref (self);
      return;
    }
  GVariant *properties;
  self->failed_reads = 0;
  g_variant_get (reply, "(@a{sv})", &properties);
  sync_properties (self, properties, TRUE);
  g_variant_unref (properties);
  g_variant_unref (reply);
  if (self->source != FROM_DAEMON)
    end_absence (self);
  g_object_unref (self);
}

/* Asks the owner for all its properties (GetAll), in the monitor's context. */
static void
read_owner (ReachabilitydNetworkMonitor *self)
{
  self->reading = g_cancellable_new ();
  g_dbus_connection_call (self->bus, self->owner, REACHABILITYD_OBJECT_PATH, FREEDESKTOP_PROPERTIES, "GetAll",
                          g_variant_new ("(s)", REACHABILITYD_INTERFACE), G_VARIANT_TYPE ("(a{sv})"),
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, REACHABILITYD_CALL_TIMEOUT_MS, self->reading,
                          on_read, g_object_ref (self));
}

/* Ends follow_owner()'s subscriptions on `bus`, if any. */
static void
unfollow_owner (ReachabilitydNetworkMonitor *self, GDBusConnection *bus)
{
  guint *subscriptions[] = { &self->properties_subscription, &self->status_subscriptions[0], &self->status_subscriptions[1] };

  for (gsize i = 0; i < G_N_ELEMENTS (subscriptions); i++)
    if (*subscriptions[i] != 0)
      {
        g_dbus_connection_signal_unsubscribe (bus, *subscriptions[i]);
        *subscriptions[i] = 0;
      }
}

/* Stops following the previous owner: its subscriptions, a pending or planned read. */
static void
forget_owner (ReachabilitydNetworkMonitor *self)
{
  unfollow_owner (self, self->bus);
  if (self->reading != NULL)
    {
      g_cancellable_cancel (self->reading);
      g_clear_object (&self->reading);
    }
  cancel_timer (&self->reread);
  self->failed_reads = 0;
  g_clear_pointer (&self->owner, g_free);
}

/* Follows the PropertiesChanged of `owner` (the name's owner, a unique name: no signal from a
 * dead owner) on `bus`, and its StatusChanged to a status without a route (matched by the bus on
 * the argument: a reachable status does not wake the application), in the thread-default
 * context. GDBus dispatches them there in the order they were sent. */
static void
follow_owner (ReachabilitydNetworkMonitor *self, GDBusConnection *bus, const gchar *owner)
{
  self->properties_subscription = g_dbus_connection_signal_subscribe (
      bus, owner, FREEDESKTOP_PROPERTIES, "PropertiesChanged", REACHABILITYD_OBJECT_PATH,
      REACHABILITYD_INTERFACE, G_DBUS_SIGNAL_FLAGS_NONE, on_properties_changed, self, NULL);
  G_STATIC_ASSERT (G_N_ELEMENTS (NO_ROUTE_STATUSES) == G_N_ELEMENTS (self->status_subscriptions));
  for (gsize i = 0; i < G_N_ELEMENTS (NO_ROUTE_STATUSES); i++)
    self->status_subscriptions[i] = g_dbus_connection_signal_subscribe (
        bus, owner, REACHABILITYD_INTERFACE, REACHABILITYD_SIGNAL_STATUS_CHANGED, REACHABILITYD_OBJECT_PATH,
        NO_ROUTE_STATUSES[i], G_DBUS_SIGNAL_FLAGS_NONE, on_status_changed, self, NULL);
}

/* A (new) owner of the name: subscribe to its signals, then read all its properties.
 * Messages from one sender arrive in order, so a change signalled before the reply is older
 * than the reply, and one after it newer: applying both in arrival order leaves the truth.
 * The owner initialisation read is followed already: not read again. */
static void
on_name_appeared (GDBusConnection *connection, const gchar *name, const gchar *owner, gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);

  if (g_strcmp0 (owner, self->owner) == 0)
    return;
  enter_context (self);
  forget_owner (self);
  self->owner = g_strdup (owner);
  follow_owner (self, connection, owner);
  read_owner (self);
  leave_context (self);
}

static void
on_name_vanished (GDBusConnection *connection, const gchar *name, gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);

  enter_context (self);
  forget_owner (self);
  begin_absence (self);
  leave_context (self);
}

/* ---- the bus, and its absence ------------------------------------------------------------- */

/* Lets go of the bus connection: the name, its owner, the connection itself. */
static void
drop_bus (ReachabilitydNetworkMonitor *self)
{
  forget_owner (self);
  if (self->watch_id != 0)
    {
      g_bus_unwatch_name (self->watch_id);
      self->watch_id = 0;
    }
  g_clear_signal_handler (&self->closed_handler, self->bus);
  lock_for_writing (self);
  GDBusConnection *bus = g_steal_pointer (&self->bus);
  unlock (self);
  g_object_unref (bus);
}

/* A new connection to the bus ended. The attempt holds a reference on the monitor. */
static void
on_connected (GObject *source, GAsyncResult *result, gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);
  GError *error = NULL;
  GDBusConnection *bus = g_dbus_connection_new_for_address_finish (result, &error);

  if (bus == NULL)
    {
      self->failed_connections++;
      g_debug ("reachabilityd: failed to connect to the system bus (attempt %u): %s", self->failed_connections,
               error->message);
      g_error_free (error);
      start_timer (self, &self->reconnection,
                   backoff_ms (self->failed_connections, REACHABILITYD_RECONNECT_FIRST_MS, REACHABILITYD_RECONNECT_LONGEST_MS),
                   on_reconnection_due);
      g_object_unref (self);
      return;
    }
  self->failed_connections = 0;
  enter_context (self);
  adopt_bus (self, bus);
  leave_context (self);
  g_object_unref (self);
}

static gboolean
on_reconnection_due (gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);

  g_clear_pointer (&self->reconnection, g_source_unref);
  enter_context (self);
  g_dbus_connection_new_for_address (self->bus_address,
                                     G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT
                                         | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                     NULL, NULL, on_connected, g_object_ref (self));
  leave_context (self);
  return G_SOURCE_REMOVE;
}

/* The bus went away (dbus-daemon stopped or restarted): the daemon is away too; connect again. */
static void
on_bus_closed (GDBusConnection *bus, gboolean remote_peer_vanished, GError *error, gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);

  g_debug ("reachabilityd: lost the system bus: %s", error != NULL ? error->message : "closed");
  enter_context (self);
  drop_bus (self);
  begin_absence (self);
  start_timer (self, &self->reconnection, REACHABILITYD_RECONNECT_FIRST_MS, on_reconnection_due);
  leave_context (self);
}

/* Takes `bus` (a connection of the module's own) and follows the daemon's name on it. */
static void
adopt_bus (ReachabilitydNetworkMonitor *self, GDBusConnection *bus)
{
  g_dbus_connection_set_exit_on_close (bus, FALSE);
  lock_for_writing (self);
  self->bus = bus;
  unlock (self);
  self->closed_handler = g_signal_connect (bus, "closed", G_CALLBACK (on_bus_closed), self);
  self->watch_id = g_bus_watch_name_on_connection (bus, REACHABILITYD_BUS_NAME, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                   on_name_appeared, on_name_vanished, self, NULL);
}

/* ---- initialisation ----------------------------------------------------------------------- */

/* One synchronous call to the bus itself (org.freedesktop.DBus), at initialisation. */
static GVariant *
call_bus (GDBusConnection *bus, const gchar *method, GVariant *parameters, const gchar *reply_type, gint timeout_ms,
          GCancellable *cancellable, GError **error)
{
  return g_dbus_connection_call_sync (bus, FREEDESKTOP_DBUS_NAME, FREEDESKTOP_DBUS_PATH, FREEDESKTOP_DBUS_NAME,
                                      method, parameters, G_VARIANT_TYPE (reply_type), G_DBUS_CALL_FLAGS_NONE,
                                      timeout_ms, cancellable, error);
}

/* The unique name owning `name`: its owner now, or, if it has none and can be started (a D-Bus
 * service file names it), the one started. NULL with `error` set otherwise (G_IO_ERROR_NOT_FOUND
 * when it is neither running nor activatable). */
static gchar *
find_or_start_owner (GDBusConnection *bus, const gchar *name, GCancellable *cancellable, GError **error)
{
  GVariant *reply = call_bus (bus, "NameHasOwner", g_variant_new ("(s)", name), "(b)", -1, cancellable, error);
  gboolean found = FALSE;
  const gchar **names;
  gchar *owner;

  if (reply == NULL)
    return NULL;
  g_variant_get (reply, "(b)", &found);
  g_variant_unref (reply);
  if (!found)
    {
      reply = call_bus (bus, "ListActivatableNames", NULL, "(as)", -1, cancellable, error);
      if (reply == NULL)
        return NULL;
      g_variant_get (reply, "(^a&s)", &names);
      found = g_strv_contains (names, name);
      g_free (names);
      g_variant_unref (reply);
      if (!found)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                       "reachabilityd is neither running nor activatable on the system bus (%s)", name);
          return NULL;
        }
      reply = call_bus (bus, "StartServiceByName", g_variant_new ("(su)", name, 0), "(u)", REACHABILITYD_CALL_TIMEOUT_MS,
                        cancellable, error);
      if (reply == NULL)
        return NULL;
      g_variant_unref (reply);
    }
  reply = call_bus (bus, "GetNameOwner", g_variant_new ("(s)", name), "(s)", -1, cancellable, error);
  if (reply == NULL)
    return NULL;
  g_variant_get (reply, "(s)", &owner);
  g_variant_unref (reply);
  return owner;
}

static gboolean
reachabilityd_network_monitor_initable_init (GInitable *initable, GCancellable *cancellable, GError **error)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (initable);
  GError *read_error = NULL;
  GVariant *reply, *properties;

  /* A connection of the module's own: the shared one (g_bus_get) exits the application when
   * the bus goes away. Made here, its "closed" signal comes in this context. */
  self->context = g_main_context_ref_thread_default ();
  self->bus_address = g_dbus_address_get_for_bus_sync (G_BUS_TYPE_SYSTEM, cancellable, error);
  if (self->bus_address == NULL)
    return FALSE;
  GDBusConnection *bus = g_dbus_connection_new_for_address_sync (
      self->bus_address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
      NULL, cancellable, error);
  if (bus == NULL)
    return FALSE;
  g_dbus_connection_set_exit_on_close (bus, FALSE);
  gchar *owner = find_or_start_owner (bus, REACHABILITYD_BUS_NAME, cancellable, error);
  if (owner == NULL)
    {
      g_dbus_connection_close (bus, NULL, NULL, NULL);
      g_object_unref (bus);
      return FALSE;
    }

  /* Read the state now, once: an application asks for it right after
   * g_network_monitor_get_default(). The owner's changes are followed from before the read, so
   * that none falls in between; the name watch below reads again only an owner that took the
   * name since. A change the owner signalled before its reply waits in this context and is
   * applied after it, then its later ones, in order: the state ends as the daemon's (a change
   * within the call's round trip can show its older state for one network-changed). */
  self->owner = owner;
  follow_owner (self, bus, owner);
  reply = g_dbus_connection_call_sync (bus, owner, REACHABILITYD_OBJECT_PATH, FREEDESKTOP_PROPERTIES, "GetAll",
                                       g_variant_new ("(s)", REACHABILITYD_INTERFACE), G_VARIANT_TYPE ("(a{sv})"),
                                       G_DBUS_CALL_FLAGS_NO_AUTO_START, REACHABILITYD_INIT_READ_TIMEOUT_MS, cancellable,
                                       &read_error);
  if (reply != NULL)
    {
      self->source = FROM_DAEMON;
      g_variant_get (reply, "(@a{sv})", &properties);
      sync_properties (self, properties, FALSE);
      g_variant_unref (properties);
      g_variant_unref (reply);
    }
  else if (g_error_matches (read_error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    {
      /* An owner that does not answer (stopped, hung) still owns the name: failing here would
       * leave the application with GLib's monitor for its whole life (GLib never tries a
       * monitor again whose init failed). Start as while the daemon is away, without a last
       * word to keep: GLib's answer now, the daemon's once read (below, then as a stalled
       * owner's read is retried). */
      g_debug ("reachabilityd: %s did not answer within %d ms, GLib's monitor answers meanwhile: %s", owner,
               REACHABILITYD_INIT_READ_TIMEOUT_MS, read_error->message);
      g_clear_error (&read_error);
      self->source = FROM_FALLBACK;
      start_fallback (self);
      if (self->fallback != NULL)
        publish (self, fallback_state (self->fallback), FALSE, FALSE);
    }
  else
    {
      g_propagate_error (error, read_error);
      unfollow_owner (self, bus);
      g_clear_pointer (&self->owner, g_free);
      g_dbus_connection_close (bus, NULL, NULL, NULL);
      g_object_unref (bus);
      return FALSE;
    }

  /* From here on, follow the name. Its callbacks run in the thread-default main context of
   * this call, and the subscription and reads they start do too: network-changed is emitted
   * there, as GLib's own monitors do. */
  adopt_bus (self, bus);
  if (self->source != FROM_DAEMON)
    read_owner (self);
  return TRUE;
}

/* ---- can_reach ---------------------------------------------------------------------------- */

/** One can_reach_async() in progress: the destination, and the addresses still to ask about. */
typedef struct {
  GSocketConnectable *destination;
  GSocketAddressEnumerator *addresses;
  GDBusConnection *bus;   /* the connection the questions go over */
  gchar *last_address;    /* the address asked about, also for the error message */
  gboolean last_is_ipv4;  /* whether it is an IPv4 one, which GLib connects over an IPv4 socket */
  gboolean last_only_through_nat64; /* whether the daemon reaches it only through NAT64 */
  gboolean asks_check_address; /* the daemon (or its bus policy) predates CheckDestination */
} Reach;

static void
reach_free (gpointer data)
{
  Reach *reach = data;
  g_clear_object (&reach->destination);
  g_clear_object (&reach->addresses);
  g_clear_object (&reach->bus);
  g_free (reach->last_address);
  g_free (reach);
}

static void reach_next (GTask *task);
static void ask_daemon (GTask *task);

static void
on_fallback_reached (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = G_TASK (user_data);
  GError *error = NULL;

  if (g_network_monitor_can_reach_finish (G_NETWORK_MONITOR (source), result, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
  g_object_unref (task);
}

/* The daemon cannot answer: GLib's monitor does, the monitor's own while the daemon is away
 * (`fallback`), else one made for this question. */
static void
reach_through_fallback (GTask *task, GNetworkMonitor *fallback)
{
  Reach *reach = g_task_get_task_data (task);

  if (fallback == NULL)
    fallback = new_fallback_monitor ();
  if (fallback == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                               "Neither reachabilityd nor GLib's network monitor can answer");
      g_object_unref (task);
      return;
    }
  g_network_monitor_can_reach_async (fallback, reach->destination, g_task_get_cancellable (task), on_fallback_reached, task);
  g_object_unref (fallback);
}

/* Whether a call's error says the daemon is away: no owner, or it left (or the bus did) before
 * answering. */
static gboolean
is_daemon_away (const GError *error)
{
  return g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN)
         || g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER)
         || g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_NO_REPLY)
         || g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_DISCONNECTED)
         || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CLOSED);
}

/* CheckAddress's error (but for the daemon's absence) as the GIO error an application handles:
 * GIO's own errors as they are (cancelled, timed out), the bus's and the daemon's mapped. Takes
 * `error`. */
static GError *
gio_error_of_check (GError *error)
{
  if (error->domain == G_IO_ERROR && error->code != G_IO_ERROR_DBUS_ERROR)
    return error;
  gchar *remote = g_dbus_error_get_remote_error (error);
  gint code = G_IO_ERROR_FAILED;

  if (g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_TIMEOUT) || g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_TIMED_OUT))
    code = G_IO_ERROR_TIMED_OUT;
  else if (g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_ACCESS_DENIED)
           || g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_AUTH_FAILED))
    code = G_IO_ERROR_PERMISSION_DENIED;
  else if (g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_LIMITS_EXCEEDED)
           || g_strcmp0 (remote, REACHABILITYD_ERROR_BUSY) == 0)
    code = G_IO_ERROR_BUSY;
  else if (g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_INVALID_ARGS)
           || g_strcmp0 (remote, REACHABILITYD_ERROR_INVALID_ADDRESS) == 0)
    code = G_IO_ERROR_INVALID_ARGUMENT;
  g_dbus_error_strip_remote_error (error);
  GError *mapped = g_error_new (G_IO_ERROR, code, "reachabilityd did not answer: %s", error->message);
  g_free (remote);
  g_error_free (error);
  return mapped;
}

static void
on_checked (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = G_TASK (user_data);
  GError *error = NULL;
  GVariant *reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  const gchar *status;

  if (reply == NULL && is_daemon_away (error))
    {
      g_error_free (error);
      ReachabilitydNetworkMonitor *self = g_task_get_source_object (task);
      lock_for_reading (self);
      GNetworkMonitor *fallback = self->fallback != NULL ? g_object_ref (self->fallback) : NULL;
      unlock (self);
      reach_through_fallback (task, fallback);
      return;
    }
  Reach *reach = g_task_get_task_data (task);
  if (reply == NULL && !reach->asks_check_address
      && (g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD)
          || g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_ACCESS_DENIED)))
    {
      /* A daemon older than CheckDestination: CheckAddress, for this and the next addresses. */
      g_error_free (error);
      reach->asks_check_address = TRUE;
      ask_daemon (task);
      return;
    }
  if (reply == NULL)
    {
      g_task_return_error (task, gio_error_of_check (error));
      g_object_unref (task);
      return;
    }
  GVariant *destination = NULL;
  const gchar *via = NULL;
  if (reach->asks_check_address)
    g_variant_get (reply, "(&s&s)", &status, NULL);
  else
    {
      destination = g_variant_get_child_value (reply, 0);
      if (!g_variant_lookup (destination, REACHABILITYD_DESTINATION_STATUS, "&s", &status))
        status = REACHABILITYD_STATUS_UNKNOWN;
      g_variant_lookup (destination, REACHABILITYD_DESTINATION_VIA, "&s", &via);
    }
  /* An IPv4 address reachable only through NAT64 is not reachable for the application: GLib
   * (GSocketClient, GNetworkAddress) connects an IPv4 address over an IPv4 socket and never
   * builds the NAT64 address, so the connection fails. A name is asked by its addresses: the
   * AAAA a DNS64 synthesized is an IPv6 address inside the prefix, reachable as it is. Through
   * a CLAT the IPv4 socket does get through (via "clat"). */
  reach->last_only_through_nat64 = reach->last_is_ipv4 && g_strcmp0 (via, REACHABILITYD_VIA_NAT64) == 0;
  if (g_strcmp0 (status, REACHABILITYD_STATUS_NOT_REACHABLE) != 0
      && g_strcmp0 (status, REACHABILITYD_STATUS_UNKNOWN) != 0 && !reach->last_only_through_nat64)
    {
      g_task_return_boolean (task, TRUE);
      g_object_unref (task);
    }
  else
    reach_next (task);
  g_clear_pointer (&destination, g_variant_unref);
  g_variant_unref (reply);
}

/* The literal CheckAddress takes: IPv6 link-local addresses carry their link as a zone. */
static gchar *
address_literal (GInetSocketAddress *address)
{
  GInetAddress *host = g_inet_socket_address_get_address (address);
  gchar *literal = g_inet_address_to_string (host);
  /* GLib asserts that only IPv6 addresses are asked for a scope. */
  guint32 scope = g_inet_address_get_family (host) == G_SOCKET_FAMILY_IPV6
                      ? g_inet_socket_address_get_scope_id (address) : 0;

  if (scope != 0)
    {
      gchar *zoned = g_strdup_printf ("%s%%%u", literal, scope);
      g_free (literal);
      return zoned;
    }
  return literal;
}

static void
on_enumerated (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = G_TASK (user_data);
  Reach *reach = g_task_get_task_data (task);
  ReachabilitydNetworkMonitor *self = g_task_get_source_object (task);
  GError *error = NULL;
  GSocketAddress *address = g_socket_address_enumerator_next_finish (G_SOCKET_ADDRESS_ENUMERATOR (source),
                                                                      result, &error);

  if (error != NULL)
    {
      /* A name that does not resolve, or cancellation: GResolver's or GIO's own error. */
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  if (address == NULL)
    {
      /* Every address asked: none is reachable. GLib's codes: the whole network when there is
       * no route at all, else this host. */
      if (reach->last_address == NULL)
        g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE,
                                 "Host unreachable: it has no IP address");
      else if (!read_published (self).available)
        g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE,
                                 "Network unreachable: reachabilityd reports no route to the Internet");
      else if (reach->last_only_through_nat64)
        g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE,
                                 "Host unreachable: reachabilityd reaches %s only through NAT64, at its IPv6 "
                                 "address (connect by name, through DNS64)", reach->last_address);
      else
        g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE,
                                 "Host unreachable: reachabilityd reports no route to %s", reach->last_address);
      g_object_unref (task);
      return;
    }
  if (!G_IS_INET_SOCKET_ADDRESS (address))
    {
      g_object_unref (address);
      reach_next (task);
      return;
    }
  g_free (reach->last_address);
  reach->last_address = address_literal (G_INET_SOCKET_ADDRESS (address));
  reach->last_is_ipv4 = g_inet_address_get_family (g_inet_socket_address_get_address (G_INET_SOCKET_ADDRESS (address)))
                        == G_SOCKET_FAMILY_IPV4;
  g_object_unref (address);
  ask_daemon (task);
}

/* Asks the daemon about the last address: CheckDestination, or CheckAddress of an older daemon. */
static void
ask_daemon (GTask *task)
{
  Reach *reach = g_task_get_task_data (task);
  gboolean destination = !reach->asks_check_address;

  g_dbus_connection_call (reach->bus, REACHABILITYD_BUS_NAME, REACHABILITYD_OBJECT_PATH, REACHABILITYD_INTERFACE,
                          destination ? REACHABILITYD_METHOD_CHECK_DESTINATION : REACHABILITYD_METHOD_CHECK_ADDRESS,
                          g_variant_new ("(s)", reach->last_address),
                          G_VARIANT_TYPE (destination ? "(a{sv})" : "(ss)"), G_DBUS_CALL_FLAGS_NONE, REACHABILITYD_CALL_TIMEOUT_MS,
                          g_task_get_cancellable (task), on_checked, task);
}

static void
reach_next (GTask *task)
{
  Reach *reach = g_task_get_task_data (task);
  g_socket_address_enumerator_next_async (reach->addresses, g_task_get_cancellable (task), on_enumerated, task);
}

/* Asks the daemon about each address while it is followed; while it is away, GLib's monitor. */
static void
reachabilityd_network_monitor_can_reach_async (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                               GCancellable *cancellable, GAsyncReadyCallback callback,
                                               gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (monitor);
  GTask *task = g_task_new (monitor, cancellable, callback, user_data);
  Reach *reach = g_new0 (Reach, 1);

  g_task_set_source_tag (task, reachabilityd_network_monitor_can_reach_async);
  reach->destination = g_object_ref (connectable);
  g_task_set_task_data (task, reach, reach_free);
  lock_for_reading (self);
  GNetworkMonitor *fallback = self->fallback != NULL ? g_object_ref (self->fallback) : NULL;
  reach->bus = self->bus != NULL ? g_object_ref (self->bus) : NULL;
  unlock (self);
  if (fallback != NULL || reach->bus == NULL)
    {
      reach_through_fallback (task, fallback);
      return;
    }
  reach->addresses = g_socket_connectable_enumerate (connectable);
  reach_next (task);
}

static gboolean
reachabilityd_network_monitor_can_reach_finish (GNetworkMonitor *monitor, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, monitor), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
on_sync_reach_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/* The synchronous call runs the asynchronous one in a private main context: one code path. */
static gboolean
reachabilityd_network_monitor_can_reach (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                         GCancellable *cancellable, GError **error)
{
  GMainContext *context = g_main_context_new ();
  GAsyncResult *result = NULL;
  gboolean reachable;

  g_main_context_push_thread_default (context);
  reachabilityd_network_monitor_can_reach_async (monitor, connectable, cancellable, on_sync_reach_done, &result);
  while (result == NULL)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);

  reachable = reachabilityd_network_monitor_can_reach_finish (monitor, result, error);
  g_object_unref (result);
  return reachable;
}

/* ---- GObject ------------------------------------------------------------------------------ */

/* From any thread (Evolution's and camel's workers read them): the published state, locked. */
static void
reachabilityd_network_monitor_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  PublishedState state = read_published (REACHABILITYD_NETWORK_MONITOR (object));

  switch (prop_id)
    {
    case PROP_NETWORK_AVAILABLE:
      g_value_set_boolean (value, state.available);
      break;
    case PROP_NETWORK_METERED:
      g_value_set_boolean (value, state.metered);
      break;
    case PROP_CONNECTIVITY:
      g_value_set_enum (value, state.connectivity);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* Pending calls and connection attempts hold a reference, so none is left here; timers,
 * subscriptions and the name watch are. */
static void
reachabilityd_network_monitor_finalize (GObject *object)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (object);

  cancel_timer (&self->grace);
  cancel_timer (&self->reread);
  cancel_timer (&self->reconnection);
  if (self->bus != NULL)
    {
      GDBusConnection *bus = g_object_ref (self->bus);
      drop_bus (self);
      g_dbus_connection_close (bus, NULL, NULL, NULL);
      g_object_unref (bus);
    }
  stop_fallback (self);
  g_free (self->bus_address);
  g_free (self->daemon_status);
  g_free (self->daemon_connectivity);
  g_free (self->published_status);
  g_clear_pointer (&self->context, g_main_context_unref);
  pthread_rwlock_destroy (&self->lock);
  G_OBJECT_CLASS (reachabilityd_network_monitor_parent_class)->finalize (object);
}

static void
reachabilityd_network_monitor_init (ReachabilitydNetworkMonitor *self)
{
  check_lock (pthread_rwlock_init (&self->lock, NULL), "pthread_rwlock_init");
}

static void
reachabilityd_network_monitor_class_init (ReachabilitydNetworkMonitorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = reachabilityd_network_monitor_get_property;
  object_class->finalize = reachabilityd_network_monitor_finalize;
  g_object_class_override_property (object_class, PROP_NETWORK_AVAILABLE, "network-available");
  g_object_class_override_property (object_class, PROP_NETWORK_METERED, "network-metered");
  g_object_class_override_property (object_class, PROP_CONNECTIVITY, "connectivity");
}

static void
reachabilityd_network_monitor_class_finalize (ReachabilitydNetworkMonitorClass *klass)
{
}

static void
reachabilityd_network_monitor_iface_init (GNetworkMonitorInterface *iface)
{
  iface->can_reach = reachabilityd_network_monitor_can_reach;
  iface->can_reach_async = reachabilityd_network_monitor_can_reach_async;
  iface->can_reach_finish = reachabilityd_network_monitor_can_reach_finish;
}

static void
reachabilityd_network_monitor_initable_iface_init (GInitableIface *iface)
{
  iface->init = reachabilityd_network_monitor_initable_init;
}

/* ---- the module --------------------------------------------------------------------------- */

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  reachabilityd_network_monitor_register_type (G_TYPE_MODULE (module));
  g_io_extension_point_implement (G_NETWORK_MONITOR_EXTENSION_POINT_NAME, reachabilityd_network_monitor_get_type (),
                                  "reachabilityd", REACHABILITYD_MONITOR_PRIORITY);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT gchar **
g_io_module_query (void)
{
  return g_strsplit (G_NETWORK_MONITOR_EXTENSION_POINT_NAME, "!", -1);
}
