""".ci/run tests the wheel it built, installed: check that the tests import it, not the checkout."""
import os
import pathlib

import pytest

import dispatcher


@pytest.mark.skipif(os.environ.get("DISPATCHER_TEST_INSTALLED") != "1", reason="set by .ci/run, which tests a wheel")
def test_the_installed_package_is_the_one_under_test():
    # The checkout's own package directory, not the checkout: a venv may live inside it.
    source = pathlib.Path(__file__).resolve().parents[1] / "dispatcher"
    assert source not in pathlib.Path(dispatcher.__file__).resolve().parents, dispatcher.__file__
