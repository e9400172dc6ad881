"""The installer asv runs for each stack: which pins, what it removes, what it verifies."""

import json

import pytest

from tfgpubench.names import INSTALL_HISTORY_FILE, INSTALL_MARKER_FILE
from tfgpubench.stacks import install_stack
from tfgpubench.stacks.table import load_table

from .conftest import ROOT

STACKS = load_table(ROOT / "stacks.toml")


def test_verify_wants_exactly_the_pins():
    pins = ["tensorflow==2.18.1", "tensorflow-metal==1.2.0"]
    assert install_stack.verify(pins, {"tensorflow": "2.18.1", "tensorflow-metal": "1.2.0"}) is None
    assert install_stack.verify(pins, {"tensorflow": "2.18.0", "tensorflow-metal": "1.2.0"}) == (
        "tensorflow 2.18.0 instead of 2.18.1")
    assert install_stack.verify(["tensorflow-cpu==2.21.0"], {
        "tensorflow-cpu": "2.21.0", "tensorflow": "2.21.0"}) == "tensorflow 2.21.0 is installed too"
    assert install_stack.verify(["tensorflow-cpu==2.21.0"], {}) == (
        "tensorflow-cpu missing instead of 2.21.0")


def test_environment_tools_are_what_asv_installs_and_their_requirements():
    import re
    from importlib import metadata

    keep = install_stack.environment_tools()
    assert {"pip", "asv-runner", "build", "pympler"} <= keep
    # Whatever of them is installed here keeps its own requirements too.
    for name in keep:
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for requirement in requires:
            if "extra ==" not in requirement:
                dep = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)
                assert install_stack.canonical(dep) in keep, (name, dep)


def test_switching_stacks_removes_what_the_last_one_left():
    # What this session saw: tensorflow-cpu 2.13.1 installed over 2.21.0's
    # leftovers (jax, numpy 2) failed to import ("numpy has no attribute exceptions").
    keep = {"pip", "asv-runner", "build", "packaging"}
    installed = ["pip", "asv_runner", "build", "packaging", "jax", "numpy", "tensorflow-cpu"]
    stale = install_stack.left_by_other_stacks(
        ["tensorflow-cpu==2.13.1"], {"tensorflow-cpu": "2.21.0"}, installed, keep
    )
    assert stale == ["jax", "numpy", "tensorflow-cpu"]
    # The same stack again (asv re-measuring a commit): nothing is removed.
    assert install_stack.left_by_other_stacks(
        ["tensorflow-cpu==2.13.1"], {"tensorflow-cpu": "2.13.1"}, installed, keep
    ) == []


def test_variant_choice():
    assert install_stack.detect_variant({"TFGPUBENCH_VARIANT": "cpu"}, nvidia=True) == "cpu"
    assert install_stack.detect_variant({}, nvidia=True) == "cuda"
    assert install_stack.detect_variant({"TFGPUBENCH_VARIANT": "auto"}, nvidia=False) == "cpu"
    with pytest.raises(ValueError, match="expected auto, cpu or cuda"):
        install_stack.detect_variant({"TFGPUBENCH_VARIANT": "rocm"})


def test_installer_refuses_a_stack_for_another_platform(tmp_path, monkeypatch, capsys):
    mac = next(s for s in STACKS if s.os == "macos").as_data()
    path = tmp_path / "stack.json"
    path.write_text(json.dumps(mac))
    monkeypatch.setenv("ASV_ENV_DIR", str(tmp_path))
    monkeypatch.setenv("ASV_COMMIT", "abc")
    monkeypatch.setattr(install_stack.sys, "platform", "linux")
    assert install_stack.main([str(path)]) == 3
    assert capsys.readouterr().err.strip() == (
        "tfgpubench: stack tf2.9.2-metal0.5.0 not installed: a macos stack, this is linux")
    marker = json.loads((tmp_path / INSTALL_MARKER_FILE).read_text())
    assert marker["ok"] is False and marker["commit"] == "abc" and "pins" not in marker


