"""Self-supervised trainers of facebookresearch, launched the ImageNet-launcher way: ``mp.spawn`` of a
worker per GPU (``ngpus_per_node = torch.cuda.device_count()``), DDP, the batch divided by the
GPUs of the node, at world size 1 on an ImageFolder of random images (``data/train``, and
``data/val`` for the linear evaluations).

MoCo v2 (ShuffleBN through ``concat_all_gather`` and a ``broadcast``, a queue of keys, a momentum
key encoder), MoCo's and SimSiam's linear classification on a generated pretrained checkpoint,
SimSiam (stop-gradient, a predictor with a fixed lr), Barlow Twins (its own launcher on a
hard-coded port, SyncBatchNorm, LARS, AMP, an ``all_reduce`` in the loss) and DINO (ViT-tiny,
multi-crop, EMA teacher, fp16 GradScaler, ``init_distributed_mode`` from RANK/WORLD_SIZE).

Found running them (2026-12, torch 2.9): verify's CUDA emulation does not cover SyncBatchNorm
(DDP refuses a CPU module with SyncBatchNorm layers; simsiam, barlowtwins), the migration keeps
``convert_sync_batchnorm`` (whose forward refuses XLA tensors), and a ``tcp://`` rendezvous port
is bound by the reference and its twin side by side (moco_lincls, simsiam_lincls, barlowtwins).

MoCo is pinned at 7397dfe (2023-01-18, the last commit of the public tree before Meta's internal
tooling rewrote ``import moco.builder`` to ``import deeplearning.cross_image_ssl.moco.builder`` in
2024-12 and removed every file in 2026-02).
"""

from __future__ import annotations

import os
import sys

from corpus import case, pin

REPOS = {
    "facebookresearch/moco": "7397dfe146c7ca6bbb58e9c382498069178ba764",
    "facebookresearch/simsiam": "a7bc1772896d0dad0806c51f0bb6f3b16d290468",
    "facebookresearch/barlowtwins": "8e8d284ca0bc02f88b92328e53f9b901e86b4a3c",
    "facebookresearch/dino": "7c446df5b9f45747937fb0d72314eb9f7b66930a",
}
pin(REPOS)


def _torchvision():
    """torchvision for the generators: from the environment, else from /work/tv (run.py's
    PYTHONPATH, where torchvision lives outside .venv)."""
    try:
        import torchvision  # noqa: F401
    except ImportError:
        if os.path.isdir("/work/tv") and "/work/tv" not in sys.path:
            sys.path.append("/work/tv")
    import torchvision

    return torchvision


def gen_ssl_checkpoint(path, arch="resnet18", prefix="module.encoder_q.", fc_prefix=None):
    """A pretraining checkpoint as main_moco.py / main_simsiam.py save it ({'epoch', 'arch',
    'state_dict', 'optimizer'}): a randomly initialised ARCH's weights under PREFIX (the DDP
    'module.' and the encoder's name), the head as pretraining leaves it (MoCo's fc of dim 128,
    SimSiam's projector: dropped by main_lincls.py, which keeps only the backbone's keys)."""
    import torch

    tv = _torchvision()
    torch.manual_seed(12)
    model = tv.models.__dict__[arch](num_classes=128)
    state = {prefix + k: v for k, v in model.state_dict().items()}
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    torch.save({"epoch": 1, "arch": arch, "state_dict": state, "optimizer": None}, path)


_XCIT_HUBCONF = '''"""A stand-in for the torch.hub cache of facebookresearch/xcit:main: main_dino.py lists its
entry points while it builds its argument parser (for a help string and the --arch choice);
nothing of it is loaded unless --arch names an XCiT."""

dependencies = ["torch"]


def _unused(name):
    def entry(*args, **kwargs):
        raise NotImplementedError(f"a stand-in of the hub cache: {name} is not here")

    entry.__name__ = name
    return entry


for _name in ("xcit_nano_12_p16", "xcit_tiny_12_p16", "xcit_small_12_p16", "xcit_medium_24_p16"):
    globals()[_name] = _unused(_name)
'''


