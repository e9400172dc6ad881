"""The suite's asv configuration, as every command reads it."""

from pathlib import Path

DEFAULT_CONFIG = "asv.conf.json"


def load_config(path=DEFAULT_CONFIG):
    """asv's own Config for `path`, with its directories made absolute.

    Raises SystemExit with a one-line message when the file is missing, so
    commands run outside a checkout say where they looked.
    """
    from asv.config import Config

    path = Path(path)
    if not path.is_file():
        raise SystemExit(
            f"{path}: no asv configuration here; run from the suite's checkout or pass --config"
        )
    return Config.load(str(path))


def add_config_argument(parser):
    parser.add_argument(
        "--config", default=DEFAULT_CONFIG, help="asv configuration file (default: %(default)s)"
    )
