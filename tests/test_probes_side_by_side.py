"""scripts/probes_side_by_side.py: each probe's line names its threads and size and
gives its fast time and spread; the seed's case is the 2x2 int32 one."""

from tests.script_loader import load_script

probes = load_script("probes_side_by_side")


def test_a_probe_line_gives_fast_time_then_p90_and_median_over_fast():
    got = {"fast": 85e-6, "p90_over_fast": 1.333, "median_over_fast": 1.094}
    assert probes.describe("default", 512, got) == "default 512: 85 us 1.33/1.09"


def test_the_2x2_probe_is_the_seeds_case_and_the_others_float32():
    assert probes.case(2) == (2, "int32", "eager")
    assert probes.case(2048) == (2048, "float32", "eager")
    # Each size the stability part's text speaks of, on one thread and the default.
    for size in (256, 512, 2048):
        assert {("default", size), ("one", size)} <= set(probes.PROBES)
