"""What XLA makes of a step where the benchmarks' figures depend on it,
asserted on the optimized HLO, never on times. XLA's CPU backend emits an
elementwise instruction that it fused with nothing as a "wrapped" one
(`wrapped_add`) and does not vectorize it: SGD with momentum's lone `p + m`
made its step 8-12 % slower (benchmarks/RESULTS.md)."""

import re

import jax
import jax.numpy as jnp
import keras
import numpy as np
import optax
import pytest
import tensorflow as tf

import jaxopt_port
import jaxopt_port.legacy
import tf_bridge
import tf_bridge.legacy

from bridge_cases import bridged_step_hlo

SHAPE = (64, 33)


def trace_momentum(momentum: float = 0.9):
  """optax's momentum alone: its update is its slot, so `p + update` is a
  lone add (the control)."""
  return optax.trace(momentum)


def _lone_elementwise(hlo: str) -> list[str]:
  """The wrapped instructions computing a parameter-shaped array."""
  shape = ",".join(map(str, SHAPE))
  return re.findall(r"%(wrapped_[a-z]+)[.\d]* = f32\[" + shape + r"\]", hlo)


def _port_hlo(transform) -> str:
  params = {"w": jnp.ones(SHAPE), "b": jnp.ones((3,))}
  grads = jax.tree.map(lambda p: 0.3 * p, params)

  def step(params, state, grads):
    updates, state = transform.update(grads, state, params)
    return optax.apply_updates(params, updates), state

  return jax.jit(step, donate_argnums=(0, 1)).lower(
      params, transform.init(params), grads).compile().as_text()


@pytest.mark.parametrize("make", [jaxopt_port.sgd, jaxopt_port.legacy.sgd],
                         ids=["keras3", "legacy"])
def test_port_sgd_momentum_updates_the_parameter_in_a_loop_of_its_own(make):
  assert _lone_elementwise(_port_hlo(make(0.01, momentum=0.9))) == []
  assert _lone_elementwise(_port_hlo(trace_momentum())) == ["wrapped_add"]


def _bridged_hlo(optimizer, legacy: bool) -> str:
  variable = (tf.Variable if legacy else keras.Variable)(
      np.ones(SHAPE, np.float32))
  return bridged_step_hlo(optimizer, variable, tf.fill(SHAPE, 0.3))


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_bridged_sgd_momentum_updates_the_parameter_in_a_loop_of_its_own(
    legacy):
  module = tf_bridge.legacy if legacy else tf_bridge
  assert _lone_elementwise(
      _bridged_hlo(module.SGD(0.01, momentum=0.9), legacy)) == []
  control = module.keras_optimizer(trace_momentum)()
  assert _lone_elementwise(_bridged_hlo(control, legacy)) == ["wrapped_add"]
