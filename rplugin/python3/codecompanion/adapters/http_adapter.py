"""What every HTTP provider adapter shares: the pooled client, keys, retries and error messages."""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

from ..errors import (
    AdapterError,
    AuthenticationError,
    ConfigError,
    ContextTooLong,
    ModelNotFoundError,
    ProviderError,
    RateLimitError,
)
from ..messages import Message
from ..outside import Json
from ..streams.body_reader import BodyLimits, answer_chunks
from ..streams.completeness import BodyWatch
from ..streams.parser import IdFactory, ResponseParser
from ..transport.bounded_body import ACCEPT_ENCODING, UnsupportedEncoding, read_capped
from ..transport.collector import collector_paused
from ..transport.fast_http import FastClient, basic_auth, proxied, with_params, without_credentials
from ..transport.http_types import HeaderLookup, HTTPClient, HTTPFailure, HTTPResponse, Timeouts
from .base import AdapterSettings, Event, ProviderState, ToolCallEvent
from .http_errors import (
    error_text,
    is_context_overflow,
    one_line,
    page_text,
    retry_delay,
    transport_error,
)
from .keys import KeyResolver, describe_key
from .secret_mask import SecretMask, redact_headers

log = logging.getLogger("codecompanion.adapters")


@dataclass
class RequestSpec:
    """One provider request besides the connection: path under the base URL, JSON body, query."""

    path: str
    body: dict[str, Any]
    params: dict[str, str] = field(default_factory=dict)


