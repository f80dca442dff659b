"""memdesk core: the Fusion memory contract in pure Python (no Qt)."""
