/* SPDX-License-Identifier: Apache-2.0
 *
 * The GIO module: can_reach(), each address asked of the daemon, or of the fallback while it is
 * away (reachabilityd-network-monitor.c says how the module's files divide).
 */
#include "reachabilityd-network-monitor.h"

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
void
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

gboolean
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
gboolean
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
