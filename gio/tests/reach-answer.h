/* SPDX-License-Identifier: Apache-2.0
 *
 * The tests' C consumers (can-reach.c, follow.c) print a can_reach answer the same way as
 * gio/monitor-query.py: "reachable", or "error <domain> <code> <message>" with the code's nick
 * for GIO's errors ("host-unreachable") and its number for any other domain.
 */
#ifndef REACH_ANSWER_H
#define REACH_ANSWER_H

#include <gio/gio.h>

/* Finishes g_network_monitor_can_reach_async() and prints its answer on one line, after
 * `prefix` (e.g. "" or "reach "). */
static inline void
print_reach_answer (const gchar *prefix, GNetworkMonitor *monitor, GAsyncResult *result)
{
  GError *error = NULL;

  if (g_network_monitor_can_reach_finish (monitor, result, &error))
    {
      g_print ("%sreachable\n", prefix);
      return;
    }
  GEnumClass *codes = g_type_class_ref (G_TYPE_IO_ERROR_ENUM);
  GEnumValue *code = error->domain == G_IO_ERROR ? g_enum_get_value (codes, error->code) : NULL;

  if (code != NULL)
    g_print ("%serror %s %s %s\n", prefix, g_quark_to_string (error->domain), code->value_nick, error->message);
  else
    g_print ("%serror %s %d %s\n", prefix, g_quark_to_string (error->domain), error->code, error->message);
  g_type_class_unref (codes);
  g_error_free (error);
}

#endif
