"""How numbers are written for people."""

import math

from tfgpubench import format as fmt
from tfgpubench.report.analysis import Estimate


def test_seconds_pick_the_unit_that_reads_best():
    assert fmt.seconds(1.6e-05) == "16 us"
    assert fmt.seconds(0.0042) == "4.2 ms"
    assert fmt.seconds(2.5) == "2.5 s"
    assert fmt.seconds(3e-9) == "3 ns"
    assert fmt.seconds(math.nan) == "n/a" and fmt.seconds(None) == "n/a"


def test_ratio_shows_its_range_when_it_has_one():
    assert fmt.ratio(Estimate(1.234)) == "1.23x"
    assert fmt.ratio(Estimate(1.234, 1.1, 1.4)) == "1.23x (1.1-1.4)"
    assert fmt.ratio(None) == "n/a"


def test_share_bandwidth_side_verdict():
    assert fmt.share(0.945) == "94%" and fmt.share(None) == "n/a"
    assert fmt.bandwidth(30e9) == "30 GB/s" and fmt.bandwidth(None) == "n/a"
    assert fmt.side(1000) == "1000x1000" and fmt.side(724.3) == "724x724"
    assert fmt.verdict(True) == "PASS" and fmt.verdict(False) == "FAIL"
