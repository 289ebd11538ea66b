"""Both runs seeded alike (torch, Python's random, NumPy), and the script's own seeding noted."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from .recorder import Recorder


def _seed_everything(recorder: Recorder, seed: int) -> None:
    """Seed torch, Python's random and NumPy alike in both runs, then note the script's own seeding.

    Without it each child draws its seeds from the OS, and an unseeded script does not
    even agree with itself from one run to the next. A script that seeds still wins: its
    own call comes later.
    """
    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None:
        numpy.random.seed(seed)
        default_rng = numpy.random.default_rng

        def seeded_default_rng(seed=None):
            # an unseeded Generator takes the OS's entropy: draw its seed from the seeded state
            return default_rng(numpy.random.randint(2**31) if seed is None else seed)

        numpy.random.default_rng = seeded_default_rng

    def noting(owner, name, what):
        original = getattr(owner, name)

        def seed_call(*args, **kwargs):
            recorder.seeded_by_script.add(what)
            return original(*args, **kwargs)

        setattr(owner, name, seed_call)

    noting(torch, "manual_seed", "torch")
    for device_module in (torch.cuda, getattr(torch, "tpu", None)):  # torch.tpu: where emulated
        if device_module is not None:
            noting(device_module, "manual_seed", "torch")
            noting(device_module, "manual_seed_all", "torch")
    noting(random, "seed", "random")
    if numpy is not None:
        noting(numpy.random, "seed", "numpy")
