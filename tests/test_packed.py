"""jaxopt_port.packed: the state in one buffer per dtype, the same numbers."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxopt_port
from tf_bridge import catalog


def mixed_tree(seed=0, scale=1.0):
  """Leaves of several shapes and two dtypes, a scalar and an empty one."""
  rng = np.random.default_rng(seed)
  def normal(*shape, dtype=np.float32):
    return jnp.asarray(scale * rng.normal(size=shape), dtype)
  return {"dense": {"kernel": normal(5, 3), "bias": normal(3)},
          "scalar": normal(), "empty": normal(0, 4),
          "embedding": normal(7, 2, dtype=jnp.bfloat16),
          "norm": [normal(4, dtype=jnp.bfloat16), normal(2, 2)]}


ELEMENTWISE = {
    "adam": lambda: jaxopt_port.adam(0.01, amsgrad=True),
    "adamw": lambda: jaxopt_port.adamw(0.01, weight_decay=0.1),
    "sgd_nesterov": lambda: jaxopt_port.sgd(0.01, momentum=0.9,
                                            nesterov=True),
    "rmsprop_centered": lambda: jaxopt_port.rmsprop(0.01, momentum=0.5,
                                                    centered=True),
    "adagrad": lambda: jaxopt_port.adagrad(0.01),
    "lion": lambda: jaxopt_port.lion(0.01),
    "nadam": lambda: jaxopt_port.nadam(0.01),
    "ftrl": lambda: jaxopt_port.ftrl(0.01, l1_regularization_strength=0.01),
    "adam_ema_accumulation": lambda: jaxopt_port.adam(
        0.01, use_ema=True, ema_overwrite_frequency=3,
        gradient_accumulation_steps=2, global_clipnorm=0.5),
    "legacy_adam_decay": lambda: jaxopt_port.legacy.adam(0.01, decay=0.1),
    "tf1_adam": lambda: jaxopt_port.tf1.adam(0.01),
    "addons_yogi": lambda: jaxopt_port.addons.yogi(0.01),
    "addons_rectified_adam": lambda: jaxopt_port.addons.rectified_adam(
        0.01, total_steps=20, warmup_proportion=0.1),
    "addons_adamw": lambda: jaxopt_port.addons.adamw(0.01, 0.01),
}


def run(transform, params, gradients, convert=lambda tree: tree):
  """Params and state after one jitted step per gradient."""
  @jax.jit
  def step(params, state, grads):
    updates, state = transform.update(grads, state, params)
    return optax.apply_updates(params, updates), state
  params = convert(params)
  state = transform.init(params)
  for grads in gradients:
    params, state = step(params, state, convert(grads))
  return params, state


def assert_trees_close(actual, expected):
  assert jax.tree.structure(actual) == jax.tree.structure(expected)
  for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected)):
    assert a.dtype == e.dtype and a.shape == e.shape
    np.testing.assert_allclose(np.asarray(a, np.float64),
                               np.asarray(e, np.float64), rtol=1e-6,
                               atol=1e-7)


@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_packed_equals_the_transform(name):
  params = mixed_tree(0)
  gradients = [mixed_tree(seed, scale=0.1) for seed in range(1, 9)]
  expected, _ = run(ELEMENTWISE[name](), params, gradients)
  # Params given as a tree: updates come back as a tree.
  from_tree, state = run(jaxopt_port.packed(ELEMENTWISE[name]()), params,
                         gradients)
  assert_trees_close(from_tree, expected)
  # Params kept packed: the whole step runs on flat buffers.
  from_packed, packed_state = run(jaxopt_port.packed(ELEMENTWISE[name]()),
                                  params, gradients, jaxopt_port.pack)
  assert isinstance(from_packed, jaxopt_port.PackedTree)
  assert_trees_close(jaxopt_port.unpack(from_packed), expected)
  assert_trees_close(packed_state, state)
  # Each param-shaped state leaf is one buffer per dtype.
  for leaf in jax.tree.leaves(state):
    assert leaf.ndim <= 1


# Every catalog port but these updates each element on its own: a per-layer
# trust ratio or norm (Lamb, TF Addons' LAMB and NovoGrad, ConditionalGradient),
# factored moments (Adafactor), matrix orthogonalization (Muon), LARS's
# and Model Garden LAMB's trust ratios, Model Garden AdamWeightDecay's global clip (on by default),
# ClippyAdagrad's clipping factor per parameter.
NOT_ELEMENTWISE = {"lamb", "adafactor", "muon", "addons.novograd",
                   "addons.conditional_gradient", "addons.lamb",
                   "tf_models.lars", "tf_models.lamb",
                   "tf_models.adam_weight_decay",
                   "tfrs.clippy_adagrad", "tf_keras.adafactor"}
PORTS = sorted({d.name: d for d in catalog.CATALOG}.items())


@pytest.mark.parametrize("name,declaration", PORTS,
                         ids=[name for name, _ in PORTS])
def test_every_elementwise_port_packs_to_its_numbers(name, declaration):
  """Each catalog port at its defaults: packed() takes it and gives the
  transform's numbers on packed params, or, for the ports that are not
  elementwise, refuses it (so a port's `elementwise` declaration is right
  both ways)."""
  def make():
    return declaration.make_port(**declaration.required)

  if name in NOT_ELEMENTWISE:
    with pytest.raises(ValueError, match="not known to"):
      jaxopt_port.packed(make())
    return
  params = mixed_tree(0)
  gradients = [mixed_tree(seed, scale=0.1) for seed in range(1, 4)]
  expected, _ = run(make(), params, gradients)
  packed, _ = run(jaxopt_port.packed(make()), params, gradients,
                  jaxopt_port.pack)
  assert_trees_close(jaxopt_port.unpack(packed), expected)


def test_state_holds_one_buffer_per_dtype():
  params = mixed_tree(0)
  state = jaxopt_port.packed(jaxopt_port.adam(0.1)).init(params)
  momentum = state.slots.momentum
  assert isinstance(momentum, jaxopt_port.PackedTree)
  assert sorted(momentum.buffers) == ["bfloat16", "float32"]
  # Keras's low-precision policy: moments in float32 for bfloat16 params.
  assert momentum.buffers["bfloat16"].dtype == jnp.float32
  assert momentum.buffers["bfloat16"].shape == (7 * 2 + 4,)
  assert momentum.buffers["float32"].shape == (15 + 3 + 1 + 0 + 4,)


def test_train_step_differentiates_through_the_packed_params():
  data = jnp.asarray(np.random.default_rng(0).normal(size=(16, 5)),
                     jnp.float32)

  def loss(params):
    hidden = jnp.tanh(data @ params["w1"] + params["b1"])
    return jnp.mean((hidden @ params["w2"]) ** 2)

  rng = np.random.default_rng(1)
  params = {"w1": jnp.asarray(rng.normal(size=(5, 8)), jnp.float32),
            "b1": jnp.zeros(8), "w2": jnp.asarray(rng.normal(size=(8, 1)),
                                                  jnp.float32)}

  def train(transform, params, unpack):
    @jax.jit
    def step(params, state):
      grads = jax.grad(lambda p: loss(unpack(p)))(params)
      updates, state = transform.update(grads, state, params)
      return optax.apply_updates(params, updates), state
    state = transform.init(params)
    for _ in range(20):
      params, state = step(params, state)
    return params

  expected = train(jaxopt_port.adam(0.05), params, lambda p: p)
  packed = train(jaxopt_port.packed(jaxopt_port.adam(0.05)),
                 jaxopt_port.pack(params), jaxopt_port.unpack)
  assert_trees_close(jaxopt_port.unpack(packed), expected)
  assert float(loss(expected)) < 0.5 * float(loss(params))


def test_pack_round_trip_is_exact():
  tree = mixed_tree(3)
  packed = jaxopt_port.pack(tree)
  assert sorted(packed.buffers) == ["bfloat16", "float32"]
  back = jaxopt_port.unpack(packed)
  assert jax.tree.structure(back) == jax.tree.structure(tree)
  for a, b in zip(jax.tree.leaves(back), jax.tree.leaves(tree)):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.asarray(a, np.float32),
                                  np.asarray(b, np.float32))
  assert jaxopt_port.unpack(jaxopt_port.pack({})) == {}
  assert "PackedTree(7 leaves" in repr(packed)


@pytest.mark.parametrize("make", [
    lambda: jaxopt_port.lamb(),
    lambda: jaxopt_port.adafactor(),
    lambda: jaxopt_port.muon(),
    lambda: jaxopt_port.addons.novograd(),
    lambda: jaxopt_port.addons.conditional_gradient(0.1),
    lambda: jaxopt_port.addons.adamw(0.01, exclude_from_weight_decay=["b"]),
    lambda: jaxopt_port.adam(clipnorm=1.0),
    lambda: jaxopt_port.legacy.adam(clipnorm=1.0),
    lambda: optax.adam(0.1),
], ids=["lamb", "adafactor", "muon", "novograd", "conditional_gradient",
        "adamw_excluding", "clipnorm", "legacy_clipnorm", "optax_adam"])
def test_packed_refuses_transforms_not_known_elementwise(make):
  with pytest.raises(ValueError, match=(
      r"packed\(\) runs the transform on one flat buffer per dtype, which "
      r"gives its numbers only if it updates each element on its own, and "
      r"this transform is not known to\..*assume_elementwise=True")):
    jaxopt_port.packed(make())


def test_assume_elementwise_packs_a_foreign_transform():
  params = mixed_tree(0)
  gradients = [mixed_tree(seed, scale=0.1) for seed in range(1, 5)]
  expected, _ = run(optax.adam(0.01), params, gradients)
  packed, _ = run(jaxopt_port.packed(optax.adam(0.01),
                                     assume_elementwise=True),
                  params, gradients, jaxopt_port.pack)
  assert_trees_close(jaxopt_port.unpack(packed), expected)


def test_unpack_names_what_it_got():
  with pytest.raises(TypeError, match=r"unpack expects a PackedTree \(made "
                     r"by jaxopt_port.pack\); got dict\."):
    jaxopt_port.unpack({"a": jnp.ones(2)})
