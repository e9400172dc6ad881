"""The TensorFlow engine: one process per run does the TensorFlow work, so that asv's
benchmark processes, one per case and round, import no TensorFlow under any launch method."""

import mmap
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchmarks import allocator, common, engine, grid, timing

ROOT = Path(__file__).resolve().parents[2]


def client(code, folder, timeout=180):
    """Run `code` as a benchmark process would: a fresh interpreter, engines in `folder`."""
    env = dict(os.environ, **{engine.ENGINE_DIR_ENV: str(folder)})
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def engine_pids(folder):
    """Process ids of the engines serving from `folder`, by their command line."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if "engine import serve" in command and str(folder) in command:
                pids.append(int(entry.name))
    return pids


@pytest.fixture
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("eng")
    yield path
    engine.stop_engines(str(path))


# --- real engine processes ------------------------------------------------------------

CASE = "('cpu', 2, 'float32', 'eager')"
MULTIPLY = ("multiply:multiply_block", "cpu", 2, "float32", "eager")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_benchmark_processes_import_no_tensorflow_and_share_one_engine(folder):
    pytest.importorskip("tensorflow")
    code = (
        "import os, sys\n"
        "from benchmarks import multiply\n"
        f"bench = multiply.Multiply(); bench.setup(*{CASE})\n"
        f"start = bench.timer(); bench.time_multiply(*{CASE})\n"
        "print(bench.timer() - start > 0, 'tensorflow' in sys.modules)\n"
    )
    first = client(code, folder)
    pids = engine_pids(folder)
    second = client(code, folder)
    assert first == second == ["True", "False"]
    assert len(pids) == 1 and engine_pids(folder) == pids
    environ = Path(f"/proc/{pids[0]}/environ").read_bytes().decode().split("\0")
    assert {f"{k}={v}" for k, v in engine.ALLOCATOR_ENV.items()} <= set(environ)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_engine_fails_the_case_with_its_log_and_the_next_starts_a_new_one(folder):
    pytest.importorskip("tensorflow")
    code = f"from benchmarks import multiply\nmultiply.Multiply().setup(*{CASE})\n"
    client(code, folder)
    (pid,) = engine_pids(folder)
    handle = engine.Engine(engine_socket(folder))
    handle.call("prepare", *MULTIPLY)
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(engine.EngineError, match=r"ended during run\(.*its log"):
        handle.call("run", None, *MULTIPLY)
    client(code, folder)
    (new,) = engine_pids(folder)
    assert new != pid


def engine_socket(folder):
    (path,) = Path(folder).glob("*.sock")
    return str(path)


def test_an_engine_that_cannot_start_is_reported_with_its_log(folder):
    path = str(folder / "broken.sock")
    with pytest.raises(engine.EngineError, match="exited .* before serving"):
        engine.start_engine(path, executable="/bin/false")


# --- the protocol, served by a thread of this process ----------------------------------


@pytest.fixture
def served(tmp_path_factory, serve_in_thread):
    folder = tmp_path_factory.mktemp("thread")
    path = str(folder / "t.sock")
    thread = serve_in_thread(path)
    yield engine.Engine(path), thread, path
    engine.stop_engines(str(folder))


def test_an_error_comes_back_with_its_type_and_the_engine_keeps_serving(served):
    handle, thread, _ = served
    with pytest.raises(engine.EngineError, match="unknown request 'os_system'"):
        handle.call("os_system", "true")
    with pytest.raises(engine.EngineError, match="unknown request '_block'"):
        handle.call("_block", *MULTIPLY)
    with pytest.raises(engine.EngineError, match="not a block builder"):
        handle.call("prepare", "os.system", "true")
    with pytest.raises(engine.EngineError, match="ModuleNotFoundError"):
        handle.call("prepare", "no_such_module:f")
    with pytest.raises(engine.EngineError, match="KeyError"):
        handle.call("per_op_seconds", None, "multiply:multiply_block", "tpu", 2, "float32", "eager")
    assert thread.is_alive()


def test_a_skip_stays_a_skip(served, monkeypatch):
    handle, _, _ = served
    from benchmarks import checks

    monkeypatch.setattr(checks, "skip_reason", lambda *key: "no GPU visible (simulated)")
    with pytest.raises(NotImplementedError, match=r"no GPU visible \(simulated\)"):
        engine.block("multiply:multiply_block", "gpu", 2, "float32", "eager", handle=handle)
    with pytest.raises(NotImplementedError, match=r"no GPU visible \(simulated\)"):
        engine.block("wait:wait_block", "gpu", "int32", handle=handle)


def test_an_environment_without_tensorflow_is_skipped_without_an_engine(monkeypatch):
    monkeypatch.setattr(common, "tensorflow_missing", lambda: "TensorFlow is not installed")

    class NoEngine:
        def call(self, *args):
            raise AssertionError("an engine was asked")

    with pytest.raises(NotImplementedError, match="not installed"):
        engine.block(*MULTIPLY, handle=NoEngine())


def frames_below(function_name):
    """Byte offsets of the calls in the frames from the running function's caller up to
    and with the nearest `function_name` frame; None where there is none."""
    frame, offsets = sys._getframe(2), []
    while frame is not None:
        offsets.append(frame.f_lasti)
        if frame.f_code.co_name == function_name:
            return offsets
        frame = frame.f_back
    return None


# TensorFlow records the calling frames with every eager op, and a frame costs more the
# further into its function its call sits (engine.py, before _requests): the engine and
# the self-check's bare loop (reference_worker) must call the op through as many frames,
# each short. tests/selfcheck/test_fidelity.py holds the worker to the same figures.
FRAMES_TO_THE_LOOP = 5  # serve or main, then four
LARGEST_CALL_OFFSET = 200  # bytes (here 70-196); the 300-statement caller: ~2,400


def test_the_ops_run_a_few_short_frames_deep_however_deep_the_benchmark_calls(
        served, monkeypatch):
    # What the op sees must not depend on the harness above it (asv calls a benchmark ~20
    # frames deep): serve -> _answer -> Work.run -> the block -> _multiply_block -> op.
    tf = pytest.importorskip("tensorflow")
    handle, _, _ = served
    block = engine.block(*MULTIPLY, handle=handle)
    seen, real = [], tf.multiply

    def recording(*args, **kwargs):
        seen.append(frames_below("serve"))
        return real(*args, **kwargs)

    monkeypatch.setattr(tf, "multiply", recording)

    def called_deep(frames):
        return block() if frames == 0 else called_deep(frames - 1)

    block()
    called_deep(40)
    # Each call runs the block's warm-up first, at the same depth; every op is recorded.
    assert len(seen) == 2 * (block.ops + max(1, block.ops // grid.warm_up_parts(MULTIPLY[2])))
    assert {len(offsets) for offsets in seen} == {FRAMES_TO_THE_LOOP}
    assert max(max(offsets) for offsets in seen) <= LARGEST_CALL_OFFSET, {tuple(o) for o in seen}


def test_a_run_times_the_block_alone_right_after_its_warm_up_then_passes_the_turn():
    calls = []

    def block_for(copy):
        def block():
            calls.append(("block", copy))
            time.sleep(0.02)

        def warm_up():
            calls.append(("warm-up", copy))
            time.sleep(0.05)

        block.ops, block.warm_up = 10, warm_up
        return block

    work = engine.Work(gate=None)
    work.blocks[("m:f", 1)] = timing.InTurn([block_for(0), block_for(1)])
    seconds = work.run(None, "m:f", 1)
    assert calls == [("warm-up", 0), ("block", 0)]
    assert 0.02 <= seconds < 0.05  # the warm-up is not in the time
    work.run(None, "m:f", 1)
    work.run(None, "m:f", 1)
    assert [copy for what, copy in calls if what == "block"] == [0, 1, 0]


def touch_fresh_pages(size):
    """Write one byte in each page of `size` bytes of fresh memory: a page fault each
    (no huge pages asked for, where the system could give them)."""
    memory = mmap.mmap(-1, size)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        memory.madvise(mmap.MADV_NOHUGEPAGE)
    for offset in range(0, size, mmap.PAGESIZE):
        memory[offset] = 1
    memory.close()


def test_a_run_counts_the_page_faults_of_the_timed_block_alone_per_op():
    pages = 1024

    def block():
        touch_fresh_pages(pages * mmap.PAGESIZE)

    block.ops = 4
    block.warm_up = lambda: touch_fresh_pages(8 * pages * mmap.PAGESIZE)
    work = engine.Work(gate=None)
    work.blocks[("m:f", 1)] = timing.InTurn([block])
    work.run(None, "m:f", 1)
    work.run(None, "m:f", 1)
    (counted,) = work.page_faults()[("m:f", 1)][1:]
    # pages / ops from the block; the warm-up's eight times as many are not counted.
    assert pages / 4 <= counted < pages / 4 + 16, counted


def test_the_engines_page_faults_are_asked_for_by_the_folder(served):
    pytest.importorskip("tensorflow")
    handle, _, path = served
    block = engine.block(*MULTIPLY, handle=handle)
    block()
    block()
    (counted,) = engine.ask_engines(os.path.dirname(path), "page_faults")
    assert list(counted) == [MULTIPLY] and len(counted[MULTIPLY]) == 2
    # A 2x2 multiply touches no new memory.
    assert all(0 <= faults < 1 for faults in counted[MULTIPLY]), counted


def test_the_clock_asv_gets_advances_by_the_engines_time_per_op():
    class Handle:
        def call(self, request, *args):
            # No hold: pytest's parent is no forkserver (launcher.py).
            assert (request, *args) == ("run", None, "multiply:multiply_block", "cpu", 2)
            time.sleep(0.01)  # the socket and the wake-up: not the op's time
            return 0.5

    block = engine.EngineBlock(Handle(), "multiply:multiply_block", ("cpu", 2), 100)
    start = block.clock()
    block()
    block()
    assert block.clock() - start == pytest.approx(2 * 0.5 / 100)


def test_setup_run_again_hands_back_the_block_whose_clock_asv_kept():
    # asv keeps the timer of the first setup; every later setup before a sample must
    # return the block that clock reads, or asv records 0 s.
    pytest.importorskip("tensorflow")
    from benchmarks import multiply

    bench = multiply.Multiply()
    bench.setup("cpu", 2, "int32", "eager")
    clock = bench.timer
    start = clock()
    bench.setup("cpu", 2, "int32", "eager")
    bench.time_multiply("cpu", 2, "int32", "eager")
    assert clock() > start


def test_an_idle_engine_ends_and_takes_its_socket_along(tmp_path):
    path = str(tmp_path / "idle.sock")
    thread = threading.Thread(target=engine.serve, args=(path, 0.2), daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive() and not os.path.exists(path)


def test_an_idle_engine_whose_socket_was_removed_ends_within_a_check(serve_in_thread, tmp_path):
    path = str(tmp_path / "removed.sock")
    thread = serve_in_thread(path)  # idle for 120 s: only the removal can end it soon
    os.unlink(path)
    thread.join(timeout=10 * engine.SOCKET_CHECK_SECONDS)
    assert not thread.is_alive()


def test_an_engine_ends_without_removing_a_socket_that_replaced_its_own(serve_in_thread,
                                                                         tmp_path):
    path = str(tmp_path / "replaced.sock")
    thread = serve_in_thread(path)
    os.unlink(path)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as successor:
        successor.bind(path)  # an engine started in its place
        thread.join(timeout=10 * engine.SOCKET_CHECK_SECONDS)
        assert not thread.is_alive() and os.path.exists(path)


def test_an_engine_whose_socket_was_removed_serves_its_open_connections_on(served):
    handle, thread, path = served
    with pytest.raises(engine.EngineError):
        handle.call("nothing")  # opens a connection and keeps it
    os.unlink(path)
    time.sleep(3 * engine.SOCKET_CHECK_SECONDS)
    assert thread.is_alive()
    with pytest.raises(engine.EngineError, match="unknown request"):
        handle.call("nothing")
    handle._connection.close()  # its last connection gone, the engine ends
    thread.join(timeout=10 * engine.SOCKET_CHECK_SECONDS)
    assert not thread.is_alive()


def test_an_engine_that_missed_the_quit_while_starting_ends_with_the_runs_folder(monkeypatch):
    """A quit sent between bind() and listen() is refused (asked: 0); engine_scope then
    removes the folder, and the engine must not run on, holding its memory, until idle."""
    from tfgpubench.runner import engine_scope
    from tfgpubench.suite import suite_module

    listening = threading.Event()

    def slow_listen(path):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listening.wait(timeout=10)  # until the quit was sent
        listener.listen(16)
        return listener

    asked = []

    def stop_engines_then_let_it_listen(folder):
        asked.append(len(engine.ask_engines(folder, "quit")))
        listening.set()

    monkeypatch.setattr(engine, "_listen", slow_listen)
    # engine_scope's copy of this module: the suite's package as the runner loads it
    monkeypatch.setattr(suite_module("engine"), "stop_engines", stop_engines_then_let_it_listen)
    with engine_scope({}) as folder:
        path = os.path.join(folder, "run.sock")
        thread = threading.Thread(target=engine.serve, args=(path,), daemon=True)
        thread.start()
        while not os.path.exists(path):
            time.sleep(0.001)
    assert asked == [0]
    thread.join(timeout=10 * engine.SOCKET_CHECK_SECONDS)
    assert not thread.is_alive()


def test_a_forked_benchmark_process_opens_its_own_connection(served):
    handle, _, _ = served
    with pytest.raises(engine.EngineError):
        handle.call("nothing")  # opens the parent's connection
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # asv's forkserver: the child must not share the parent's socket
        try:
            try:
                handle.call("nothing")
            except engine.EngineError:
                pass
            os.write(write, b"ok" if handle._pid == os.getpid() else b"shared")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 8) == b"ok"
    with pytest.raises(engine.EngineError, match="unknown request"):
        handle.call("nothing")  # and the parent's still works


def test_stop_engines_asks_each_engine_to_end(served):
    _, thread, path = served
    assert engine.stop_engines(os.path.dirname(path)) == 1
    thread.join(timeout=10)
    assert not thread.is_alive()


# --- which engine, and where ----------------------------------------------------------


def test_settings_that_change_tensorflow_get_their_own_engine():
    base = {"HOME": "/home/a", "TF_NUM_INTRAOP_THREADS": "1"}
    key = engine.engine_key(sys.executable, "f", base)
    assert engine.engine_key(sys.executable, "f", dict(base, HOME="/home/b", PWD="/x")) == key
    assert engine.engine_key(sys.executable, "f", dict(base, TF_NUM_INTRAOP_THREADS="2")) != key
    assert engine.engine_key(sys.executable, "f", dict(base, CUDA_VISIBLE_DEVICES="1")) != key
    assert engine.engine_key(sys.executable, "f", dict(base, MALLOC_ARENA_MAX="1")) != key
    assert engine.engine_key(sys.executable, "changed sources", base) != key
    assert engine.engine_key("/usr/bin/true", "f", base) != key


def test_another_stack_installed_in_the_same_environment_gets_its_own_engine(tmp_path):
    # asv continuous installs the other stack's TensorFlow into the environment between
    # its interleaved rounds: the engine of the previous one must not serve the next.
    site = tmp_path / "lib" / "site-packages"
    (site / "tensorflow_cpu-2.20.0.dist-info").mkdir(parents=True)
    (site / "numpy-2.4.6.dist-info").mkdir()
    (site / "tensorflow").mkdir()
    before = engine.installed_fingerprint([str(site), str(tmp_path / "missing")])
    assert before == "numpy-2.4.6.dist-info;tensorflow_cpu-2.20.0.dist-info"
    (site / "tensorflow_cpu-2.20.0.dist-info").rename(site / "tensorflow_cpu-2.21.0.dist-info")
    after = engine.installed_fingerprint([str(site)])
    base = {"TF_NUM_INTRAOP_THREADS": "1"}
    assert (engine.engine_key(sys.executable, "f", base, before)
            != engine.engine_key(sys.executable, "f", base, after))
    # This interpreter's own packages are seen: TensorFlow, where the tests run.
    assert "dist-info" in engine.installed_fingerprint()


def test_an_edited_module_changes_the_fingerprint(tmp_path):
    (tmp_path / "multiply.py").write_text("x = 1\n")
    before = engine.sources_fingerprint(str(tmp_path))
    (tmp_path / "multiply.py").write_text("x = 22\n")
    assert engine.sources_fingerprint(str(tmp_path)) != before


def test_the_socket_folder_must_be_private(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    with pytest.raises(RuntimeError, match="not private"):
        engine.engine_dir({engine.ENGINE_DIR_ENV: str(shared)})
    private = tmp_path / "private"
    assert engine.engine_dir({engine.ENGINE_DIR_ENV: str(private)}) == str(private)
    assert private.stat().st_mode & 0o777 == 0o700


# --- one run's engines ------------------------------------------------------------------


def test_a_runs_engines_live_in_a_folder_of_its_own_and_end_with_it(serve_in_thread):
    from tfgpubench.runner import engine_scope

    environ = {engine.ENGINE_DIR_ENV: "/somewhere/else"}
    with engine_scope(environ) as folder:
        assert environ[engine.ENGINE_DIR_ENV] == folder
        assert engine.engine_dir(environ) == folder
        thread = serve_in_thread(os.path.join(folder, "run.sock"))
    # join returns as soon as the engine ends; one that never got the quit runs on until
    # idle (engine.IDLE_SECONDS, 120 s) and fails here.
    thread.join(timeout=60)
    assert not thread.is_alive() and not os.path.exists(folder)
    assert environ == {engine.ENGINE_DIR_ENV: "/somewhere/else"}


# --- the engine's malloc settings -------------------------------------------------------


def test_the_engine_runs_under_fixed_malloc_thresholds_unless_the_environment_sets_its_own():
    assert engine.engine_environ({"HOME": "/h"}) == dict(engine.ALLOCATOR_ENV, HOME="/h")
    own = {"MALLOC_TRIM_THRESHOLD_": "0"}
    assert engine.engine_environ(own)["MALLOC_TRIM_THRESHOLD_"] == "0"
    assert engine.engine_environ(own)["MALLOC_MMAP_THRESHOLD_"] == (
        engine.ALLOCATOR_ENV["MALLOC_MMAP_THRESHOLD_"])


# Four blocks of MiB (argv[2]) taken and written by a thread, freed, round after round,
# as the results of ops of that size come and go: minor page faults of each round after
# the second. In the main thread, or in a new thread per round (which gets an arena of
# its own, whose heaps hold three 16 MiB blocks at most).
FAULTS_PER_ROUND = """
import ctypes, resource, sys, threading
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
size = int(sys.argv[2]) * 2**20

