"""Benchmarks of the kit (see docs/PERFORMANCE.md). Run them with `make bench`."""
