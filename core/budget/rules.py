"""The load rules of the budget, re-exported: they live in :mod:`core.documents.load_rules`, below the user config."""

from core.documents.load_rules import CONSUMER_ID_RE, Consumer, LoadRule, Unit, UserConsumer, glob_match

__all__ = ["CONSUMER_ID_RE", "Consumer", "LoadRule", "Unit", "UserConsumer", "glob_match"]
