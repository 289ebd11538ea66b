"""Whole modules pickled with torch.save: flagged, the state dict is what travels. [XLA103, XLA109, XLA502]"""

import torch
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

model = Net().to(torch_xla.device())
# TODO(xla-migrate): XLA502 `torch.save(model, ...)` pickles the whole module with its parameters on the XLA device (loadable only with torch_xla and the class's code): save `model.state_dict()` with `xm.save` and load it with `model.load_state_dict(...)`, see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
torch.save(model, "model.pt")


class GanTrainer:
    def __init__(self, netG, netD):
        self.netG = netG
        self.netD = netD

    def snapshot(self, epoch):
        # TODO(xla-migrate): XLA502 `torch.save(self.netG, ...)` pickles the whole module with its parameters on the XLA device (loadable only with torch_xla and the class's code): save `self.netG.state_dict()` with `xm.save` and load it with `self.netG.load_state_dict(...)`, see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
        torch.save(self.netG, f"netG_epoch_{epoch}.pth")
        # TODO(xla-migrate): XLA502 `torch.save(self.netD, ...)` pickles the whole module with its parameters on the XLA device (loadable only with torch_xla and the class's code): save `self.netD.state_dict()` with `xm.save` and load it with `self.netD.load_state_dict(...)`, see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
        torch.save(self.netD, f"netD_epoch_{epoch}.pth")


def export(ddp_model, path):
    # TODO(xla-migrate): XLA502 `torch.save(ddp_model.module, ...)` pickles the whole module with its parameters on the XLA device (loadable only with torch_xla and the class's code): save `ddp_model.module.state_dict()` with `xm.save` and load it with `ddp_model.module.load_state_dict(...)`, see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
    torch.save(ddp_model.module, path)
