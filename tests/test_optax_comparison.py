"""docs/jax.md's "Coming from optax" table is what a user measures: for each
port, the largest parameter difference from optax's same-named optimizer
with optax's defaults and with the closest optax settings, after 200 steps
at the same learning rate, on a seeded least-squares problem with unit-scale
gradients and with gradients scaled by 1e-4 (where epsilon decides)."""

import pathlib
import re

import jax
import jax.numpy as jnp
import jaxopt_port
import numpy as np
import optax
import pytest

PAGE = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "jax.md"
        ).read_text()
LR = 0.01
STEPS = 200

# port: (the port, optax's same-named optimizer, the closest optax call as
# the page writes it, that call).
COMPARISONS = {
    "sgd": (jaxopt_port.sgd(LR, momentum=0.9), optax.sgd(LR, momentum=0.9),
            "optax.sgd(lr, momentum=0.9)", optax.sgd(LR, momentum=0.9)),
    "adam": (jaxopt_port.adam(LR), optax.adam(LR),
             "optax.adam(lr, eps=1e-7)", optax.adam(LR, eps=1e-7)),
    "adamw": (jaxopt_port.adamw(LR), optax.adamw(LR),
              "optax.adamw(lr, eps=1e-7, weight_decay=0.004)",
              optax.adamw(LR, eps=1e-7, weight_decay=0.004)),
    "rmsprop": (jaxopt_port.rmsprop(LR), optax.rmsprop(LR),
                "optax.rmsprop(lr, eps=1e-7)", optax.rmsprop(LR, eps=1e-7)),
    "adagrad": (jaxopt_port.adagrad(LR), optax.adagrad(LR),
                "optax.adagrad(lr)", optax.adagrad(LR)),
    "adadelta": (jaxopt_port.adadelta(LR), optax.adadelta(LR),
                 "optax.adadelta(lr, rho=0.95, eps=1e-7)",
                 optax.adadelta(LR, rho=0.95, eps=1e-7)),
    "adamax": (jaxopt_port.adamax(LR), optax.adamax(LR),
               "optax.adamax(lr, eps=1e-7)", optax.adamax(LR, eps=1e-7)),
    "nadam": (jaxopt_port.nadam(LR), optax.nadam(LR),
              "optax.nadam(lr, eps=1e-7)", optax.nadam(LR, eps=1e-7)),
    "lion": (jaxopt_port.lion(LR), optax.lion(LR),
             "optax.lion(lr, weight_decay=0.0)",
             optax.lion(LR, weight_decay=0.0)),
    "lamb": (jaxopt_port.lamb(LR), optax.lamb(LR), "optax.lamb(lr, eps=1e-7)",
             optax.lamb(LR, eps=1e-7)),
    "adafactor": (
        jaxopt_port.adafactor(LR), optax.adafactor(LR),
        "optax.adafactor(lambda t: jnp.minimum(lr, 1 / jnp.sqrt(t + 1.0)), "
        "min_dim_size_to_factor=1)",
        optax.adafactor(lambda t: jnp.minimum(LR, 1 / jnp.sqrt(t + 1.0)),
                        min_dim_size_to_factor=1)),
    "schedule_free_adamw": (
        jaxopt_port.schedule_free_adamw(LR),
        optax.contrib.schedule_free_adamw(LR),
        "optax.contrib.schedule_free_adamw(lr)",
        optax.contrib.schedule_free_adamw(LR)),
    "muon": (jaxopt_port.muon(LR), optax.contrib.muon(LR),
             "optax.contrib.muon(lr)", optax.contrib.muon(LR)),
}


def problem(scale):
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.standard_normal((64, 8)), jnp.float32)
  y = jnp.asarray(np.tanh(rng.standard_normal((64, 4))), jnp.float32)
  params = {"kernel": jnp.asarray(rng.standard_normal((8, 4)) * 0.3,
                                  jnp.float32),
            "bias": jnp.zeros(4, jnp.float32)}
  loss = lambda p: scale * jnp.mean((x @ p["kernel"] + p["bias"] - y) ** 2)
  return params, loss


def trained(transform, scale):
  params, loss = problem(scale)

  def body(carry, _):
    params, state = carry
    updates, state = transform.update(jax.grad(loss)(params), state, params)
    return (optax.apply_updates(params, updates), state), None

  return jax.jit(lambda p: jax.lax.scan(body, (p, transform.init(p)), None,
                                        length=STEPS)[0][0])(params)


def largest_difference(a, b):
  return max(float(jnp.max(jnp.abs(x - y)))
             for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))


def page_rows():
  section = PAGE[PAGE.index("## Coming from optax"):]
  section = section[:section.index("\n## ", 1)]
  rows = {}
  for line in section.splitlines():
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    match = re.fullmatch(r"`jaxopt_port\.(\w+)`", cells[0])
    if line.startswith("|") and match:
      rows[match.group(1)] = cells
  return rows


def agrees(cell, measured):
  """A figure of the page: "< bound" (rounding, which varies by CPU: "< 1e-6",
  or a bound where rounding decides a step's sign) or a value the
  measurement matches within a factor of 3."""
  if cell.startswith("< "):
    return measured < float(cell[2:])
  stated = float(cell)
  return stated / 3 <= measured <= stated * 3


def test_the_page_lists_every_comparison():
  assert list(page_rows()) == list(COMPARISONS)


@pytest.mark.parametrize("name", list(COMPARISONS))
def test_page_figures_are_measured(name):
  port, default, closest_text, closest = COMPARISONS[name]
  cells = page_rows()[name]
  assert cells[2] == f"`{closest_text}`"
  figures = [figure.strip() for cell in cells[3:5]
             for figure in cell.split("/")]
  measured = []
  for scale in (1.0, 1e-4):
    ours = trained(port, scale)
    measured += [largest_difference(ours, trained(default, scale)),
                 largest_difference(ours, trained(closest, scale))]
  wrong = [(figure, f"{value:.1e}") for figure, value in zip(figures, measured)
           if not agrees(figure, value)]
  assert not wrong, f"{name}: figure of docs/jax.md, measured: {wrong}"
