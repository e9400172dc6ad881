"""Every suite test that sets up a TensorFlow benchmark talks to an engine served by a
thread of the test process (engine.serve), so that it sees the same caches and
monkeypatches as the test; tests/suite/test_engine.py starts real engine processes.

A comparator's setup applies the suite's malloc settings to its process (allocator.py):
in a test it would change the test process's own malloc for every later test, so it is
made a no-op here; the tests that check it run it in processes of their own, or with a
mallopt of their own (test_allocator.py)."""

import threading
import time

import pytest

from benchmarks import allocator, engine


@pytest.fixture(autouse=True)
def malloc_of_the_test_process_left_alone(monkeypatch):
    monkeypatch.setattr(allocator, "_applied", {})


def _serve_in_thread(path, idle=engine.IDLE_SECONDS):
    """An engine serving `path` from a thread of this process, returned once it listens.

    Its socket's file exists from bind(), a moment before listen(): a quit sent in between
    is refused, and the engine would run on until idle. On the loaded 2-core VM a test that
    waited only for the file failed so (CI, 2026-12-06).
    """
    thread = threading.Thread(target=engine.serve, args=(path, idle), daemon=True)
    thread.start()
    while True:
        try:
            engine._connect(path).close()
            return thread
        except OSError:
            assert thread.is_alive(), "the engine ended before it listened"
            time.sleep(0.001)


@pytest.fixture
def serve_in_thread():
    """serve_in_thread(path, idle=...): an engine thread serving `path`, once it listens."""
    return _serve_in_thread


@pytest.fixture(autouse=True)
def engine_in_this_process(tmp_path_factory, monkeypatch):
    folder = tmp_path_factory.mktemp("engines")
    path = str(folder / "test.sock")
    # Listening before any test runs: no test may start a real engine by racing it.
    server = _serve_in_thread(path)
    handle = engine.Engine(path)
    monkeypatch.setattr(engine, "engine", handle)
    yield handle
    engine.stop_engines(str(folder))
    server.join(timeout=10)


@pytest.fixture
def longest_run():
    """seconds(block): the longest of three runs of a block, in seconds. A calibrated block
    runs short of grid.MIN_BLOCK_SECONDS only where this shared machine is faster now than
    when it calibrated (case to case it swings up to 4x); three runs rarely all are."""

    def seconds(block):
        def one():
            start = time.perf_counter()
            block()
            return time.perf_counter() - start

        return max(one() for _ in range(3))

    return seconds
