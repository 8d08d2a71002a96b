"""The state's layout does not depend on how the hyperparameters come:
for every port of tests/ports.py (each catalog declaration, its base
argument and slot variants, the wrappers), `optax.inject_hyperparams`
with its `init` traced (as `jax.jit(init)` runs it: every numeric argument
a traced array) makes the tree structure, shapes and dtypes of the plain
call's state, and its `update` keeps them. A slot the native class keeps
only for a nonzero argument is there at 0 too, left at zeros."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from ports import CASES, IDS
from tf_bridge import catalog

# OptimizerV2's `lr` alias warns, as tf_keras does (ports.LEGACY_BASE_2).
pytestmark = pytest.mark.filterwarnings(
    "ignore:The `lr` argument is deprecated:DeprecationWarning")

PARAMS = {"kernel": jnp.ones((4, 3)), "bias": jnp.zeros(3),
          "scale": jnp.array(2.0)}


def layout(tree):
  return jax.tree.structure(tree), [(tuple(leaf.shape), jnp.dtype(leaf.dtype))
                                    for leaf in jax.tree.leaves(tree)]


# At 0 their native classes keep no slot for these arguments.
ZEROS = [("sgd", "momentum"), ("rmsprop", "momentum"),
         ("legacy.sgd", "momentum"), ("legacy.rmsprop", "momentum"),
         ("momentum_sgd", "momentum"), ("addons.sgdw", "momentum"),
         ("addons.yogi", "beta1")]
ZERO_CASES = [(f"{name} {argument}=0", catalog.lookup(name).port,
               {**catalog.lookup(name).required, argument: 0.0})
              for name, argument in ZEROS]


@pytest.mark.parametrize("name,factory,kwargs", CASES + ZERO_CASES,
                         ids=IDS + [name for name, _, _ in ZERO_CASES])
def test_injected_traced_init_has_the_plain_layout(name, factory, kwargs):
  del name
  plain = jax.eval_shape(factory(**kwargs).init, PARAMS)
  injected = optax.inject_hyperparams(factory)(**kwargs)
  # Traced, as under `jax.jit`: nothing compiles.
  state = jax.eval_shape(injected.init, PARAMS)
  assert layout(state.inner_state) == layout(plain)
  _, after = jax.eval_shape(injected.update, PARAMS, state, PARAMS)
  assert layout(after) == layout(state)


def _gradients(step):
  keys = jax.random.split(jax.random.PRNGKey(step), len(PARAMS))
  return {name: jax.random.normal(key, value.shape)
          for key, (name, value) in zip(keys, sorted(PARAMS.items()))}


def _run(transform, jit, state=None, steps=4):
  update = jax.jit(transform.update) if jit else transform.update
  params = PARAMS
  state = transform.init(params) if state is None else state
  for step in range(steps):
    updates, state = update(_gradients(step), state, params)
    params = optax.apply_updates(params, updates)
  return params, state


@pytest.mark.parametrize("name,argument", ZEROS,
                         ids=[name for name, _ in ZEROS])
def test_a_zero_leaves_its_slot_at_zeros(name, argument):
  """At 0, plain and injected (its update traced under `jit` or not), the
  params and the whole state are the plain call's, to the rounding of the
  injected float32 hyperparameters (legacy RMSprop's epsilon sits outside
  the root without momentum), the slot a nonzero value needs at zeros; a
  nonzero value injected later runs on it."""
  declaration = catalog.lookup(name)
  kwargs = {**declaration.required, argument: 0.0}
  plain_params, plain_state = _run(declaration.port(**kwargs), jit=True)
  assert any(np.all(leaf == 0) and leaf.ndim == 2
             for leaf in jax.tree.leaves(plain_state))
  injected = optax.inject_hyperparams(declaration.port)(**kwargs)
  for jit in (False, True):
    params, state = _run(injected, jit)
    close = lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5,  # pylint: disable=unnecessary-lambda-assignment
                                                    atol=1e-7)
    jax.tree.map(close, params, plain_params)
    if name == "addons.yogi":
      # TFA's Yogi chooses its step when made: a beta1 set to 0 later (a
      # tensor's) keeps m = g, as the step computes it.
      jax.tree.map(close, state.inner_state.slots.m, _gradients(3))
      state.inner_state.slots.m.update(plain_state.slots.m)
    jax.tree.map(close, state.inner_state, plain_state)
  state.hyperparams[argument] = jnp.asarray(0.5)
  moved, _ = _run(injected, jit=True, state=state, steps=2)
  at_zero, _ = _run(injected, jit=True, state=_run(injected, True)[1],
                    steps=2)
  assert not all(np.array_equal(a, b) for a, b in zip(
      jax.tree.leaves(moved), jax.tree.leaves(at_zero)))
