/* SPDX-License-Identifier: Apache-2.0
 *
 * A GIO module: GNetworkMonitor on top of reachabilityd (extension point "gio-network-monitor",
 * name "reachabilityd", priority 35, see REACHABILITYD_MONITOR_PRIORITY): one GObject type with
 * its GNetworkMonitor and GInitable interfaces and the module's load/unload/query entry points.
 * This file holds the type, its initialisation, the entry points, the timers and the lock;
 * reachabilityd-follow.c the published state and following the daemon on the bus;
 * reachabilityd-fallback.c GLib's own monitor while the daemon is away; reachabilityd-can-reach.c
 * can_reach(); reachabilityd-network-monitor.h what they share.
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
#include "reachabilityd-network-monitor.h"

enum { PROP_0, PROP_NETWORK_AVAILABLE, PROP_NETWORK_METERED, PROP_CONNECTIVITY };

static void reachabilityd_network_monitor_iface_init (GNetworkMonitorInterface *iface);
static void reachabilityd_network_monitor_initable_iface_init (GInitableIface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (ReachabilitydNetworkMonitor, reachabilityd_network_monitor, G_TYPE_OBJECT, 0,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,
                                                               reachabilityd_network_monitor_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_NETWORK_MONITOR,
                                                               reachabilityd_network_monitor_iface_init))

/* ---- time and contexts -------------------------------------------------------------------- */

/* The wait before attempt `failures` + 1 after `failures` failed ones: `first`, doubling, at
 * most `longest`. */
guint
backoff_ms (guint failures, guint first, guint longest)
{
  guint wait = first;

  for (guint i = 1; i < failures && wait < longest; i++)
    wait *= 2;
  return MIN (wait, longest);
}

/* Calls `callback` once after `delay_ms`, in the monitor's context; *source holds it until
 * then (cancel_timer() cancels it). */
void
start_timer (ReachabilitydNetworkMonitor *self, GSource **source, guint delay_ms, GSourceFunc callback)
{
  *source = g_timeout_source_new (delay_ms);
  g_source_set_callback (*source, callback, self, NULL);
  g_source_attach (*source, self->context);
}

/* Cancels the timer in *source, if any; also how a timer's callback forgets its own. */
void
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
void
enter_context (ReachabilitydNetworkMonitor *self)
{
  g_main_context_push_thread_default (self->context);
}

void
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

void
lock_for_reading (ReachabilitydNetworkMonitor *self)
{
  check_lock (pthread_rwlock_rdlock (&self->lock), "pthread_rwlock_rdlock");
}

void
lock_for_writing (ReachabilitydNetworkMonitor *self)
{
  check_lock (pthread_rwlock_wrlock (&self->lock), "pthread_rwlock_wrlock");
}

void
unlock (ReachabilitydNetworkMonitor *self)
{
  check_lock (pthread_rwlock_unlock (&self->lock), "pthread_rwlock_unlock");
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
