"""A pytest plugin: under CI (CI=true) a test skipped for a missing part fails.

A test that needs an installed part (a cached llama-server build, the shipped built-in model, a system package)
skips with a reason starting with MISSING_PART. On a developer's machine that is a skip; under CI it is a failure,
because `python3 make.py test` installs every part first, so a green CI proves the real parts ran. conftest.py
registers the hook; tests/test_ci_parts.py runs it on a test of its own.
"""
from __future__ import annotations

import os

import pytest

MISSING_PART = "missing part:"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("CI", "").lower() in ("true", "1") and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2])
        if reason.removeprefix("Skipped: ").startswith(MISSING_PART):
            report.outcome = "failed"
            report.longrepr = f"{reason}\nUnder CI a missing part is a failure: make.py test must install it."
