"""The collector is off while a request is built and sent, and on again whatever happens."""

from __future__ import annotations

import gc

import pytest

from codecompanion.transport.collector import collector_paused


def test_paused_inside_and_enabled_after_even_on_error() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("send failed")
    assert gc.isenabled()


def test_overlapping_pauses_never_leave_it_off() -> None:
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first request left: collection may run again
    assert gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_collector_turned_off_elsewhere_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


async def test_an_adapter_sends_with_the_collector_paused() -> None:
    from tests.support.adapters import collect

    from codecompanion.adapters import create_adapter
    from codecompanion.adapters.base import AdapterSettings
    from codecompanion.errors import AdapterError
    from codecompanion.transport.http_types import ConnectFailed

    seen: list[bool] = []

    class Refusing:
        async def send(self, *args: object) -> object:
            seen.append(gc.isenabled())
            raise ConnectFailed("refused")

        async def aclose(self) -> None:
            pass

    adapter = create_adapter(AdapterSettings(name="openai", api_key="k"), http_client=Refusing())
    with pytest.raises(AdapterError, match="cannot connect"):
        await collect(adapter)
    assert seen == [False] and gc.isenabled()


async def test_a_requests_dicts_are_freed_before_the_collector_runs_again() -> None:
    import weakref

    from tests.support.adapters import collect

    from codecompanion.adapters import create_adapter
    from codecompanion.adapters.base import AdapterSettings
    from codecompanion.adapters.http_adapter import RequestSpec
    from codecompanion.errors import AdapterError
    from codecompanion.transport.http_types import ConnectFailed

    class Body(dict[str, object]):
        """A request body a weak reference can watch."""

    bodies: list[weakref.ReferenceType[Body]] = []
    alive_at_send: list[bool] = []

    class Refusing:
        async def send(self, *args: object) -> object:
            alive_at_send.append(bodies[0]() is not None)
            raise ConnectFailed("refused")

        async def aclose(self) -> None:
            pass

    adapter = create_adapter(AdapterSettings(name="openai", api_key="k"), http_client=Refusing())
    build = adapter.build_request

    def tracked(*args: object) -> RequestSpec:
        spec = build(*args)  # type: ignore[arg-type]
        body = Body(spec.body)
        bodies.append(weakref.ref(body))
        return RequestSpec(spec.path, body, spec.params)

    adapter.build_request = tracked  # type: ignore[method-assign]
    with pytest.raises(AdapterError, match="cannot connect"):
        await collect(adapter)
    # Only the encoded bytes are on their way: the collection the pause deferred has no
    # request dicts left to walk.
    assert alive_at_send == [False]
