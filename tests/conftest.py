"""Shared fixtures: the bundled Flare spec and freshly written synthetic packets."""

from __future__ import annotations

import pytest

FLARE_SPEC_ID = "flare/bce032c0"


@pytest.fixture(scope="session")
def flare_spec():
    from flarespec.adapter.select import bundled_specs

    return next(spec for spec in bundled_specs() if spec.id == FLARE_SPEC_ID)


@pytest.fixture(scope="session")
def flare_constants(flare_spec):
    return flare_spec.constants


@pytest.fixture
def packet_pair(tmp_path, flare_constants):
    from flarespec.fixtures.writer import write_pair

    return write_pair(tmp_path / "packets", flare_constants)
