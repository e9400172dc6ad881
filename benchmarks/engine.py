"""The TensorFlow engine: one process per run, where the suite's TensorFlow work is done.

Why a process of its own. asv starts a process per (case, round): 1,262 for one stack's
default run. Under spawn, asv's launch method on macOS (forking after the Metal plugin has
loaded is unsafe), each of them imported TensorFlow, 3-6 s here: about two hours per stack.
So the benchmark processes import no TensorFlow. The first one that needs it starts the
engine, a new interpreter (exec'd, not forked), which imports TensorFlow once, builds and
keeps every case's block and runs the blocks it is asked for; later benchmark processes,
spawned or forked, find it by its socket. It ends after IDLE_SECONDS without a request,
when `tfgpubench run` has measured the stack (`stop_engines`), or, idle, once its socket's
file is removed.

How a sample is timed. The engine times each block, its ops and the wait where there is
one (common.block_wait_op), with perf_counter around the call, on a Python stack a few
frames deep: TensorFlow records up to 30 calling Python frames with every eager op
(pywrap_tfe_src.cc: SetStackTrace(GetStackTrace(kStackTraceInitialSize))), and at asv's
~20 frames a 2x2 multiply took 11-13% longer than at a script's top level on this suite's
2-core VM (paired, 30 of each, 2026-12-01). The benchmark hands asv a clock that advances
by exactly the engine's times (`EngineBlock.clock`): the socket's round trip, like asv's
own bookkeeping, is not in a sample. Under asv's forkserver, the server that forked the
benchmark process, which polls for its end every millisecond, is held still (SIGSTOP)
while a block runs: launcher.py.

The engine serves one benchmark process at a time, in the order they connect; a request
that fails comes back as the exception it raised (NotImplementedError stays a skip). A
benchmark process killed mid-block (asv's timeout) leaves the engine serving the next.

Engines are found by a key: the interpreter, what is installed for it, this folder's
sources and the environment variables that change how TensorFlow runs; a run with other
settings, or another stack installed in the same environment, starts its own. Their
sockets live in a folder only this user can open (TFGPUBENCH_ENGINE_DIR, else one under
the system's temporary folder). Python 3.8 syntax: the oldest stacks run it.
"""

import contextlib
import fcntl
import hashlib
import importlib
import os
import re
import resource
import select
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from multiprocessing.connection import Connection

# The malloc settings the engine runs under: see allocator.py.
from .allocator import ALLOCATOR_ENV

# asv's forkserver, held still while a block is timed: see launcher.py.
from .launcher import forkserver_parent, held_still, let_go

ENGINE_DIR_ENV = "TFGPUBENCH_ENGINE_DIR"
# Longer than any gap between two TensorFlow benchmark processes of one run (the
# numpy and reference cases between them, a quiet-gate back-off).
IDLE_SECONDS = 120.0
# How often an engine waiting for requests checks that its socket's file is still its own.
SOCKET_CHECK_SECONDS = 1.0
# Importing TensorFlow (and a plugin) takes seconds; a GPU check tens of seconds more.
START_SECONDS = 120.0
# Environment variables that change what TensorFlow does, so part of an engine's key.
KEY_ENV_PREFIXES = (
    "TF_", "TFGPUBENCH_", "CUDA_", "NVIDIA_", "XLA_", "OMP_", "MKL_", "KMP_", "ONEDNN_",
    "DNNL_", "MTL_", "METAL_", "PYTHON", "LD_", "DYLD_", "MALLOC_", "GLIBC_",
)
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


# --- where an engine lives ------------------------------------------------------------


