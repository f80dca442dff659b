"""detect-secrets' provider patterns as data: how ``data/detect_secrets.json`` is made and checked.

memdesk takes its provider formats from Yelp's ``detect-secrets`` (Apache-2.0; its plugins are the
best-kept open list of key formats in Python). Importing detect-secrets costs 140 ms (it pulls in
``requests`` and its filters), which every ``memdesk append`` process would pay, so the plugins'
``denylist`` patterns are read once into ``data/detect_secrets.json`` by
``python -m core.firewall.ds_patterns`` and a test checks the file still matches the installed
library. The lookarounds RE2 lacks are rewritten to plain groups (same matches, wider span).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).with_name("data") / "detect_secrets.json"

#: Plugins not used: an IP address is not a credential (memory names hosts), and the keyword plugin's
#: assignment rules are covered by memdesk's own ``secret.assignment`` rule with entropy.
SKIPPED = frozenset({"Public IP (ipv4)", "Secret Keyword", "Base64 High Entropy String", "Hex High Entropy String"})

_REWRITES = (
    ("(?:(?<=\\W)|(?<=^))", "(?:^|\\b|\\W)"),
    ("(?!\\w)", "(?:\\b|$)"),
    ("(?![a-f0-9])", "(?:[^a-f0-9]|$)"),
    ("(?![a-zA-Z0-9_\\-])", "(?:[^a-zA-Z0-9_\\-]|$)"),
    ("{50,1024}", "{50,}"),
)


def rewrite(pattern: str) -> str:
    """``pattern`` with the lookarounds and huge counts RE2 refuses rewritten to equivalents it takes."""
    for old, new in _REWRITES:
        pattern = pattern.replace(old, new)
    return pattern


def build() -> dict[str, object]:
    """Read the installed detect-secrets' plugins into the data file's shape."""
    from importlib.metadata import version

    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    rules = []
    plugin: Any
    for secret_type, plugin in sorted(get_mapping_from_secret_type_to_class().items()):
        if secret_type in SKIPPED:
            continue
        for index, regex in enumerate(getattr(plugin, "denylist", ())):
            rules.append({"type": secret_type, "plugin": plugin.__module__, "index": index,
                          "pattern": rewrite(regex.pattern), "ignoreCase": bool(regex.flags & 2)})
    return {"library": "detect-secrets", "version": version("detect-secrets"), "license": "Apache-2.0",
            "rules": rules}


def load() -> dict[str, object]:
    """The data file as stored."""
    return json.loads(DATA_FILE.read_text(encoding="utf-8"))


if __name__ == "__main__":  # regenerate: python -m core.firewall.ds_patterns
    DATA_FILE.parent.mkdir(exist_ok=True)
    DATA_FILE.write_text(json.dumps(build(), indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {DATA_FILE}\n")
