"""Version history of memory files in ``.fusion/memdesk/history.db``: the versions kept,
listed, restored and pruned (:mod:`.versions`), appends recorded as events on one worker
thread (:mod:`.worker`), the database (:mod:`.db`) and its objects, stored as deltas or
compressed snapshots (:mod:`.store`, :mod:`.delta`)."""
