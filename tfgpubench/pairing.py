"""Apple's pairing of tensorflow-metal releases with TensorFlow releases.

From the tensorflow-metal PyPI description. tensorflow-metal declares no
dependency on TensorFlow, so pip never checks this; the suite does.
"""

# tensorflow-metal series (major.minor) -> TensorFlow minor versions it supports.
METAL_TO_TENSORFLOW = {
    (0, 1): [(2, 5)],
    (0, 2): [(2, 6)],
    (0, 3): [(2, 7)],
    (0, 4): [(2, 8)],
    (0, 5): [(2, 9)],
    (0, 6): [(2, 10)],
    (0, 7): [(2, 11)],
    (0, 8): [(2, 12)],
    (1, 0): [(2, 13)],
    (1, 1): [(2, 14), (2, 15), (2, 16), (2, 17)],
    # Apple's table prints "1.1.0" here, with the note "fixes compat with 2.18+".
    (1, 2): [(2, 18)],
}

# Apple's Mac build of TensorFlow is the tensorflow-macos package up to this
# TensorFlow minor; from the next one on, plain `tensorflow` has macOS arm64 wheels
# (later tensorflow-macos releases are shims that depend on it).
LAST_TENSORFLOW_MACOS = (2, 12)


# The macOS each tensorflow-metal series needs, from the same table: 12.0 up to
# tensorflow-metal 0.4, 12.1 from 0.5 on.
METAL_MIN_MACOS = {metal: (12, 0) if metal < (0, 5) else (12, 1) for metal in METAL_TO_TENSORFLOW}


def series(version):
    """(major, minor) of a version string such as '2.10.0' or '2.16.0rc1'."""
    parts = version.split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or "x")
    except (IndexError, ValueError):
        raise ValueError(f"not a version: {version!r}") from None


def macos_tensorflow_package(tensorflow_series):
    """The package a Mac stack pins for this (major, minor) of TensorFlow."""
    return "tensorflow-macos" if tensorflow_series <= LAST_TENSORFLOW_MACOS else "tensorflow"


def series_name(ver):
    """(2, 18) -> '2.18'."""
    return ".".join(map(str, ver))


def metal_series_for(tensorflow_version):
    """The tensorflow-metal series Apple pairs with this TensorFlow, or None."""
    tf_series = series(tensorflow_version)
    for metal, tensorflows in METAL_TO_TENSORFLOW.items():
        if tf_series in tensorflows:
            return metal
    return None


def pairing_verdict(tensorflow_version, metal_version):
    """(ok, message) for a TensorFlow / tensorflow-metal pair, per Apple's table."""
    tf_series = series(tensorflow_version)
    metal = series(metal_version)
    supported = METAL_TO_TENSORFLOW.get(metal)
    expected = metal_series_for(tensorflow_version)
    if supported is None:
        return False, f"tensorflow-metal {metal_version} is not in Apple's pairing table"
    if tf_series in supported:
        return True, (
            f"tensorflow-metal {metal_version} is Apple's pairing for TensorFlow "
            f"{tensorflow_version}"
        )
    wanted = " or ".join(series_name(t) for t in supported)
    advice = (
        f"; for TensorFlow {series_name(tf_series)} Apple lists tensorflow-metal "
        f"{series_name(expected)}.x"
        if expected
        else f"; Apple lists no tensorflow-metal for TensorFlow {series_name(tf_series)}"
    )
    return False, (
        f"tensorflow-metal {metal_version} is Apple's pairing for TensorFlow {wanted}, "
        f"not {tensorflow_version}{advice}"
    )
