"""The benchmark's workloads, one module each (see bench.py's docstring): every `run(harness, ...)`
drives the watchers the harness started and records its figures in `harness.results`."""