def engine_dir(environ=os.environ):
    """The folder of the engines' sockets: created 0700, refused if anyone else can enter."""
    path = environ.get(ENGINE_DIR_ENV) or os.path.join(
        tempfile.gettempdir(), f"tfgpubench-engines-{os.getuid()}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.stat(path)
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise RuntimeError(f"{path} is not private to this user: the TensorFlow engine's socket "
                           f"would be open to others; remove it or set {ENGINE_DIR_ENV}")
    return path


def engine_environ(environ=os.environ):
    """The environment an engine runs under: `environ`, with ALLOCATOR_ENV where it does
    not set those variables itself."""
    return dict(ALLOCATOR_ENV, **environ)


def minor_faults():
    """Page faults of this process, every thread, that the kernel served from memory: a
    fresh page touched for the first time is one."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def sources_fingerprint(package_dir=PACKAGE_DIR):
    """Name, size and modification time of every module of the suite."""
    parts = []
    for name in sorted(os.listdir(package_dir)):
        if name.endswith(".py"):
            info = os.stat(os.path.join(package_dir, name))
            parts.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
    return ";".join(parts)


def installed_fingerprint(paths=None):
    """The distributions installed for this interpreter, by their dist-info folders (whose
    names carry the versions).

    asv continuous (so `tfgpubench gate`) measures two stacks in one environment, one
    round at a time: between rounds it installs the other stack's TensorFlow there. An
    engine still running the previous TensorFlow must not serve the next round.
    """
    names = []
    for entry in sys.path if paths is None else paths:
        if os.path.basename(entry) in ("site-packages", "dist-packages") and os.path.isdir(entry):
            names += [name for name in os.listdir(entry) if name.endswith(".dist-info")]
    return ";".join(sorted(names))


def engine_key(executable, fingerprint, environ, installed=""):
    """Which engine serves a benchmark process: equal for processes that must share one."""
    settings = sorted((k, v) for k, v in environ.items() if k.startswith(KEY_ENV_PREFIXES))
    text = repr((os.path.realpath(executable), PACKAGE_DIR, fingerprint, settings, installed))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def socket_path(environ=os.environ):
    """The socket of the engine that serves this process."""
    key = engine_key(sys.executable, sources_fingerprint(), environ, installed_fingerprint())
    return os.path.join(engine_dir(environ), key + ".sock")


# --- the benchmark process's side -----------------------------------------------------


class EngineError(RuntimeError):
    """An exception raised in the engine, with its traceback there."""


def _connect(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return Connection(sock.detach())


def _log_tail(path, lines=15):
    try:
        with open(path, errors="replace") as log:
            return "".join(log.readlines()[-lines:])
    except OSError:
        return ""


def start_engine(path, executable=sys.executable):
    """Start an engine serving `path` and return a connection to it."""
    log_path = path[:-len(".sock")] + ".log"
    package = __name__.rpartition(".")[0]
    code = (f"import sys; sys.path.insert(0, {os.path.dirname(PACKAGE_DIR)!r}); "
            f"from {package}.engine import serve; serve({path!r})")
    with open(log_path, "ab") as log:
        # A session of its own: the engine outlives this process, and a Ctrl-C meant for
        # asv's foreground process group does not reach it mid-block.
        process = subprocess.Popen([executable, "-c", code], stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=log, start_new_session=True,
                                   env=engine_environ())
    deadline = time.monotonic() + START_SECONDS
    while True:
        with contextlib.suppress(OSError):
            return _connect(path)
        if process.poll() is not None:
            raise EngineError(f"the TensorFlow engine exited ({process.returncode}) before "
                              f"serving; its log, {log_path}:\n{_log_tail(log_path)}")
        if time.monotonic() > deadline:
            process.kill()
            raise EngineError(f"the TensorFlow engine did not start in {START_SECONDS:.0f} s; "
                              f"its log, {log_path}:\n{_log_tail(log_path)}")
        time.sleep(0.02)


class Engine:
    """The benchmark process's handle on its engine: call(request, *args) runs a request
    there and returns its answer, starting the engine where none serves this process."""

    def __init__(self, path=None):
        self._path = path
        self._connection = None
        self._pid = None

    @property
    def path(self):
        if self._path is None:
            self._path = socket_path()
        return self._path

    def _open(self):
        # A forked process never uses its parent's connection: the two would interleave.
        if self._connection is not None and self._pid == os.getpid():
            return self._connection
        path = self.path
        with contextlib.suppress(OSError):
            self._connection, self._pid = _connect(path), os.getpid()
            return self._connection
        with open(path[:-len(".sock")] + ".lock", "w") as lock:
            # One process starts the engine; any other waiting here then finds it.
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                connection = _connect(path)
            except OSError:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)  # a socket left by an engine that was killed
                connection = start_engine(path)
        self._connection, self._pid = connection, os.getpid()
        return connection

    def _exchange(self, request, args):
        connection = self._open()
        try:
            connection.send((request, args))
            return connection.recv()
        except (EOFError, OSError):
            self._connection = None
            raise

    def call(self, request, *args):
        # A new connection that closes at once was made to an idle engine as it ended:
        # then once more, with the engine that takes its place.
        attempts = 1 if self._connection is not None and self._pid == os.getpid() else 2
        for attempt in range(attempts):
            try:
                ok, answer = self._exchange(request, args)
                break
            except (EOFError, OSError) as error:
                if attempt + 1 == attempts:
                    log = self.path[:-len(".sock")] + ".log"
                    raise EngineError(f"the TensorFlow engine ended during {request}{args!r} "
                                      f"({error!r}); its log, {log}:\n{_log_tail(log)}"
                                      ) from None
        if ok:
            return answer
        kind, message, where = answer
        if kind == "NotImplementedError":
            raise NotImplementedError(message)
        raise EngineError(f"{kind}: {message}\n(in the TensorFlow engine)\n{where}")


engine = Engine()


class EngineBlock:
    """A block built and run in the engine: what `builder(*args)` returned there.
    Calling it runs it once; `clock` is the clock to hand asv: it advances by the
    engine's time of each call, divided by the block's ops."""

    def __init__(self, handle, builder, args, ops):
        self.handle, self.builder, self.args, self.ops = handle, builder, args, ops
        self.seconds = 0.0  # engine time of every call run through this object

    def __call__(self):
        # The forkserver that forked this process (launcher.py), for the engine to hold.
        hold = forkserver_parent()
        try:
            self.seconds += self.handle.call("run", hold, self.builder, *self.args)
        except EngineError:
            let_go(hold)  # an engine that ended mid-block could not
            raise

    def clock(self):
        return self.seconds / self.ops

    def before_sample(self):
        """Wait there for a quiet moment (timing.before_sample), untimed."""
        return self.handle.call("before_sample", self.builder, *self.args)

    def per_op_seconds(self):
        """Median per-op time of the block timed back to back there (timing.per_op_seconds)."""
        hold = forkserver_parent()
        try:
            return self.handle.call("per_op_seconds", hold, self.builder, *self.args)
        except EngineError:
            let_go(hold)
            raise


# The blocks this process has asked for. asv re-runs setup before every sample and
# keeps the clock the first setup handed it: later setups must hand back the block
# whose clock that is.
_made = {}


def block(builder, *args, handle=None):
    """The block `builder(*args)` returns in the engine, built there once.

    builder is "module:function" of this folder; the function runs in the engine, returns
    a timing.InTurn of blocks (each one timed call, its ops and the wait, with an `ops`
    attribute and a `warm_up`; one block per copy of the input), and raises
    NotImplementedError with the reason where the case cannot run here, which is raised
    here too (asv: skipped). An environment without TensorFlow starts no engine.
    """
    from .common import tensorflow_missing

    reason = tensorflow_missing()
    if reason:
        raise NotImplementedError(reason)
    handle = handle or engine
    made = _made.get((handle, builder, args))
    if made is None:
        ops = handle.call("prepare", builder, *args)
        made = _made[handle, builder, args] = EngineBlock(handle, builder, args, ops)
    return made


def ask_engines(folder, request):
    """The answer to `request` (without arguments) of every engine serving from `folder`
    that gave one."""
    answers = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not name.endswith(".sock"):
            continue
        with contextlib.suppress(OSError, EOFError):
            connection = _connect(os.path.join(folder, name))
            connection.send((request, ()))
            ok, answer = connection.recv()
            connection.close()
            if ok:
                answers.append(answer)
    return answers


def stop_engines(folder):
    """Ask every engine serving from `folder` to end; returns how many were asked."""
    return len(ask_engines(folder, "quit"))


# --- the engine's side ------------------------------------------------------------------


BUILDER = re.compile(r"^([a-z_][a-z0-9_]*):([a-z_][a-z0-9_]*)$")


def builder_function(builder):
    """The function "module:function" of this folder names."""
    found = BUILDER.match(builder)
    if not found:
        raise ValueError(f"{builder!r} is not a block builder: expected 'module:function'")
    package = __name__.rpartition(".")[0]
    module = importlib.import_module(f"{package}.{found.group(1)}")
    return getattr(module, found.group(2))


class Work:
    """What the engine does for a request: each public method is a request, on the blocks
    in turn (timing.InTurn) `builder(*args)` returns, built once and kept for the run."""

    def __init__(self, gate):
        self.gate = gate
        self.blocks = {}
        self.faults = {}

    def _block(self, builder, *args):
        key = (builder,) + args
        if key not in self.blocks:
            self.blocks[key] = builder_function(builder)(*args)
        return self.blocks[key]

    def prepare(self, builder, *args):
        """Build the block (trace, compile, warm up, calibrate); its length in ops."""
        return self._block(builder, *args).ops

    def run(self, hold, builder, *args):
        """Seconds of one call of the block whose turn it is (timing.InTurn), its ops and
        the wait, timed right after its warm-up ran: the engine idled while asv took the
        last sample. Process `hold` (asv's forkserver, or None) is held still meanwhile
        (launcher.py). Timed here, not in a helper: every frame between serve and the op
        is one more that TensorFlow records with each eager op (see _requests)."""
        blocks = self._block(builder, *args)
        block = blocks.current
        with held_still(hold):
            block.warm_up()
            faults, start = minor_faults(), time.perf_counter()
            block()
            seconds = time.perf_counter() - start
        faults = (minor_faults() - faults) / block.ops
        self.faults.setdefault((builder,) + args, []).append(faults)
        blocks.advance()
        return seconds

    def page_faults(self):
        """{(builder, *args): page faults per op of each call `run` timed} (minor_faults):
        the self-check holds them beside the bare loop's, as a cause of a time that
        differs, that a noisy machine does not blur."""
        return self.faults

    def before_sample(self, builder, *args):
        from .timing import before_sample

        return before_sample(self._block(builder, *args), self.gate)

    def per_op_seconds(self, hold, builder, *args):
        from .timing import per_op_seconds

        with held_still(hold):
            return per_op_seconds(self._block(builder, *args), gate=self.gate)


# TensorFlow records every calling frame with each eager op, and the cost of a frame grows
# with how far into its function the call sits (its line is looked up in the line
# table): a caller whose call came after 300 statements made a 2x2 multiply 35% slower,
# a short caller 0.4% (paired, 60 loops of 1,000 of each, this suite's 2-core VM,
# 2026-12-01). So the frames above each op are short, their calls near their top: the
# socket work is a generator, off the stack while a request runs.


def _file_id(path):
    """What tells the file at `path` from a later one of the same name; None if none is."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return info.st_dev, info.st_ino


def _requests(listener, connections, idle, socket_is_ours):
    """(connection, request, args) of each request as it comes, from any connection; ends
    when idle for `idle` s, asked to quit, or, with no connection open, once
    `socket_is_ours()` is false: the socket's file was removed.

    The last covers a quit that never came: one sent between bind() and listen() is
    refused, and `tfgpubench run` then removes the run's folder (runner.engine_scope). An
    engine left so would hold its memory, a GPU's included, until idle.
    """
    last = time.monotonic()
    while True:
        wait = min(SOCKET_CHECK_SECONDS, max(0.0, last + idle - time.monotonic()))
        ready = select.select([listener, *connections], [], [], wait)[0]
        if not ready:
            if time.monotonic() - last >= idle:
                return
            if not connections and not socket_is_ours():
                return
            continue
        last = time.monotonic()
        for fd in ready:
            if fd is listener:
                connection = Connection(listener.accept()[0].detach())
                connections[connection.fileno()] = connection
                continue
            connection = connections[fd]
            try:
                request, args = connection.recv()
            except (EOFError, OSError):  # the benchmark process ended or was killed
                del connections[fd]
                connection.close()
                continue
            if request == "quit":
                with contextlib.suppress(OSError):
                    connection.send((True, None))
                return
            yield connection, request, args


def _answer(work, request, args):
    # An unknown request is told apart only when the call fails: checking first would put
    # the call further into this frame (see above).
    method = None if request.startswith("_") else getattr(work, request, None)
    try:
        return True, method(*args)
    except Exception as error:  # sent back whole: the benchmark process raises it
        if not callable(method):
            return False, ("ValueError", f"unknown request {request!r}", "")
        return False, (type(error).__name__, str(error), traceback.format_exc())


def _listen(path):
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    return listener


def _work(path):
    from .timing import QuietGate

    # The back-off after a wait that gave up is the engine's own: it outlives the
    # benchmark processes that ask it to wait.
    return Work(QuietGate(gave_up_file=path[:-len(".sock")] + ".busy"))


def serve(path, idle=IDLE_SECONDS):
    """Serve benchmark processes on the socket `path` until idle for `idle` s, asked to
    quit, or, with no connection open, its file removed.

    Requests are answered one at a time, in the order they come, from any number of open
    connections: a benchmark process that keeps its connection open holds up no other.
    """
    listener = _listen(path)
    file_id = _file_id(path)
    work, connections = _work(path), {}

    def socket_is_ours():
        return file_id is not None and _file_id(path) == file_id

    try:
        for connection, request, args in _requests(listener, connections, idle, socket_is_ours):
            answer = _answer(work, request, args)
            # A process that ended before its answer: its end of file drops it.
            with contextlib.suppress(OSError):
                connection.send(answer)
    finally:
        # The socket goes first: once the listener closes, a benchmark process may start
        # an engine in its place, whose new socket this must not remove. Nor may it remove
        # one that replaced its own removed file.
        if socket_is_ours():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        for connection in connections.values():
            connection.close()
        listener.close()
