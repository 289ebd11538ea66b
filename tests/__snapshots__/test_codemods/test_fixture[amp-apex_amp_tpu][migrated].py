# fixture: runtime=torch-tpu
"""Under TorchTPU: apex amp O2, spelled through `import apex`, with new names for what
amp.initialize returns and two losses in one step (a GAN's): the forward pass of each becomes
bfloat16 autocast on the "tpu" device, with no import beyond torch. [XLA408]"""

import torch


def build(generator, discriminator, opt_g, opt_d):
    [gen, disc], [og, od] = [generator, discriminator], [opt_g, opt_d]
    return gen, disc, og, od


def step(gen, disc, og, od, noise, real):
    with torch.autocast("tpu", dtype=torch.bfloat16):
        fake = gen(noise)
        d_loss = disc(real).mean() - disc(fake.detach()).mean()
    od.zero_grad()
    d_loss.backward()
    od.step()
    with torch.autocast("tpu", dtype=torch.bfloat16):
        g_loss = -disc(fake).mean()
    og.zero_grad()
    g_loss.backward()
    og.step()
