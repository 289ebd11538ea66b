"""Scaler-named values that are not used as a GradScaler is: nothing to guess."""


def normalise(scaler, batch):
    scaled = scaler.scale(batch)  # a feature scaler: its result never goes to backward()
    return scaled


def anneal(temperature_scaler, epoch):
    temperature_scaler.step(epoch)  # no optimizer goes in
    temperature_scaler.update()
