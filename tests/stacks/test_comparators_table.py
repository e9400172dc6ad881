"""The comparators' section of stacks.toml: PyTorch, JAX and numpy pins, a chain of their
own, installed without TensorFlow and measured on the comparator benchmarks alone."""

import copy
import datetime
import re

import pytest
from packaging.requirements import Requirement

from tfgpubench import runner
from tfgpubench.names import COMPARATOR_BENCHMARKS, COMPARATORS_SECTION
from tfgpubench.stacks import install_stack
from tfgpubench.stacks.requirements import Facts, describe_stack
from tfgpubench.stacks.selection import Target, fits, newest
from tfgpubench.stacks.table import TableError, load_table, parse_table, tomllib

from .conftest import ROOT

STACKS = load_table(ROOT / "stacks.toml")
COMPARATOR_ROWS = [s for s in STACKS if s.is_comparators]


def raw_table():
    with open(ROOT / "stacks.toml", "rb") as f:
        return tomllib.load(f)


def with_comparator(**changes):
    raw = copy.deepcopy(raw_table())
    raw[COMPARATORS_SECTION][0].update(changes)
    return raw


def test_the_table_has_a_comparator_chain_after_the_tensorflow_sections():
    assert COMPARATOR_ROWS, "stacks.toml has no [[comparators]] row"
    assert STACKS[-len(COMPARATOR_ROWS):] == COMPARATOR_ROWS
    newest_row = COMPARATOR_ROWS[-1]
    pinned = dict(install_stack.parse_pin(p) for p in newest_row.pins)
    assert set(pinned) == {"torch", "jax", "jaxlib", "numpy"}
    assert pinned["jax"] == pinned["jaxlib"]
    # This project's Linux machines carry a CPU wheel of torch 2.13.0 for Python 3.11.
    assert "3.11" in newest_row.wheels["linux-x86_64"]
    assert newest_row.label == (f"torch{pinned['torch']}-jax{pinned['jax']}-"
                                f"numpy{pinned['numpy']}")


def extra_pins(extras, name):
    """pyproject's extra `name`, its references to the project's own extras unfolded:
    {distribution: version}."""
    pins = {}
    for line in extras[name]:
        requirement = Requirement(line)
        if requirement.name == "tfgpubench":
            for own in requirement.extras:
                pins.update(extra_pins(extras, own))
        else:
            (spec,) = requirement.specifier
            assert spec.operator == "==", line
            pins[requirement.name] = spec.version
    return pins


