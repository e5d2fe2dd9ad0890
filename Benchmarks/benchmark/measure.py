"""What the benchmark reads from /proc about a watcher process, and the percentile summary."""
import os
import time

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of a process, in seconds (clock-tick resolution)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def process_cpu_ns(pid):
    """Nanoseconds on CPU of a whole process, its ended threads included: the process's CPU-time
    clock (clock_getcpuclockid(pid), CPUCLOCK_SCHED: ((~pid) << 3) | 2)."""
    return time.clock_gettime_ns((~pid << 3) | 2)


def status_fields(pid):
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            values[key] = value.split()[0] if value.split() else ""
    return values


def memory(pid):
    """RSS, peak RSS (VmHWM), private memory (Private_Clean + Private_Dirty: pages no other
    process maps, file-backed ones included, e.g. a static binary's code) and of that the
    anonymous part (heap, stacks, relocated data), in KiB."""
    fields = status_fields(pid)
    private = anonymous = 0
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                private += int(line.split()[1])
            elif line.startswith("Anonymous:"):
                anonymous = int(line.split()[1])
    return {"rss_kib": int(fields["VmRSS"]), "hwm_kib": int(fields["VmHWM"]), "private_kib": private, "anonymous_kib": anonymous}


def context_switches(pid):
    """Voluntary + involuntary context switches per live thread of the process: {tid: count}."""
    counts = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            fields = status_fields(f"{pid}/task/{task}")
        except FileNotFoundError:
            continue
        counts[task] = int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])
    return counts


def thread_cpu_ns(pid):
    """Nanoseconds on CPU per live thread (first field of /proc/PID/task/TID/schedstat): {tid: ns}.
    Precise where utime+stime count 10 ms ticks; threads that end in between are missed."""
    times = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as schedstat:
                times[task] = int(schedstat.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return times


def wakeups_between(before, after):
    """Context switches between two `context_switches` readings: threads alive at the end count
    from 0 when they were born in between; the switches of threads that died in between are
    not visible in /proc and are missed (Dispatch's worker threads come and go)."""
    return sum(count - before.get(tid, 0) for tid, count in after.items())


def reset_peak_rss(pid):
    """Resets VmHWM to the current RSS (`echo 5 > /proc/PID/clear_refs`, Linux >= 4.0)."""
    with open(f"/proc/{pid}/clear_refs", "w") as clear:
        clear.write("5")


def percentiles(values):
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def at(fraction):
        return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]

    return {"n": len(ordered), "p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "max": ordered[-1]}

