"""The ports are optax citizens: chain, inject_hyperparams, MultiSteps, jit,
scan, tree_map_params, empty trees, half precision; state keeps its layout."""


import jax
import jax.numpy as jnp
import jaxopt_port
import numpy as np
import optax
import pytest

from tf_bridge import catalog

import sampling

PARAMS = {"dense": {"kernel": jnp.arange(6.0).reshape(3, 2) / 7,
                    "bias": jnp.array([0.5, -0.5])}, "scale": jnp.array(2.0)}


def gradients(step, params=PARAMS):
  key = jax.random.fold_in(jax.random.PRNGKey(0), step)
  leaves, treedef = jax.tree.flatten(params)
  keys = jax.random.split(key, len(leaves))
  return treedef.unflatten([jax.random.normal(k, leaf.shape)
                            for k, leaf in zip(keys, leaves)])


def run(transform, steps=8, params=PARAMS, jit=True):
  update = jax.jit(transform.update) if jit else transform.update
  state = transform.init(params)
  for step in range(steps):
    updates, state = update(gradients(step, params), state, params)
    params = optax.apply_updates(params, updates)
  return params, state


def assert_trees_close(a, b, rtol=1e-6, atol=1e-7):
  jax.tree.map(lambda x, y: np.testing.assert_allclose(x, y, rtol=rtol,
                                                       atol=atol), a, b)


FULL = {"weight_decay": 0.01, "use_ema": True, "ema_overwrite_frequency": 2,
        "gradient_accumulation_steps": 2, "clipnorm": 1.0}


@pytest.mark.parametrize("index", range(len(catalog.CATALOG)),
                         ids=[d.name for d in catalog.CATALOG])
def test_state_keeps_structure_dtypes_and_shapes(index):
  """As optax's alias tests: the state is a fixed-layout pytree under jit;
  for every sixth port (`sampling`: op by op, the eager run costs most of
  the test; every port in the long profile) jit == eager."""
  declaration = catalog.CATALOG[index]
  transform = declaration.make_port()
  state = transform.init(PARAMS)
  update = jax.jit(transform.update)
  params = PARAMS
  for step in range(3):
    updates, new_state = update(gradients(step), state, params)
    assert jax.tree.structure(new_state) == jax.tree.structure(state)
    assert jax.tree.map(lambda x: (x.shape, x.dtype), new_state) == \
        jax.tree.map(lambda x: (x.shape, x.dtype), state)
    assert jax.tree.structure(updates) == jax.tree.structure(params)
    state, params = new_state, optax.apply_updates(params, updates)
  if sampling.whole(index, shift=3):
    assert_trees_close(run(transform, steps=3, jit=False)[0], params)


def test_inside_chain_equals_manual_composition():
  chained = optax.chain(optax.clip(0.3), jaxopt_port.adam(0.01))
  params, _ = run(chained)
  manual = jaxopt_port.adam(0.01)
  state, expected = manual.init(PARAMS), PARAMS
  for step in range(8):
    grads = jax.tree.map(lambda g: jnp.clip(g, -0.3, 0.3), gradients(step))
    updates, state = manual.update(grads, state, expected)
    expected = optax.apply_updates(expected, updates)
  assert_trees_close(params, expected)


@pytest.mark.parametrize("factory,kwargs", [
    (jaxopt_port.adam, dict(learning_rate=0.01, beta_1=0.8, amsgrad=True,
                            **FULL)),
    (jaxopt_port.rmsprop, dict(momentum=0.5, centered=True, rho=0.8)),
    (jaxopt_port.sgd, dict(momentum=0.9, nesterov=True, clipvalue=0.5)),
    (jaxopt_port.legacy.adam, dict(decay=0.1, clipnorm=0.5)),
    (jaxopt_port.legacy.rmsprop, dict(momentum=0.0, global_clipnorm=1.0)),
])
def test_inject_hyperparams_equals_plain(factory, kwargs):
  """Every numeric argument is injected as an array, traced under jit."""
  injected = optax.inject_hyperparams(factory)(**kwargs)
  params, state = run(injected)
  numeric = {k for k, v in kwargs.items()
             if isinstance(v, (int, float)) and not isinstance(v, bool)}
  assert numeric <= set(state.hyperparams)
  assert_trees_close(params, run(factory(**kwargs))[0], rtol=2e-6)


def test_injected_learning_rate_changes_between_steps():
  """Setting the injected rate per step equals a schedule of those rates."""
  rates = [0.1, 0.05, 0.05, 0.02, 0.2, 0.01]
  injected = optax.inject_hyperparams(jaxopt_port.adam)(learning_rate=0.1)
  state, params = injected.init(PARAMS), PARAMS
  for step, rate in enumerate(rates):
    state.hyperparams["learning_rate"] = jnp.asarray(rate)
    updates, state = jax.jit(injected.update)(gradients(step), state, params)
    params = optax.apply_updates(params, updates)
  # Injected, the betas are float32 arrays on both sides (same rounding).
  scheduled = optax.inject_hyperparams(jaxopt_port.adam)(
      learning_rate=lambda count: jnp.asarray(rates)[count])
  assert_trees_close(params, run(scheduled, steps=len(rates))[0])


