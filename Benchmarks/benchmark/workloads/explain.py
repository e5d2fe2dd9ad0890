"""explain: Explain() on a host with many links: the daemon's CPU per call and the reply's size."""
import subprocess

from ..harness import BUS_NAME, OBJECT_PATH, log
from ..measure import cpu_seconds


def run(harness, pairs, calls):
    """Explain() on a host with PAIRS more veth pairs: the daemon's CPU per call and the size."""
    batch = f"{harness.work}/explain-links.batch"
    with open(batch, "w") as out:
        out.write("".join(f"link add xm{n} type veth peer name xn{n}\n" for n in range(pairs)))
    harness.ip("-batch", batch)
    harness.settle()
    links = len(harness.ip("-o", "link", "show").stdout.splitlines())
    argv = ["busctl", f"--address={harness.address}", "call", BUS_NAME, OBJECT_PATH, BUS_NAME, "Explain"]
    before = cpu_seconds(harness.daemon.pid)
    sizes = [len(subprocess.run(argv, check=True, capture_output=True).stdout) for _ in range(calls)]
    cpu_ms = (cpu_seconds(harness.daemon.pid) - before) * 1000 / calls
    with open(batch, "w") as out:
        out.write("".join(f"link del xm{n}\n" for n in range(pairs)))
    harness.ip("-batch", batch)
    harness.settle()
    harness.results["explain"] = {"links": links, "calls": calls, "cpu_ms_per_call": round(cpu_ms, 3), "bytes": max(sizes)}
    log(f"explain: {links} links, {calls} calls: {cpu_ms:.2f} ms of the daemon's CPU per call, at most {max(sizes)} bytes")
