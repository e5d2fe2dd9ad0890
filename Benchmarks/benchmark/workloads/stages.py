"""stages: where one change's time goes inside the daemon. A daemon started with
REACHABILITYD_STAGE_TIMES=PATH (Sources/SystemSupport/StageTimes.swift) writes, per change, the
CLOCK_MONOTONIC ns of: netlink wake-up, evaluation start, kernel answers done, publishing start,
signals handed to the bus socket. The default route is toggled as in latency (the daemon and one
subscriber only, after the other workloads), and each stage's delta is summarised, with the write
before it and the subscriber's StatusChanged after it."""
import bisect
import os

from ..harness import REACHABLE, log
from ..measure import percentiles
from .latency import status_events

STAGES = ("netlink write → daemon wakes (kernel, scheduler)", "wake-up → evaluation start (read, parse, mirror)",
          "evaluation start → kernel answers done", "answers → publishing (rule, snapshot, publishing stage)",
          "publishing → signals sent (sd_bus_send)", "signals sent → subscriber receives StatusChanged (bus)",
          "netlink write → subscriber (total)")


def run(harness, toggles):
    """`toggles` default-route writes with the stage recorder on; one row per stage."""
    path = os.path.join(harness.work, "stage-times")
    daemon, _ = harness.spawn_daemon(environment={"REACHABILITYD_STAGE_TIMES": path})
    subscriber = harness.spawn_subscriber("subscriber-stages.log")
    try:
        if harness.busctl_status() != REACHABLE:
            raise RuntimeError(f"stages: daemon status is {harness.busctl_status()}, expected {REACHABLE}")
        mark = len(subscriber.snapshot())
        writes = harness.toggle_default_route(toggles)
        received = [t for t, _ in status_events(subscriber.snapshot()[mark:], "S")]
    finally:
        subscriber.stop()
        daemon.stop()
    with open(path) as recorded:
        changes = [list(map(int, line.split())) for line in recorded if line.strip()]
    written = [t for t, _ in writes]
    deltas = {stage: [] for stage in STAGES}
    for marks in changes:
        if 0 in marks or marks[0] < written[0]:
            continue  # not started by a netlink wake-up, or before the toggles (start-up)
        write = written[bisect.bisect_right(written, marks[0]) - 1]
        # The first StatusChanged after publishing started: the subscriber can receive it before
        # the daemon, preempted after its write, takes the "sent" timestamp (a negative delta).
        at = bisect.bisect_left(received, marks[-2])
        steps = [write, *marks] + ([received[at]] if at < len(received) else [])
        for stage, (before, after) in zip(STAGES, zip(steps, steps[1:])):
            deltas[stage].append((after - before) / 1e6)
        if len(steps) == len(marks) + 2:
            deltas[STAGES[-1]].append((steps[-1] - write) / 1e6)
    harness.results["stages"] = {"toggles": toggles, "changes": len(changes), "stages": {stage: percentiles(values) for stage, values in deltas.items()}}
    for stage, figures in harness.results["stages"]["stages"].items():
        log(f"stages {stage}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items()))
