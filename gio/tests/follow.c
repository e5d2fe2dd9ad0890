/* SPDX-License-Identifier: Apache-2.0
 *
 * A running GLib application for the tests (GioModuleTests): it follows
 * g_network_monitor_get_default() until SIGTERM or SIGINT, and prints one line per event:
 *   follow [--readers N] [HOST PORT]
 *     ready <type> <state>   once the monitor exists
 *     changed <state>        at each network-changed, the state read in the handler
 *     reach <answer>         at each SIGUSR1: can_reach_async(HOST:PORT), answered as
 *                            reach-answer.h prints it
 *     reads <count>          at exit, with --readers: the property reads the threads made
 * where <state> is "available=0|1 metered=0|1 connectivity=<nick>". With --readers N, N threads
 * read the three properties in a loop meanwhile, as Evolution's and camel's worker threads do
 * (the test builds this and the module with -fsanitize=thread).
 *   cc follow.c $(pkg-config --cflags --libs gio-2.0) -o follow
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <glib-unix.h>
#include <gio/gio.h>

#include "reach-answer.h"

static GNetworkMonitor *monitor;
static GSocketConnectable *destination;
static gint stopping;

/* The monitor's three properties, as one line's <state>; free it with g_free(). */
static gchar *
describe_state (void)
{
  GEnumClass *connectivities = g_type_class_ref (G_TYPE_NETWORK_CONNECTIVITY);
  GEnumValue *connectivity = g_enum_get_value (connectivities, g_network_monitor_get_connectivity (monitor));
  gchar *state = g_strdup_printf ("available=%d metered=%d connectivity=%s",
                                  g_network_monitor_get_network_available (monitor),
                                  g_network_monitor_get_network_metered (monitor),
                                  connectivity != NULL ? connectivity->value_nick : "?");

  g_type_class_unref (connectivities);
  return state;
}

static void
on_network_changed (GNetworkMonitor *changed, gboolean available, gpointer user_data)
{
  gchar *state = describe_state ();

  g_print ("changed %s\n", state);
  g_free (state);
}

static void
on_reached (GObject *source, GAsyncResult *result, gpointer user_data)
{
  print_reach_answer ("reach ", G_NETWORK_MONITOR (source), result);
}

static gboolean
on_reach_requested (gpointer user_data)
{
  if (destination != NULL)
    g_network_monitor_can_reach_async (monitor, destination, NULL, on_reached, NULL);
  return G_SOURCE_CONTINUE;
}

static gboolean
on_stop_requested (gpointer user_data)
{
  g_main_loop_quit (user_data);
  return G_SOURCE_CONTINUE;
}

/* One reader thread: the three properties, again and again, until the loop ends. */
static gpointer
read_properties (gpointer user_data)
{
  guint64 reads = 0;

  while (!g_atomic_int_get (&stopping))
    {
      g_network_monitor_get_network_available (monitor);
      g_network_monitor_get_network_metered (monitor);
      g_network_monitor_get_connectivity (monitor);
      reads += 3;
    }
  return g_memdup2 (&reads, sizeof reads);
}

int
main (int argc, char **argv)
{
  guint reader_count = 0;
  int first = 1;

  if (argc >= 3 && strcmp (argv[1], "--readers") == 0)
    {
      reader_count = (guint) atoi (argv[2]);
      first = 3;
    }
  if (argc - first != 0 && argc - first != 2)
    {
      g_printerr ("usage: %s [--readers N] [HOST PORT]\n", argv[0]);
      return 64;
    }
  GMainLoop *loop = g_main_loop_new (NULL, FALSE);
  g_unix_signal_add (SIGTERM, on_stop_requested, loop);
  g_unix_signal_add (SIGINT, on_stop_requested, loop);
  g_unix_signal_add (SIGUSR1, on_reach_requested, NULL);

  monitor = g_network_monitor_get_default ();
  if (argc - first == 2)
    destination = g_network_address_new (argv[first], (guint16) atoi (argv[first + 1]));
  g_signal_connect (monitor, "network-changed", G_CALLBACK (on_network_changed), NULL);
  gchar *state = describe_state ();
  g_print ("ready %s %s\n", G_OBJECT_TYPE_NAME (monitor), state);
  g_free (state);

  GPtrArray *readers = g_ptr_array_new ();
  for (guint i = 0; i < reader_count; i++)
    g_ptr_array_add (readers, g_thread_new ("reader", read_properties, NULL));
  g_main_loop_run (loop);

  g_atomic_int_set (&stopping, TRUE);
  guint64 reads = 0;
  for (guint i = 0; i < readers->len; i++)
    {
      guint64 *counted = g_thread_join (readers->pdata[i]);
      reads += *counted;
      g_free (counted);
    }
  if (reader_count > 0)
    g_print ("reads %" G_GUINT64_FORMAT "\n", reads);
  g_ptr_array_free (readers, TRUE);
  g_clear_object (&destination);
  g_main_loop_unref (loop);
  return 0;
}