class HTTPAdapter:
    """Base of the provider adapters: subclasses build requests and parse bodies, no I/O."""

    label: ClassVar[str] = "The provider"
    default_url: ClassVar[str | None] = None
    default_model: ClassVar[str | None] = None
    default_api_key: ClassVar[str | None] = None
    key_required: ClassVar[bool] = True
    models_path: ClassVar[str] = "/models"
    # Decoded bytes one answer may take; a 10 MB event still fits, a decompression bomb does not.
    max_body_bytes: ClassVar[int] = 64_000_000
    # After a finish reason, how long to wait for the end marker (usage may come between).
    finish_grace: ClassVar[float] = 2.0
    # After the end marker, how long the rest of the body may take before the connection is dropped.
    drain_wait: ClassVar[float] = 0.2
    # Statuses worth asking again (timeout, rate limit, passing server trouble); a provider adds
    # the ones it documents. Anything else (501 Not Implemented...) fails at once.
    retry_statuses: ClassVar[frozenset[int]] = frozenset({408, 429, 500, 502, 503, 504})
    # Whether a user message's images (`/image`) are sent, as this provider's image parts.
    takes_images: ClassVar[bool] = False

    def __init__(
        self,
        settings: AdapterSettings,
        *,
        key_resolver: KeyResolver | None = None,
        http_client: HTTPClient | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if not (settings.url or self.default_url):
            raise ConfigError(f"adapter {settings.name}: set `url`, the provider's base URL")
        self.name = settings.name
        self.settings = settings
        self.keys = key_resolver or KeyResolver()
        self.ids = IdFactory()
        # Loading the CA bundle costs ~20 ms: a host shares one context across its chats.
        self._ssl_context = ssl_context
        self._client = http_client
        self.mask = SecretMask(self.keys)
        self.mask.remember_headers(settings.headers)
        self._remember_url_credentials()
        self._auto_model: str | None = None
        self._warming: asyncio.Task[None] | None = None

    # -- what providers define -------------------------------------------------------------

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], model: str
    ) -> RequestSpec:
        """The provider's request for this history and these tool schemas."""
        raise NotImplementedError

    def new_parser(self) -> ResponseParser:
        """A fresh parser for one response body."""
        raise NotImplementedError

    def auth_headers(self, key: str) -> dict[str, str]:
        """The headers that carry the key."""
        return {"Authorization": f"Bearer {key}"}

    def parse_models(self, data: Json) -> list[str]:
        """Model names from the provider's model list."""
        return sorted(str(m["id"]) for m in data.get("data", []) if isinstance(m, dict))

    def models_url(self, base: str) -> str:
        """Where the model list lives."""
        return base + self.models_path

    def after_response(self, parser: ResponseParser) -> None:
        """Keep what later requests must send back (signatures); called after a full answer."""

    async def context_window(self, model: str) -> int | None:
        """The model's context window as the server reports it (None: it does not say)."""
        return None

    def constrain(self, spec: RequestSpec, schema: dict[str, Any]) -> None:
        """Hold the answer to `spec` to a JSON schema (only adapters of servers that can)."""
        raise NotImplementedError

    def answer_state(self, parser: ResponseParser) -> dict[str, Any]:
        """What must travel with this answer's calls in later requests (saved with them)."""
        return {}

    # -- shared behaviour ----------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The configured base URL without a trailing slash."""
        return (self.settings.url or self.default_url or "").rstrip("/")

    @property
    def key_spec(self) -> str | None:
        """The configured key spec, or the provider's usual environment variable."""
        return self.settings.api_key or self.default_api_key

    def client(self) -> HTTPClient:
        """The adapter's pooled client, created on first use."""
        if self._client is None:
            if proxied():
                from ..transport.proxied_http import ProxiedClient

                plain = self.base_url.startswith("http://")
                self._client = ProxiedClient(self._ssl_context, plain)
            else:
                self._client = FastClient(self._ssl_context)
        return self._client

    def warm(self) -> None:
        """The chat will send again soon (a tool round runs): open the next request's
        connection meanwhile, in the background, where the last one was closed."""
        client = self._client
        if not isinstance(client, FastClient) or self._warming is not None:
            return
        self._warming = asyncio.ensure_future(client.warm(self.settings.connect_timeout))
        self._warming.add_done_callback(self._warmed)

    def _warmed(self, task: asyncio.Task[None]) -> None:
        self._warming = None
        if not task.cancelled() and task.exception() is not None:  # the request will say it
            log.debug("%s: opening a connection ahead failed: %s", self.label, task.exception())

    def timeouts(self) -> Timeouts:
        """The configured connect and read timeouts (a send may take as long as a read)."""
        s = self.settings
        return Timeouts(connect=s.connect_timeout, read=s.read_timeout, write=s.read_timeout)

    async def aclose(self) -> None:
        """Close the pooled client."""
        if self._warming is not None:
            self._warming.cancel()
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def api_key(self) -> str | None:
        """The resolved key (None when the provider needs none)."""
        spec = self.key_spec
        if spec is None:
            if self.key_required:
                raise AuthenticationError(
                    f"{self.label}: no API key: set api_key in the {self.name} adapter settings"
                )
            return None
        try:
            key = await self.keys.resolve(spec)
        except AuthenticationError as exc:
            raise AuthenticationError(f"{self.label}: {exc}") from None
        if key:
            self._remember(key)
        return key

    def _remember(self, secret: str) -> None:
        """Mask `secret` in this adapter's messages and in the host's log."""
        self.mask.remember(secret)

    def _remember_url_credentials(self) -> None:
        """A password in the base URL is sent as Basic auth: mask it and the header's token."""
        credentials = basic_auth(self.base_url)
        if credentials is not None:
            self.mask.remember(credentials)
            password = urlsplit(self.base_url).password
            if password:
                self.mask.remember(password)
                self.mask.remember(unquote(password))

    @property
    def shown_url(self) -> str:
        """The base URL as messages and the log show it (a password in it as ***)."""
        return without_credentials(self.base_url)

    async def connection(self) -> tuple[str, dict[str, str]]:
        """The base URL and headers (with credentials) for the next request."""
        key = await self.api_key()
        headers = {"Accept": "application/json", "Accept-Encoding": ACCEPT_ENCODING}
        if key:
            headers.update(self.auth_headers(key))
        headers.update(self.settings.headers)
        return self.base_url, headers

    async def resolve_model(self) -> str:
        """The configured model; only without one is the provider's list asked."""
        model = self.settings.model or self.default_model or self._auto_model
        if model:
            return model
        models = await self.list_models()
        if not models:
            raise ModelNotFoundError(f"{self.label}: no model configured: set `model`")
        self._auto_model = models[0]
        return models[0]

    async def list_models(self) -> list[str]:
        """The provider's model names (for the picker)."""
        base, headers = await self.connection()
        response = await self._send("GET", self.models_url(base), headers, None, {}, None)
        raw, cut = await self._read_body(response, self.max_body_bytes)
        if cut:
            raise ProviderError(f"{self.label}: the model list is {self.body_limits().too_large()}")
        try:
            return self.parse_models(json.loads(raw))
        except (ValueError, KeyError, TypeError, AttributeError):
            raise ProviderError(
                f"{self.label}: the model list is not in the expected form"
            ) from None

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        schema: dict[str, Any] | None = None,
    ) -> AsyncIterator[Event]:
        """Send one request and yield its normalized events; raises AdapterError on failure.

        With `schema`, the answer is held to it (see `constrain`). Whatever the provider
        echoes into an error (an in-stream error, a body) has every secret this adapter sent
        masked.
        """
        try:
            async for event in self._stream(messages, tools, schema):
                yield event
        except AdapterError as exc:
            raise self.mask.redacted(exc) from None

    async def _stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        schema: dict[str, Any] | None,
    ) -> AsyncIterator[Event]:
        model = await self.resolve_model()
        with collector_paused():
            self.ids.observe(call.id for m in messages for call in m.tool_calls)
            # Only the bytes outlive this line: the request's dicts are freed by reference
            # counting before the collector runs again, so the collection it deferred (at the
            # answer's first bytes) walks what lives on, not the whole request.
            spec = self.build_request(messages, tools, model)
            if schema is not None:
                self.constrain(spec, schema)
            path, params, content = _encoded(spec)
            del spec
            base, headers = await self.connection()
            response = await self._send_bytes("POST", base + path, headers, content, params, model)
        parser = self.new_parser()
        watch = BodyWatch()
        try:
            try:
                async for chunk in answer_chunks(response, parser, self.body_limits()):
                    watch.body(chunk)
                    for event in self._parse(parser.feed, chunk):
                        watch.event(event)
                        yield event
                    parser.raise_for_error()
            except HTTPFailure as exc:
                raise self._transport_error(exc, streaming=True) from None
            # The body is over: end its last line and event.
            for event in self._parse(parser.feed, b"\n\n"):
                watch.event(event)
                yield event
            parser.raise_for_error()
            ended = parser.finished or parser.finish_reason is not None
            complete = len(parser.calls)
            for event in self._parse(lambda _: parser.close(), b""):
                watch.event(event)
                if ended or not isinstance(event, ToolCallEvent):
                    yield event  # calls still open when the body ended were cut off
            parser.raise_for_error()
            cut = len(parser.calls) > complete and not ended
            problem = watch.problem(
                self.label,
                parser.calls,
                ended,
                cut,
                self.redact,
                parser.skipped,
                parser.finish_reason,
            )
            if problem is not None:
                raise problem
        finally:
            await response.aclose()
        state = self.answer_state(parser)
        if state:
            yield ProviderState(state)
        self.after_response(parser)

    def body_limits(self) -> BodyLimits:
        """How much of an answer is read, and how long after its end."""
        return BodyLimits(self.label, self.max_body_bytes, self.finish_grace, self.drain_wait)

    def _parse(self, step: Callable[[bytes], list[Event]], data: bytes) -> list[Event]:
        """One parser step; a parser bug becomes a one-line ProviderError, not a crash."""
        try:
            return step(data)
        except Exception as exc:  # parsers must not raise; if one does, the chat must go on
            log.error("%s: parsing the response failed", self.label, exc_info=True)
            raise ProviderError(
                f"{self.label} sent a response that could not be read ({type(exc).__name__})"
            ) from None

    async def _send(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        body: dict[str, Any] | None,
        params: dict[str, str],
        model: str | None,
    ) -> HTTPResponse:
        """One request, retried on a retryable status (`retry_statuses`) before its body is used."""
        content = None if body is None else _json_bytes(body)
        return await self._send_bytes(method, url, headers, content, params, model)

    async def _send_bytes(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        params: dict[str, str],
        model: str | None,
    ) -> HTTPResponse:
        """`_send` with the body encoded already (JSON: every body this adapter sends is)."""
        client = self.client()
        url = with_params(url, params)
        if content is not None:
            headers = {"Content-Type": "application/json", **headers}
        attempt = 0
        while True:
            log.debug("%s %s headers=%s", method, without_credentials(url), redact_headers(headers))
            try:
                response = await client.send(method, url, headers, content, self.timeouts())
            except HTTPFailure as exc:
                raise self._transport_error(exc) from None
            if response.status_code < 400:
                return response
            status = response.status_code
            detail = await self._error_detail(response)
            log.debug("%s answered HTTP %s: %s", self.label, status, detail)
            if status in self.retry_statuses and attempt < self.settings.max_retries:
                await asyncio.sleep(self._retry_delay(response.headers, attempt))
                attempt += 1
                continue
            raise self._status_error(status, detail, model, url, attempt)

    async def _read_body(self, response: HTTPResponse, limit: int) -> tuple[bytes, bool]:
        """Up to `limit` decoded bytes and whether more was cut; closes the response."""
        try:
            return await read_capped(response, limit)
        except HTTPFailure as exc:
            raise self._transport_error(exc) from None
        except UnsupportedEncoding as exc:
            raise ProviderError(f"{self.label}: {exc}") from None
        finally:
            await response.aclose()

    async def read_json(self, response: HTTPResponse, limit: int = 1_000_000) -> Json:
        """A small JSON body, parsed (None when it is not JSON or over `limit`); closes it."""
        raw, cut = await self._read_body(response, limit)
        try:
            return None if cut else json.loads(raw)
        except ValueError:
            return None

    async def _error_detail(self, response: HTTPResponse) -> str:
        try:
            raw, _cut = await read_capped(response, 8000)
        except (HTTPFailure, UnsupportedEncoding):
            raw = b""
        finally:
            await response.aclose()
        text = raw.decode("utf-8", errors="replace")
        try:
            text = error_text(json.loads(text))
        except ValueError:
            kind = response.headers.get("content-type") or ""
            text = page_text(text, kind, response.status_code)
        return self.redact(one_line(text))

    def _retry_delay(self, headers: HeaderLookup, attempt: int) -> float:
        return retry_delay(
            headers, attempt, self.settings.retry_backoff, self.settings.retry_max_wait
        )

    def _status_error(
        self, status: int, detail: str, model: str | None, url: str, retries: int
    ) -> AdapterError:
        label = self.label
        if status in (401, 403):
            return AuthenticationError(
                f"{label} refused the API key (HTTP {status}): check {self.key_hint()}"
            )
        if status == 404:
            if model is None:
                shown = without_credentials(url)
                return ModelNotFoundError(f"{label}: nothing at {shown} (HTTP 404): check `url`")
            return ModelNotFoundError(
                f"{label} does not know the model '{model}' (HTTP 404): {self.model_hint(model)}"
            )
        suffix = f" after {retries} retries" if retries else ""
        if status == 429:
            return RateLimitError(f"{label} is rate limiting (HTTP 429{suffix}): {detail}")
        if status >= 500:
            return ProviderError(f"{label} failed (HTTP {status}{suffix}): {detail}")
        if status in (400, 413, 422) and is_context_overflow(detail):
            return ContextTooLong(f"{label}: the request is too long for the model: {detail}")
        return ProviderError(f"{label} refused the request (HTTP {status}): {detail}")

    def key_hint(self) -> str:
        """Which key the user should check."""
        return describe_key(self.key_spec)

    def model_hint(self, model: str) -> str:
        """What to do about an unknown model."""
        return f"pick another model or check `url` ({self.shown_url})"

    def _transport_error(self, exc: HTTPFailure, streaming: bool = False) -> AdapterError:
        return transport_error(exc, self.label, self.settings, self.shown_url, streaming)

    def redact(self, text: str) -> str:
        """`text` with every key this adapter used replaced by ***."""
        return self.mask.redact(text)


def _json_bytes(body: dict[str, Any]) -> bytes:
    """A request body as it goes on the wire: compact JSON, UTF-8."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def _encoded(spec: RequestSpec) -> tuple[str, dict[str, str], bytes]:
    """A request's path, query and body bytes (the spec itself is dropped by the caller)."""
    return spec.path, spec.params, _json_bytes(spec.body)
