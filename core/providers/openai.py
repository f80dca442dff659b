"""A provider for any OpenAI-compatible chat-completions endpoint, using only ``urllib.request``.

It POSTs ``{"model", "messages": [system, user], "temperature": 0}`` to ``{base_url}/chat/completions``
and returns ``choices[0].message.content``. The API key is read from the named environment variable
at call time (never stored, never echoed in a message). The blocking call runs on a helper thread
so that ``cancel()`` is honoured within a fraction of a second.
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from core.providers.base import (
    CancelCheck,
    ProgressCallback,
    ProviderError,
    ProviderRequest,
    never_cancelled,
    no_progress,
)

__all__ = ["SYSTEM_PROMPT", "OpenAIProvider"]

SYSTEM_PROMPT = (
    "You distil the working memory of AI coding agents into durable insights. "
    "Answer with the JSON object the user asks for and nothing else."
)
_POLL_S = 0.05
_BODY_SNIPPET = 200
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse redirects: following one would send the Authorization header to another address."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001, D102
        return None


def _opener(url: str) -> urllib.request.OpenerDirector:
    handlers: list[urllib.request.BaseHandler] = [_NoRedirect()]
    if (urlsplit(url).hostname or "") in _LOOPBACK:
        handlers.append(urllib.request.ProxyHandler({}))  # a local server is never behind a proxy
    return urllib.request.build_opener(*handlers)


def _snippet(data: bytes) -> str:
    text = data[:_BODY_SNIPPET * 2].decode("utf-8", "replace").strip().replace("\n", " ")
    return text[:_BODY_SNIPPET]


class OpenAIProvider:
    """Calls ``POST {base_url}/chat/completions`` with a timeout."""

    def __init__(self, name: str, base_url: str, model: str, api_key_env: str | None = None,
                 timeout_s: float = 120.0) -> None:
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s

    @property
    def url(self) -> str:
        """The full endpoint URL."""
        return f"{self.base_url}/chat/completions"

    def _error(self, message: str, kind: str) -> ProviderError:
        return ProviderError(f"{self.name}: {message}", kind, self.name)  # type: ignore[arg-type]

    def _build_request(self, prompt: str) -> urllib.request.Request:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env, "")
            if not key.strip():
                raise self._error(f"the environment variable {self.api_key_env} that should hold the API key "
                                  "is not set or empty", "auth")
            headers["Authorization"] = f"Bearer {key.strip()}"
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
            "temperature": 0,
        }
        return urllib.request.Request(self.url, data=json.dumps(body).encode("utf-8"), headers=headers,
                                      method="POST")

    def _call(self, req: urllib.request.Request) -> bytes:
        try:
            with _opener(self.url).open(req, timeout=self.timeout_s) as resp:
                return resp.read()
        except urllib.error.HTTPError as exc:
            raise self._http_error(exc) from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise self._timeout() from exc
            raise self._error(f"cannot reach {self.url}: {exc.reason}", "network") from exc
        except TimeoutError as exc:
            raise self._timeout() from exc
        except (OSError, http.client.HTTPException) as exc:
            raise self._error(f"connection to {self.url} failed: {exc or type(exc).__name__}", "network") from exc

    def _timeout(self) -> ProviderError:
        return self._error(f"no reply from {self.url} within {self.timeout_s:g} s (timeout)", "timeout")

    def _http_error(self, exc: urllib.error.HTTPError) -> ProviderError:
        try:
            detail = _snippet(exc.read())
        except Exception:  # the body is only informative
            detail = ""
        suffix = f": {detail}" if detail else ""
        if exc.code in (401, 403):
            where = f"the key in {self.api_key_env}" if self.api_key_env else "the request (no API key configured)"
            return self._error(f"HTTP {exc.code} from {self.url}: the endpoint refused {where}{suffix}", "auth")
        if exc.code >= 500:
            return self._error(f"HTTP {exc.code} from {self.url}: the server failed{suffix}", "server")
        if 300 <= exc.code < 400:
            target = exc.headers.get("Location", "another address") if exc.headers else "another address"
            return self._error(f"HTTP {exc.code} from {self.url}: redirects to {target} are not followed; "
                               "set the base URL to the final address", "config")
        if exc.code == 404:
            return self._error(f"HTTP 404 from {self.url}: no chat-completions endpoint there, or unknown "
                               f"model {self.model!r}{suffix}", "config")
        return self._error(f"HTTP {exc.code} from {self.url}{suffix}", "server")

    def _content(self, raw: bytes) -> str:
        try:
            data: Any = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise self._error(f"the endpoint's answer is not JSON: {_snippet(raw)!r}", "bad_reply") from exc
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise self._error("the endpoint's answer has no choices[0].message.content", "bad_reply") from exc
        if content is None:
            return ""
        if not isinstance(content, str):
            raise self._error("choices[0].message.content is not text", "bad_reply")
        return content

    def complete(self, request: ProviderRequest, *, cancel: CancelCheck = never_cancelled,
                 progress: ProgressCallback = no_progress) -> str:
        """Send the prompt and return the model's reply text; raise :class:`ProviderError` on failure."""
        req = self._build_request(request.prompt)
        outcome: dict[str, Any] = {}

        def worker() -> None:
            try:
                outcome["raw"] = self._call(req)
            except BaseException as exc:  # handed to the calling thread
                outcome["error"] = exc

        thread = threading.Thread(target=worker, name=f"memdesk-{self.name}", daemon=True)
        started = time.monotonic()
        progress(0, f"Asking {self.model} at {self.base_url}")
        thread.start()
        last_second = -1
        while thread.is_alive():
            thread.join(_POLL_S)
            if cancel():
                # The helper thread ends by itself at the latest when the timeout expires.
                raise self._error("cancelled", "cancelled")
            elapsed = time.monotonic() - started
            if int(elapsed) != last_second:
                last_second = int(elapsed)
                pct = min(95, int(100 * elapsed / self.timeout_s))
                progress(pct, f"Waiting for {self.model} ({last_second} s)")
        if "error" in outcome:
            raise outcome["error"]
        progress(100, "Reply received")
        return self._content(outcome["raw"])
