"""A detection fine-tune as torchvision's reference trains it: the model built by its builder,
by its class, and through a submodule's path. [XLA101, XLA201, XLA707]"""

import torch
import torchvision
from torchvision.models.detection import maskrcnn_resnet50_fpn
from torchvision.models.detection.retinanet import RetinaNet
from torchvision.models.detection.backbone_utils import resnet_fpn_backbone
import torch_xla

device = torch_xla.device()
# TODO(xla-migrate): XLA707 `fasterrcnn_resnet50_fpn` builds a detection model whose forward pass has shapes that follow the data: its region proposals keep what non-maximum suppression leaves of each image (torchvision's rpn.py) and its heads sample and filter per image (roi_heads.py), so XLA compiles new graphs at every step (a Faster R-CNN: about 60 a step); on a TPU, keep the shapes fixed: targets padded to a fixed number of boxes per image, a fixed number of proposals and detections (top-k by score instead of thresholds and NMS), or a detection library written for fixed shapes; see https://docs.pytorch.org/xla/master/perf/recompilation.html
model = torchvision.models.detection.fasterrcnn_resnet50_fpn(weights=None, num_classes=3).to(device)
# TODO(xla-migrate): XLA707 `maskrcnn_resnet50_fpn` builds a detection model whose forward pass has shapes that follow the data: its region proposals keep what non-maximum suppression leaves of each image (torchvision's rpn.py) and its heads sample and filter per image (roi_heads.py), so XLA compiles new graphs at every step (a Faster R-CNN: about 60 a step); on a TPU, keep the shapes fixed: targets padded to a fixed number of boxes per image, a fixed number of proposals and detections (top-k by score instead of thresholds and NMS), or a detection library written for fixed shapes; see https://docs.pytorch.org/xla/master/perf/recompilation.html
masks = maskrcnn_resnet50_fpn(weights=None, num_classes=3)
# TODO(xla-migrate): XLA707 `RetinaNet` builds a detection model whose forward pass has shapes that follow the data: it matches anchors to each image's boxes and filters its outputs by score and NMS, so XLA compiles new graphs at every step (a Faster R-CNN: about 60 a step); on a TPU, keep the shapes fixed: targets padded to a fixed number of boxes per image, a fixed number of proposals and detections (top-k by score instead of thresholds and NMS), or a detection library written for fixed shapes; see https://docs.pytorch.org/xla/master/perf/recompilation.html
retina = RetinaNet(resnet_fpn_backbone(backbone_name="resnet18", weights=None), num_classes=3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for images, targets in []:
    images = [image.to(device) for image in images]
    losses = model(images, targets)
    loss = sum(losses.values())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
