"""WGAN-GP (PyTorch-GAN style): the critic steps every batch, the generator every n_critic
batches under an `if`; one sync after that `if`, none inside it. [XLA201]"""

import torch
import torch.autograd as autograd
import torch_xla


def compute_gradient_penalty(D, real_samples, fake_samples):
    alpha = torch.rand(real_samples.size(0), 1, 1, 1, device=real_samples.device)
    interpolates = (alpha * real_samples + ((1 - alpha) * fake_samples)).requires_grad_(True)
    d_interpolates = D(interpolates)
    fake = torch.ones_like(d_interpolates)
    gradients = autograd.grad(
        outputs=d_interpolates, inputs=interpolates, grad_outputs=fake,
        create_graph=True, retain_graph=True, only_inputs=True,
    )[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def train(generator, discriminator, batches, optimizer_G, optimizer_D, opt, lambda_gp=10):
    batches_done = 0
    for epoch in range(opt.n_epochs):
        for i, (real_imgs, _) in enumerate(batches):

            # ---------------------
            #  Train Discriminator
            # ---------------------
            optimizer_D.zero_grad()
            z = torch.randn(real_imgs.shape[0], opt.latent_dim, device=real_imgs.device)
            fake_imgs = generator(z)
            real_validity = discriminator(real_imgs)
            fake_validity = discriminator(fake_imgs)
            gradient_penalty = compute_gradient_penalty(discriminator, real_imgs.data, fake_imgs.data)
            d_loss = -torch.mean(real_validity) + torch.mean(fake_validity) + lambda_gp * gradient_penalty
            d_loss.backward()
            optimizer_D.step()

            optimizer_G.zero_grad()

            # Train the generator every n_critic steps
            if i % opt.n_critic == 0:

                # -----------------
                #  Train Generator
                # -----------------
                fake_imgs = generator(z)
                fake_validity = discriminator(fake_imgs)
                g_loss = -torch.mean(fake_validity)
                g_loss.backward()
                optimizer_G.step()

                print(
                    "[Epoch %d/%d] [Batch %d/%d] [D loss: %f] [G loss: %f]"
                    % (epoch, opt.n_epochs, i, len(batches), d_loss.item(), g_loss.item())
                )
                batches_done += opt.n_critic
            torch_xla.sync()
