"""Bundled resources (stylesheet, preview CSS, icons, sample project), read through importlib.resources."""
