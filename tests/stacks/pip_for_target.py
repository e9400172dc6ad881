"""Run pip as if on another machine: environment markers are the target's.

pip's --platform, --python-version and --implementation choose wheels for another
machine, but pip still evaluates environment markers (`; platform_system == "Linux"`,
`; python_version >= "3.12"`) on the machine running it. A macOS resolution run on
Linux then asks for Linux-only requirements (torch 2.13's cuda-bindings) and
fails, and a Python 3.12 one takes 3.11's branches. This sets the markers of the
target, then runs pip unchanged.

usage: python pip_for_target.py MARKERS_JSON PIP_ARGUMENT...
"""

import json
import sys

from pip._internal.cli.main import main
from pip._vendor.packaging import markers


def run(target, arguments):
    here = markers.default_environment()
    # packaging looks default_environment up on its module each time a marker is
    # evaluated without an environment, as pip's resolver does.
    markers.default_environment = lambda: {**here, **target}
    return main(arguments)


if __name__ == "__main__":
    sys.exit(run(json.loads(sys.argv[1]), sys.argv[2:]))
