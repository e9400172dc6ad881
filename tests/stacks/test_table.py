"""stacks.toml as data: Apple's pairing rules, PyPI's wheels, and rejected rows."""

import copy
import datetime
import json

import pytest

from tfgpubench.pairing import pairing_verdict, series
from tfgpubench.stacks.install_stack import choose_pins, parse_pin
from tfgpubench.stacks.selection import Target, fits, missing_on_index, pick
from tfgpubench.stacks.table import TENSORFLOWS, TableError, load_table, parse_table, tomllib

from .conftest import FIXTURES, ROOT

# The TensorFlow rows; the comparator rows' tests are in test_comparators_table.py.
STACKS = [s for s in load_table(ROOT / "stacks.toml") if s.os in TENSORFLOWS]
PYPI = json.loads((FIXTURES / "pypi_wheels.json").read_text())["packages"]
MACOS = [s for s in STACKS if s.os == "macos"]
LINUX = [s for s in STACKS if s.os == "linux"]


def raw_table():
    with open(ROOT / "stacks.toml", "rb") as f:
        return tomllib.load(f)


def split(pin):
    return parse_pin(pin)


# --- the table agrees with Apple's pairing rules and with PyPI ----------------

@pytest.mark.parametrize("stack", MACOS, ids=lambda s: s.label)
def test_macos_rows_are_apples_pairs(stack):
    tensorflow, metal = (split(p)[1] for p in stack.pins)
    ok, message = pairing_verdict(tensorflow, metal)
    assert ok, message
    assert stack.label == f"tf{tensorflow}-metal{metal}"


def test_macos_rows_span_metal_050_to_120():
    metals = [split(s.pins[1])[1] for s in MACOS]
    assert metals[0] == "0.5.0" and metals[-1] == "1.2.0"
    assert MACOS[-1].tensorflow_version() == "2.18.1"


# Pythons every pin has a wheel for (PyPI), that a row leaves out because pip cannot
# resolve the whole stack there from wheels: what tests/stacks/test_resolve.py found.
NOT_RESOLVING = {"tf2.12.0-metal0.8.0": {"3.8"}, "tf2.12.1": {"3.8"}}  # jax: cp39 on
NOT_RESOLVING_CUDA = {"tf2.14.1": {"3.11"}}  # tensorrt 8.5.3.1: no cp311 wheel
# tensorflow 2.13.1's arm64 macOS wheel is a shim that requires tensorflow-macos 2.13.1,
# which has no cp38 wheel (discover.shim_target; found by test_resolve with macOS markers).
NOT_RESOLVING_ARM64 = {"tf2.13.1-metal1.0.0": {"3.8"}, "tf2.13.1-metal1.0.1": {"3.8"}}


@pytest.mark.parametrize("stack", STACKS, ids=lambda s: s.label)
def test_wheels_and_dates_are_pypis(stack):
    platform = {"macos": "darwin", "linux": "linux"}[stack.os]
    expected = {}
    for arch in ("arm64", "x86_64"):
        sets = [set(PYPI[n][v]["wheels"].get(f"{platform}/{arch}", []))
                for n, v in map(split, stack.pins + stack.cuda)]
        common = set.intersection(*sets) - NOT_RESOLVING.get(stack.label, set())
        if arch == "arm64":
            common -= NOT_RESOLVING_ARM64.get(stack.label, set())
        if common:
            expected[arch] = sorted(common, key=lambda p: int(p.split(".")[1]))
    assert {a: list(p) for a, p in stack.wheels.items()} == expected
    if stack.label in NOT_RESOLVING_CUDA:
        assert {a: list(p) for a, p in stack.cuda_wheels.items()} == {
            a: [p for p in pythons if p not in NOT_RESOLVING_CUDA[stack.label]]
            for a, pythons in expected.items()}
    else:
        assert stack.cuda_wheels is None
    newest = max(PYPI[n][v]["date"] for n, v in map(split, stack.pins + stack.cuda))
    assert stack.date.isoformat() == newest


