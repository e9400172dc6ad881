"""The self-check's asv runs: interleaved rounds, as asv continuous measures two commits."""

import json

from tfgpubench.selfcheck.asvruns import ROUNDS_FILE, Scratch


class RecordingScratch(Scratch):
    """A Scratch whose asv runs are recorded, not run."""

    def __init__(self, root):
        self.root = root
        self.runs = []
        self.rounds_run = []

    def run(self, commit, bench=None, extra_env=None, progress=None, one_round=False):
        self.runs.append((commit, bench, extra_env, one_round))
        return {"wall": 2.0, "output": ""}

    def sample_counts(self, commit):
        # Each round adds 10 samples of case "c" to its commit's result file.
        return {"c": 10 * sum(r[0] == commit for r in self.runs)}


def test_rounds_alternate_between_commits_reversing_each_round(tmp_path):
    scratch = RecordingScratch(tmp_path)
    after = []
    walls = scratch.run_interleaved(["A", "B"], 4, bench="^x", envs={"B": {"V": "1"}},
                                    between=after.append)
    assert [r[0] for r in scratch.runs] == list("ABBAABBA")
    # Each asv run is one round, appended; each commit keeps its own environment.
    assert all(r[1] == "^x" and r[3] for r in scratch.runs)
    assert {r[0]: r[2] for r in scratch.runs} == {"A": None, "B": {"V": "1"}}
    assert after == [1, 2, 3, 4] and walls == {"A": 8.0, "B": 8.0}
    # Where each round's samples end, in the order the rounds ran (stats.round_drift).
    assert [(c, n, counts["c"]) for c, n, counts in scratch.rounds_run] == [
        ("A", 1, 10), ("B", 1, 10), ("B", 2, 20), ("A", 2, 20),
        ("A", 3, 30), ("B", 3, 30), ("B", 4, 40), ("A", 4, 40)]
    # The same, kept in the scratch directory for a look after the self-check.
    kept = json.loads((tmp_path / ROUNDS_FILE).read_text())
    assert [(c, n, counts["c"]) for c, n, counts in kept] == [
        (c, n, counts["c"]) for c, n, counts in scratch.rounds_run]


def test_one_round_adds_its_samples_and_page_faults_to_the_commits_earlier_ones(monkeypatch):
    seen = {}

    def fake_asv(self, args, extra_env=None, quiet=False, progress=None, engine_faults=None):
        seen["args"] = args
        # What the run's engine counted: one sample of a block, 3 faults per op.
        engine_faults.setdefault(("m:f", 1), []).append(3.0)
        return "· Discovering benchmarks\n· Benchmarking existing"

    monkeypatch.setattr(Scratch, "_asv", fake_asv)
    scratch = object.__new__(Scratch)
    scratch.launch_method, scratch.faults = "forkserver", {}
    Scratch.run(scratch, "abc", bench="^x", one_round=True)
    args = seen["args"]
    assert args[args.index("--attribute") + 1] == "rounds=1" and "--append-samples" in args
    Scratch.run(scratch, "abc")
    assert "--attribute" not in seen["args"] and "--append-samples" not in seen["args"]
    Scratch.run(scratch, "ghi", bench="^x", asv_args=["--attribute", "warmup_time=0"])
    assert seen["args"][-2:] == ["--attribute", "warmup_time=0"] and "-b" in seen["args"]
    Scratch.run(scratch, "def")
    assert scratch.page_faults("abc") == {("m:f", 1): [3.0, 3.0]}
    assert scratch.page_faults("def") == {("m:f", 1): [3.0]} and scratch.page_faults("x") == {}
