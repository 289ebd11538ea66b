# fixture: unsafe-fixes
"""Host syncs every step: hinted; the running loss sum stays on the device (unsafe fix). [XLA201, XLA202]"""

import torch
import torch_xla


def train_epoch(model, loader, optimizer, criterion, device):
    running_loss = 0.0
    correct = 0
    for inputs, labels in loader:
        inputs, labels = inputs.to(device), labels.to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        running_loss += loss.detach()
        correct += (outputs.argmax(1) == labels).sum().detach()
        print(loss)
        history = outputs.detach().cpu().numpy()
    return running_loss / len(loader), correct, history
