"""`python -m tfgpubench publish` in a fresh checkout: the checked-in results/ and
stacks.toml, no .stacks/ and no html/ yet, HOME of its own."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import asv
import pytest

from tests.vendor.registries import npm_reachable, refused_address
from tfgpubench.vendor.cdn import external_references

ROOT = Path(__file__).resolve().parents[2]
ASV_INDEX = Path(asv.__file__).parent / "www" / "index.html"


@pytest.fixture
def checkout(tmp_path):
    path = tmp_path / "suite"
    path.mkdir()
    for name in ("asv.conf.json", "stacks.toml"):
        shutil.copy(ROOT / name, path / name)
    shutil.copytree(ROOT / "results", path / "results")
    (path / "home").mkdir()
    return path


def publish(path, *args, registry=None):
    env = {**os.environ, "HOME": str(path / "home"), "PYTHONPATH": str(ROOT),
           "TFGPUBENCH_CACHE_DIR": str(path / "cache")}
    env.pop("npm_config_registry", None)
    if registry:
        env["NPM_CONFIG_REGISTRY"] = registry
    return subprocess.run([sys.executable, "-m", "tfgpubench", "publish", *args], cwd=path,
                          env=env, capture_output=True, text=True, timeout=300)


def test_offline_the_site_is_published_with_its_cdn_links_and_says_why(checkout):
    offline = refused_address()
    done = publish(checkout, "--no-report", registry=offline)
    assert done.returncode == 0, done.stderr
    # asv's page exactly as asv ships it, and one line saying what still needs network.
    assert (checkout / "html" / "index.html").read_bytes() == ASV_INDEX.read_bytes()
    [line] = [x for x in done.stdout.splitlines() if "from CDNs" in x]
    assert line.startswith("index.html still loads 10 file(s) from CDNs (jquery-3.3.1.min.js")
    assert f"so it needs network: the npm registry {offline} cannot be reached (" in line
    assert "Connection refused" in line
    assert (checkout / ".stacks" / ".git").is_dir()


def test_libraries_served_from_the_site_then_published_again_offline(checkout):
    if not npm_reachable():
        pytest.skip("the npm registry cannot be reached from here")
    done = publish(checkout, "--no-report")
    assert done.returncode == 0, done.stderr
    index = checkout / "html" / "index.html"
    assert external_references(index.read_text()) == []
    assert "10 CDN files of asv's pages now served from html/vendor" in done.stdout
    # asv publish rewrites html/ each time; the cache makes the network unnecessary.
    again = publish(checkout, "--no-report", registry=refused_address())
    assert again.returncode == 0, again.stderr
    assert external_references(index.read_text()) == []
    assert "cannot be reached" not in again.stdout


def test_keep_cdn_leaves_asvs_page_alone(checkout):
    done = publish(checkout, "--no-report", "--keep-cdn", registry=refused_address())
    assert done.returncode == 0, done.stderr
    assert (checkout / "html" / "index.html").read_bytes() == ASV_INDEX.read_bytes()
    assert not (checkout / "html" / "vendor").exists()
    assert "CDN" not in done.stdout


def test_a_broken_table_publishes_nothing(checkout):
    (checkout / "stacks.toml").write_text("[[linux]]\nlabel = 3\n")
    done = publish(checkout, registry=refused_address())
    assert done.returncode == 2
    assert "nothing was published" in done.stderr
    assert not (checkout / "html").exists()
