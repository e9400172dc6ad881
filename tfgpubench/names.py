"""Names the tooling shares: benchmark ids, file names, the seed's case.

A leaf module: it imports nothing, and every other module of the package may
import it (pyperf's `_formatter.py` plays this role there). A benchmark id is
the key asv stores results under, so these strings are part of every result
file ever written: rename a benchmark only with a new id, never in place.
"""

# --- benchmark ids (module.Class.method, as asv names them) ----------------------

MULTIPLY = "multiply.Multiply.time_multiply"
SPEEDUP = "multiply.Speedup.track_gpu_speedup"
BANDWIDTH = "multiply.Bandwidth.track_effective_bandwidth"
WAIT = "wait.Wait.time_wait"
# The CPU's bandwidth ceiling: STREAM's scale kernel on every core; and on one
# thread, as results recorded before the all-core one existed hold.
CPU_REFERENCE = "reference.StreamScale.track_scale_bandwidth"
CPU_ONE_THREAD_REFERENCE = "reference.NumpyScale.track_numpy_scale_bandwidth"
# The same kernel written over its input, as the modes below write each product (from
# the second on) over the one before: TensorFlow hands a buffer held by nothing else to
# the next op (tests/suite/test_timing.py checks it for graph_loop).
CPU_IN_PLACE_REFERENCE = "reference.StreamScaleInPlace.track_scale_bandwidth"
IN_PLACE_MODES = ("graph_loop",)
SEED_SPEEDUP = "seed.SeedScript.track_reported_speedup"
SEED_ON_GPU = "seed.SeedScript.track_gpu_calls_on_a_gpu"
# The same multiply in the comparator frameworks (benchmarks/*_multiply.py).
TORCH_MULTIPLY = "torch_multiply.TorchMultiply.time_multiply"
JAX_MULTIPLY = "jax_multiply.JaxMultiply.time_multiply"
NUMPY_MULTIPLY = "numpy_multiply.NumpyMultiply.time_multiply"
# The comparators' benchmarks, as one asv -b expression each: what `run` and the gate
# measure on a stack of the comparators' section (which installs no TensorFlow).
COMPARATOR_BENCHMARKS = (r"^torch_multiply\.", r"^jax_multiply\.", r"^numpy_multiply\.")
# What `run` measures on a TensorFlow stack: all but the PyTorch and JAX benchmarks, which
# it does not install (numpy it has). Their cases would only be skipped, each in a process
# of its own: ~90 s of a spawned run (selfcheck: cost).
TENSORFLOW_STACK_BENCHMARKS = r"^(?!torch_multiply\.|jax_multiply\.)"
# asv's -b for "time benchmarks only": every time_ method (asv matches with re.search).
TIME_BENCHMARKS = r"\.time_"
# What the gate compares on a TensorFlow stack by default (and selfcheck's noise part):
# the time benchmarks of what `run` measures. The track_ ones (speedups, GB/s) are higher
# when better, which asv's compare reads the other way.
GATED_BENCHMARKS = TENSORFLOW_STACK_BENCHMARKS + r".*" + TIME_BENCHMARKS
# Controls: a time_ benchmark of a TensorFlow stack that runs no TensorFlow, whose code is
# the suite's and one distribution's. Between two stacks with that distribution at one
# version it measures the same code in both, so whatever a comparison finds there is the
# machine's (report/changes.py control_benchmarks).
CONTROL_DISTRIBUTIONS = {NUMPY_MULTIPLY: "numpy"}
# Each framework's multiply, by the name the report gives it; TensorFlow first.
TENSORFLOW = "TensorFlow"
FRAMEWORK_MULTIPLY = {TENSORFLOW: MULTIPLY, "PyTorch": TORCH_MULTIPLY, "JAX": JAX_MULTIPLY,
                      "numpy": NUMPY_MULTIPLY}

# The seed's case: a 2x2 int32 tensor multiplied eagerly, one Python call per op.
SEED_SIZE, SEED_DTYPE, SEED_MODE = 2, "int32", "eager"
# The mode every other mode is compared with.
BASELINE_MODE = "eager"

# --- files ---------------------------------------------------------------------------

# Beside asv's results in results/<machine>/: which versions each stack really
# measured and what the GPU self-check found. Not *.json: asv would read it.
INSTALLED_VERSIONS_FILE = "installed-versions.jsonl"
# Beside them: the regressions the last `run` that measured a stack on that machine
# found (JSON Lines, one comparison a line; and Markdown). Not *.json: asv reads every
# *.json under results/ as a result file, and `run` refuses one that is not.
REGRESSIONS_FILE = "regressions.jsonl"
REGRESSIONS_MARKDOWN_FILE = "regressions.md"
# The suite's benchmarks as asv discovered them, in results/.
BENCHMARKS_FILE = "benchmarks.json"
# Files of a machine directory that are not asv result files.
NOT_RESULT_FILES = ("machine.json", BENCHMARKS_FILE)
# Written by the installer into asv's environment for the runner: its latest install, and
# every install, one line each (the gate installs two stacks in turn into one environment).
INSTALL_MARKER_FILE = "tfgpubench-installed.json"
INSTALL_HISTORY_FILE = "tfgpubench-installs.jsonl"
# The one file of each commit of the generated stacks repository.
STACK_FILE = "stack.json"
# The table of stacks, at the checkout's root.
TABLE_FILE = "stacks.toml"
# Names the GPU self-check record asv's benchmark processes read; the suite
# (benchmarks/checks.py, which cannot import this package) spells it too, and
# tests/test_names.py holds the two equal.
GPU_CHECKS_ENV = "TFGPUBENCH_GPU_CHECKS"
# Under the published html/: the libraries asv's pages load from CDNs, served
# from the site itself as PACKAGE@VERSION/PATH, and the list of where each came from.
VENDOR_DIR = "vendor"
VENDOR_SOURCES_FILE = "sources.json"
# The section of stacks.toml (and the branch of .stacks) whose rows pin the comparator
# frameworks (PyTorch, JAX, numpy) instead of a TensorFlow.
COMPARATORS_SECTION = "comparators"
# Labels of the side stacks `run --existing` measures for installations that
# match no row of the table; no row's label may take it.
OWN_LABEL_PREFIX = "own-"


def case_id(benchmark, param_reprs):
    """How asv names one parameter combination: `name('cpu', 2, 'int32', 'eager')`.

    param_reprs: the values' reprs, as asv stores them in its result files
    (pass `map(repr, values)` for Python values).
    """
    param_reprs = list(param_reprs)
    return f"{benchmark}({', '.join(param_reprs)})" if param_reprs else benchmark

# --- test hooks ----------------------------------------------------------------------

# TFGPUBENCH_PAUSE_AT=NAME stops the process at the pause point NAME (see
# tfgpubench/pausepoints.py) so the kill tests can SIGKILL it there. Unset: no effect.
PAUSE_AT_ENV = "TFGPUBENCH_PAUSE_AT"