def test_every_install_is_kept_in_the_history_and_the_marker_is_the_latest(
        tmp_path, monkeypatch, installer_env):
    # The gate installs two stacks in turn into one environment: what each installed is
    # still there to read after the other's install.
    stack = next(s for s in STACKS if s.label == "tf2.21.0")
    path = tmp_path / "stack.json"
    path.write_text(json.dumps(stack.as_data()))
    monkeypatch.setattr(install_stack.sys, "platform", "linux")
    monkeypatch.setattr(install_stack.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(install_stack, "python_version", lambda: "3.11")
    for commit, numpy in (("abc", "2.4.6"), ("def", "2.1.3")):
        monkeypatch.setenv("ASV_COMMIT", commit)
        monkeypatch.setattr(install_stack, "installed_versions",
                            lambda names=install_stack.TENSORFLOW_FAMILY, numpy=numpy: (
                                {"tensorflow-cpu": "2.21.0"}
                                if names == install_stack.TENSORFLOW_FAMILY
                                else {"numpy": numpy}))
        assert install_stack.main([str(path)]) == 0
    history = [json.loads(line)
               for line in (tmp_path / INSTALL_HISTORY_FILE).read_text().splitlines()]
    assert [(r["commit"], r["also"]["numpy"], r["ok"]) for r in history] == [
        ("abc", "2.4.6", True), ("def", "2.1.3", True)]
    assert json.loads((tmp_path / INSTALL_MARKER_FILE).read_text()) == history[-1]


# --- bad input: one line, exit 2, nothing installed ----------------------------------

@pytest.fixture
def installer_env(tmp_path, monkeypatch):
    monkeypatch.setenv("ASV_ENV_DIR", str(tmp_path))
    monkeypatch.setenv("ASV_COMMIT", "abc")
    monkeypatch.setenv("TFGPUBENCH_VARIANT", "cpu")
    calls = []
    monkeypatch.setattr(install_stack, "_pip", lambda args: calls.append(args) or 0)
    return calls


@pytest.mark.parametrize("content,environment,message", [
    (None, {}, "cannot read the stack ([Errno 2]"),
    ("{", {}, "cannot read the stack (Expecting property name"),
    ("[]", {}, "not a stack (a JSON object of label, os, pins, wheels)"),
    ('{"label": "x", "os": "linux", "pins": "tensorflow-cpu==2.21.0", "wheels": {}}', {},
     "not a stack: pins must be a list"),
    ('{"label": "x", "os": "linux", "pins": ["--pre"], "wheels": {}}', {},
     "not NAME==VERSION: '--pre'"),
    (json.dumps(STACKS[-1].as_data()), {"TFGPUBENCH_VARIANT": "rocm"},
     "TFGPUBENCH_VARIANT='rocm': expected auto, cpu or cuda"),
])
def test_installer_refuses_bad_input_in_one_line(tmp_path, monkeypatch, capsys, installer_env,
                                                 content, environment, message):
    path = tmp_path / "stack.json"
    if content is not None:
        path.write_text(content)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert install_stack.main([str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message in err
    assert err.startswith("tfgpubench: nothing installed: ")
    assert installer_env == []
    marker = json.loads((tmp_path / INSTALL_MARKER_FILE).read_text())
    assert marker == {"commit": "abc", "ok": False, "reason": err.split(": ", 2)[2].strip()}


# --- CUDA: tensorflow[and-cuda] installed, tensorflow's version verified --------------

def test_cuda_stack_installs_the_and_cuda_extra_from_wheels_and_verifies_tensorflow(
        tmp_path, monkeypatch, installer_env):
    stack = next(s for s in STACKS if s.label == "tf2.18.1")
    path = tmp_path / "stack.json"
    path.write_text(json.dumps(stack.as_data()))
    monkeypatch.setenv("TFGPUBENCH_VARIANT", "cuda")
    monkeypatch.setattr(install_stack.sys, "platform", "linux")
    monkeypatch.setattr(install_stack.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(install_stack, "python_version", lambda: "3.11")
    monkeypatch.setattr(install_stack, "installed_versions",
                        lambda names=install_stack.TENSORFLOW_FAMILY: (
                            {"tensorflow": "2.18.1"} if names == install_stack.TENSORFLOW_FAMILY
                            else {}))
    assert install_stack.main([str(path)]) == 0
    install = installer_env[-1]
    assert install[:3] == ["install", "--only-binary", ":all:"]
    assert install[3:] == ["tensorflow[and-cuda]==2.18.1"]
    marker = json.loads((tmp_path / INSTALL_MARKER_FILE).read_text())
    assert marker["ok"] and marker["pins"] == ["tensorflow[and-cuda]==2.18.1"]


def test_a_cuda_install_with_the_wrong_tensorflow_is_refused():
    assert install_stack.verify(["tensorflow[and-cuda]==2.18.1"], {"tensorflow": "2.18.0"}) == (
        "tensorflow 2.18.0 instead of 2.18.1")
    assert install_stack.verify(["tensorflow[and-cuda]==2.18.1"], {
        "tensorflow": "2.18.1", "tensorflow-cpu": "2.18.1"}) == (
        "tensorflow-cpu 2.18.1 is installed too")
