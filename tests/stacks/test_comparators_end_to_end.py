"""(slow) A stack of the comparators' chain measured by `run` for real: PyTorch, JAX and
numpy installed into asv's environment without TensorFlow and without the GPU
self-check, only the comparator benchmarks run, the results on the row's commit.

PyTorch comes from the CPU wheel this project's Linux machines keep on disk (pip's
find-links; PyPI's Linux build is CUDA's, several GB); jax and jaxlib from PyPI
(~100 MB, pip's cache keeps it to one download). `--quick -b numpy_multiply` keeps
the benchmarks to seconds.
"""

import json
import platform
import sys

import pytest

from tfgpubench.names import INSTALLED_VERSIONS_FILE, NUMPY_MULTIPLY, REGRESSIONS_MARKDOWN_FILE
from tfgpubench.stacks import repo
from tfgpubench.stacks.install_stack import choose_pins

from .conftest import make_workspace, tfgpubench
from .test_comparators_table import COMPARATOR_ROWS

pytestmark = pytest.mark.slow

ROW = COMPARATOR_ROWS[-1]
MACHINE = "e2e-comparators"


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    pins, reason = choose_pins(ROW.as_data(), sys.platform, platform.machine(),
                               f"{sys.version_info[0]}.{sys.version_info[1]}")
    if pins is None:
        pytest.skip(f"{ROW.label} does not install here: {reason}")
    path = make_workspace(tmp_path_factory.mktemp("comparators") / "suite")
    out = tfgpubench(path, "run", "--stacks", ROW.label, "--machine", MACHINE, "--no-publish",
                     "--", "--quick", "-b", "numpy_multiply", timeout=1800)
    return path, out


def test_a_comparator_stack_installs_without_tensorflow_and_runs_only_its_benchmarks(measured):
    path, out = measured
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert "no GPU self-check (it needs TensorFlow)" in out.stdout
    (record,) = [json.loads(line) for line in
                 (path / "results" / MACHINE / INSTALLED_VERSIONS_FILE).read_text().splitlines()]
    assert record["label"] == ROW.label
    assert not any(name.startswith("tensorflow") for name in record["installed"])
    assert {name: version.split("+")[0] for name, version in record["installed"].items()
            if name in ("torch", "jax", "jaxlib", "numpy")} == dict(
        pin.split("==") for pin in ROW.pins)
    commit = repo.tags(path / ".stacks")[ROW.label]
    (result,) = (path / "results" / MACHINE).glob(f"{commit[:8]}-*.json")
    saved = json.loads(result.read_text())
    # The user's -b selected a comparator and was kept; nothing of TensorFlow ran.
    assert sorted(saved["results"]) == [NUMPY_MULTIPLY]
    entry = dict(zip(saved["result_columns"], saved["results"][NUMPY_MULTIPLY]))
    assert any(value is not None and value > 0 for value in entry["result"])
    # run compared it with the stack before it in its chain: it is the first.
    regressions = path / "results" / MACHINE / REGRESSIONS_MARKDOWN_FILE
    assert "the first stack of its chain" in regressions.read_text()
