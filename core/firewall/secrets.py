"""Secret rules: provider key formats (detect-secrets' plugins, plus a few it lacks) and high-entropy assignments.

Formats come from ``data/detect_secrets.json`` (detect-secrets 1.5.0's plugin patterns, see
:mod:`core.firewall.ds_patterns`); memdesk adds the formats that library does not know yet (Google
API keys, Anthropic keys, GitHub fine-grained tokens, Hugging Face, Stripe test keys, Slack app tokens)
and ``secret.assignment``: a value given to a password/token/secret-like name, either high in entropy
(Shannon entropy per character, detect-secrets' limits: 4.5 for base64-like and 3.0 for hex) or said in
words ("db password is hunter2"). Placeholders (``<password>``, ``${TOKEN}``, ``xxx``, ``changeme``)
are not secrets, as in detect-secrets' heuristic filters.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cache

from core.firewall.ds_patterns import load
from core.firewall.prefilter import LazyRule
from core.firewall.rules import Deadline, Finding, RuleInfo, iter_lines

#: Formats memdesk adds to detect-secrets' (documented publicly by each provider).
EXTRA_FORMATS: tuple[tuple[str, str, str], ...] = (
    ("secret.google-api-key", "Google API key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("secret.anthropic-key", "Anthropic API key", r"\bsk-ant-(?:api|admin)\d\d-[A-Za-z0-9_\-]{32,}"),
    ("secret.openai-key", "OpenAI API key", r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{32,}"),
    ("secret.github-token", "GitHub fine-grained token", r"\bgithub_pat_[A-Za-z0-9_]{60,}"),
    ("secret.huggingface-token", "Hugging Face token", r"\bhf_[A-Za-z]{34}\b"),
    ("secret.stripe-key", "Stripe key", r"\b(?:sk|rk)_(?:test|live)_[0-9a-zA-Z]{24,}"),
    ("secret.slack-token", "Slack app token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{32,}"),
    ("secret.private-key", "Private key block", r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ("secret.connection-string", "Connection string with a password",
     r"\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql|sqlserver)://"
     r"[^\s:/@]+:([^\s@/]+)@"),
)

#: detect-secrets' secret types, as memdesk's rule names.
_TYPE_RULES = {
    "AWS Access Key": "secret.aws-key", "Artifactory Credentials": "secret.artifactory",
    "Azure Storage Account access key": "secret.azure-storage-key", "Basic Auth Credentials": "secret.basic-auth",
    "Cloudant Credentials": "secret.cloudant", "Discord Bot Token": "secret.discord-token",
    "GitHub Token": "secret.github-token", "GitLab Token": "secret.gitlab-token",
    "IBM COS HMAC Credentials": "secret.ibm-cos-hmac", "IBM Cloud IAM Key": "secret.ibm-iam-key",
    "JSON Web Token": "secret.jwt", "Mailchimp Access Key": "secret.mailchimp-key", "NPM tokens": "secret.npm-token",
    "OpenAI Token": "secret.openai-key", "Private Key": "secret.private-key", "PyPI Token": "secret.pypi-token",
    "SendGrid API Key": "secret.sendgrid-key", "Slack Token": "secret.slack-token",
    "SoftLayer Credentials": "secret.softlayer", "Square OAuth Secret": "secret.square-oauth",
    "Stripe Access Key": "secret.stripe-key", "Telegram Bot Token": "secret.telegram-token",
    "Twilio API Key": "secret.twilio-key",
}

_SECRET_NAME = (r"(?:pass(?:word|wd|phrase)?|pwd|secret(?:[_ -]?key)?|api[_ -]?key|apikey|access[_ -]?key|"
                r"auth[_ -]?token|token|private[_ -]?key|client[_ -]?secret|credentials?)")
#: ``NAME = value`` / ``NAME: value`` / ``"NAME": "value"`` with a password/token-like NAME.
_ASSIGNMENT = (r"(?i)(?:^|[^A-Za-z0-9])[A-Za-z0-9_.-]*" + _SECRET_NAME +
               r"[A-Za-z0-9_]*[\"']?\s*(?:=|:=|:|=>)\s*[\"'`]?([^\s\"'`,;]{6,})")
#: "the db password is hunter2", "password for staging was s3cr3t!"
_SAID = (r"(?i)\b" + r"(?:pass(?:word|wd|phrase)?|pwd|secret|api key|token)" +
         r"(?: for [A-Za-z0-9_.-]+)?\s+(?:is|was|=)\s+[\"'`]?([^\s\"'`,;]{4,})")

_PLACEHOLDERS = frozenset({
    "password", "passwd", "secret", "token", "changeme", "example", "redacted", "placeholder", "none", "null",
    "true", "false", "undefined", "required", "optional", "empty", "string", "value", "xxx", "xxxx", "yourpassword",
    "your_password", "your-password", "mypassword", "hidden", "masked", "unset", "env", "set", "stored",
    "rotated", "needed", "missing", "invalid", "expired", "configured", "provided", "not", "in", "from",
})


def shannon_entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (as detect-secrets computes it)."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def is_placeholder(value: str) -> bool:
    """A value that only stands for a secret: templated, masked, a word like ``changeme``, a reference."""
    v = value.strip().strip("\"'`").rstrip(".")
    low = v.lower()
    if not v or low in _PLACEHOLDERS or low.startswith(("your", "my_", "<", "{", "[", "(", "%", "process.env",
                                                         "os.environ", "env.", "getenv", "secrets.", "vault:")):
        return True
    if v.startswith("$") or set(v) <= set("*x•.X#-_") or "..." in v or "…" in v:
        return True
    if v.isupper() and v.replace("_", "").isalpha():  # PASSWORD, DB_PASSWORD: a name, not a value
        return True
    return "(" in v or ")" in v  # a call such as getpass() or readSecret(name)


def _assignment_is_secret(value: str, said: bool) -> bool:
    """A value given to a secret-like name that looks like a secret rather than prose or a name."""
    if is_placeholder(value):
        return False
    v = value.strip("\"'`").rstrip(".")
    if said:  # "password is hunter2": anything but a plain dictionary word carries a digit or symbol
        return len(v) >= 4 and (any(c.isdigit() for c in v) or not v.isalpha() or shannon_entropy(v) >= 3.0)
    if len(v) < 8:
        return False
    if v.replace("-", "").replace("_", "").isalpha() and v.islower():
        return False  # snake_case or kebab words: a name (a setting, a variable), not a value
    classes = sum((any(c.islower() for c in v), any(c.isupper() for c in v), any(c.isdigit() for c in v),
                   any(not c.isalnum() for c in v)))
    if classes >= 3 and len(set(v)) >= 6:
        return True
    hexish = all(c in "0123456789abcdefABCDEF" for c in v)
    limit = 3.0 if hexish else 3.5 if len(v) < 20 else 4.0
    return shannon_entropy(v) >= limit and any(c.isdigit() for c in v)


#: Formats loose enough to match words (``AP`` + 10 letters): a hit needs upper, lower case and a digit.
_LOOSE = frozenset({"secret.artifactory", "secret.telegram-token", "secret.cloudant", "secret.discord-token",
                    "secret.softlayer", "secret.ibm-iam-key"})
#: Lower-case formats (hex keys): a hit needs digits and letters both.
_LOWER = frozenset({"secret.twilio-key", "secret.mailchimp-key"})
_DELIMITERS = " \t=:\"'`[]"


def _mixed(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.islower() for c in value) and any(c.isupper() for c in value)


def _value_span(line: str, match: object) -> tuple[int, int]:
    """The secret's span: the pattern's group when it holds the value, else the match less its delimiters."""
    if match.lastindex and match.end(1) - match.start(1) >= 6:  # type: ignore[attr-defined]
        return match.span(1)  # type: ignore[attr-defined]
    start, end = match.span()  # type: ignore[attr-defined]
    while start < end and line[start] in _DELIMITERS:
        start += 1
    while end > start and line[end - 1] in _DELIMITERS:
        end -= 1
    return start, end


@cache
def _compiled() -> tuple[tuple[str, str, LazyRule], ...]:
    """Every format rule, each compiled on its first use (a text without its required strings never uses it)."""
    rules: list[tuple[str, str, LazyRule]] = []
    for item in load()["rules"]:  # type: ignore[attr-defined]  # JSON data, its shape tested with the file
        name = _TYPE_RULES.get(item["type"], "secret.other")
        rules.append((name, item["type"], LazyRule(item["pattern"], ignore_case=item["ignoreCase"])))
    for name, what, pattern in EXTRA_FORMATS:
        rules.append((name, what, LazyRule(pattern)))
    return tuple(rules)


@cache
def _assignment_patterns() -> tuple[LazyRule, LazyRule]:
    return LazyRule(_ASSIGNMENT), LazyRule(_SAID)


def scan_secrets(text: str, deadline: Deadline) -> list[Finding]:
    """Every provider-format secret and secret assignment in ``text``."""
    findings: list[Finding] = []
    # One pass of each pattern over the whole text first: a pattern that matches nowhere (most, in clean
    # memory) is not tried line by line. A match across lines only makes the line pass run, never skips it.
    few_lines = text.count("\n", 0, 4096) < 8 and len(text) < 4096  # an entry: the line pass is the only pass
    # A rule whose required strings are nowhere in the text cannot match: neither compiled nor run (prefilter).
    lowered = text.lower()
    formats = [f for f in _compiled() if f[2].possible(text, lowered) and (few_lines or f[2].search(text))]
    assign, said = _assignment_patterns()
    assignments = [(r, is_said) for r, is_said in ((assign, False), (said, True))
                   if r.possible(text, lowered) and (few_lines or r.search(text))]
    if not formats and not assignments:
        return findings
    for number, offset, line in iter_lines(text):
        deadline.check("secret")
        if len(line) < 8:
            continue
        taken: list[tuple[int, int]] = []
        for name, what, regex in formats:
            for match in regex.finditer(line):
                start, end = _value_span(line, match)
                value = line[start:end]
                if name in ("secret.basic-auth", "secret.connection-string") and is_placeholder(value):
                    continue
                if name in _LOOSE and not _mixed(value) or name in _LOWER and (
                        value.isalpha() or value.replace("-", "").isdigit()):
                    continue
                if any(s < end and start < e for s, e in taken):
                    continue
                taken.append((start, end))
                findings.append(Finding(name, "secret", number, (offset + start, offset + end),
                                        f"{what} ({end - start} characters)"))
        for regex, is_said in assignments:
            for match in regex.finditer(line):
                start, end = match.span(1)
                if any(s < end and start < e for s, e in taken):
                    continue
                if _assignment_is_secret(line[start:end], is_said):
                    taken.append((start, end))
                    findings.append(Finding("secret.assignment", "secret", number, (offset + start, offset + end),
                                            "a password or token given a value"))
    return findings


RULES: tuple[RuleInfo, ...] = (
    RuleInfo("secret.<provider>", "secret",
             "Provider key formats: AWS, GitHub, GitLab, Slack, Stripe, OpenAI, Twilio, SendGrid, npm, PyPI, "
             "JWT, private keys, Azure, Discord, Telegram, Mailchimp, Square, IBM, Artifactory, Cloudant",
             "detect-secrets 1.5.0 plugins (data/detect_secrets.json)",
             "AKIAIOSFODNN7EXAMPLE", "AKIA-style words shorter than 20 characters, e.g. AKIA1234"),
    RuleInfo("secret.google-api-key / anthropic-key / huggingface-token / connection-string", "secret",
             "Formats detect-secrets lacks: Google API keys, Anthropic keys, GitHub fine-grained tokens, Hugging "
             "Face tokens, Stripe test keys, Slack app tokens, database URLs with a password",
             "memdesk (providers' public key formats)",
             "postgresql://app:Zq9!x7Lw@db:5432/app", "postgresql://USER:PASSWORD@HOST:5432/DB (a placeholder)"),
    RuleInfo("secret.assignment", "secret",
             "A value given to a password/token/secret-like name: high entropy (4.0 bits/char, hex 3.0), "
             "or said in words",
             "memdesk, entropy limits after detect-secrets", "db password is hunter2",
             "the password is stored in the vault"),
)
