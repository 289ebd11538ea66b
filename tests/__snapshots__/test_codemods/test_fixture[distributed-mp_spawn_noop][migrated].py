"""Launched the PyTorch/XLA way already; a pool of CPU workers is not a spawn of replicas."""

import multiprocessing

import torch_xla


def train(index, config):
    pass


if __name__ == "__main__":
    torch_xla.launch(train, args=({},))
    with multiprocessing.Pool(4) as pool:
        pool.map(print, range(4))