def one_round():
    blocks = [libc.malloc(size) for _ in range(4)]
    for block in blocks:
        ctypes.memset(block, 1, size)
    for block in reversed(blocks):
        libc.free(block)

rounds = []
for _ in range(8):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    if sys.argv[1] == "thread":
        thread = threading.Thread(target=one_round)
        thread.start()
        thread.join()
    else:
        one_round()
    rounds.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(*rounds[2:])
"""


@pytest.mark.skipif(not allocator.glibc_malloc(), reason="glibc's malloc")
@pytest.mark.parametrize("where, mib", [("main", 16), ("thread", 16), ("main", 64), ("thread", 64)])
def test_with_the_engines_malloc_settings_freed_blocks_are_reused_without_page_faults(
        where, mib):
    # 16 MiB: a 2048x2048 result; 64 MiB: a 4096x4096 one, above any mmap threshold.
    plain = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_"))}

    def faults(environ):
        done = subprocess.run([sys.executable, "-c", FAULTS_PER_ROUND, where, str(mib)],
                              env=environ, capture_output=True, text=True, check=True)
        return [int(n) for n in done.stdout.split()]

    # glibc's own settings hand the freed memory back to the kernel: every round, some
    # of the blocks are new pages again, a fault per 4 KiB page (16 MiB: 12,000-16,000
    # faults a round here; 64 MiB: 65,540, every block).
    assert min(faults(plain)) >= mib * 2**20 // 4096
    # The engine's: the blocks of the first rounds are reused; a thread's start, a few.
    assert max(faults(engine.engine_environ(plain))) < 64