def gen_xcit_hub_cache(path):
    """TORCH_HOME/hub/facebookresearch_xcit_main/hubconf.py: torch.hub.list finds the cached repo
    there and downloads nothing (a repo named with its ref is not validated against GitHub)."""
    folder = os.path.join(path, "hub", "facebookresearch_xcit_main")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "hubconf.py"), "w") as f:
        f.write(_XCIT_HUBCONF)


GENERATORS = {
    "ssl_checkpoint": gen_ssl_checkpoint,
    "xcit_hub_cache": gen_xcit_hub_cache,
}

# 3 classes x 16 random 64x64 JPEGs: 48 images, 12 steps of 4 (the scripts crop them to 224)
TRAIN = ("image_classes", "data/train", {"n": 16, "h": 64})
VAL = ("image_classes", "data/val", {"n": 4, "h": 64})


def _launcher(port, env_url=False):
    """The ImageNet launcher's flags for one node of one process (mp.spawn of one worker).
    ENV_URL: `--dist-url env://` (MASTER_ADDR/MASTER_PORT from the environment, _ENV) instead of
    tcp://localhost:PORT: verify runs the reference and its twin side by side, and gives each its
    own MASTER_PORT for an env:// rendezvous only; at a tcp:// port both bind the same port and
    the second fails with EADDRINUSE (moco_lincls and simsiam_lincls keep tcp:// to show it)."""
    return [
        "--dist-url",
        "env://" if env_url else f"tcp://localhost:{port}",
        "--multiprocessing-distributed",
        "--world-size",
        "1",
        "--rank",
        "0",
    ]


# ACCURACY: the ImageNet example's accuracy() as MoCo's main_moco.py and main_lincls.py have it
# does `correct[:k].view(-1)` on `pred.t().eq(...)`: since TensorIterator keeps its input's strides
# that slice is not contiguous, and view raises "view size is not compatible with input tensor's
# size and stride" at the first step, on a GPU too, for any batch above one (top-5 of a batch
# of one is a (5, 1) slice, which views). The cases run a batch of 1 a GPU so that the script
# trains as written; with -b 4 the original fails in accuracy() before its first backward.
# SimSiam's main_lincls.py has the fix (`.reshape(-1)`) and runs at -b 4.


def _env(port):
    return {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}


LAUNCHER_TAGS = ["mp.spawn", "DDP", "ImageNet-launcher", "ImageFolder", "multi-package"]

