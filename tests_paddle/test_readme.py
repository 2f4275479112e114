"""Every Python snippet of the README runs as written, each saved to its own file as the README says.

The snippets are the README's ```python blocks, in order; each runs in a fresh interpreter, all in one
directory (``serve.py`` reads what ``export_op.py`` wrote). They need no GPU (the README's GPU advice is prose); a snippet that ever needs one must compile
only where Paddle sees none.
"""

import re

import pytest

from conftest import ROOT, run_python

README = (ROOT / "README.md").read_text()
SNIPPETS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_the_readme_is_short_and_has_its_snippets():
    # About 250 lines (issue 22); the timing-and-tuning section (issue 29) took it past that.
    assert len(README.splitlines()) <= 280
    assert len(SNIPPETS) >= 3


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("readme")


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_readme_snippet_runs_as_written(index, workdir):
    proc = run_python(SNIPPETS[index] + "\nprint('SNIPPET OK')\n", cwd=str(workdir))
    assert proc.returncode == 0, f"README snippet {index}:\n{SNIPPETS[index][:400]}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    assert "SNIPPET OK" in proc.stdout


def test_every_documented_page_exists():
    for page in re.findall(r"\]\((docs/[\w.-]+\.md)\)", README):
        assert (ROOT / page).is_file(), page
