import base64
import hashlib

from tfgpubench.vendor.integrity import digest, matches

DATA = b"jQuery v3.3.1"


def b64(algorithm, data):
    return base64.b64encode(hashlib.new(algorithm, data).digest()).decode()


def test_digest_is_the_sri_form():
    # sha256 of no bytes is a published constant.
    assert digest(b"", "sha256") == "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    assert digest(DATA) == f"sha512-{b64('sha512', DATA)}"


def test_matching_and_tampered_bytes():
    assert matches(DATA, f"sha384-{b64('sha384', DATA)}")
    assert not matches(DATA + b" ", f"sha384-{b64('sha384', DATA)}")


def test_only_the_strongest_algorithm_counts():
    # A browser ignores a weaker hash when a stronger one is given: a right sha256
    # does not save a wrong sha512, and a wrong sha256 does not spoil a right sha512.
    right_256, right_512 = f"sha256-{b64('sha256', DATA)}", f"sha512-{b64('sha512', DATA)}"
    wrong_256, wrong_512 = f"sha256-{b64('sha256', b'x')}", f"sha512-{b64('sha512', b'x')}"
    assert not matches(DATA, f"{right_256} {wrong_512}")
    assert matches(DATA, f"{wrong_256} {right_512}")


def test_any_token_of_the_strongest_algorithm_may_match():
    assert matches(DATA, f"sha512-{b64('sha512', b'x')} sha512-{b64('sha512', DATA)}")


def test_options_after_the_hash_are_ignored():
    assert matches(DATA, f"sha256-{b64('sha256', DATA)}?ct=application/javascript")


def test_npm_sha1_is_accepted_as_the_weakest():
    assert matches(DATA, f"sha1-{b64('sha1', DATA)}")
    assert not matches(DATA, f"sha1-{b64('sha1', DATA)} sha256-{b64('sha256', b'x')}")


def test_nothing_to_check_against_matches_nothing():
    assert not matches(DATA, "")
    assert not matches(DATA, None)
    assert not matches(DATA, f"md5-{b64('md5', DATA)}")