CASES = [
    case(
        "moco_v2",
        "facebookresearch/moco",
        ["main_moco.py", "moco/"],
        "main_moco.py",
        [
            "data",
            "-a",
            "resnet18",
            "-j",
            "0",
            "-b",
            "1",  # see ACCURACY: the only batch its accuracy() runs at on torch 2.9
            "--lr",
            "0.03",
            "--epochs",
            "1",
            "--mlp",
            "--moco-t",
            "0.2",
            "--aug-plus",
            "--cos",
            "--moco-k",
            "4",  # a queue of 4 keys at a batch of 1: 4 places to enqueue (each its own XLA graph)
            "--moco-dim",
            "32",
            *_launcher(23461, env_url=True),
        ],
        env=_env(23461),
        data=[TRAIN],
        tags=["self-supervised", "MoCo v2", *LAUNCHER_TAGS, "ShuffleBN", "all_gather", "broadcast", "queue", "EMA"],
    ),
    case(
        "moco_lincls",
        "facebookresearch/moco",
        ["main_lincls.py", "moco/"],
        "main_lincls.py",
        [
            "data",
            "-a",
            "resnet18",
            "-j",
            "0",
            "-b",
            "1",  # see ACCURACY
            "--lr",
            "30.0",
            "--epochs",
            "1",
            "--pretrained",
            "pretrain/checkpoint_0000.pth.tar",
            *_launcher(23462),
        ],
        data=[TRAIN, VAL, ("ssl_checkpoint", "pretrain/checkpoint_0000.pth.tar", {"prefix": "module.encoder_q."})],
        tags=[
            "self-supervised",
            "linear-eval",
            *LAUNCHER_TAGS,
            "frozen-backbone",
            "pretrained-checkpoint",
            "eval-mode-train",
        ],
    ),
    case(
        "simsiam",
        "facebookresearch/simsiam",
        ["main_simsiam.py", "simsiam/"],
        "main_simsiam.py",
        [
            "data",
            "-a",
            "resnet18",
            "-j",
            "0",
            "-b",
            "4",
            "--epochs",
            "1",
            "--dim",
            "64",
            "--pred-dim",
            "16",
            "--fix-pred-lr",
            *_launcher(23463, env_url=True),
        ],
        env=_env(23463),
        data=[TRAIN],
        tags=["self-supervised", "SimSiam", *LAUNCHER_TAGS, "stop-gradient", "SyncBatchNorm", "param-groups"],
        verify=["--steps", "5"],
    ),
    case(
        "simsiam_lincls",
        "facebookresearch/simsiam",
        ["main_lincls.py", "simsiam/"],
        "main_lincls.py",
        [
            "data",
            "-a",
            "resnet18",
            "-j",
            "0",
            "-b",
            "4",  # its accuracy() reshapes (see ACCURACY)
            "--lr",
            "0.1",
            "--epochs",
            "1",
            "--pretrained",
            "pretrain/checkpoint_0000.pth.tar",
            *_launcher(23464),
        ],
        # --lars is left out: it imports apex.parallel.LARC (NVIDIA apex, a CUDA build)
        data=[TRAIN, VAL, ("ssl_checkpoint", "pretrain/checkpoint_0000.pth.tar", {"prefix": "module.encoder."})],
        tags=["self-supervised", "linear-eval", *LAUNCHER_TAGS, "frozen-backbone", "pretrained-checkpoint"],
    ),
    case(
        "barlowtwins",
        "facebookresearch/barlowtwins",
        ["main.py"],
        "main.py",
        [
            "data",
            "--workers",
            "0",
            "--epochs",
            "1",
            "--batch-size",
            "4",
            "--projector",
            "64-64",
            "--print-freq",
            "1",
            "--checkpoint-dir",
            "checkpoint",
        ],
        data=[TRAIN],
        tags=[
            "self-supervised",
            "Barlow Twins",
            "mp.spawn",
            "DDP",
            "own-launcher",
            "hard-coded-port",
            "SyncBatchNorm",
            "LARS",
            "AMP",
            "GradScaler",
            "all_reduce-in-loss",
            "resnet50",
            "single-file",
        ],
        verify=["--steps", "3"],
    ),
    case(
        "dino_vit_tiny",
        "facebookresearch/dino",
        ["main_dino.py", "utils.py", "vision_transformer.py"],
        "main_dino.py",
        [
            "--arch",
            "vit_tiny",
            "--patch_size",
            "16",
            "--out_dim",
            "256",
            "--batch_size_per_gpu",
            "4",
            "--epochs",
            "1",
            "--warmup_epochs",
            "0",
            "--local_crops_number",
            "2",
            "--num_workers",
            "0",
            "--data_path",
            "data/train",
            "--output_dir",
            "out",
        ],
        # utils.init_distributed_mode's torch.distributed.launch branch (RANK, WORLD_SIZE,
        # LOCAL_RANK; MASTER_PORT of its own, not the single-GPU branch's fixed 29500)
        env={
            "RANK": "0",
            "WORLD_SIZE": "1",
            "LOCAL_RANK": "0",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "29571",
            "TORCH_HOME": "{case}/torch_home",
        },
        data=[TRAIN, ("xcit_hub_cache", "torch_home")],
        tags=[
            "self-supervised",
            "DINO",
            "ViT",
            "DDP",
            "env-launcher",
            "multi-crop",
            "EMA-teacher",
            "AMP",
            "GradScaler",
            "clip_grad",
            "torch.hub.list",
            "multi-file",
        ],
        verify=["--steps", "3"],  # a step took 98 s of wall time at the first (fp16 autocast on the CPU, 2 busy cores)
    ),
]
