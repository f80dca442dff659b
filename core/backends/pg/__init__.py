"""The ``postgres`` backend's parts: schema migrations, the pooled database, documents, search, notifications,
the file mirror and moving a project in and out (the backend itself is :mod:`core.backends.postgres`)."""
