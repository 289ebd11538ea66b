"""What float64 may cost: the multiply-adds in convolutions past which ``--precision auto`` runs
as written, and those float64 may take to decide runs as written that settle nothing."""

from __future__ import annotations

# Multiply-adds in convolutions over the run (those of the first forward pass times --steps)
# past which --precision auto runs as written instead of in float64: XLA's CPU float64
# convolutions are ~40x slower than float32 ones (child/float64.py). The examples' largest, the
# ResNet of fixtures/examples/resnet_fakedata.py, does 0.2 G a forward pass (1.6 G in 8
# steps) and verifies in float64; the ResNet-18 of benchmarks/bench_verify.py, 14.5 G (145 G
# in 10 steps), would take over 900 s in float64 and runs as written.
FLOAT64_CONV_BUDGET = 4_000_000_000
# Runs as written that settle nothing, where float64 was left for its cost alone, are compared
# again in float64 over as many steps as this many multiply-adds allow (reruns.decided_in_float64):
# - where they disagree past the twin's tolerance: rounding the twin does not model (a float32 GAN
#   amplifies it) is then no mismatch, and a wrong migration still is one. rasbt/machine-learning-
#   book's DCGAN notebook (0.49 G a forward pass): 4.9e-4 apart at step 3 as written against a
#   calibrated 1e-4, 5e-13 in float64 (docs/realworld.md);
# - where they agree, but over fewer steps than a verdict needs whose tolerance could catch a
#   wrong migration (compare.DECIDING_RTOL): a chaotic training's calibrated tolerance passes 1e-2
#   by its second or third step (a siamese network with Adadelta and BatchNorm: 2.0).
FLOAT64_DECIDING_BUDGET = 2 * FLOAT64_CONV_BUDGET
