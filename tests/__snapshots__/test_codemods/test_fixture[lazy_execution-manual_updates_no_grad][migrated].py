"""Updates written by hand under no_grad (the "What is torch.nn really?" and "Learning PyTorch
with Examples" tutorials): the sync follows the `with` block; a helper gets its own. [XLA201]"""

import math

import torch
import torch.nn.functional as F
import torch_xla


def fit_logistic(x_train, y_train, weights, bias, bs, lr, epochs):
    n = x_train.shape[0]
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = (xb @ weights + bias).log_softmax(-1)
            loss = F.nll_loss(pred, yb)

            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
            torch_xla.sync()


def fit(model, loss_func, train_dl, lr, epochs):
    for epoch in range(epochs):
        for xb, yb in train_dl:
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= p.grad * lr
                model.zero_grad()
            torch_xla.sync()


def fit_polynomial(x, y, learning_rate=1e-6, steps=2000):
    a = torch.randn((), requires_grad=True)
    b = torch.randn((), requires_grad=True)
    c = torch.randn((), requires_grad=True)
    d = torch.randn((), requires_grad=True)
    for t in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        # Update weights using gradient descent.
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad

            # Manually zero the gradients after updating weights
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
        torch_xla.sync()
    return a, b, c, d


@torch.no_grad()
def sgd_step(optimizer, weight_decay=0.0):
    """A hand-rolled SGD step over an optimizer's parameter groups."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is None:
                continue
            d_p = p.grad
            if weight_decay != 0:
                d_p = d_p.add(p, alpha=weight_decay)
            p.add_(d_p, alpha=-group["lr"])
    torch_xla.sync()


def train_with_helper(model, batches, optimizer):
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        sgd_step(optimizer)
        optimizer.zero_grad()
