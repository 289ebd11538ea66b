"""The TPU generations the report is for: each chip's published figures (TPUS), and the MXU's
tiles that a matrix product is padded to."""

from __future__ import annotations

from dataclasses import dataclass

GiB = 2**30


@dataclass(frozen=True)
class Tpu:
    """One TPU generation's published figures, per chip."""

    name: str
    peak_bf16_flops: float  # FLOP/s
    hbm_bytes: int
    hbm_bandwidth: float  # bytes/s
    mxu: int  # the MXU's width: its systolic array is mxu x mxu
    source: str  # the Google Cloud page the figures come from

    def describe(self) -> str:
        return (
            f"{self.name}: {self.peak_bf16_flops / 1e12:g} TFLOP/s bf16, {self.hbm_bytes / GiB:g} GiB HBM at "
            f"{self.hbm_bandwidth / 1e9:g} GB/s, MXU {self.mxu}x{self.mxu}"
        )


# Google Cloud's published specifications, per chip (docs/tpu_performance.md cites each page).
# Peak bf16 compute, HBM capacity and HBM bandwidth from the generation's page; the MXU is
# 128 x 128 up to v5p ("An MXU is composed of 128 x 128 multiply-accumulators in a systolic
# array", /tpu/docs/system-architecture-tpu-vm), 256 x 256 on v6e ("two 256x256
# matrix-multiply units", /tpu/docs/v6e). v5p's 95 GB and v6e's 32 GB are GiB in the
# comparison table of /tpu/docs/tpu7x.
TPUS = {
    "v4": Tpu("v4", 275e12, 32 * GiB, 1200e9, 128, "https://cloud.google.com/tpu/docs/v4"),
    "v5e": Tpu("v5e", 197e12, 16 * GiB, 819e9, 128, "https://cloud.google.com/tpu/docs/v5e"),
    "v5p": Tpu("v5p", 459e12, 95 * GiB, 2765e9, 128, "https://cloud.google.com/tpu/docs/v5p"),
    "v6e": Tpu("v6e", 918e12, 32 * GiB, 1638e9, 256, "https://cloud.google.com/tpu/docs/v6e"),
}
DEFAULT_TPU = "v5e"
SUBLANES = 8  # the rows of a vector register: XLA pads a matrix's rows to 8 (Cloud TPU performance guide)
# MXU passes a float32 product takes by its precision (XLA on TPU: bfloat16 1, 3 or 6 times)
PASSES = {"DEFAULT": 1, "HIGH": 3, "HIGHEST": 6}


class UnknownTpu(ValueError):
    pass


def generation(name: str) -> Tpu:
    """The TPU generation ``name`` (``v5e``, ...); an unknown name is an error that lists the known."""
    try:
        return TPUS[name.lower()]
    except KeyError:
        raise UnknownTpu(f"unknown TPU generation {name!r}: known are {', '.join(TPUS)}") from None


# -- the tiles ---------------------------------------------------------------------------------------------


def padded(size: int, tile: int) -> int:
    return -(-size // tile) * tile


def tile_waste(rows: int, depth: int, cols: int, mxu: int) -> float:
    """The share of the MXU's work that multiplies padding, for a (rows x depth) @ (depth x cols)
    product: depth and cols padded to the MXU's width, rows to the 8 sublanes."""
    useful = rows * depth * cols
    return 1 - useful / (padded(rows, SUBLANES) * padded(depth, mxu) * padded(cols, mxu))
