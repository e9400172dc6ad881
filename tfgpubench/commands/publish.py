"""Publish html/ from results/: asv's site, made to work with no network, and the
report page.

The stacks repository asv orders results by is built from stacks.toml first,
so a fresh checkout (or a CI job that gathered results/ from several machines)
can publish. `asv publish` writes the site; the libraries its pages load from
CDNs (jQuery, flot, stupidtable, blueimp-md5, Bootstrap) are then served from
html/vendor/, taken from the npm registry at the releases asv names (one
stand-in: stupidtable 1.0.1 was never on npm) and checked against the
registry's integrity hashes, and against the page's own where npm holds the
CDN's very file. Downloads are cached, so the next publish needs no
network; a library that cannot be had keeps its CDN link, and a line says
which and why.
"""

import os
import sys
from pathlib import Path

from ..config import add_config_argument
from ..runner import build_stacks_repo, publish, read_conf
from ..stacks.repo import RepoError
from ..stacks.table import TableError


def add_arguments(parser):
    add_config_argument(parser)
    parser.add_argument("--no-report", action="store_true",
                        help="publish asv's site only, without the report page")
    parser.add_argument("--keep-cdn", action="store_true",
                        help="leave asv's pages loading their libraries from CDNs (the site "
                             "then needs network to show its graphs)")


def run(args):
    config_path = Path(args.config).resolve()
    if not config_path.is_file():
        print(f"error: {args.config}: no asv configuration here", file=sys.stderr)
        return 2
    root = config_path.parent
    # asv resolves its directories against the working directory.
    os.chdir(root)
    try:
        build_stacks_repo(root, read_conf(config_path))
    except (TableError, RepoError) as exc:
        print(f"error: {exc}; nothing was published", file=sys.stderr)
        return 2
    published = publish(config_path, report=not args.no_report,
                        self_contained=not args.keep_cdn)
    return 0 if published else 1
