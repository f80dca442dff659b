"""A provider for any OpenAI-compatible chat-completions endpoint, on ``httpx``.

It POSTs ``{"model", "messages": [system, user], "temperature": 0}`` to ``{base_url}/chat/completions``
and returns ``choices[0].message.content``. The API key is read from the named environment variable
at call time (never stored, never echoed in a message). Redirects are never followed (one would
send the Authorization header elsewhere). ``timeout_s`` bounds each step (connect, each read);
``deadline_s`` bounds the whole call, also while a slow server trickles its body in, and the body is
read incrementally and refused past ``max_reply_bytes``, so no server can hold memdesk or fill its
memory. The call runs on a helper thread so that ``cancel()`` and the deadline are honoured within a
fraction of a second.
"""

from __future__ import annotations

import json
import os
import threading
import time
import zlib
from typing import Any
from urllib.parse import urlsplit

import httpx

from core.providers.base import (
    DEFAULT_DEADLINE_S,
    DEFAULT_MAX_REPLY_BYTES,
    CancelCheck,
    ProgressCallback,
    ProviderError,
    ProviderRequest,
    format_bytes,
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
_ERROR_BODY_MAX = 16 * 1024
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def _snippet(data: bytes) -> str:
    text = data[:_BODY_SNIPPET * 2].decode("utf-8", "replace").strip().replace("\n", " ")
    return text[:_BODY_SNIPPET]


class _Stopped(Exception):
    """The caller gave up (deadline or cancel): the helper thread stops reading."""


class OpenAIProvider:
    """Calls ``POST {base_url}/chat/completions`` with step timeouts, an overall deadline and a reply cap."""

    def __init__(self, name: str, base_url: str, model: str, api_key_env: str | None = None,
                 timeout_s: float = 120.0, *, max_reply_bytes: int | None = None, deadline_s: float | None = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.max_reply_bytes = max_reply_bytes or DEFAULT_MAX_REPLY_BYTES
        self.deadline_s = deadline_s or DEFAULT_DEADLINE_S
        self.transport = transport  # tests pass httpx.MockTransport

    @property
    def url(self) -> str:
        """The full endpoint URL."""
        return f"{self.base_url}/chat/completions"

    def _error(self, message: str, kind: str) -> ProviderError:
        return ProviderError(f"{self.name}: {message}", kind, self.name)  # type: ignore[arg-type]

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "Accept-Encoding": "gzip, deflate"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env, "")
            if not key.strip():
                raise self._error(f"the environment variable {self.api_key_env} that should hold the API key "
                                  "is not set or empty", "auth")
            headers["Authorization"] = f"Bearer {key.strip()}"
        return headers

    def _body(self, prompt: str, system: str | None = None) -> bytes:
        return json.dumps({
            "model": self.model,
            "messages": [{"role": "system", "content": system or SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
            "temperature": 0,
        }).encode("utf-8")

    def _client(self) -> httpx.Client:
        step = min(self.timeout_s, self.deadline_s)
        local = (urlsplit(self.url).hostname or "") in _LOOPBACK
        return httpx.Client(timeout=httpx.Timeout(step), follow_redirects=False, transport=self.transport,
                            trust_env=not local)  # a local server is never behind a proxy

    def _call(self, headers: dict[str, str], body: bytes, stop: threading.Event) -> bytes:
        try:
            with self._client() as client, client.stream("POST", self.url, content=body, headers=headers) as resp:
                if resp.status_code >= 300:
                    raise self._http_error(resp, self._read(resp, _ERROR_BODY_MAX, stop, errors=False))
                declared = resp.headers.get("Content-Length", "")
                if declared.isdigit() and int(declared) > self.max_reply_bytes:
                    raise self._too_big(f"announces {int(declared):,} bytes")
                return self._read(resp, self.max_reply_bytes, stop)
        except (ProviderError, _Stopped):
            raise
        except httpx.TimeoutException as exc:
            raise self._timeout(min(self.timeout_s, self.deadline_s)) from exc
        except httpx.ConnectError as exc:
            raise self._error(f"cannot reach {self.url}: {exc}", "network") from exc
        except httpx.HTTPError as exc:
            raise self._error(f"connection to {self.url} failed: {exc or type(exc).__name__}", "network") from exc
        except OSError as exc:
            raise self._error(f"connection to {self.url} failed: {exc.strerror or exc}", "network") from exc

    def _read(self, resp: httpx.Response, cap: int, stop: threading.Event, *, errors: bool = True) -> bytes:
        """Read the body chunk by chunk, decoding gzip/deflate with a bounded inflater; refuse it past
        ``cap`` decoded bytes (so a compressed bomb never unpacks), stop when the caller gave up."""
        encoding = resp.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            raise self._error(f"the reply from {self.url} uses the content encoding {encoding!r}, which memdesk "
                              "does not accept (it asks for gzip, deflate or none)", "bad_reply")
        inflater = zlib.decompressobj(47 if encoding != "deflate" else zlib.MAX_WBITS) \
            if encoding not in ("", "identity") else None
        if resp.is_stream_consumed:  # a response built in memory (httpx.MockTransport): already decoded
            inflater, chunks = None, iter([resp.content])
        else:
            chunks = resp.iter_raw()
        data = bytearray()
        for chunk in chunks:
            if stop.is_set():
                raise _Stopped
            try:
                while chunk:
                    if inflater is None:
                        data += chunk
                        chunk = b""
                    else:
                        data += inflater.decompress(chunk, cap + 1 - len(data))
                        chunk = inflater.unconsumed_tail
                    if len(data) > cap:
                        if not errors:
                            return bytes(data[:cap])
                        raise self._too_big("sent more")
            except zlib.error as exc:
                raise self._error(f"the reply from {self.url} is not valid {encoding} data: {exc}",
                                  "bad_reply") from exc
        return bytes(data)

    def _too_big(self, what: str) -> ProviderError:
        return self._error(f"the reply from {self.url} {what} than the {format_bytes(self.max_reply_bytes)} allowed "
                           "(maxReplyBytes); it was not read. Raise maxReplyBytes in the provider's settings if "
                           "replies are really that long", "bad_reply")

    def _timeout(self, seconds: float) -> ProviderError:
        return self._error(f"no reply from {self.url} within {seconds:g} s (timeout)", "timeout")

    def _http_error(self, resp: httpx.Response, raw: bytes) -> ProviderError:
        detail = _snippet(raw)
        suffix = f": {detail}" if detail else ""
        code = resp.status_code
        if code in (401, 403):
            where = f"the key in {self.api_key_env}" if self.api_key_env else "the request (no API key configured)"
            return self._error(f"HTTP {code} from {self.url}: the endpoint refused {where}{suffix}", "auth")
        if code >= 500:
            return self._error(f"HTTP {code} from {self.url}: the server failed{suffix}", "server")
        if 300 <= code < 400:
            target = resp.headers.get("Location", "another address")
            return self._error(f"HTTP {code} from {self.url}: redirects to {target} are not followed; "
                               "set the base URL to the final address", "config")
        if code == 404:
            return self._error(f"HTTP 404 from {self.url}: no chat-completions endpoint there, or unknown "
                               f"model {self.model!r}{suffix}", "config")
        return self._error(f"HTTP {code} from {self.url}{suffix}", "server")

    def _content(self, raw: bytes) -> str:
        try:
            data: Any = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
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
        headers, body = self._headers(), self._body(request.prompt, request.system_prompt)
        outcome: dict[str, Any] = {}
        stop = threading.Event()

        def worker() -> None:
            try:
                outcome["raw"] = self._call(headers, body, stop)
            except BaseException as exc:  # handed to the calling thread
                outcome["error"] = exc

        thread = threading.Thread(target=worker, name=f"memdesk-{self.name}", daemon=True)
        started = time.monotonic()
        progress(0, f"Asking {self.model} at {self.base_url}")
        thread.start()
        last_second = -1
        try:
            while thread.is_alive():
                thread.join(_POLL_S)
                if not thread.is_alive():
                    break
                if cancel():
                    raise self._error("cancelled", "cancelled")
                elapsed = time.monotonic() - started
                if elapsed >= self.deadline_s:
                    raise self._error(f"no complete reply from {self.url} within the {self.deadline_s:g} s deadline "
                                      "(deadlineS); the call was stopped", "timeout")
                if int(elapsed) != last_second:
                    last_second = int(elapsed)
                    progress(min(95, int(100 * elapsed / self.deadline_s)), f"Waiting for {self.model} ({last_second} s)")
        finally:
            stop.set()  # the helper thread stops at its next chunk or step timeout
        if "error" in outcome:
            raise outcome["error"]
        progress(100, "Reply received")
        return self._content(outcome["raw"])
