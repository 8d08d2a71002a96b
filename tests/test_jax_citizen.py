"""Every port keeps optax's contract, as JAX code relies on it.

For every cataloged port, its base-argument and slot variants and the
wrappers (tests/ports.py): `init` returns buffers of its own, so the
standard `jax.jit(step, donate_argnums=(0, 1))` runs; `init` takes abstract
params (`jax.ShapeDtypeStruct`, `jax.eval_shape`) and gives the concrete
init's layout; and the state keeps its tree, shapes and dtypes across
`update`, with and without `optax.inject_hyperparams`, under `jit` and
`lax.scan` (that one for the variants of every sixth port: `sampling`).
"""

import collections

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import sampling
from ports import CASES, IDS

# OptimizerV2's `lr` alias warns, as tf_keras does (ports.LEGACY_BASE_2).
pytestmark = pytest.mark.filterwarnings(
    "ignore:The `lr` argument is deprecated:DeprecationWarning")

PARAMS = {"dense": {"kernel": jnp.arange(12.0).reshape(4, 3) / 11 - 0.5,
                    "bias": jnp.array([0.5, -0.5, 0.25])},
          "embedding": jnp.linspace(-1.0, 1.0, 12).reshape(6, 2),
          "scale": jnp.array(2.0, jnp.float32)}
STEPS = 3


def _gradients(step):
  leaves, treedef = jax.tree.flatten(PARAMS)
  keys = jax.random.split(jax.random.fold_in(jax.random.PRNGKey(0), step),
                          len(leaves))
  return treedef.unflatten([jax.random.normal(k, leaf.shape, leaf.dtype)
                            for k, leaf in zip(keys, leaves)])


GRADIENTS = [_gradients(step) for step in range(STEPS)]
STACKED_GRADIENTS = jax.tree.map(lambda *g: jnp.stack(g), *GRADIENTS)


def fresh_params():
  return jax.tree.map(jnp.copy, PARAMS)


def layout(tree):
  """Tree structure, then each leaf's shape, dtype and weak type."""
  return jax.tree.structure(tree), [
      (tuple(leaf.shape), jnp.dtype(leaf.dtype),
       bool(getattr(leaf, "weak_type", False)))
      for leaf in jax.tree.leaves(tree)]


def train_step(transform):
  def step(params, state, grads):
    updates, state = transform.update(grads, state, params)
    return optax.apply_updates(params, updates), state
  return step


def buffers(tree):
  return [leaf.unsafe_buffer_pointer() for leaf in jax.tree.leaves(tree)
          if leaf.size]


def scanned(donated, kept):
  """`STEPS` steps of two `(transform, params, state)` runs, each in a
  `lax.scan` (which refuses a carry whose type changes), both in one
  jitted call (one compile: it costs more than the steps); `donated` gives
  its params' and state's buffers to XLA. Their final (params, state)."""
  def scan(transform, carry):
    step = train_step(transform)
    return jax.lax.scan(lambda carry, grads: (step(*carry, grads), None),
                        carry, STACKED_GRADIENTS)[0]

  run = jax.jit(lambda donated_carry, kept_carry: (
      scan(donated[0], donated_carry), scan(kept[0], kept_carry)),
                donate_argnums=(0,))
  return run(donated[1:], kept[1:])


def _donation_cases():
  """Every port at its defaults and every wrapper; of each kind of variant
  (+base, +base2, +slots: state the shared base code adds), every sixth
  port's (`sampling`; all of them in the long profile)."""
  seen = collections.Counter()
  for case in CASES:
    kind = case[0].partition("+")[2]
    if not kind or sampling.whole(seen[kind], shift=4):
      yield case
    seen[kind] += 1


DONATION_CASES = list(_donation_cases())


@pytest.mark.parametrize("name,factory,kwargs", DONATION_CASES,
                         ids=[name for name, _, _ in DONATION_CASES])
def test_own_buffers_donation_and_stable_layout(name, factory, kwargs):
  """`init` gives buffers of its own, a donating jitted step takes them
  over, and the state keeps its layout under `lax.scan`, with the numeric
  arguments as given and with `inject_hyperparams` passing every one as a
  traced array (both runs in one compile)."""
  del name
  transform = factory(**kwargs)
  params = fresh_params()
  state = transform.init(params)
  own = buffers(state)
  assert len(own) == len(set(own)), "two state leaves share a buffer"
  assert not set(own) & set(buffers(params)), "a state leaf is a parameter"
  donated = [leaf for leaf in jax.tree.leaves((params, state)) if leaf.size]
  injected = optax.inject_hyperparams(factory)(**kwargs)
  injected_state = injected.init(PARAMS)
  (new_params, new_state), (injected_params, injected_after) = scanned(
      (transform, params, state), (injected, PARAMS, injected_state))
  assert layout(new_state) == layout(state)
  assert layout(injected_after) == layout(injected_state)
  # XLA took the buffers over (a leaf it could not reuse stays alive).
  assert all(leaf.is_deleted() for leaf in donated)
  assert all(np.all(np.isfinite(leaf))
             for leaf in jax.tree.leaves((new_params, injected_params)))


@pytest.mark.parametrize("name,factory,kwargs", CASES, ids=IDS)
def test_abstract_init_has_the_concrete_layout(name, factory, kwargs):
  del name
  transform = factory(**kwargs)
  concrete = transform.init(PARAMS)
  abstract_params = jax.tree.map(
      lambda p: jax.ShapeDtypeStruct(p.shape, p.dtype), PARAMS)
  from_structs = transform.init(abstract_params)
  assert layout(from_structs) == layout(concrete)
  assert all(isinstance(leaf, jax.Array)
             for leaf in jax.tree.leaves(from_structs))
  shapes = jax.eval_shape(transform.init, PARAMS)
  assert jax.tree.structure(shapes) == jax.tree.structure(concrete)
  assert [(s.shape, s.dtype) for s in jax.tree.leaves(shapes)] == [
      (c.shape, c.dtype) for c in jax.tree.leaves(concrete)]