def test_intel_macs_end_at_metal_100_and_tensorflow_macos_212():
    x86 = [s for s in MACOS if "x86_64" in s.wheels]
    assert split(x86[-1].pins[1])[1] == "1.0.0"
    macos_pins = [p for s in x86 for p in s.pins if p.startswith("tensorflow-macos==")]
    assert macos_pins[-1] == "tensorflow-macos==2.12.0"


def test_linux_rows_are_the_latest_patch_of_each_minor_from_212():
    versions = [s.tensorflow_version() for s in LINUX]
    assert [v.rsplit(".", 1)[0] for v in versions] == [f"2.{m}" for m in range(12, 22)]
    for stack in LINUX:
        minor = stack.tensorflow_version().rsplit(".", 1)[0]
        patches = [v for v in PYPI["tensorflow-cpu"] if v.startswith(minor + ".")]
        assert stack.tensorflow_version() == max(patches, key=lambda v: int(v.split(".")[2]))
        extra = "[and-cuda]" if series(stack.tensorflow_version()) >= (2, 14) else ""
        assert stack.cuda == (f"tensorflow{extra}=={stack.tensorflow_version()}",)


# --- which pins a Mac or a Linux machine gets, per architecture and Python ----

def newest_for(system, machine, python, variant="cpu"):
    runnable, _ = fits(STACKS, Target(system, machine, python, variant))
    return (runnable[-1][0].label, runnable[-1][1]) if runnable else None


@pytest.mark.parametrize("machine,python,expected", [
    ("arm64", "3.8", ("tf2.11.0-metal0.7.1", ["tensorflow-macos==2.11.0",
                                              "tensorflow-metal==0.7.1"])),
    ("arm64", "3.10", ("tf2.18.1-metal1.2.0", ["tensorflow==2.18.1", "tensorflow-metal==1.2.0"])),
    ("arm64", "3.11", ("tf2.18.1-metal1.2.0", ["tensorflow==2.18.1", "tensorflow-metal==1.2.0"])),
    ("arm64", "3.12", ("tf2.18.1-metal1.2.0", ["tensorflow==2.18.1", "tensorflow-metal==1.2.0"])),
    ("arm64", "3.13", None),
    ("x86_64", "3.8", ("tf2.13.1-metal1.0.0", ["tensorflow==2.13.1", "tensorflow-metal==1.0.0"])),
    ("x86_64", "3.10", ("tf2.13.1-metal1.0.0", ["tensorflow==2.13.1", "tensorflow-metal==1.0.0"])),
    ("x86_64", "3.11", ("tf2.13.1-metal1.0.0", ["tensorflow==2.13.1", "tensorflow-metal==1.0.0"])),
    ("x86_64", "3.12", None),
])
def test_newest_mac_stack_per_arch_and_python(machine, python, expected):
    assert newest_for("darwin", machine, python) == expected


@pytest.mark.parametrize("machine,python,count", [
    ("arm64", "3.8", 5), ("arm64", "3.9", 13), ("arm64", "3.10", 13), ("arm64", "3.11", 8),
    ("arm64", "3.12", 1), ("x86_64", "3.9", 7), ("x86_64", "3.11", 2), ("x86_64", "3.12", 0),
])
def test_mac_stacks_per_arch_and_python(machine, python, count):
    runnable, left_out = fits(STACKS, Target("darwin", machine, python))
    assert len(runnable) == count
    assert len(left_out) == len(STACKS) - count
    # Every pin is tensorflow-macos up to 2.12 and tensorflow after, with its plugin.
    for stack, pins in runnable:
        name = "tensorflow-macos" if series(stack.tensorflow_version()) < (2, 13) else "tensorflow"
        assert pins[0].startswith(name + "==") and pins[1].startswith("tensorflow-metal==")


def test_arm64_mac_gets_the_tensorflow_macos_era_too():
    runnable, _ = fits(STACKS, Target("darwin", "arm64", "3.9"))
    assert runnable[0][1] == ["tensorflow-macos==2.9.2", "tensorflow-metal==0.5.0"]


