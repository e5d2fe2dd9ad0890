/* SPDX-License-Identifier: Apache-2.0
 *
 * A GIO module: GNetworkMonitor on top of reachabilityd (extension point "gio-network-monitor",
 * name "reachabilityd", priority 35, see REACHABILITYD_MONITOR_PRIORITY). One file, as GLib's
 * own monitors are: one GObject type with its GNetworkMonitor and GInitable interfaces and the
 * module's load/unload/query entry points, over 300 lines because GObject boilerplate is.
 *
 *   network-available  = the daemon's Reachable
 *   network-metered    = Metered
 *   connectivity       = Connectivity: none -> LOCAL, limited -> LIMITED, portal -> PORTAL,
 *                        full -> FULL; unknown (no evidence, checks off) -> FULL when reachable
 *                        (GLib's own meaning of "reachable, nothing known against it")
 *   network-changed    once per PropertiesChanged of the daemon that changes Status, Reachable,
 *                      Metered or Connectivity (a change of Status alone, e.g. Wi-Fi to Ethernet,
 *                      is a network change for applications holding connections), never twice
 *                      for the same state; emitted in the thread-default main context of the
 *                      thread that created the monitor, as GLib's own monitors do
 *   can_reach()        every address the connectable enumerates (names resolved by GResolver),
 *                      each asked with CheckAddress; reachable when one is
 *
 * GInitable: fails at once, without waiting, when the bus name has no owner and is not
 * activatable, so that g_network_monitor_get_default() falls back to GLib's own monitors. The
 * name is followed afterwards: when the daemon restarts, the module subscribes to the new owner
 * and reads its properties again (keeping the last values while no owner exists: a restart is
 * not a network change).
 */
#include <string.h>

#include <gio/gio.h>

#include "reachabilityd-contract.h"

/* Above NetworkManager's monitor (30) and GLib's netlink monitor (20): reachabilityd's answer
 * is the better one when it runs; below the portal's (40), which only initialises inside a
 * Flatpak sandbox and whose host side asks the host's default monitor, i.e. this module. */
#define REACHABILITYD_MONITOR_PRIORITY 35
/* How long the initial read of the properties may take (it activates the daemon if needed). */
#define REACHABILITYD_CALL_TIMEOUT_MS 5000

#define FREEDESKTOP_DBUS_NAME "org.freedesktop.DBus"
#define FREEDESKTOP_DBUS_PATH "/org/freedesktop/DBus"
#define FREEDESKTOP_PROPERTIES "org.freedesktop.DBus.Properties"

