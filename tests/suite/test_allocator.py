"""The malloc settings every benchmark runs under: as environment variables for the
engine (test_engine.py holds what glibc does with them), through mallopt for the
comparators' benchmark processes."""

import pytest

from benchmarks import allocator


@pytest.fixture
def fresh(monkeypatch):
    """As in a new process: nothing applied yet."""
    monkeypatch.setattr(allocator, "_applied", None)


def test_each_setting_goes_to_its_mallopt_parameter_unless_the_environment_sets_it(fresh):
    calls = []
    applied = allocator.reuse_freed_memory(
        environ={"MALLOC_ARENA_MAX": "4"}, mallopt=lambda *call: calls.append(call) or 1)
    # M_MMAP_THRESHOLD -3, M_MMAP_MAX -4, M_TRIM_THRESHOLD -1 (glibc's malloc.h); the
    # user's own arena setting stands (glibc read it at the start).
    assert calls == [(-3, 32 * 2**20), (-4, 0), (-1, 2**30)]
    assert applied == {k: v for k, v in allocator.ALLOCATOR_ENV.items()
                       if k != "MALLOC_ARENA_MAX"}


def test_the_settings_are_applied_once_per_process(fresh):
    calls = []

    def mallopt(*call):
        calls.append(call)
        return 1

    first = allocator.reuse_freed_memory(environ={}, mallopt=mallopt)
    assert allocator.reuse_freed_memory(environ={}, mallopt=mallopt) == first
    assert len(calls) == len(allocator.ALLOCATOR_ENV)


def test_a_setting_glibc_refuses_stays_glibcs_own_and_is_not_reported_applied(fresh):
    # A 32-bit glibc refuses an mmap threshold above 512 KiB (mallopt answers 0).
    def mallopt(parameter, value):
        return 0 if parameter == allocator.MALLOPT_PARAMETERS["MALLOC_MMAP_THRESHOLD_"] else 1

    applied = allocator.reuse_freed_memory(environ={}, mallopt=mallopt)
    assert "MALLOC_MMAP_THRESHOLD_" not in applied and "MALLOC_MMAP_MAX_" in applied


def test_nothing_is_applied_where_malloc_is_not_glibcs(fresh, monkeypatch):
    monkeypatch.setattr(allocator, "glibc_malloc", lambda: False)
    assert allocator.reuse_freed_memory(environ={}) == {}


def test_every_setting_has_its_mallopt_parameter():
    assert set(allocator.MALLOPT_PARAMETERS) == set(allocator.ALLOCATOR_ENV)
