/* SPDX-License-Identifier: Apache-2.0
 *
 * A C consumer of g_network_monitor_get_default(), for the tests (GioModuleTests):
 *   can-reach HOST PORT [--cancel]
 * prints the monitor's type, then "reachable" or "error <domain> <code> <message>" (the code's
 * nick for GIO's errors, "host-unreachable", as gio/monitor-query.py prints it) from
 * g_network_monitor_can_reach_async(); with --cancel the call's cancellable is cancelled right
 * after the call starts (the answer must then be G_IO_ERROR_CANCELLED).
 *   cc can-reach.c $(pkg-config --cflags --libs gio-2.0) -o can-reach
 */
#include <stdlib.h>
#include <string.h>

#include <gio/gio.h>

#include "reach-answer.h"

static void
on_reached (GObject *source, GAsyncResult *result, gpointer user_data)
{
  print_reach_answer ("", G_NETWORK_MONITOR (source), result);
  g_main_loop_quit (user_data);
}

int
main (int argc, char **argv)
{
  if (argc < 3 || (argc == 4 && strcmp (argv[3], "--cancel") != 0) || argc > 4)
    {
      g_printerr ("usage: %s HOST PORT [--cancel]\n", argv[0]);
      return 64;
    }
  GNetworkMonitor *monitor = g_network_monitor_get_default ();
  GSocketConnectable *destination = g_network_address_new (argv[1], (guint16) atoi (argv[2]));
  GCancellable *cancellable = g_cancellable_new ();
  GMainLoop *loop = g_main_loop_new (NULL, FALSE);

  g_print ("%s\n", G_OBJECT_TYPE_NAME (monitor));
  g_network_monitor_can_reach_async (monitor, destination, cancellable, on_reached, loop);
  if (argc == 4)
    g_cancellable_cancel (cancellable);
  g_main_loop_run (loop);

  g_main_loop_unref (loop);
  g_object_unref (cancellable);
  g_object_unref (destination);
  return 0;
}
