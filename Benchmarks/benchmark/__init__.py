"""reachabilityd's benchmark, run by Benchmarks/bench.py: harness (the processes and the route
writer), measure (/proc readings, percentiles), workloads (one module each) and report (the
table, the chart, docs/benchmark-figures.md)."""
