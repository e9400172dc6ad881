"""Subresource Integrity strings ("sha512-<base64>"), the form both a page's
`integrity` attribute and the npm registry's `dist.integrity` use.

Pure functions of bytes and strings.
"""

import base64
import hashlib

# Weakest first. sha1 is not in the SRI spec, but the npm registry gives it
# for packages published before sha512 integrity existed.
ALGORITHMS = ("sha1", "sha256", "sha384", "sha512")


def digest(data, algorithm="sha512"):
    """The integrity string of `data`: 'sha512-<base64 of the digest>'."""
    raw = hashlib.new(algorithm, data).digest()
    return f"{algorithm}-{base64.b64encode(raw).decode('ascii')}"


def matches(data, integrity):
    """Whether `data` matches an integrity string, as a browser decides.

    An integrity string is one or more 'algorithm-base64' tokens separated by
    spaces (a token may carry '?options'); only the strongest algorithm
    present counts, and any token of it may match. A string with no token
    of a known algorithm matches nothing: there is nothing to check against.
    """
    hashes = {}
    for token in (integrity or "").split():
        algorithm, _, value = token.partition("-")
        if algorithm in ALGORITHMS and value:
            hashes.setdefault(algorithm, set()).add(value.split("?", 1)[0])
    if not hashes:
        return False
    strongest = max(hashes, key=ALGORITHMS.index)
    return digest(data, strongest).partition("-")[2] in hashes[strongest]
