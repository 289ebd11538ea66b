"""A device count the parent spawns over, also read as a global by a function of the module
(a log line) or as a closure's variable: it stays, since dropping it would leave those reads
undefined (a worker's parameter of the same name is its own, and does not keep it). [XLA601]"""

import os
import torch_xla
import torch_xla.runtime as xr


def xla_launch_device_count():
    """The devices torch_xla.launch runs the worker on, on this host, counted without starting the
    XLA runtime (a device query would, and the launch would then fail): a process per TPU chip
    (fewer where TPU_PROCESS_BOUNDS says so), a worker per device of each; on the CPU one process
    with CPU_NUM_DEVICES devices (1 unless set). Written by xla-migrate (XLA601)."""
    if xr.device_type() == "TPU":
        tpu = torch_xla._internal.tpu
        return tpu.num_local_processes() * tpu.num_logical_cores_per_chip()
    return int(os.environ.get("CPU_NUM_DEVICES", 1))


def log(message):
    print(f"[{nprocs} processes] {message}")


def train(rank, nprocs):
    log(f"worker {rank} of {nprocs}")


def evaluate(rank, world):
    print(f"evaluating on {rank} of {world}")


def main():
    world = xla_launch_device_count()

    def report():
        print("spawned", world)

    torch_xla.launch(evaluate, args=(world,))
    report()


if __name__ == "__main__":
    nprocs = xla_launch_device_count()
    torch_xla.launch(train, args=(nprocs,))
    main()
