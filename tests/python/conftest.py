"""Shared fixtures: the device under test (ONEFLOW_TEST_DEVICE=cpu|cuda) and seeding."""

import os

import pytest

import oneflow as flow

DEVICE = os.environ.get("ONEFLOW_TEST_DEVICE", "cpu")


def pytest_report_header(config):
    return f"oneflow test device: {DEVICE} (built with CUDA: {flow._oneflow_internal.with_cuda})"


@pytest.fixture
def device():
    if DEVICE == "cuda" and not flow.cuda.is_available():
        pytest.skip("ONEFLOW_TEST_DEVICE=cuda but no CUDA device is available")
    return DEVICE


@pytest.fixture(autouse=True)
def _seed():
    flow.manual_seed(0)
    yield
    # A kernel error surfaces at a synchronisation point: make it this test's.
    flow.cpu.synchronize()