def test_the_comparators_extra_installs_the_newest_comparator_row():
    # The extras put the frameworks in the tests' own interpreter: tests and the measured
    # stack must be the same versions, and `jax` (what CI adds) must be the same JAX.
    with open(ROOT / "pyproject.toml", "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    row = dict(install_stack.parse_pin(p) for p in COMPARATOR_ROWS[-1].pins)
    assert extra_pins(extras, "comparators") == {k: row[k] for k in ("torch", "jax", "jaxlib")}
    assert extra_pins(extras, "jax") == {k: row[k] for k in ("jax", "jaxlib")}


def test_a_table_without_comparators_is_still_valid():
    raw = raw_table()
    del raw[COMPARATORS_SECTION]
    assert not any(s.is_comparators for s in parse_table(raw))


ROW = "stacks.toml [[comparators]] #1 (torch2.13.0-jax0.10.2-numpy2.4.6)"


@pytest.mark.parametrize("changes,message", [
    ({"pins": ["tensorflow==2.21.0", "numpy==2.4.6"]}, "unknown package in 'tensorflow==2.21.0'"),
    ({"pins": ["torch==2.13.0", "jax==0.10.2"]}, "pin jax and jaxlib together"),
    ({"pins": ["jax==0.10.2", "jaxlib==0.10.1"]}, "pin jax and jaxlib together, at the same"),
    ({"pins": ["torch[cuda]==2.13.0"]}, "the only extras a row may use are jax[cuda12], "
                                        "jax[cuda13], in cuda"),
    ({"cuda": ["torch==2.14.1", "jax[cuda12]==0.10.2", "jaxlib==0.10.2", "numpy==2.4.6"]},
     "cuda must pin the same packages and versions as pins"),
    ({"cuda": ["torch==2.13.0", "jax[rocm]==0.10.2", "jaxlib==0.10.2", "numpy==2.4.6"]},
     "the only extras a row may use are"),
    ({"wheels": {"x86_64": ["3.11"]}}, "wheels for unknown platform 'x86_64'; expected "
                                       "linux-arm64 or linux-x86_64 or macos-arm64"),
    ({"wheels": {"macos-arm64": ["3.11"]}}, "cuda pins, but no Linux wheels"),
    ({"cuda_wheels": {"linux-x86_64": ["3.11"]}, "cuda": None}, "cuda_wheels without cuda"),
    ({"date": datetime.date(2999, 1, 1)}, "is not a day a release can have been uploaded"),
    ({"label": "comparators"}, "it is the name of a section's branch"),
    ({"label": "tf2.21.0"}, "label 'tf2.21.0' is already used by stacks.toml [[linux]]"),
    ({"index": "https://example.com"}, "unknown key(s) index"),
])
def test_a_bad_comparator_row_is_one_line_naming_it(changes, message):
    raw = with_comparator(**{k: v for k, v in changes.items() if v is not None})
    for key in [k for k, v in changes.items() if v is None]:
        del raw[COMPARATORS_SECTION][0][key]
    with pytest.raises(TableError) as caught:
        parse_table(raw)
    text = str(caught.value)
    assert "\n" not in text
    assert message in text
    # Every message names the row, except the duplicate label, which names both.
    assert text.startswith(ROW.replace("torch2.13.0-jax0.10.2-numpy2.4.6",
                                       changes.get("label") or
                                       "torch2.13.0-jax0.10.2-numpy2.4.6")), text


# --- where a comparator stack installs ---------------------------------------------------

ROW_DATA = {"label": "c", "os": COMPARATORS_SECTION,
            "pins": ["torch==2.13.0", "jax==0.10.2", "jaxlib==0.10.2", "numpy==2.4.6"],
            "cuda": ["torch==2.13.0", "jax[cuda12]==0.10.2", "jaxlib==0.10.2", "numpy==2.4.6"],
            "wheels": {"linux-x86_64": ["3.11", "3.12"], "macos-arm64": ["3.12"]}}


@pytest.mark.parametrize("system,machine,python,variant,expected", [
    ("linux", "x86_64", "3.11", "cpu", ROW_DATA["pins"]),
    ("linux", "x86_64", "3.11", "cuda", ROW_DATA["cuda"]),
    ("darwin", "arm64", "3.12", "cpu", ROW_DATA["pins"]),
    ("darwin", "arm64", "3.11", "cpu", "no wheels for Python 3.11 on macos-arm64 (only 3.12)"),
    # An Intel Mac: no x86_64 macOS wheels of recent PyTorch or jaxlib.
    ("darwin", "x86_64", "3.11", "cpu", "no macos-x86_64 wheels (only linux-x86_64, "
                                        "macos-arm64)"),
    ("linux", "aarch64", "3.11", "cpu", "no linux-arm64 wheels"),
])
def test_a_comparator_row_installs_on_every_os_its_wheels_name(system, machine, python,
                                                               variant, expected):
    pins, reason = install_stack.choose_pins(ROW_DATA, system, machine, python, variant)
    if isinstance(expected, list):
        assert (pins, reason) == (expected, None)
    else:
        assert pins is None and reason.startswith(expected)


def test_a_comparator_stack_must_have_no_tensorflow_and_exactly_its_pins():
    names = install_stack.family(ROW_DATA["cuda"])
    assert {"torch", "jax", "jaxlib", "numpy", "tensorflow", "tensorflow-cpu"} <= set(names)
    exact = {"torch": "2.13.0", "jax": "0.10.2", "jaxlib": "0.10.2", "numpy": "2.4.6"}
    assert install_stack.verify(ROW_DATA["cuda"], exact) is None
    assert install_stack.verify(ROW_DATA["pins"], {**exact, "tensorflow-cpu": "2.21.0"}) == (
        "tensorflow-cpu 2.21.0 is installed too")
    assert install_stack.verify(ROW_DATA["pins"], {**exact, "numpy": "2.3.0"}) == (
        "numpy 2.3.0 instead of 2.4.6")
    # PyTorch's CPU build carries a local label; pip's ==2.13.0 takes it.
    assert install_stack.verify(ROW_DATA["pins"], {**exact, "torch": "2.13.0+cpu"}) is None
    assert install_stack.verify(ROW_DATA["pins"], {**exact, "torch": "2.13.1+cpu"}) == (
        "torch 2.13.1+cpu instead of 2.13.0")
    # The same comparator stack already installed: nothing to remove first.
    assert install_stack.left_by_other_stacks(ROW_DATA["pins"], exact, {"torch", "pip"},
                                              {"pip"}) == []
    assert install_stack.left_by_other_stacks(ROW_DATA["pins"], {}, {"tensorflow-cpu", "pip"},
                                              {"pip"}) == ["tensorflow-cpu"]


def test_the_default_run_measures_the_newest_tensorflow_not_a_comparator():
    runnable, _ = fits(STACKS, Target("linux", "x86_64", "3.11"))
    assert runnable[-1][0].is_comparators
    assert newest(runnable)[0][0].label == "tf2.21.0"


def test_requirements_of_a_comparator_stack():
    facts = Facts(system="darwin", machine="x86_64", python="3.11", macos="13.6")
    lines = describe_stack(COMPARATOR_ROWS[-1], "cpu", facts)
    assert lines[0].endswith("(comparators): not here (platform)")
    assert "platform: needs linux-x86_64 or macos-arm64; this machine: macos-x86_64" in (
        lines[1])


# --- what run measures on a comparator stack ------------------------------------------------

def bench_of(args):
    return runner.split_bench_args(args)[0]


def test_a_comparator_stack_runs_only_the_comparator_benchmarks():
    stack = COMPARATOR_ROWS[-1]
    tensorflow = next(s for s in STACKS if s.label == "tf2.21.0")
    args = ["--quick", "-b", "Wait.time_wait"]
    assert runner.stack_asv_args(tensorflow, args) == args
    # Without -b a TensorFlow stack runs all but the frameworks it does not install.
    (everything,) = bench_of(runner.stack_asv_args(tensorflow, ["--quick"]))
    assert [n for n in ("multiply.Multiply.time_multiply", "seed.SeedScript.track_reported_speedup",
                        "numpy_multiply.NumpyMultiply.time_multiply",
                        "torch_multiply.TorchMultiply.time_multiply",
                        "jax_multiply.JaxMultiply.time_multiply")
            if re.search(everything, n)] == ["multiply.Multiply.time_multiply",
                                             "seed.SeedScript.track_reported_speedup",
                                             "numpy_multiply.NumpyMultiply.time_multiply"]
    # Wait needs TensorFlow: on a comparator stack the comparator benchmarks run instead.
    assert bench_of(runner.stack_asv_args(stack, args)) == list(COMPARATOR_BENCHMARKS)
    assert "--quick" in runner.stack_asv_args(stack, args)
    # A pattern that selects a comparator is kept, alone.
    assert bench_of(runner.stack_asv_args(stack, ["-b", "torch", "-b", "Wait"])) == ["torch"]
    assert bench_of(runner.stack_asv_args(stack, [])) == list(COMPARATOR_BENCHMARKS)
    names = ["torch_multiply.TorchMultiply.time_multiply",
             "jax_multiply.JaxMultiply.time_multiply",
             "numpy_multiply.NumpyMultiply.time_multiply",
             "multiply.Multiply.time_multiply", "wait.Wait.time_wait"]
    selected = [[n for n in names if re.search(p, n)] for p in COMPARATOR_BENCHMARKS]
    assert selected == [[name] for name in names[:3]]
