"""Forward-Forward training (Hinton, 2022), layer by layer, after the popular minimal
PyTorch implementations: each layer is a Linear that owns its Adam optimizer and trains
itself to give high "goodness" to positive data (the true label written into the first
pixels) and low goodness to negative data (a wrong label).

The data is a generated 10-class problem of 8x8 "images" (class prototypes plus noise).
"""
import argparse

import torch
import torch.nn as nn
from torch.optim import Adam


def make_data(n, generator, dim=64, num_classes=10):
    prototypes = torch.rand(num_classes, dim, generator=torch.Generator().manual_seed(7))
    y = torch.randint(0, num_classes, (n,), generator=generator)
    x = prototypes[y] + 0.3 * torch.randn(n, dim, generator=generator)
    return x.clamp(0, 1), y


def overlay_y_on_x(x, y, num_classes=10):
    """Replace the first num_classes pixels of x with a one-hot of y scaled to x.max()."""
    x_ = x.clone()
    x_[:, :num_classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Net(torch.nn.Module):

    def __init__(self, dims, device, lr, num_epochs):
        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers += [Layer(dims[d], dims[d + 1], lr=lr, num_epochs=num_epochs).to(device)]

    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness += [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        goodness_per_label = torch.cat(goodness_per_label, 1)
        return goodness_per_label.argmax(1)

    def train_ff(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for i, layer in enumerate(self.layers):
            print('training layer', i, '...')
            h_pos, h_neg = layer.train_ff(h_pos, h_neg)


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, lr=0.03, num_epochs=100):
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=lr)
        self.threshold = 2.0
        self.num_epochs = num_epochs

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train_ff(self, x_pos, x_neg):
        for i in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            # The following loss pushes pos (neg) samples to values larger (smaller) than the threshold.
            loss = torch.log(1 + torch.exp(torch.cat([
                -g_pos + self.threshold,
                g_neg - self.threshold]))).mean()
            self.opt.zero_grad()
            # this backward just compute the derivative and hence is not considered backpropagation.
            loss.backward()
            self.opt.step()
            if i % 25 == 0:
                print(f'  epoch {i}: loss {loss.item():.4f}')
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


def main():
    parser = argparse.ArgumentParser(description='Forward-Forward on generated data')
    parser.add_argument('--train-size', type=int, default=512)
    parser.add_argument('--test-size', type=int, default=256)
    parser.add_argument('--hidden', type=int, default=100)
    parser.add_argument('--lr', type=float, default=0.03)
    parser.add_argument('--epochs', type=int, default=50, help='epochs per layer')
    parser.add_argument('--seed', type=int, default=1234)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

    generator = torch.Generator().manual_seed(0)
    x, y = make_data(args.train_size, generator)
    x_te, y_te = make_data(args.test_size, generator)
    x, y = x.to(device), y.to(device)

    net = Net([64, args.hidden, args.hidden], device, args.lr, args.epochs)
    x_pos = overlay_y_on_x(x, y)
    rnd = torch.randperm(x.size(0))
    x_neg = overlay_y_on_x(x, y[rnd])

    net.train_ff(x_pos, x_neg)

    print('train error:', 1.0 - net.predict(x).eq(y).float().mean().item())

    x_te, y_te = x_te.to(device), y_te.to(device)

    print('test error:', 1.0 - net.predict(x_te).eq(y_te).float().mean().item())


if __name__ == "__main__":
    main()
