"""Benchmarks (not tests): each prints its figures. ``python -m bench [core|gui|search]``."""