def test_multisteps_averages_k_gradients():
  k = 3
  multi = optax.MultiSteps(jaxopt_port.sgd(0.1, momentum=0.9),
                           every_k_schedule=k)
  params, _ = run(multi, steps=2 * k)
  plain = jaxopt_port.sgd(0.1, momentum=0.9)
  state, expected = plain.init(PARAMS), PARAMS
  for start in (0, k):
    mean = jax.tree.map(lambda *g: sum(g) / k,
                        *[gradients(s) for s in range(start, start + k)])
    updates, state = plain.update(mean, state, expected)
    expected = optax.apply_updates(expected, updates)
  assert_trees_close(params, expected)


def test_keras_accumulation_equals_multisteps_for_sgd():
  """Keras's own gradient_accumulation_steps moves like optax.MultiSteps."""
  keras_style, _ = run(jaxopt_port.sgd(0.1, gradient_accumulation_steps=4), 8)
  multi, _ = run(optax.MultiSteps(jaxopt_port.sgd(0.1), every_k_schedule=4), 8)
  assert_trees_close(keras_style, multi)


def test_under_scan():
  transform = jaxopt_port.adamw(0.01, **{k: v for k, v in FULL.items()
                                         if k != "weight_decay"})

  def body(carry, step):
    params, state = carry
    updates, state = transform.update(gradients(step), state, params)
    return (optax.apply_updates(params, updates), state), None

  (params, _), _ = jax.lax.scan(body, (PARAMS, transform.init(PARAMS)),
                                jnp.arange(8))
  assert_trees_close(params, run(transform)[0], rtol=2e-6)


def test_tree_map_params_maps_every_per_parameter_leaf():
  transform = jaxopt_port.adam(amsgrad=True, use_ema=True,
                               gradient_accumulation_steps=2)
  _, state = run(transform, steps=3)
  mapped = optax.tree_map_params(transform, lambda leaf: jnp.full_like(leaf, 7),
                                 state)
  for tree in (mapped.slots.momentum, mapped.slots.velocity,
               mapped.slots.velocity_hat, mapped.accumulated_gradients,
               mapped.average):
    assert jax.tree.structure(tree) == jax.tree.structure(PARAMS)
    assert all(np.all(leaf == 7) for leaf in jax.tree.leaves(tree))
  assert mapped.iterations == state.iterations == 3


@pytest.mark.parametrize("declaration", catalog.CATALOG,
                         ids=[d.name for d in catalog.CATALOG])
def test_empty_tree(declaration):
  transform = declaration.make_port()
  state = transform.init({})
  updates, state = transform.update({}, state, {})
  assert updates == {}
  assert int(state.iterations) == 1


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_half_precision_keeps_float32_moments(dtype):
  params = {"w": jnp.ones(4, dtype)}
  grads = {"w": jnp.full(4, 1e-3, dtype)}
  transform = jaxopt_port.adam(learning_rate=0.01, use_ema=True)
  state = transform.init(params)
  assert state.slots.velocity["w"].dtype == jnp.float32
  assert state.average["w"].dtype == jnp.float32
  for _ in range(3):
    updates, state = transform.update(grads, state, params)
    assert updates["w"].dtype == dtype
    params = optax.apply_updates(params, updates)
  # Adam's first steps move by about lr each: three steps from 1.0 reach
  # 0.97 up to the parameter dtype's resolution (bfloat16: 2**-7 near 1).
  resolution = float(jnp.finfo(dtype).eps)
  np.testing.assert_allclose(np.asarray(params["w"], np.float32),
                             np.full(4, 0.97), atol=resolution)


def test_none_params_without_weight_decay():
  transform = jaxopt_port.adam(0.1)
  updates, _ = transform.update(PARAMS, transform.init(PARAMS))
  assert jax.tree.structure(updates) == jax.tree.structure(PARAMS)


def test_signature_is_keras_plus_base_arguments():
  import inspect
  parameters = inspect.signature(jaxopt_port.adamw).parameters
  assert list(parameters)[:6] == ["learning_rate", "weight_decay", "beta_1",
                                  "beta_2", "epsilon", "amsgrad"]
  assert parameters["weight_decay"].default == 0.004
  assert parameters["clipnorm"].kind is inspect.Parameter.KEYWORD_ONLY
  legacy = inspect.signature(jaxopt_port.legacy.rmsprop).parameters
  assert list(legacy) == ["learning_rate", "rho", "momentum", "epsilon",
                          "centered", "lr", "decay", "clipnorm", "clipvalue",
                          "global_clipnorm"]
  assert "Keras 3 base arguments" in jaxopt_port.sgd.__doc__
