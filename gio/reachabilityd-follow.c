/* SPDX-License-Identifier: Apache-2.0
 *
 * The GIO module: the published state, following the daemon's name and properties, and the bus
 * (reachabilityd-network-monitor.c says how the module's files divide).
 */
#include "reachabilityd-network-monitor.h"

static gboolean on_reconnection_due (gpointer user_data);

/* ---- the published state ------------------------------------------------------------------ */

/* The daemon's Connectivity in GLib's terms (reachabilityd-network-monitor.c's header comment). */
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
PublishedState
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
void
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
void
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
void
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
void
read_owner (ReachabilitydNetworkMonitor *self)
{
  self->reading = g_cancellable_new ();
  g_dbus_connection_call (self->bus, self->owner, REACHABILITYD_OBJECT_PATH, FREEDESKTOP_PROPERTIES, "GetAll",
                          g_variant_new ("(s)", REACHABILITYD_INTERFACE), G_VARIANT_TYPE ("(a{sv})"),
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, REACHABILITYD_CALL_TIMEOUT_MS, self->reading,
                          on_read, g_object_ref (self));
}

/* Ends follow_owner()'s subscriptions on `bus`, if any. */
void
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
void
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
void
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
void
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