/** The monitor: the daemon's last known state, and what follows it on the bus. */
typedef struct {
  GObject parent_instance;

  GDBusConnection *bus;
  guint watch_id;
  guint properties_subscription;
  GCancellable *reading; /* the GetAll of the current owner, while pending */

  gchar *status;
  gboolean reachable;
  gboolean metered;
  gchar *connectivity;
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

/* Takes the properties in `properties` (a{sv}, from GetAll or PropertiesChanged) that the
 * monitor exposes; notifies each changed one and emits network-changed once if any changed. */
static void
apply_properties (ReachabilitydNetworkMonitor *self, GVariant *properties)
{
  const gchar *status = self->status;
  const gchar *connectivity = self->connectivity;
  gboolean reachable = self->reachable, metered = self->metered;

  g_variant_lookup (properties, REACHABILITYD_PROPERTY_STATUS, "&s", &status);
  g_variant_lookup (properties, REACHABILITYD_PROPERTY_CONNECTIVITY, "&s", &connectivity);
  g_variant_lookup (properties, REACHABILITYD_PROPERTY_REACHABLE, "b", &reachable);
  g_variant_lookup (properties, REACHABILITYD_PROPERTY_METERED, "b", &metered);

  GNetworkConnectivity old_connectivity = glib_connectivity (self->connectivity, self->reachable);
  GNetworkConnectivity new_connectivity = glib_connectivity (connectivity, reachable);
  gboolean status_changed = g_strcmp0 (status, self->status) != 0;
  gboolean reachable_changed = reachable != self->reachable;
  gboolean metered_changed = metered != self->metered;
  gboolean connectivity_changed = old_connectivity != new_connectivity;

  if (status_changed)
    {
      gchar *copy = g_strdup (status);
      g_free (self->status);
      self->status = copy;
    }
  if (g_strcmp0 (connectivity, self->connectivity) != 0)
    {
      gchar *copy = g_strdup (connectivity);
      g_free (self->connectivity);
      self->connectivity = copy;
    }
  self->reachable = reachable;
  self->metered = metered;

  if (!(status_changed || reachable_changed || metered_changed || connectivity_changed))
    return;
  if (reachable_changed)
    g_object_notify (G_OBJECT (self), "network-available");
  if (metered_changed)
    g_object_notify (G_OBJECT (self), "network-metered");
  if (connectivity_changed)
    g_object_notify (G_OBJECT (self), "connectivity");
  g_signal_emit_by_name (self, "network-changed", self->reachable);
}

static void
on_properties_changed (GDBusConnection *connection, const gchar *sender, const gchar *path,
                       const gchar *interface, const gchar *signal, GVariant *parameters, gpointer user_data)
{
  const gchar *changed_interface;
  GVariant *changed;

  if (!g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(sa{sv}as)")))
    return;
  g_variant_get (parameters, "(&s@a{sv}as)", &changed_interface, &changed, NULL);
  if (g_strcmp0 (changed_interface, REACHABILITYD_INTERFACE) == 0)
    apply_properties (REACHABILITYD_NETWORK_MONITOR (user_data), changed);
  g_variant_unref (changed);
}

static void
on_read (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GError *error = NULL;
  GVariant *reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  GVariant *properties;

  if (reply == NULL)
    {
      /* Cancelled: the owner went away (the monitor is then still alive) or the monitor was
       * finalised (then user_data must not be touched). */
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          /* Typically the owner left meanwhile: its successor is read when it appears. Not a
           * warning: it would land in every GLib application's log at a daemon restart. */
          g_debug ("reachabilityd: failed to read the properties: %s", error->message);
          g_clear_object (&REACHABILITYD_NETWORK_MONITOR (user_data)->reading);
        }
      g_error_free (error);
      return;
    }
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);
  g_clear_object (&self->reading);
  g_variant_get (reply, "(@a{sv})", &properties);
  apply_properties (self, properties);
  g_variant_unref (properties);
  g_variant_unref (reply);
}

/* Stops following the previous owner: its subscription and a pending read. */
static void
forget_owner (ReachabilitydNetworkMonitor *self)
{
  if (self->properties_subscription != 0)
    {
      g_dbus_connection_signal_unsubscribe (self->bus, self->properties_subscription);
      self->properties_subscription = 0;
    }
  if (self->reading != NULL)
    {
      g_cancellable_cancel (self->reading);
      g_clear_object (&self->reading);
    }
}

/* A (new) owner of the name: subscribe to its PropertiesChanged, then read all its properties.
 * Messages from one sender arrive in order, so a change signalled before the reply is older
 * than the reply, and one after it newer: applying both in arrival order leaves the truth. */
static void
on_name_appeared (GDBusConnection *connection, const gchar *name, const gchar *owner, gpointer user_data)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (user_data);

  forget_owner (self);
  self->properties_subscription = g_dbus_connection_signal_subscribe (
      connection, owner, FREEDESKTOP_PROPERTIES, "PropertiesChanged", REACHABILITYD_OBJECT_PATH,
      REACHABILITYD_INTERFACE, G_DBUS_SIGNAL_FLAGS_NONE, on_properties_changed, self, NULL);
  self->reading = g_cancellable_new ();
  g_dbus_connection_call (connection, owner, REACHABILITYD_OBJECT_PATH, FREEDESKTOP_PROPERTIES, "GetAll",
                          g_variant_new ("(s)", REACHABILITYD_INTERFACE), G_VARIANT_TYPE ("(a{sv})"),
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, REACHABILITYD_CALL_TIMEOUT_MS, self->reading,
                          on_read, self);
}

