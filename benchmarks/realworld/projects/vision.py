"""Vision library recipes and vision projects: timm's train.py (its own timm/ package), DeiT and
ConvNeXt (main.py on the timm library), DETR (COCO detection), milesial's Pytorch-UNet.

Data are generated (random images in ImageFolder / COCO / image+mask layouts); no pretrained
weights are downloaded: where a script loads them, a randomly initialised state_dict is written
where the loader finds it in its cache.
"""

from __future__ import annotations

import json
import os
import zlib

from corpus import case, pin  # noqa: F401  (prepare.py puts benchmarks/realworld on sys.path)

REPOS = {
    "huggingface/pytorch-image-models": "aa4b5850c1543fa488abf260f18390eda46cf85d",
    "facebookresearch/deit": "7e160fe43f0252d17191b71cbb5826254114ea5b",
    "facebookresearch/ConvNeXt": "048efcea897d999aed302f2639b6270aedf8d4c8",
    "facebookresearch/detr": "29901c51d7fe8712168b8d0d64351170bc0f83e0",
    "milesial/Pytorch-UNet": "21d7850f2af30a9695bbeea75f3136aa538cfc4a",
}
pin(REPOS)


# ---------------------------------------------------------------------------- generators


def _rng(path):
    import numpy as np

    return np.random.default_rng(zlib.crc32(path.encode()) & 0xFFFF)


