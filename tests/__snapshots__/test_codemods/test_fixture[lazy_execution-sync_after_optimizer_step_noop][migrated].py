"""Loops that need no sync added: already synced, xm.optimizer_step, schedulers, RL envs."""

import torch_xla
import torch_xla.core.xla_model as xm


def already_synced(model, loader, optimizer):
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        torch_xla.sync()


def distributed(model, loader, optimizer):
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        xm.optimizer_step(optimizer)


def schedule(scheduler, epochs):
    for _ in range(epochs):
        scheduler.step()


def rollout(env, policy, steps):
    obs = env.reset()
    for _ in range(steps):
        obs, reward, done, info = env.step(policy(obs))
