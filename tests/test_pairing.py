"""Apple's tensorflow-metal / TensorFlow pairing rules."""

import pytest

from tfgpubench.pairing import METAL_TO_TENSORFLOW, metal_series_for, pairing_verdict, series


def test_the_seeds_pair_is_flagged_with_the_pair_apple_lists():
    ok, message = pairing_verdict("2.9.0", "0.6.0")
    assert not ok
    assert "TensorFlow 2.10" in message and "tensorflow-metal 0.5.x" in message


@pytest.mark.parametrize(
    ("tensorflow", "metal"),
    [
        ("2.9.2", "0.5.0"),
        ("2.10.0", "0.6.0"),
        ("2.13.1", "1.0.1"),
        ("2.16.2", "1.1.0"),
        ("2.18.0", "1.2.0"),
    ],
)
def test_apples_pairs_are_accepted(tensorflow, metal):
    ok, message = pairing_verdict(tensorflow, metal)
    assert ok, message


def test_every_tensorflow_minor_has_at_most_one_metal_series():
    minors = [tf for tfs in METAL_TO_TENSORFLOW.values() for tf in tfs]
    assert len(minors) == len(set(minors))


def test_tensorflow_without_a_metal_release_says_so():
    assert metal_series_for("2.19.0") is None
    ok, message = pairing_verdict("2.19.0", "1.2.0")
    assert not ok and "no tensorflow-metal for TensorFlow 2.19" in message


def test_unknown_metal_release_is_not_paired():
    ok, message = pairing_verdict("2.18.0", "9.9.0")
    assert not ok and "not in Apple's pairing table" in message


@pytest.mark.parametrize("bad", ["", "2", "two.three", "2.x"])
def test_malformed_versions_are_rejected(bad):
    with pytest.raises(ValueError, match="not a version"):
        series(bad)


def test_release_candidates_parse_to_their_series():
    assert series("2.16.0rc1") == (2, 16)
