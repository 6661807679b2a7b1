"""Benchmarks run by hand against a PostgreSQL server; never part of the test suite."""
