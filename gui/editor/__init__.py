"""The memory editor: text, highlighting, preview, find, banners and external-change handling."""
