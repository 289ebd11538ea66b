"""Neural style transfer with L-BFGS (the PyTorch tutorial): the sync follows
`optimizer.step(closure)`, never the closure that L-BFGS calls several times a step. [XLA201]"""

import torch
import torch.optim as optim
import torch_xla


def get_input_optimizer(input_img):
    # this line to show that input is a parameter that requires a gradient
    optimizer = optim.LBFGS([input_img])
    return optimizer


def run_style_transfer(model, style_losses, content_losses, input_img, num_steps=300,
                       style_weight=1000000, content_weight=1):
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = get_input_optimizer(input_img)

    print('Optimizing..')
    run = [0]
    while run[0] <= num_steps:

        def closure():
            # correct the values of updated input image
            with torch.no_grad():
                input_img.clamp_(0, 1)

            optimizer.zero_grad()
            model(input_img)
            style_score = 0
            content_score = 0

            for sl in style_losses:
                style_score += sl.loss
            for cl in content_losses:
                content_score += cl.loss

            style_score *= style_weight
            content_score *= content_weight

            loss = style_score + content_score
            loss.backward()

            run[0] += 1
            if run[0] % 50 == 0:
                print("run {}:".format(run))
                print('Style Loss : {:4f} Content Loss: {:4f}'.format(
                    style_score.item(), content_score.item()))

            return style_score + content_score

        optimizer.step(closure)
        torch_xla.sync()

    # a last correction...
    with torch.no_grad():
        input_img.clamp_(0, 1)

    return input_img
