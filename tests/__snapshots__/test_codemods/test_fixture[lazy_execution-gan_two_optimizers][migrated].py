"""A GAN steps two optimizers per iteration: one sync after the last of them. [XLA201]"""

import torch
import torch_xla


def train_gan(netD, netG, loader, optimizerD, optimizerG, criterion, nz, device):
    for i, (real, _) in enumerate(loader):
        real = real.to(device)
        netD.zero_grad()
        noise = torch.randn(real.size(0), nz, 1, 1, device=device)
        fake = netG(noise)
        errD = criterion(netD(real), torch.ones(real.size(0), device=device)) + criterion(
            netD(fake.detach()), torch.zeros(real.size(0), device=device)
        )
        errD.backward()
        optimizerD.step()

        netG.zero_grad()
        errG = criterion(netD(fake), torch.ones(real.size(0), device=device))
        errG.backward()
        optimizerG.step()
        torch_xla.sync()
