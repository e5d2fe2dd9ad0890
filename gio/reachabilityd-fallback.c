/* SPDX-License-Identifier: Apache-2.0
 *
 * The GIO module: GLib's own netlink monitor, which it relays while the daemon is away
 * (reachabilityd-network-monitor.c says how the module's files divide).
 */
#include "reachabilityd-network-monitor.h"

/* ---- GLib's own monitor, while the daemon is away ----------------------------------------- */

/* A new instance of the monitor GLib would use without this module and NetworkManager: its
 * netlink monitor, else its base monitor (always available); NULL if neither initialises. It
 * emits in the thread-default context. */
GNetworkMonitor *
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
PublishedState
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
void
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
void
begin_absence (ReachabilitydNetworkMonitor *self)
{
  if (self->source != FROM_DAEMON)
    return;
  self->source = FROM_LAST_WORD;
  start_timer (self, &self->grace, REACHABILITYD_ABSENCE_GRACE_MS, on_grace_over);
  start_fallback (self);
}

/* Stops GLib's monitor, if it runs. */
void
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
void
end_absence (ReachabilitydNetworkMonitor *self)
{
  cancel_timer (&self->grace);
  self->source = FROM_DAEMON;
  stop_fallback (self);
  publish_daemon_state (self, TRUE);
}
