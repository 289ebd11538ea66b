"""XLA707: torchvision's detection models, whose forward pass has shapes that follow the data,
are flagged where the script builds one (the migration guide's "Understanding Recompilations")."""

from __future__ import annotations

import libcst as cst

from codemods.recompilation.common import GRAPH_BREAKS_DOC, RECOMPILATION_DOC, CompiledOnly
from migrate_xla.rule.api import ON_ACCELERATOR, Rule, names_trigger

DETECTION = "torchvision.models.detection."
# The two-stage models: the region proposal network keeps what non-maximum suppression and the
# score threshold leave of each image's boxes (rpn.py, filter_proposals), and the heads sample
# and filter per image (roi_heads.py)
TWO_STAGE = frozenset(
    {
        "FasterRCNN",
        "MaskRCNN",
        "KeypointRCNN",
        "GeneralizedRCNN",
        "fasterrcnn_resnet50_fpn",
        "fasterrcnn_resnet50_fpn_v2",
        "fasterrcnn_mobilenet_v3_large_fpn",
        "fasterrcnn_mobilenet_v3_large_320_fpn",
        "maskrcnn_resnet50_fpn",
        "maskrcnn_resnet50_fpn_v2",
        "keypointrcnn_resnet50_fpn",
    }
)
# The one-stage models: anchors are matched to each image's boxes (a count per image) and their
# outputs are filtered by score and suppressed
ONE_STAGE = frozenset(
    {
        "RetinaNet",
        "FCOS",
        "SSD",
        "retinanet_resnet50_fpn",
        "retinanet_resnet50_fpn_v2",
        "fcos_resnet50_fpn",
        "ssd300_vgg16",
        "ssdlite320_mobilenet_v3_large",
    }
)
TPU_SHAPES = (
    "on a TPU, keep the shapes fixed: targets padded to a fixed number of boxes per image, a fixed "
    "number of proposals and detections (top-k by score instead of thresholds and NMS), or a detection "
    "library written for fixed shapes"
)


class DetectionModel(CompiledOnly, Rule):
    """torchvision's detection models are flagged where the script builds one: their forward
    pass has shapes that follow the data, so every step is a new graph.

    Guide, "Understanding Recompilations": a shape that depends on the data compiles a new
    graph for each value. torchvision's two-stage detectors (Faster, Mask and Keypoint R-CNN)
    keep what non-maximum suppression leaves of each image's proposals (rpn.py:378 of
    torchvision 0.24, ``filter_proposals``) and sample and filter per image in the ROI heads
    (roi_heads.py:652 and :757); the one-stage ones (RetinaNet, FCOS, SSD) match anchors to each
    image's boxes and filter their outputs. Measured on torch_xla 2.9 (CPU PJRT): a Faster
    R-CNN trainer compiled about 60 new graphs every step, 150 s a step, and never settled.
    Report only, at the line that builds the model (the shapes change inside torchvision):
    what keeps them fixed (padded targets, top-k proposals) changes what the model computes.

    Both runtimes; under TorchTPU only in a file that calls ``torch.compile`` (the family's
    docstring).
    """

    CODE = "XLA707"
    NAME = "detection-model"
    SUMMARY = "torchvision's detection models (R-CNNs, RetinaNet, FCOS, SSD), whose shapes follow the data, are flagged"
    FIX = None
    SEVERITY = "warning"
    TRIGGERS = (names_trigger(*(DETECTION + name for name in TWO_STAGE | ONE_STAGE)),)
    REQUIRES = (ON_ACCELERATOR,)
    BEFORE = (
        "from torchvision.models import detection\n\nmodel = detection.fasterrcnn_resnet50_fpn(num_classes=3).cuda()\n"
    )
    AFTER = (
        "from torchvision.models import detection\n\n"
        "# TODO(xla-migrate): XLA707 `fasterrcnn_resnet50_fpn` builds a detection model whose forward pass "
        "has shapes that follow the data: its region proposals keep what non-maximum suppression leaves of "
        "each image (torchvision's rpn.py) and its heads sample and filter per image (roi_heads.py), so XLA "
        "compiles new graphs at every step (a Faster R-CNN: about 60 a step); on a TPU, keep the shapes "
        "fixed: targets padded to a fixed number of boxes per image, a fixed number of proposals and "
        "detections (top-k by score instead of thresholds and NMS), or a detection library written for "
        f"fixed shapes; see {RECOMPILATION_DOC}\n"
        "model = detection.fasterrcnn_resnet50_fpn(num_classes=3).cuda()\n"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name is None or not name.startswith(DETECTION):
            return updated
        model = name.rsplit(".", 1)[-1]
        if model not in TWO_STAGE | ONE_STAGE or not self.matters():
            return updated
        if model in TWO_STAGE:
            why = (
                "its region proposals keep what non-maximum suppression leaves of each image (torchvision's "
                "rpn.py) and its heads sample and filter per image (roi_heads.py)"
            )
        else:
            why = "it matches anchors to each image's boxes and filters its outputs by score and NMS"
        if self.ctx.api.lazy:
            cost, doc = "so XLA compiles new graphs at every step (a Faster R-CNN: about 60 a step)", RECOMPILATION_DOC
        else:
            cost, doc = "so `torch.compile` breaks its graphs and recompiles for new shapes", GRAPH_BREAKS_DOC
        self.flag(
            original,
            f"`{model}` builds a detection model whose forward pass has shapes that follow the data: {why}, "
            f"{cost}; {TPU_SHAPES}; see {doc}",
        )
        return updated
