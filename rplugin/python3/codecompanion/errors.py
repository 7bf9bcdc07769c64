"""The errors the core reports to the user or the model, as one tree.

CodeCompanionError
├── ConfigError          the user's config file or setup() options are wrong
├── AdapterError         a provider request failed (message is one line for the user)
│   ├── AuthenticationError   401/403
│   ├── ModelNotFoundError    404 for the model
│   ├── RateLimitError        429 after retries
│   ├── ProviderError         5xx after retries, or an error object inside a stream
│   │   └── ContextTooLong    the request is longer than the model's context window
│   └── StreamInterrupted     timeout or dropped connection mid-answer
└── ToolError            a tool failed; becomes an error result for the model

Exceptions that never leave their package stay beside the code that raises and catches them:
HTTPFailure (transport/http_types.py), BodyTooLarge and UnsupportedEncoding
(transport/bounded_body.py), DamagedChat (persistence/history.py), McpError, ConnectionLost and
Unreadable (mcp/), TooManyFiles and Closed (checkpoints/), ImageError (context/images.py),
RegexError (tools/builtin/_support/linear_regex.py).
"""

from __future__ import annotations


class CodeCompanionError(Exception):
    """Base of every error the project raises on purpose."""


class ConfigError(CodeCompanionError):
    """The user's configuration is invalid."""


class AdapterError(CodeCompanionError):
    """A provider request failed."""


class AuthenticationError(AdapterError):
    """The provider refused the key (401/403)."""


class ModelNotFoundError(AdapterError):
    """The provider does not know the model (404)."""


class RateLimitError(AdapterError):
    """The provider kept answering 429."""


class ProviderError(AdapterError):
    """The provider failed (5xx) or sent an error inside the stream."""


class ContextTooLong(ProviderError):
    """The provider refused the request: it does not fit the model's context window."""


class StreamInterrupted(AdapterError):
    """The answer stopped early: timeout or dropped connection."""


class ToolError(CodeCompanionError):
    """A tool failed; the message is sent to the model as an error result."""