def test_linux_choices():
    assert newest_for("linux", "x86_64", "3.11") == ("tf2.21.0", ["tensorflow-cpu==2.21.0"])
    assert newest_for("linux", "x86_64", "3.9") == ("tf2.20.0", ["tensorflow-cpu==2.20.0"])
    assert newest_for("linux", "x86_64", "3.8") == ("tf2.13.1", ["tensorflow-cpu==2.13.1"])
    assert newest_for("linux", "x86_64", "3.11", "cuda") == (
        "tf2.21.0", ["tensorflow[and-cuda]==2.21.0"])
    assert newest_for("linux", "aarch64", "3.11") is None


def test_the_cuda_build_of_a_row_may_claim_fewer_pythons():
    data = next(s for s in STACKS if s.label == "tf2.14.1").as_data()
    assert choose_pins(data, "linux", "x86_64", "3.10", "cuda") == (
        ["tensorflow[and-cuda]==2.14.1"], None)
    assert choose_pins(data, "linux", "x86_64", "3.11", "cuda") == (
        None, "the CUDA build has no wheels for Python 3.11 on x86_64 (only 3.9, 3.10)")
    assert choose_pins(data, "linux", "x86_64", "3.11", "cpu") == (
        ["tensorflow-cpu==2.14.1"], None)
    with pytest.raises(TableError, match=r"#3 \(tf2.14.1\): cuda_wheels.x86_64 lists a Python "
                                         "wheels.x86_64 does not"):
        parse_table(with_row("linux", 2, cuda_wheels={"x86_64": ["3.8"]}))


def test_reasons_name_what_is_missing():
    data = next(s for s in STACKS if s.label == "tf2.18.1-metal1.2.0").as_data()
    assert choose_pins(data, "linux", "x86_64", "3.11") == (None, "a macos stack, this is linux")
    assert choose_pins(data, "darwin", "x86_64", "3.11") == (None, "no x86_64 wheels (only arm64)")
    assert choose_pins(data, "darwin", "arm64", "3.13") == (
        None, "no wheels for Python 3.13 on arm64 (only 3.9, 3.10, 3.11, 3.12)")


def test_pick_labels_and_ranges():
    labels = lambda stacks: [s.label for s in stacks]  # noqa: E731
    assert labels(pick(STACKS, "tf2.19.1..tf2.21.0")) == ["tf2.19.1", "tf2.20.0", "tf2.21.0"]
    assert labels(pick(STACKS, "tf2.20.0..")) == ["tf2.20.0", "tf2.21.0"]
    assert labels(pick(STACKS, "..tf2.10.0-metal0.6.0")) == [
        "tf2.9.2-metal0.5.0", "tf2.9.2-metal0.5.1", "tf2.10.0-metal0.6.0"]
    assert labels(pick(STACKS, "tf2.12.1,tf2.21.0")) == ["tf2.12.1", "tf2.21.0"]
    with pytest.raises(ValueError, match="no stack labeled 'tf9.9.9'"):
        pick(STACKS, "tf9.9.9")
    with pytest.raises(ValueError, match="newer than"):
        pick(STACKS, "tf2.21.0..tf2.12.1")
    with pytest.raises(ValueError, match="stays within one"):
        pick(STACKS, "tf2.12.1..tf2.18.1-metal1.2.0")


# --- bad rows are rejected, naming the row ----------------------------------------

def with_row(section, index, **changes):
    raw = copy.deepcopy(raw_table())
    raw[section][index].update(changes)
    return raw


