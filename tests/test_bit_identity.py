"""The output bits of a fixed battery of sums (tests/bit_battery.py) equal
the digests recorded in tests/bit_digests.json: restructuring code must not
change a single bit. A change of the reduction tree re-records them on
purpose (`python tests/bit_battery.py record cpu|cuda`) and says so."""
import pytest

import bit_battery
from conftest import DEVICES


@pytest.mark.parametrize("device", DEVICES)
def test_battery_bits_equal_the_recorded_digests(device):
    want = bit_battery.load().get(device)
    assert want, f"no {device} digests recorded in {bit_battery.DIGESTS}"
    got = bit_battery.run(device)
    assert set(got) == set(want), "the battery and the recorded digests list different cases"
    bad = sorted(k for k in want if got[k] != want[k])
    assert not bad, f"{len(bad)} of {len(want)} cases changed bits: {bad}"


def test_battery_inputs_are_not_trivial():
    """The battery's inputs carry an offset and many exponents: never zeros."""
    import torch
    x = bit_battery.make_input((4096,), torch.float32, 7)
    assert (x != 0).all() and x.unique().numel() > 4000
    assert torch.frexp(x).exponent.unique().numel() >= 20  # many magnitudes
    assert (x - 3.0).abs().min().item() < 1e-3  # the offset: small terms sit near 3
