"""A device count the parent spawns over, also read as a global by a function of the module
(a log line) or as a closure's variable: it stays, since dropping it would leave those reads
undefined (a worker's parameter of the same name is its own, and does not keep it). [XLA601]"""

import torch
import torch_xla


def log(message):
    print(f"[{nprocs} processes] {message}")


def train(rank, nprocs):
    log(f"worker {rank} of {nprocs}")


def evaluate(rank, world):
    print(f"evaluating on {rank} of {world}")


def main():
    # TODO(xla-migrate): XLA601 devices cannot be counted before `torch_xla.launch` (the query starts the XLA runtime in the parent and the launch fails): read `xr.world_size()` inside the worker instead
    world = torch.cuda.device_count()

    def report():
        print("spawned", world)

    torch_xla.launch(evaluate, args=(world,))
    report()


if __name__ == "__main__":
    # TODO(xla-migrate): XLA601 devices cannot be counted before `torch_xla.launch` (the query starts the XLA runtime in the parent and the launch fails): read `xr.world_size()` inside the worker instead
    nprocs = torch.cuda.device_count()
    torch_xla.launch(train, args=(nprocs,))
    main()