@pytest.mark.parametrize("pin,message", [
    ("tensorflow-gpu==2.20.0", "unknown package in 'tensorflow-gpu==2.20.0'"),
    ("numpy==2.0.0", "unknown package in 'numpy==2.0.0'"),
    ("tensorflow-cpu==2.20", "version '2.20' is not X.Y.Z"),
    ("tensorflow-cpu==2.20.0rc1", "is not NAME==VERSION"),
    ("tensorflow-cpu==latest", "is not NAME==VERSION"),
    ("tensorflow-cpu>=2.20.0", "is not NAME==VERSION"),
    ("--index-url https://evil.example/simple tensorflow-cpu==2.20.0", "pip options"),
    ("-e git+https://github.com/tensorflow/tensorflow", "pip options"),
    ("https://example.com/tensorflow_cpu-2.20.0-cp311-none-any.whl", "pip options"),
    ("./tensorflow_cpu-2.20.0-cp311-none-any.whl", "pip options"),
    ("tensorflow-cpu @ file:///tmp/tf.whl", "pip options"),
    ("tensorflow-cpu==2.20.0; python_version < '3.12'", "pip options"),
    ("tensorflow-cpu[and-cuda]==2.20.0", "the only extra a row may use is "
                                         "tensorflow[and-cuda], in cuda"),
    ("tensorflow-cpu[extra]==2.20.0", "the only extra a row may use"),
])
def test_bad_pins_are_rejected_naming_the_row(pin, message):
    raw = with_row("linux", 8, pins=[pin])
    with pytest.raises(TableError) as error:
        parse_table(raw)
    assert "[[linux]] #9 (tf2.20.0)" in str(error.value)
    assert message in str(error.value)


def test_pip_options_in_cuda_pins_are_rejected_too():
    with pytest.raises(TableError, match=r"#9 \(tf2.20.0\): cuda entry '--pre'"):
        parse_table(with_row("linux", 8, cuda=["--pre"]))


def test_duplicate_label_is_rejected():
    with pytest.raises(TableError, match=r"#10 \(tf2.20.0\): label 'tf2.20.0' is already used "
                                         r"by stacks.toml \[\[linux\]\] #9"):
        parse_table(with_row("linux", 9, label="tf2.20.0"))


def test_dates_out_of_order_are_rejected():
    with pytest.raises(TableError, match=r"#10 \(tf2.21.0\): dated 2020-01-01, before the row "
                                         r"above it \(tf2.20.0, 2025-08-13\)"):
        parse_table(with_row("linux", 9, date=datetime.date(2020, 1, 1)))


def test_dates_must_be_dates():
    with pytest.raises(TableError, match="date '2025-08-13' must be a TOML date"):
        parse_table(with_row("linux", 9, date="2025-08-13"))


def test_a_pair_apple_does_not_list_is_rejected():
    raw = with_row("macos", 12, pins=["tensorflow==2.18.1", "tensorflow-metal==0.8.0"])
    with pytest.raises(TableError, match=r"#13 \(tf2.18.1-metal1.2.0\): tensorflow-metal 0.8.0 "
                                         r"is Apple's pairing for TensorFlow 2.12"):
        parse_table(raw)


def test_a_mac_row_without_plugin_and_unknown_keys_are_rejected():
    with pytest.raises(TableError, match="pins tensorflow-metal"):
        parse_table(with_row("macos", 0, pins=["tensorflow-macos==2.9.2"]))
    with pytest.raises(TableError, match=r"#1 \(tf2.12.1\): unknown key\(s\) index_url"):
        parse_table(with_row("linux", 0, index_url="https://example.com"))
    with pytest.raises(TableError, match="wheels for unknown architecture 'ppc64le'"):
        parse_table(with_row("linux", 0, wheels={"ppc64le": ["3.11"]}))


def test_toml_errors_name_the_file(tmp_path):
    path = tmp_path / "stacks.toml"
    path.write_text("[[linux]]\nlabel = \n")
    with pytest.raises(TableError, match="stacks.toml: not valid TOML"):
        load_table(path)


def test_a_version_missing_from_the_index_is_reported_per_row():
    bad = next(s for s in parse_table(with_row("linux", 9, pins=["tensorflow-cpu==2.99.0"],
                                               cuda=["tensorflow[and-cuda]==2.99.0"]))
               if s.label == "tf2.21.0")
    offered = {"tensorflow-cpu": {"2.20.0", "2.21.0"}}
    problems = missing_on_index([(bad, list(bad.pins))], versions_of=offered.get)
    assert [m for _, m in problems] == [
        "stacks.toml [[linux]] #10 (tf2.21.0): tensorflow-cpu 2.99.0 is not on the package "
        "index for this platform and Python (it offers 2, 2.20.0 to 2.21.0)"]
    # An index that cannot be reached is not a failure here; pip reports it at install.
    assert missing_on_index([(bad, list(bad.pins))], versions_of=lambda name: None) == []
