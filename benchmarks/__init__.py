"""Benchmark scripts that print ratios (see ``benchmarks/README.md``); never timed assertions."""
