"""idle: RSS, private memory, context switches (wakeups) and CPU of each watcher over a window."""
import time

from ..harness import log
from ..measure import context_switches, cpu_seconds, memory, wakeups_between


def run(harness, label, seconds):
    """Each watcher's memory, wakeups and CPU over `seconds` of nothing happening, under `label`."""
    before = {name: (cpu_seconds(c.pid), context_switches(c.pid)) for name, c in harness.watchers().items() if c.alive()}
    time.sleep(seconds)
    figures = {}
    for name, child in harness.watchers().items():
        if not child.alive() or name not in before:
            continue
        cpu, switches = cpu_seconds(child.pid) - before[name][0], wakeups_between(before[name][1], context_switches(child.pid))
        figures[name] = dict(memory(child.pid), cpu_s=round(cpu, 3), wakeups_per_min=round(switches * 60 / seconds, 1))
    harness.results["idle"][label] = {"window_s": seconds, "watchers": figures}
    log(f"idle {label} ({seconds} s): " + "; ".join(f"{n}: {f['rss_kib']} KiB RSS, {f['private_kib']} KiB private, "
                                                  f"{f['wakeups_per_min']}/min, {f['cpu_s']} CPU-s" for n, f in figures.items()))
