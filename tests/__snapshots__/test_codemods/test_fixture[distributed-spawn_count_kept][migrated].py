"""The ImageNet example's launcher: the device count is the spawn's nprocs, a factor of the
world size and the divisor of each worker's batch, and the worker is called directly too, so
the count stays in the parent, counted as torch_xla.launch will start workers, without
starting the XLA runtime (a CUDA count is 0 on XLA: the batch division failed); the parent's
device test and device start no runtime either. [XLA601]"""

import argparse

import torch
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


parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", default=256, type=int)
parser.add_argument("--workers", default=4, type=int)
parser.add_argument("--world-size", default=1, type=int)
parser.add_argument("--multiprocessing-distributed", action="store_true")


def main():
    args = parser.parse_args()
    use_accel = bool(xla_launch_device_count())
    device = torch.device("xla") if use_accel else torch.device("cpu")
    print(f"Using device: {device}")
    ngpus_per_node = xla_launch_device_count()
    if args.multiprocessing_distributed:
        # ngpus_per_node processes per node: the world size grows by that factor
        args.world_size = ngpus_per_node * args.world_size
        torch_xla.launch(main_worker, args=(ngpus_per_node, args))
    else:
        main_worker(0, ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, args):
    args.batch_size = int(args.batch_size / ngpus_per_node)
    args.workers = int((args.workers + ngpus_per_node - 1) / ngpus_per_node)
    print(f"worker {gpu}: batch {args.batch_size}, world {args.world_size}")


if __name__ == "__main__":
    main()