static void
on_name_vanished (GDBusConnection *connection, const gchar *name, gpointer user_data)
{
  forget_owner (REACHABILITYD_NETWORK_MONITOR (user_data));
}

/* One synchronous call to the bus itself (org.freedesktop.DBus), at initialisation. */
static GVariant *
call_bus (GDBusConnection *bus, const gchar *method, GVariant *parameters, const gchar *reply_type,
          GCancellable *cancellable, GError **error)
{
  return g_dbus_connection_call_sync (bus, FREEDESKTOP_DBUS_NAME, FREEDESKTOP_DBUS_PATH, FREEDESKTOP_DBUS_NAME,
                                      method, parameters, G_VARIANT_TYPE (reply_type), G_DBUS_CALL_FLAGS_NONE, -1,
                                      cancellable, error);
}

/* Whether `name` has an owner now, or can be started (a D-Bus service file names it). */
static gboolean
is_running_or_activatable (GDBusConnection *bus, const gchar *name, GCancellable *cancellable, GError **error)
{
  GVariant *reply = call_bus (bus, "NameHasOwner", g_variant_new ("(s)", name), "(b)", cancellable, error);
  gboolean found = FALSE;
  const gchar **names;

  if (reply == NULL)
    return FALSE;
  g_variant_get (reply, "(b)", &found);
  g_variant_unref (reply);
  if (found)
    return TRUE;
  reply = call_bus (bus, "ListActivatableNames", NULL, "(as)", cancellable, error);
  if (reply == NULL)
    return FALSE;
  g_variant_get (reply, "(^a&s)", &names);
  found = g_strv_contains (names, name);
  g_free (names);
  g_variant_unref (reply);
  return found;
}

static gboolean
reachabilityd_network_monitor_initable_init (GInitable *initable, GCancellable *cancellable, GError **error)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (initable);
  GError *local_error = NULL;
  GVariant *reply, *properties;

  self->bus = g_bus_get_sync (G_BUS_TYPE_SYSTEM, cancellable, error);
  if (self->bus == NULL)
    return FALSE;
  if (!is_running_or_activatable (self->bus, REACHABILITYD_BUS_NAME, cancellable, &local_error))
    {
      if (local_error != NULL)
        g_propagate_error (error, local_error);
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                     "reachabilityd is neither running nor activatable on the system bus (%s)",
                     REACHABILITYD_BUS_NAME);
      return FALSE;
    }

  /* Read the state now (starting the daemon if it is only activatable): an application asks
   * for it right after g_network_monitor_get_default(). */
  reply = g_dbus_connection_call_sync (self->bus, REACHABILITYD_BUS_NAME, REACHABILITYD_OBJECT_PATH,
                                       FREEDESKTOP_PROPERTIES, "GetAll",
                                       g_variant_new ("(s)", REACHABILITYD_INTERFACE), G_VARIANT_TYPE ("(a{sv})"),
                                       G_DBUS_CALL_FLAGS_NONE, REACHABILITYD_CALL_TIMEOUT_MS, cancellable, error);
  if (reply == NULL)
    return FALSE;
  g_variant_get (reply, "(@a{sv})", &properties);
  g_variant_lookup (properties, REACHABILITYD_PROPERTY_STATUS, "s", &self->status);
  g_variant_lookup (properties, REACHABILITYD_PROPERTY_CONNECTIVITY, "s", &self->connectivity);
  g_variant_lookup (properties, REACHABILITYD_PROPERTY_REACHABLE, "b", &self->reachable);
  g_variant_lookup (properties, REACHABILITYD_PROPERTY_METERED, "b", &self->metered);
  g_variant_unref (properties);
  g_variant_unref (reply);

  /* From here on, follow the name. Its callbacks run in the thread-default main context of
   * this call, and the subscription and reads they start do too: network-changed is emitted
   * there, as GLib's own monitors do. */
  self->watch_id = g_bus_watch_name_on_connection (self->bus, REACHABILITYD_BUS_NAME,
                                                   G_BUS_NAME_WATCHER_FLAGS_NONE, on_name_appeared,
                                                   on_name_vanished, self, NULL);
  return TRUE;
}

