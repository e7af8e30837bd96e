"""The README's walk-through, run as written against a live service: its
address and key are the only things replaced (see test_walkthrough.py for
the environment)."""

import os
import re
from pathlib import Path

import pytest

URL = os.environ.get("TM_URL")
pytestmark = pytest.mark.skipif(not URL, reason="TM_URL is not set: no live service to test against")


def test_the_readme_walk_through_runs_as_written():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    assert '"http://127.0.0.1:8080"' in code and '"tm_…"' in code
    code = code.replace('"http://127.0.0.1:8080"', repr(URL)).replace('"tm_…"', repr(os.environ["TM_KEY"]))
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["b"].tokens > 0
    assert scope["g"].stance in ("answered", "partial", "couldnt")
    assert "ana" in [r.learner for r in scope["view"].learners]
    assert scope["archive"][:2] == b"PK", "the export is a ZIP archive"
