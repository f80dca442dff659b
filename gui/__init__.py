"""memdesk's PySide6 application. Talks to ``core`` only; never to the disk directly."""
