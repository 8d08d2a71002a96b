"""The parity command's training runs: its problem, and one run of it with
a Keras optimizer of any generation or with an optax transformation."""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any, Callable

import numpy as np

from tf_bridge import testing

SAMPLES, FEATURES, OUTPUTS = 64, 8, 4


@dataclasses.dataclass(frozen=True)
class Problem:
  inputs: np.ndarray
  targets: np.ndarray
  initial: tuple[np.ndarray, np.ndarray]  # kernel, bias


def make_problem(seed: int) -> Problem:
  """Targets of a kernel and bias of scale 0.1, noise 0.01, the kernel
  starting at scale 0.01: at the common default learning rate, 0.001,
  whose steps move a parameter at most 0.1 in 100 steps, most optimizers
  take the loss down several-fold."""
  rng = np.random.default_rng(seed)
  inputs = rng.standard_normal((SAMPLES, FEATURES)).astype(np.float32)
  true_kernel = 0.1 * rng.standard_normal((FEATURES, OUTPUTS))
  true_bias = 0.1 * rng.standard_normal(OUTPUTS)
  targets = (inputs @ true_kernel + true_bias + 0.01 * rng.standard_normal(
      (SAMPLES, OUTPUTS))).astype(np.float32)
  kernel = (0.01 * rng.standard_normal((FEATURES, OUTPUTS))).astype(np.float32)
  bias = np.zeros(OUTPUTS, np.float32)
  return Problem(inputs, targets, (kernel, bias))


@dataclasses.dataclass
class Run:
  """One implementation's training run."""
  name: str
  trajectory: list[list[np.ndarray]]  # Parameters after each step.
  losses: list[float]  # Loss after each step.
  seconds_per_step: float | None  # None: not timed (another process).


def _timed_loop(step, steps: int) -> tuple[list[Any], float]:
  """Runs `step()` `steps` times; the time excludes the first (build) call."""
  results = [step()]
  start = time.perf_counter()
  results += [step() for _ in range(steps - 1)]
  return results, (time.perf_counter() - start) / max(steps - 1, 1)


def run_keras(optimizer: Any, problem: Problem, steps: int, name: str
              ) -> Run:
  """Trains with a Keras optimizer of any generation, native or bridged,
  a step per eager call."""
  import keras  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  inputs, targets = tf.constant(problem.inputs), tf.constant(problem.targets)
  make = (keras.Variable if isinstance(optimizer, keras.optimizers.Optimizer)
          else tf.Variable)
  variables = [make(value, name=label) for value, label in
               zip(problem.initial, ("kernel", "bias"))]

  def loss_value():
    kernel, bias = variables
    return tf.reduce_mean(tf.square(tf.matmul(inputs, kernel) + bias - targets))

  def step():
    with tf.GradientTape() as tape:
      loss = loss_value()
    testing.apply_gradients(optimizer, tape.gradient(loss, variables),
                            variables)
    return [np.array(v.numpy()) for v in variables], float(loss_value())

  results, seconds = _timed_loop(step, steps)
  return Run(name, [r[0] for r in results], [r[1] for r in results], seconds)


@functools.lru_cache(maxsize=4)
def _port_step(transform: Any) -> Callable[..., Any]:
  """`transform`'s jitted training step, compiled once for all its runs
  (the reference's reruns from another start among them)."""
  import jax  # pylint: disable=import-outside-toplevel
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  import optax  # pylint: disable=import-outside-toplevel

  def loss_fn(params, inputs, targets):
    kernel, bias = params
    return jnp.mean(jnp.square(inputs @ kernel + bias - targets))

  @jax.jit
  def train_step(params, state, inputs, targets):
    gradients = jax.grad(loss_fn)(params, inputs, targets)
    updates, state = transform.update(gradients, state, params)
    params = optax.apply_updates(params, updates)
    return params, state, loss_fn(params, inputs, targets)

  return train_step


def run_port(transform: Any, problem: Problem, steps: int, name: str) -> Run:
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  train_step = _port_step(transform)
  inputs, targets = jnp.asarray(problem.inputs), jnp.asarray(problem.targets)
  params = [jnp.asarray(value) for value in problem.initial]
  state = transform.init(params)

  def step():
    nonlocal params, state
    params, state, loss = train_step(params, state, inputs, targets)
    return [np.asarray(p) for p in params], float(loss)

  results, seconds = _timed_loop(step, steps)
  return Run(name, [r[0] for r in results], [r[1] for r in results], seconds)
