import pytest

from .registries import FakeRegistry, refused_address, start


@pytest.fixture
def fake_registry():
    registry = FakeRegistry()
    server = start(registry)
    yield registry
    server.shutdown()
    server.server_close()


@pytest.fixture
def unreachable_registry():
    return refused_address()