/* ---- can_reach ---------------------------------------------------------------------------- */

/** One can_reach_async() in progress: the addresses still to ask about. */
typedef struct {
  GSocketAddressEnumerator *addresses;
  gchar *last_address; /* for the error message */
} Reach;

static void
reach_free (gpointer data)
{
  Reach *reach = data;
  g_clear_object (&reach->addresses);
  g_free (reach->last_address);
  g_free (reach);
}

static void reach_next (GTask *task);

static void
on_checked (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = G_TASK (user_data);
  GError *error = NULL;
  GVariant *reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  const gchar *status;

  if (reply == NULL)
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  g_variant_get (reply, "(&s&s)", &status, NULL);
  if (g_strcmp0 (status, REACHABILITYD_STATUS_NOT_REACHABLE) != 0
      && g_strcmp0 (status, REACHABILITYD_STATUS_UNKNOWN) != 0)
    {
      g_task_return_boolean (task, TRUE);
      g_object_unref (task);
    }
  else
    reach_next (task);
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
      else if (!self->reachable)
        g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE,
                                 "Network unreachable: reachabilityd reports no route to the Internet");
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
  g_object_unref (address);
  g_dbus_connection_call (self->bus, REACHABILITYD_BUS_NAME, REACHABILITYD_OBJECT_PATH, REACHABILITYD_INTERFACE,
                          REACHABILITYD_METHOD_CHECK_ADDRESS, g_variant_new ("(s)", reach->last_address),
                          G_VARIANT_TYPE ("(ss)"), G_DBUS_CALL_FLAGS_NONE, REACHABILITYD_CALL_TIMEOUT_MS,
                          g_task_get_cancellable (task), on_checked, task);
}

static void
reach_next (GTask *task)
{
  Reach *reach = g_task_get_task_data (task);
  g_socket_address_enumerator_next_async (reach->addresses, g_task_get_cancellable (task), on_enumerated, task);
}

static void
reachabilityd_network_monitor_can_reach_async (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                               GCancellable *cancellable, GAsyncReadyCallback callback,
                                               gpointer user_data)
{
  GTask *task = g_task_new (monitor, cancellable, callback, user_data);
  Reach *reach = g_new0 (Reach, 1);

  g_task_set_source_tag (task, reachabilityd_network_monitor_can_reach_async);
  reach->addresses = g_socket_connectable_enumerate (connectable);
  g_task_set_task_data (task, reach, reach_free);
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

static void
reachabilityd_network_monitor_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (object);

  switch (prop_id)
    {
    case PROP_NETWORK_AVAILABLE:
      g_value_set_boolean (value, self->reachable);
      break;
    case PROP_NETWORK_METERED:
      g_value_set_boolean (value, self->metered);
      break;
    case PROP_CONNECTIVITY:
      g_value_set_enum (value, glib_connectivity (self->connectivity, self->reachable));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
reachabilityd_network_monitor_finalize (GObject *object)
{
  ReachabilitydNetworkMonitor *self = REACHABILITYD_NETWORK_MONITOR (object);

  if (self->bus != NULL)
    forget_owner (self);
  if (self->watch_id != 0)
    g_bus_unwatch_name (self->watch_id);
  g_clear_object (&self->bus);
  g_free (self->status);
  g_free (self->connectivity);
  G_OBJECT_CLASS (reachabilityd_network_monitor_parent_class)->finalize (object);
}

static void
reachabilityd_network_monitor_init (ReachabilitydNetworkMonitor *self)
{
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
