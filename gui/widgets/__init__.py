"""Reusable widgets (schema-generated forms, banners, badges)."""
