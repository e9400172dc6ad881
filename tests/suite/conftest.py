"""Every suite test that sets up a TensorFlow benchmark talks to an engine served by a
thread of the test process (engine.serve), so that it sees the same caches and
monkeypatches as the test; tests/suite/test_engine.py starts real engine processes.

A comparator's setup applies the suite's malloc settings to its process (allocator.py):
in a test it would change the test process's own malloc for every later test, so it is
made a no-op here; the tests that check it run it in processes of their own, or with a
mallopt of their own (test_allocator.py)."""

import os
import threading
import time

import pytest

from benchmarks import allocator, engine


@pytest.fixture(autouse=True)
def malloc_of_the_test_process_left_alone(monkeypatch):
    monkeypatch.setattr(allocator, "_applied", {})


@pytest.fixture(autouse=True)
def engine_in_this_process(tmp_path_factory, monkeypatch):
    folder = tmp_path_factory.mktemp("engines")
    path = str(folder / "test.sock")
    server = threading.Thread(target=engine.serve, args=(path,), daemon=True)
    server.start()
    while not os.path.exists(path):  # bound: no test may start a real engine by racing it
        time.sleep(0.001)
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
