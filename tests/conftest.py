"""Shared fixtures: the bundled Flare spec and freshly written synthetic packets."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, Phase, settings

FLARE_SPEC_ID = "flare/bce032c0"

# Hypothesis profiles (docs/testing.md). "ci", the default: few examples, derandomized
# (the same examples on every run, no example database) and not shrunk (shrinking whole
# packets takes minutes), so the suite is stable and quick. "thorough", opt-in with
# FLARESPEC_HYPOTHESIS_PROFILE=thorough: many random examples, failures shrunk.
# Examples measure whole packets (0.1-0.3 s each): no deadline, and slow data is expected.
HYPOTHESIS_PROFILE_VARIABLE = "FLARESPEC_HYPOTHESIS_PROFILE"
_SLOW_IS_EXPECTED = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True, database=None,
                          phases=[Phase.explicit, Phase.reuse, Phase.generate],
                          print_blob=True, suppress_health_check=_SLOW_IS_EXPECTED)
settings.register_profile("thorough", max_examples=1000, deadline=None, database=None,
                          print_blob=True, suppress_health_check=_SLOW_IS_EXPECTED)
settings.load_profile(os.environ.get(HYPOTHESIS_PROFILE_VARIABLE, "ci"))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: reads or builds tens of megabytes (deselect: -m 'not slow')")
    # The compiled-spec cache of the whole run (and of every subprocess, which inherits the
    # environment) lives in a private directory: the user's ~/.cache is never read or written.
    config.spec_cache_dir = tempfile.mkdtemp(prefix="flarespec-spec-cache-")
    os.environ["FLARESPEC_CACHE_DIR"] = config.spec_cache_dir
    # ... and so does the key that proves an entry was written by flarespec (compiler/cache.py)
    config.spec_cache_key_dir = tempfile.mkdtemp(prefix="flarespec-spec-cache-key-")
    os.environ["FLARESPEC_CACHE_KEY_FILE"] = os.path.join(config.spec_cache_key_dir, "key")


def pytest_unconfigure(config):
    for name in ("spec_cache_dir", "spec_cache_key_dir"):
        if getattr(config, name, None):
            shutil.rmtree(getattr(config, name), ignore_errors=True)


@pytest.fixture(scope="session")
def flare_spec():
    from flarespec.adapter.select import bundled_specs

    return next(spec for spec in bundled_specs() if spec.id == FLARE_SPEC_ID)


@pytest.fixture(scope="session")
def flare_constants(flare_spec):
    return flare_spec.constants


@pytest.fixture
def packet_pair(tmp_path, flare_spec):
    from flarespec.fixtures.writers import write_pair

    return write_pair(tmp_path / "packets", flare_spec)


@pytest.fixture(scope="module")
def template(tmp_path_factory, flare_spec):
    """A valid packet written once per module (its root); copy it with ``packet``."""
    from flarespec.fixtures.writers import write_packet

    return write_packet(tmp_path_factory.mktemp("template") / "packet", flare_spec).parent


@pytest.fixture
def packet(template, tmp_path):
    """A fresh copy of the module's valid template packet (its root), to mutate."""
    root = tmp_path / "packet"
    shutil.copytree(template, root)
    return root
