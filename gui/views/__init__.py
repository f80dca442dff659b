"""The views of the main window: one widget per module, each built around a ProjectSession."""
