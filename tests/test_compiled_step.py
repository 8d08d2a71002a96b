"""What XLA makes of a step where the benchmarks' figures depend on it,
asserted on the optimized HLO, never on times. XLA's CPU backend emits an
elementwise instruction that it fused with nothing as a "wrapped" one
(`wrapped_add`) and does not vectorize it: SGD with momentum's lone `p + m`
made its step 8-12 % slower. Where the params' update reads a slot's old
value, XLA copies the slot before overwriting it unless the new slot is made
to follow the new params: Lion's copies made its step 2.4x slower in JAX
(benchmarks/RESULTS.md)."""

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
from tf_bridge import catalog

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


def _copies(hlo: str) -> int:
  """The copies of a parameter-shaped input in the step (what XLA adds to
  keep an input's old value while its buffer is overwritten)."""
  entry = hlo[hlo.index("\nENTRY"):]
  inputs = set(re.findall(r"(%[\w.-]+) = [^\n]* parameter\(", entry))
  shape = ",".join(map(str, SHAPE))
  return sum(operand in inputs for operand in re.findall(
      r"= f32\[" + shape + r"\]\{[\d,]*\} copy\((%[\w.-]+)\)", entry))


def _port_step(transform, **extra_args):
  def step(params, state, grads):
    updates, state = transform.update(grads, state, params, **extra_args)
    return optax.apply_updates(params, updates), state
  return jax.jit(step, donate_argnums=(0, 1))


def _port_hlo(transform, **extra_args) -> str:
  params = {"w": jnp.ones(SHAPE), "b": jnp.ones((3,))}
  grads = jax.tree.map(lambda p: 0.3 * p, params)
  return _port_step(transform, **extra_args).lower(
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


def _reads_old_slots(declaration) -> bool:
  arguments = {k: v for k, v in declaration.required.items()
               if k != "learning_rate"}
  return declaration.port.make_update_step(**arguments).reads_old_slots


READING_OLD_SLOTS = [d for d in catalog.CATALOG if _reads_old_slots(d)]
# COCOB's step reads its old slots too, but ordered after the params it still
# copies two of its five, and ran 8 % slower than with all copied.
KEEPS_COPIES = {"addons.cocob"}


def test_steps_reading_old_slots_are_declared():
  assert {d.name for d in READING_OLD_SLOTS} == {
      "lion", "ftrl", "legacy.ftrl", "tf1.ftrl", "schedule_free_adamw",
      "addons.adabelief", "tfrs.clippy_adagrad", "tf_keras.lion",
      "tf_keras.ftrl"}


@pytest.mark.parametrize("declaration", catalog.CATALOG,
                         ids=[d.name for d in catalog.CATALOG])
def test_port_applied_as_is_writes_every_slot_in_place(declaration):
  """Told that the updates reach the params as they are, no port copies a
  parameter-sized buffer; without it, those whose step reads an old slot
  copy each such slot."""
  hlo = _port_hlo(declaration.make_port(), applied_as_is=True)
  assert (_copies(hlo) > 0) == (declaration.name in KEEPS_COPIES)
  if declaration in READING_OLD_SLOTS:
    assert _copies(_port_hlo(declaration.make_port())) > 0


@pytest.mark.parametrize("declaration", READING_OLD_SLOTS,
                         ids=[d.name for d in READING_OLD_SLOTS])
def test_port_applied_as_is_keeps_the_bits(declaration):
  transform = declaration.make_port()
  rng = np.random.default_rng(0)
  grads = [{"w": jnp.asarray(rng.standard_normal(SHAPE), jnp.float32)}
           for _ in range(4)]
  ends = []
  for extra_args in ({}, {"applied_as_is": True}):
    step = _port_step(transform, **extra_args)
    params = {"w": jnp.asarray(np.linspace(-1, 1, 64 * 33).reshape(SHAPE),
                               jnp.float32)}
    state = transform.init(params)
    for g in grads:
      params, state = step(params, state, g)
    ends.append(jax.tree.leaves((params, state)))
  for plain, applied in zip(*ends):
    np.testing.assert_array_equal(plain, applied)


BRIDGED_READING_OLD_SLOTS = [
    (tf_bridge.Lion, False), (tf_bridge.legacy.Lion, True),
    (tf_bridge.Ftrl, False), (tf_bridge.legacy.Ftrl, True),
    (tf_bridge.tf1.Ftrl, False), (tf_bridge.ScheduleFreeAdamW, False),
    (tf_bridge.addons.AdaBelief, False),
    (tf_bridge.legacy.addons.AdaBelief, True)]


@pytest.mark.parametrize(
    "make, legacy", BRIDGED_READING_OLD_SLOTS,
    ids=[f"{make.__module__}.{make.__name__}"
         for make, _ in BRIDGED_READING_OLD_SLOTS])
def test_bridged_step_writes_old_read_slots_in_place(make, legacy):
  assert _copies(_bridged_hlo(make(0.01), legacy)) == 0


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_bridged_step_of_a_transform_that_copies_its_slot(legacy):
  """The control: a user's optax Lion, which the bridge cannot order, keeps
  the copy of its momentum."""
  module = tf_bridge.legacy if legacy else tf_bridge
  # (Named apart: Keras would take a class named Lion for tf_bridge.Lion.)
  control = module.keras_optimizer(
      optax.lion, name="LegacyOptaxLion" if legacy else "OptaxLion")(0.01)
  assert _copies(_bridged_hlo(control, legacy)) == 1
