"""The page beside asv's site: written after a real `asv publish`, names escaped."""

import json
import subprocess

import pytest

from tfgpubench.config import load_config
from tfgpubench.report import publish_page

from .conftest import MACHINE, asv_publish, raw, result_files, write_config
from .stackrepo import make_stack_repo

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HOSTILE_MACHINE = "box<img src=x onerror=alert('machine')>"
HOSTILE_TAG = "\"><svg/onload=alert('tag')>"  # git allows no spaces in tags
HOSTILE_MODE = "<script>alert('mode')</script>"


def published_site(tmp_path, results_dir, repo):
    config_path = write_config(tmp_path, results_dir, repo)
    asv_publish(config_path)
    config = load_config(config_path)
    return config, publish_page(config, show_progress=False)


def test_page_written_after_asv_publish(tmp_path, results_copy, stack_repo):
    config, index = published_site(tmp_path, results_copy, stack_repo)
    assert index == tmp_path / "html" / "report" / "index.html"
    assert (tmp_path / "html" / "index.html").is_file(), "asv's own site is still there"
    page = index.read_text()
    images = sorted(index.parent.glob("*.png"))
    assert len(images) >= 4
    for image in images:
        assert image.read_bytes().startswith(PNG_SIGNATURE)
        assert f'src="{image.name}"' in page
    assert 'href="../index.html#multiply.Multiply.time_multiply?machine=testbox"' in page
    assert "No GPU results" in page and "tf-2.16.2" in page and "tf-2.21.0" in page


def test_broken_file_is_named_on_the_page(tmp_path, results_copy, stack_repo):
    broken = result_files(results_copy)[0]
    broken.write_text(broken.read_text()[:100])
    _, index = published_site(tmp_path, results_copy, stack_repo)
    page = index.read_text()
    assert 'id="problems"' in page and broken.name in page and "corrupt or truncated" in page
    assert "Verdicts" not in page or page.count('class="verdicts"') == 1


def make_hostile_results(tmp_path, results_dir):
    """The fixture results under a machine name, stack tag and mode name made of HTML."""
    repo = tmp_path / "hostile-repo"
    hashes = make_stack_repo(repo)
    subprocess.run(["git", "-C", str(repo), "tag", HOSTILE_TAG, hashes["tf-2.21.0"]], check=True)
    subprocess.run(["git", "-C", str(repo), "tag", "-d", "tf-2.21.0"], check=True,
                   capture_output=True)
    machine_dir = results_dir / HOSTILE_MACHINE
    (results_dir / MACHINE).rename(machine_dir)
    (machine_dir / "machine.json").write_text(json.dumps({"machine": HOSTILE_MACHINE,
                                                          "version": 1}))
    for path in sorted(p for p in machine_dir.glob("*.json") if p.name != "machine.json"):
        data = raw(path)
        data["params"]["machine"] = HOSTILE_MACHINE
        params = data["results"]["multiply.Multiply.time_multiply"][1]
        params[3] = [f"'{HOSTILE_MODE}'" if v == "'graph_loop'" else v for v in params[3]]
        path.write_text(json.dumps(data))
    return repo


@pytest.fixture
def hostile_page(tmp_path, results_copy):
    repo = make_hostile_results(tmp_path, results_copy)
    _, index = published_site(tmp_path, results_copy, repo)
    return index


def test_every_name_on_the_page_is_escaped(hostile_page):
    page = hostile_page.read_text()
    for hostile in (HOSTILE_MACHINE, HOSTILE_TAG, HOSTILE_MODE):
        assert hostile not in page
    assert "box&lt;img src=x onerror=alert(&#x27;machine&#x27;)&gt;" in page
    assert "&quot;&gt;&lt;svg/onload=alert(&#x27;tag&#x27;)&gt;" in page
    assert "&lt;script&gt;alert(&#x27;mode&#x27;)&lt;/script&gt;" in page
    assert "<script" not in page and "<svg" not in page and "<img src=x" not in page
