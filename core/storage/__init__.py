"""The storage layer: paths confined to the project, locks, the file layer, history, and the one
write door above them (:mod:`core.storage.pipeline`)."""