def gen_imagenet_folder(path, splits=("train", "validation"), classes=4, n=12, h=72):
    """An ImageNet-style folder: path/<split>/<class>/<i>.JPEG (random RGB images)."""
    from PIL import Image

    rng = _rng(path)
    for split in splits:
        for k in range(classes):
            d = os.path.join(path, split, f"n{k:08d}")
            os.makedirs(d, exist_ok=True)
            for i in range(n if split == splits[0] else max(2, n // 3)):
                img = rng.integers(0, 256, (h, h, 3), dtype="uint8")
                Image.fromarray(img).save(os.path.join(d, f"img_{i}.JPEG"), format="JPEG")


def gen_coco_detection(path, n_train=4, n_val=2, h=48, w=64, categories=3):
    """A COCO 2017 layout: path/{train2017,val2017}/<id>.jpg and
    path/annotations/instances_{train,val}2017.json (boxes only, 1 to 3 an image; DETR's
    ConvertCocoPolysToMask reads the segmentation field only with --masks)."""
    from PIL import Image

    rng = _rng(path)
    os.makedirs(os.path.join(path, "annotations"), exist_ok=True)
    cats = [{"id": k + 1, "name": f"thing{k}", "supercategory": "thing"} for k in range(categories)]
    ann_id = 1
    for split, n in (("train2017", n_train), ("val2017", n_val)):
        os.makedirs(os.path.join(path, split), exist_ok=True)
        images, anns = [], []
        for i in range(n):
            image_id = 1000 * (split == "val2017") + i + 1
            name = f"{image_id:012d}.jpg"
            Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype="uint8")).save(os.path.join(path, split, name))
            images.append({"id": image_id, "file_name": name, "height": h, "width": w})
            for _ in range(int(rng.integers(1, 4))):
                bw, bh = float(rng.integers(8, w // 2)), float(rng.integers(8, h // 2))
                x, y = float(rng.integers(0, w - bw)), float(rng.integers(0, h - bh))
                anns.append(
                    {
                        "id": ann_id,
                        "image_id": image_id,
                        "category_id": int(rng.integers(1, categories + 1)),
                        "bbox": [x, y, bw, bh],
                        "area": bw * bh,
                        "iscrowd": 0,
                        "segmentation": [[x, y, x + bw, y, x + bw, y + bh, x, y + bh]],
                    }
                )
                ann_id += 1
        with open(os.path.join(path, "annotations", f"instances_{split}.json"), "w") as f:
            # pycocotools>=2.0.8's loadRes (DETR's evaluation) copies the "info" of the ground truth
            info = {"description": "generated", "version": "1.0", "year": 2017}
            json.dump({"info": info, "licenses": [], "images": images, "annotations": anns, "categories": cats}, f)


def gen_torchvision_checkpoint(path, arch="resnet50", seed=0):
    """A randomly initialised torchvision ARCH state_dict saved as PATH (TORCH_HOME/hub/checkpoints/
    <the file name of the weights' url>): torch.hub finds it in its cache and loads it, nothing
    is downloaded (the hash is checked only on download)."""
    import sys

    import torch

    try:
        import torchvision
    except ImportError:  # prepare.py runs from .venv; torchvision lives in /work/tv (README)
        sys.path.append("/work/tv")
        import torchvision
    torch.manual_seed(seed)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save(getattr(torchvision.models, arch)().state_dict(), path)


def gen_carvana(path, n=24, h=64, w=96):
    """Pytorch-UNet's data/: imgs/<id>.jpg and masks/<id>_mask.gif (Carvana naming: CarvanaDataset's
    mask_suffix "_mask"), binary masks 0/255 (two classes)."""
    import numpy as np
    from PIL import Image

    rng = _rng(path)
    for sub in ("imgs", "masks"):
        os.makedirs(os.path.join(path, sub), exist_ok=True)
    yy, xx = np.mgrid[0:h, 0:w]
    for i in range(n):
        idx = f"{i:04x}cafe_{i % 16 + 1:02d}"
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype="uint8")).save(os.path.join(path, "imgs", idx + ".jpg"))
        cy, cx, r = rng.integers(h // 4, 3 * h // 4), rng.integers(w // 4, 3 * w // 4), rng.integers(8, h // 3)
        mask = (((yy - cy) ** 2 + (xx - cx) ** 2) < r * r).astype("uint8") * 255
        Image.fromarray(mask, mode="L").save(os.path.join(path, "masks", idx + "_mask.gif"))


GENERATORS = {
    "imagenet_folder": gen_imagenet_folder,
    "coco_detection": gen_coco_detection,
    "torchvision_checkpoint": gen_torchvision_checkpoint,
    "carvana": gen_carvana,
}

# wandb: Pytorch-UNet logs every step to it (wandb.init(...).log, .config.update, wandb.Image,
# wandb.Histogram); nothing of it matters to training: a stand-in that records nothing.
_WANDB = '''"""A stand-in for wandb: init gives a run whose methods do nothing; Image/Histogram take anything."""


class _Config(dict):
    def update(self, *args, **kwargs):
        pass


class _Run:
    id = "standin"
    name = "standin"

    def __init__(self):
        self.config = _Config()
        self.summary = {}

    def log(self, *args, **kwargs):
        pass

    def finish(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


run = None
config = _Config()


def init(*args, **kwargs):
    global run
    run = _Run()
    return run


def log(*args, **kwargs):
    pass


def finish(*args, **kwargs):
    pass


class Image:
    def __init__(self, *args, **kwargs):
        pass


class Histogram:
    def __init__(self, *args, **kwargs):
        pass
'''

STUBS = {"wandb": {"wandb/__init__.py": _WANDB}}

# ---------------------------------------------------------------------------- cases

TIMM = "huggingface/pytorch-image-models"
DEIT_FILES = [
    "main.py",
    "datasets.py",
    "engine.py",
    "losses.py",
    "samplers.py",
    "augment.py",
    "utils.py",
    "models.py",
    "models_v2.py",
    "cait_models.py",
    "resmlp_models.py",
    "patchconvnet_models.py",
]
CONVNEXT_FILES = [
    "main.py",
    "datasets.py",
    "engine.py",
    "optim_factory.py",
    "utils.py",
    "models/convnext.py",
    "models/convnext_isotropic.py",
]

CASES = [
    case(
        "timm_resnet18_amp_ema",
        TIMM,
        {"train.py": "train.py", "timm/": "timm/"},
        "train.py",
        [
            "--data-dir",
            "data",
            "--model",
            "resnet18",
            "--num-classes",
            "4",
            "--img-size",
            "64",
            "-b",
            "4",
            "--epochs",
            "1",
            "--amp",
            "--model-ema",
            "--mixup",
            "0.2",
            "--cutmix",
            "1.0",
            "--smoothing",
            "0.1",
            "--workers",
            "1",
            "--log-interval",
            "2",
            "--warmup-epochs",
            "0",
            "--output",
            "output",
            "--checkpoint-hist",
            "1",
        ],
        # timm's loader sets persistent_workers=True, which DataLoader refuses with --workers 0
        data=[("imagenet_folder", "data")],
        tags=[
            "vision",
            "timm",
            "library-recipe",
            "AMP",
            "GradScaler",
            "EMA",
            "mixup",
            "cutmix",
            "label-smoothing",
            "prefetcher",
            "multi-package",
        ],
        # two XLA compilations (the first step creates SGD's momentum buffers) take about a minute
        # each on 2 shared cores: verify's projection from them stops a 10-step run as too slow
        verify=["--steps", "5"],
    ),
    case(
        "timm_mobilenetv3_rmsproptf",
        TIMM,
        {"train.py": "train.py", "timm/": "timm/"},
        "train.py",
        [
            "--data-dir",
            "data",
            "--model",
            "mobilenetv3_small_050",
            "--num-classes",
            "4",
            "--img-size",
            "64",
            "-b",
            "4",
            "--epochs",
            "1",
            "--opt",
            "rmsproptf",
            "--opt-eps",
            ".001",
            "--lr",
            ".016",
            "--sched",
            "step",
            "--decay-epochs",
            "1",
            "--decay-rate",
            ".973",
            "--warmup-epochs",
            "0",
            "--aa",
            "rand-m9-mstd0.5-inc1",
            "--reprob",
            "0.2",
            "--remode",
            "pixel",
            "--drop",
            "0.2",
            "--channels-last",
            "--no-prefetcher",
            "--workers",
            "1",
            "--log-interval",
            "2",
            "--output",
            "output",
            "--checkpoint-hist",
            "1",
        ],
        data=[("imagenet_folder", "data")],
        tags=[
            "vision",
            "timm",
            "library-recipe",
            "MobileNetV3",
            "RMSpropTF",
            "RandAugment",
            "random-erasing",
            "channels_last",
            "no-prefetcher",
            "step-lr",
            "multi-package",
        ],
    ),
    # DeiT and ConvNeXt import the timm *library* (pinned at timm==0.3.2, which needs torch._six):
    # timm==0.4.12 in /work/tv imports on torch 2.9 (no torch._six) and still has what both import
    # (timm.data.transforms._pil_interp, which 0.5.4 no longer has, timm.models.registry)
    case(
        "deit_tiny",
        "facebookresearch/deit",
        DEIT_FILES,
        "main.py",
        [
            "--model",
            "deit_tiny_patch16_224",
            "--input-size",
            "64",
            "--batch-size",
            "4",
            "--epochs",
            "1",
            "--data-path",
            "data",
            "--data-set",
            "IMNET",
            "--num_workers",
            "0",
            "--output_dir",
            "output",
            "--warmup-epochs",
            "0",
        ],
        data=[("imagenet_folder", "data", {"splits": ["train", "val"]})],
        tags=[
            "vision",
            "ViT",
            "DeiT",
            "timm-library",
            "AMP",
            "EMA",
            "mixup",
            "cutmix",
            "RandAugment",
            "random-erasing",
            "multi-file",
        ],
    ),
    case(
        "convnext_tiny",
        "facebookresearch/ConvNeXt",
        CONVNEXT_FILES,
        "main.py",
        [
            "--model",
            "convnext_tiny",
            "--input_size",
            "64",
            "--batch_size",
            "4",
            "--epochs",
            "1",
            "--data_path",
            "data",
            "--data_set",
            "IMNET",
            "--nb_classes",
            "4",
            "--num_workers",
            "0",
            "--output_dir",
            "output",
            "--warmup_epochs",
            "0",
            "--use_amp",
            "true",
            "--model_ema",
            "true",
            "--drop_path",
            "0.1",
            "--auto_resume",
            "false",
        ],
        data=[("imagenet_folder", "data", {"splits": ["train", "val"]})],
        tags=[
            "vision",
            "ConvNeXt",
            "timm-library",
            "AMP",
            "grad-norm-scaler",
            "EMA",
            "mixup",
            "layer-decay-optim-factory",
            "tensorboardX",
            "torch._six",
            "multi-package",
        ],
    ),
    case(
        "detr_coco",
        "facebookresearch/detr",
        ["main.py", "engine.py", "datasets/", "models/", "util/"],
        "main.py",
        [
            "--coco_path",
            "coco",
            "--backbone",
            "resnet18",
            "--batch_size",
            "1",
            "--epochs",
            "1",
            "--enc_layers",
            "1",
            "--dec_layers",
            "2",
            "--dim_feedforward",
            "64",
            "--hidden_dim",
            "32",
            "--nheads",
            "2",
            "--num_queries",
            "8",
            "--num_workers",
            "0",
            "--output_dir",
            "output",
        ],
        # the backbone loads torchvision's pretrained weights (pretrained=is_main_process()): a random
        # resnet18 (the smallest backbone main.py takes) in TORCH_HOME's hub cache; images are resized
        # to 480..800 pixels whatever their size (datasets/coco.py), so a step takes seconds
        env={"TORCH_HOME": "{case}/torch_home"},
        data=[
            ("coco_detection", "coco"),
            ("torchvision_checkpoint", "torch_home/hub/checkpoints/resnet18-f37072fd.pth", {"arch": "resnet18"}),
        ],
        tags=[
            "vision",
            "detection",
            "DETR",
            "transformer",
            "hungarian-matcher-scipy",
            "NestedTensor",
            "pycocotools",
            "FrozenBatchNorm",
            "pretrained-backbone",
            "multi-package",
        ],
        verify=["--steps", "3"],
    ),
    case(
        "milesial_unet",
        "milesial/Pytorch-UNet",
        ["train.py", "evaluate.py", "unet/", "utils/"],
        "train.py",
        ["--epochs", "1", "--batch-size", "2", "--scale", "0.5", "--amp", "--validation", "10"],
        data=[("carvana", "data")],
        stubs=["wandb"],
        tags=[
            "vision",
            "segmentation",
            "U-Net",
            "AMP",
            "GradScaler",
            "channels_last",
            "dice-loss",
            "RMSprop-foreach",
            "wandb",
            "multi-package",
        ],
        verify=["--steps", "5"],  # float16 autocast on the CPU: several seconds a step
    ),
]
