"""``mypy okstra_git`` is clean (its config is in pyproject.toml): the suite runs it, so CI does."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_finds_no_error():
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "okstra_git"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
