"""Malformed input to the JAX port and to both bridges: the exact error, and
a failed step leaves every parameter and every state leaf as it was.

(Invalid hyperparameters and mismatched trees of the JAX port are in
test_errors.py.)
"""

import re
import warnings

import jax
import jax.numpy as jnp
import jaxopt_port
import keras
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import tf_bridge
import tf_bridge.legacy
import tf_bridge.tf_keras

from bridge_cases import outcome

PARAMS = {"kernel": jnp.ones((3, 2)), "bias": jnp.zeros(2)}
GRADS = {"kernel": jnp.full((3, 2), 0.5), "bias": jnp.full(2, -0.25)}


# ------------------------------------------------------------- JAX port --

@pytest.mark.parametrize("make", [jaxopt_port.adam, jaxopt_port.legacy.adam,
                                  lambda: jaxopt_port.tf1.adam(0.1),
                                  jaxopt_port.addons.yogi],
                         ids=["adam", "legacy.adam", "tf1.adam", "addons.yogi"])
@pytest.mark.parametrize("kernel_grad,error,message", [
    (jnp.ones((3, 2), jnp.complex64), TypeError,
     "grads at ['kernel'] has dtype complex64; gradients must be real "
     "floating point (float16, bfloat16, float32, float64)."),
    (jnp.ones((3, 2), jnp.int32), TypeError,
     "grads at ['kernel'] has dtype int32; gradients must be real floating"),
    (jnp.ones((3, 2), jnp.bool_), TypeError,
     "grads at ['kernel'] has dtype bool; gradients must be real floating"),
    (jnp.ones((3, 2), jnp.bfloat16), TypeError,
     "grads at ['kernel'] has dtype bfloat16, expected float32 as in params: "
     "cast the gradients to their parameters' dtypes."),
    (jnp.ones((2, 3)), ValueError,
     "grads at ['kernel'] has shape (2, 3), expected (3, 2) as in params."),
], ids=["complex", "int", "bool", "bfloat16", "shape"])
def test_port_refuses_bad_gradients_before_any_work(make, kernel_grad, error,
                                                    message):
  """Refused while tracing, so a jitted update with donated state never
  consumes the state it was given: the caller can retry with it."""
  transform = make()
  update = jax.jit(transform.update, donate_argnums=(1,))
  state = jax.jit(transform.update)(GRADS, transform.init(PARAMS), PARAMS)[1]
  before = jax.tree.map(np.array, state)
  with pytest.raises(error, match=re.escape(message)):
    update({**GRADS, "kernel": kernel_grad}, state, PARAMS)
  jax.tree.map(np.testing.assert_array_equal, state, before)
  update(GRADS, state, PARAMS)  # Not deleted by a donation.


def test_port_refuses_string_gradients():
  """(Under jit, JAX itself refuses a string array, naming grads['kernel'].)"""
  transform = jaxopt_port.adam()
  with pytest.raises(TypeError, match=re.escape(
      "grads at ['kernel'] has dtype <U1; gradients must be real floating")):
    transform.update({**GRADS, "kernel": np.full((3, 2), "g")},
                     transform.init(PARAMS), PARAMS)


@pytest.mark.parametrize("make", [
    jaxopt_port.adam, jaxopt_port.legacy.rmsprop,
    lambda: jaxopt_port.adamw(weight_decay=0.1), jaxopt_port.addons.yogi,
    lambda: jaxopt_port.tf1.momentum(0.1, 0.9)])
def test_port_none_gradient_keeps_that_parameter_and_its_state(make):
  """Keras semantics: no gradient, no update (the count still advances)."""
  transform = make()
  state = transform.update(GRADS, transform.init(PARAMS), PARAMS)[1]
  updates, new_state = transform.update({**GRADS, "bias": None}, state,
                                        PARAMS)
  np.testing.assert_array_equal(updates["bias"], np.zeros(2))
  full_updates, full_state = transform.update(GRADS, state, PARAMS)
  np.testing.assert_array_equal(updates["kernel"], full_updates["kernel"])
  old_leaves = dict(jax.tree_util.tree_leaves_with_path(state))
  full_leaves = dict(jax.tree_util.tree_leaves_with_path(full_state))
  for path, leaf in jax.tree_util.tree_leaves_with_path(new_state):
    name = jax.tree_util.keystr(path)
    old, full = old_leaves[path], full_leaves[path]
    if "['bias']" in name:
      np.testing.assert_array_equal(leaf, old, err_msg=name)
    else:
      np.testing.assert_array_equal(leaf, full, err_msg=name)


def test_port_none_gradient_without_params_needs_a_params_copy_in_state():
  # VanillaSGD keeps no per-parameter state.
  transform = jaxopt_port.vanilla_sgd()
  with pytest.raises(ValueError, match=re.escape(
      "grads has None leaves (no gradient) and the state holds no copy of "
      "the params to fill them from: call update(grads, state, params).")):
    transform.update({**GRADS, "bias": None}, transform.init(PARAMS))


# -------------------------------------------------------------- bridges --

def keras3_setup():
  variables = [keras.Variable(np.ones((3, 2), np.float32), name="kernel"),
               keras.Variable(np.zeros(2, np.float32), name="bias"),
               keras.Variable(np.ones((5, 2), np.float32), name="emb")]
  optimizer = tf_bridge.Adam(learning_rate=0.1)
  return optimizer, variables, lambda grads: optimizer.apply(grads, variables)


def legacy_setup():
  variables = [tf.Variable(np.ones((3, 2), np.float32), name="kernel"),
               tf.Variable(np.zeros(2, np.float32), name="bias"),
               tf.Variable(np.ones((5, 2), np.float32), name="emb")]
  optimizer = tf_bridge.legacy.Adam(learning_rate=0.1)
  return optimizer, variables, lambda grads: optimizer.apply_gradients(
      zip(grads, variables))


def good_grads():
  return [tf.fill((3, 2), 0.5), tf.fill((2,), -0.25),
          tf.IndexedSlices(tf.ones((2, 2)), tf.constant([1, 3]),
                           tf.constant([5, 2]))]


def optimizer_variables(optimizer):
  """Keras 3's `variables` property, OptimizerV2's `variables()` method."""
  variables = optimizer.variables
  return variables() if callable(variables) else variables


def snapshot(optimizer, variables):
  return [v.numpy() for v in [*variables, *optimizer_variables(optimizer)]]


def assert_unchanged(optimizer, variables, before):
  after = snapshot(optimizer, variables)
  assert len(after) == len(before)
  for old, new in zip(before, after):
    np.testing.assert_array_equal(new, old)


def slices(indices, values=None):
  values = tf.ones((len(indices), 2)) if values is None else values
  return tf.IndexedSlices(values, tf.constant(indices), tf.constant([5, 2]))


BAD_GRADIENTS = [
    ("shape", lambda g: [tf.ones((2, 3)), g[1], g[2]], ValueError,
     "Gradient of variable 'kernel{s}' has shape (2, 3), expected (3, 2) (the "
     "variable's shape)."),
    ("complex", lambda g: [tf.complex(g[0], g[0]), g[1], g[2]], TypeError,
     "Gradient of variable 'kernel{s}' has dtype complex64; gradients must be "
     "real floating point."),
    ("string", lambda g: [tf.fill((3, 2), "g"), g[1], g[2]], TypeError,
     "Gradient of variable 'kernel{s}' has dtype string; gradients must be "
     "real floating point."),
    ("int", lambda g: [g[0], tf.ones(2, tf.int32), g[2]], TypeError,
     "Gradient of variable 'bias{s}' has dtype int32; gradients must be real "
     "floating point."),
    ("bool", lambda g: [g[0], tf.ones(2, tf.bool), g[2]], TypeError,
     "Gradient of variable 'bias{s}' has dtype bool; gradients must be real "
     "floating point."),
    ("index-too-large", lambda g: [g[0], g[1], slices([1, 7])], ValueError,
     "Gradient of variable 'emb{s}' is a tf.IndexedSlices with indices outside "
     "[0, 5), the variable's rows: [7]."),
    ("index-negative", lambda g: [g[0], g[1], slices([-1, 2])], ValueError,
     "Gradient of variable 'emb{s}' is a tf.IndexedSlices with indices outside "
     "[0, 5), the variable's rows: [-1]."),
    ("slice-rows", lambda g: [g[0], g[1], slices([1], tf.ones((1, 3)))],
     ValueError,
     "Gradient of variable 'emb{s}' is a tf.IndexedSlices with rows of shape "
     "(3,), expected (2,) (the variable's rows)."),
    ("sparse-complex", lambda g: [g[0], g[1], slices(
        [1], tf.complex(tf.ones((1, 2)), tf.ones((1, 2))))], TypeError,
     "Gradient of variable 'emb{s}' has dtype complex64; gradients must be real "
     "floating point."),
]

SETUPS = {"keras3": keras3_setup, "legacy": legacy_setup}


@pytest.fixture(params=list(SETUPS))
def trained(request):
  """An optimizer after one good step (non-zero slots), its variables and
  a `step(grads)`."""
  optimizer, variables, step = SETUPS[request.param]()
  step(good_grads())
  return request.param, optimizer, variables, step


@pytest.mark.parametrize("make_grads,error,message",
                         [case[1:] for case in BAD_GRADIENTS],
                         ids=[case[0] for case in BAD_GRADIENTS])
def test_bridge_refuses_bad_gradients_atomically(trained, make_grads, error,
                                                 message):
  host, optimizer, variables, step = trained
  before = snapshot(optimizer, variables)
  suffix = ":0" if host == "legacy" else ""  # OptimizerV2 names variables so.
  with pytest.raises(error, match=re.escape(message.format(s=suffix))):
    step(make_grads(good_grads()))
  assert_unchanged(optimizer, variables, before)
  step(good_grads())  # Still usable.


NATIVE_AND_BRIDGED_ADAMS = {
    "keras3": (keras.optimizers.Adam, tf_bridge.Adam, keras.Variable),
    "legacy": (tf_keras.optimizers.legacy.Adam, tf_bridge.legacy.Adam,
               tf.Variable),
    "tf_keras": (tf_keras.optimizers.Adam, tf_bridge.tf_keras.Adam,
                 tf.Variable),
}


@pytest.mark.parametrize("in_function", [False, True])
@pytest.mark.parametrize("host", list(NATIVE_AND_BRIDGED_ADAMS))
def test_gradient_of_another_shape_raises_what_natives_except_catches(
    host, in_function):
  """Native's ops raise InvalidArgumentError for a gradient of another shape
  eagerly (Keras 3 and tf_keras raise ValueError while tracing): the
  bridge's refusal is both, eagerly and traced."""
  caught = []
  for make in NATIVE_AND_BRIDGED_ADAMS[host][:2]:
    variable = NATIVE_AND_BRIDGED_ADAMS[host][2](tf.ones((2, 2)))
    optimizer = make(0.1)

    def step():
      optimizer.apply_gradients([(tf.ones(3), variable)])  # pylint: disable=cell-var-from-loop

    with pytest.raises(Exception) as raised:
      (tf.function(step) if in_function else step)()
    caught.append(raised.value)
  native, bridged = caught
  assert isinstance(native, (ValueError, tf.errors.InvalidArgumentError))
  assert isinstance(bridged, type(native))
  assert isinstance(bridged, ValueError)
  assert isinstance(bridged, tf.errors.InvalidArgumentError)
  assert "Gradient of variable " in str(bridged)


@pytest.mark.parametrize("build", [False, True], ids=["unbuilt", "built"])
@pytest.mark.parametrize("count", [0, 2, 4])
def test_keras3_bridge_apply_without_variables_is_natives(count, build):
  """`apply(grads)` without the variables, where it cannot step: native's
  error where native raises one (not built, or a gradient count other than
  the variables'), native's no-op for an empty list; nothing changes."""
  outcomes = []
  for make in (keras.optimizers.Adam, tf_bridge.Adam):
    optimizer = make(learning_rate=0.1)
    _, variables, _ = keras3_setup()
    if build:
      optimizer.build(variables)
    before = [v.numpy() for v in variables + optimizer.variables]
    outcomes.append(outcome(lambda: optimizer.apply(
        (good_grads() + [tf.ones(2)])[:count])))
    for old, new in zip(before, variables + optimizer.variables):
      np.testing.assert_array_equal(new.numpy(), old)
  native, bridged = outcomes
  assert (native is None) == (count == 0)
  assert bridged == native


def test_keras3_bridge_apply_of_no_gradients_is_a_no_op():
  """As native's `apply([], variables)`: nothing to apply, nothing
  changes (Keras documents it)."""
  optimizer, variables, step = keras3_setup()
  step(good_grads())
  before = snapshot(optimizer, variables)
  assert optimizer.apply([], variables) is None
  assert_unchanged(optimizer, variables, before)


@pytest.mark.parametrize("count", [2, 4])
def test_keras3_bridge_refuses_a_gradient_list_of_another_length(count):
  """Native Keras 3 zips the two lists (it steps the first variables only);
  the bridge refuses, as docs/migrating.md lists."""
  optimizer, variables, step = keras3_setup()
  step(good_grads())
  before = snapshot(optimizer, variables)
  grads = (good_grads() + [tf.ones(2)])[:count]
  with pytest.raises(ValueError, match=re.escape(
      f"Adam got {count} gradients for 3 variables: pass one gradient (or "
      "None) per variable.")):
    step(grads)
  assert_unchanged(optimizer, variables, before)


def test_bridge_refuses_a_variable_twice_in_one_step(trained):
  """Native steps a variable once per entry of the list (two Adam steps on
  one slot, one iteration), what `tape.gradient(loss, [v, v])` then
  `apply_gradients` would double-count; the bridge refuses it, naming the
  variable, before changing anything (docs/migrating.md). An entry whose
  gradient is None does not count, as native drops it first."""
  host, optimizer, variables, _ = trained
  legacy = host == "legacy"
  native = (tf_keras.optimizers.legacy.Adam if legacy
            else keras.optimizers.Adam)(learning_rate=0.1)
  _, native_variables, _ = (legacy_setup if legacy else keras3_setup)()

  def twice(optimizer, variables):
    grads = [tf.fill((3, 2), 0.5), tf.fill((3, 2), 0.25), tf.fill((2,), 1.0)]
    return optimizer.apply_gradients(
        zip(grads, [variables[0], variables[0], variables[1]]))

  twice(native, native_variables)
  assert native_variables[0].numpy()[0, 0] < 0.85  # Two steps of 0.1.
  before = snapshot(optimizer, variables)
  suffix = ":0" if legacy else ""
  with pytest.raises(ValueError, match=re.escape(
      f"Variable 'kernel{suffix}' has 2 gradients in one step: pass each "
      "variable once, with its gradients summed (native Keras would step it "
      "once for each).")):
    twice(optimizer, variables)
  assert_unchanged(optimizer, variables, before)
  optimizer.apply_gradients([(None, variables[0]), (tf.fill((3, 2), 0.5),
                                                    variables[0])])
  assert np.all(variables[0].numpy() < before[0])


def test_bridge_refuses_variables_it_was_not_built_for(trained):
  """Keras 3 refuses a variable it was not built for with native's error,
  before it looks at the gradients (as native does), and changes nothing;
  OptimizerV2 (as native) makes its slots and updates it, leaving the
  others as they were."""
  host, optimizer, variables, _ = trained
  before = snapshot(optimizer, variables)
  if host == "legacy":
    other = tf.Variable(np.ones(4, np.float32), name="other")
    optimizer.apply_gradients([(tf.ones(4), other)])
    assert np.all(other.numpy() < 1.0)
    assert optimizer.get_slot(other, "m").shape == (4,)
    for variable, value in zip(variables, before):
      np.testing.assert_array_equal(variable.numpy(), value)
    return
  other = keras.Variable(np.ones(4, np.float32), name="other")
  native = keras.optimizers.Adam(learning_rate=0.1)
  _, native_variables, _ = keras3_setup()
  native.apply(good_grads(), native_variables)
  programs = [lambda known: ([tf.ones(4)], [other]),
              # A gradient of the wrong shape for a known variable as well.
              lambda known: ([tf.ones((2, 3)), tf.ones(4)], [known[0], other])]
  for program in programs:
    with pytest.raises(ValueError) as expected:
      native.apply(*program(native_variables))
    assert str(expected.value).startswith("Unknown variable: <Variable "
                                          "path=other,")
    with pytest.raises(ValueError) as got:
      optimizer.apply(*program(variables))
    assert str(got.value) == str(expected.value)
    assert_unchanged(optimizer, variables, before)


def test_bridge_in_a_graph_refuses_out_of_range_rows_before_assigning(
    trained):
  """Inside a tf.function the indices are known only when it runs: an
  assertion fails the step before any assignment."""
  _, optimizer, variables, step = trained
  before = snapshot(optimizer, variables)
  index = tf.Variable(9)

  @tf.function(autograph=False)
  def graph_step():
    grads = good_grads()
    step([grads[0], grads[1], tf.IndexedSlices(
        tf.ones((1, 2)), tf.reshape(index.read_value(), [1]),
        tf.constant([5, 2]))])
  with pytest.raises(tf.errors.InvalidArgumentError, match=(
      r"Gradient of variable .*emb.* is a tf.IndexedSlices with indices "
      r"outside \[0, 5\), the variable.*s rows.*\[x .*\] \[9\]")):
    graph_step()
  assert_unchanged(optimizer, variables, before)


@pytest.mark.parametrize("host", list(SETUPS))
@pytest.mark.parametrize("dtype", ["int32", "bool"])
def test_bridge_refuses_non_float_variables(host, dtype):
  if host == "keras3":
    variable = keras.Variable(np.ones(2, dtype), name="ids", dtype=dtype)
    optimizer = tf_bridge.Adam()
  else:
    variable = tf.Variable(np.ones(2, dtype), name="ids")
    optimizer = tf_bridge.legacy.Adam()
  name = "ids" if host == "keras3" else "ids:0"
  with pytest.raises(TypeError, match=re.escape(
      f"Parameter ['{name}'] has dtype {dtype}; optimizers update "
      "floating-point parameters only")):
    if host == "keras3":
      optimizer.build([variable])
    else:
      optimizer.apply_gradients([(tf.ones(2), variable)])


def test_bridge_none_gradient_skips_that_variable_with_keras_warning(trained):
  host, optimizer, variables, step = trained
  kernel_slots = [v.numpy() for v in optimizer_variables(optimizer)
                  if "kernel" in v.name]
  assert kernel_slots  # m and v of the kernel.
  kernel = variables[0].numpy()
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    grads = good_grads()
    step([None, grads[1], grads[2]])
  assert any("Gradients do not exist for variables" in str(w.message)
             for w in caught) or host == "legacy"
  np.testing.assert_array_equal(variables[0].numpy(), kernel)
  for old, new in zip(kernel_slots, [v.numpy() for v in optimizer_variables(
      optimizer) if "kernel" in v.name]):
    np.testing.assert_array_equal(new, old)
  assert not np.array_equal(variables[1].numpy(), np.zeros(2))


# ---------------------------------------------- configs and checkpoints --

@pytest.mark.parametrize("get,identifier,message", [
    (keras.optimizers.get, {"class_name": "tf_bridge>Nope", "config": {}},
     "Could not interpret optimizer identifier"),
    (tf_keras.optimizers.get, {"class_name": "Nope", "config": {}},
     "Unknown optimizer: 'Nope'"),
])
def test_config_with_an_unknown_optimizer_name(get, identifier, message):
  with pytest.raises(ValueError, match=re.escape(message)):
    get(identifier)


@pytest.mark.parametrize("cls, error, message", [
    (tf_bridge.Adam, ValueError, "Argument(s) not recognized: {'bogus': 1}"),
    (tf_bridge.legacy.Adam, TypeError,
     "Unexpected keyword argument passed to optimizer: bogus.")])
def test_config_with_unknown_keys(cls, error, message):
  config = {**cls().get_config(), "bogus": 1}
  with pytest.raises(error, match=re.escape(message)):
    cls.from_config(config)


@pytest.mark.parametrize("cls", [tf_bridge.Adam, tf_bridge.legacy.Adam])
@pytest.mark.parametrize("arguments,message", [
    ({"learning_rate": -1.0},
     "`learning_rate` must be in [0, inf]. Received: learning_rate=-1.0"),
    ({"beta_1": 1.5}, "`beta_1` must be in [0, 1). Received: beta_1=1.5"),
    ({"epsilon": float("nan")},
     "`epsilon` must be in [0, inf]. Received: epsilon=nan"),
])
def test_bridge_invalid_hyperparameters(cls, arguments, message):
  with pytest.raises(ValueError, match=re.escape(message)):
    cls(**arguments)


@pytest.mark.parametrize("native,bridged,arguments,native_steps", [
    (keras.optimizers.Adam, tf_bridge.Adam, {"beta_1": "0.9"}, False),
    # Native broadcasts the list against the variable.
    (keras.optimizers.Adam, tf_bridge.Adam, {"epsilon": [1e-3]}, True),
    (tf_keras.optimizers.legacy.Adam, tf_bridge.legacy.Adam,
     {"beta_1": "0.9"}, False),
    (tf_keras.optimizers.legacy.Adam, tf_bridge.legacy.Adam,
     {"epsilon": "1e-3"}, False),
    (tf_keras.optimizers.legacy.SGD, tf_bridge.legacy.SGD,
     {"momentum": [0.9]}, False),
    (keras.optimizers.Adam, tf_bridge.Adam, {"beta_1": None}, False),
    (tf_keras.optimizers.legacy.SGD, tf_bridge.legacy.SGD,
     {"momentum": None}, False),
], ids=["keras3-Adam-beta_1", "keras3-Adam-epsilon", "legacy-Adam-beta_1",
        "legacy-Adam-epsilon", "legacy-SGD-momentum", "keras3-Adam-beta_1-None",
        "legacy-SGD-momentum-None"])
def test_bridge_refuses_a_hyperparameter_that_is_no_number(
    native, bridged, arguments, native_steps):
  """Native takes a string, a list or None at construction and fails
  later with TensorFlow's error, or refuses it with an error of its own, or
  steps with it (a list broadcast): the bridge refuses it at construction,
  by name."""
  (name, bad), = arguments.items()
  with pytest.raises(TypeError, match=re.escape(
      f"`{name}` must be a number or a scalar array. Received: "
      f"{name}={bad!r}")):
    bridged(**arguments)

  def native_step():
    optimizer = native(**arguments)
    variable = (tf.Variable if native.__module__.startswith("tf_keras")
                else keras.Variable)(np.ones(2, np.float32))
    optimizer.apply_gradients([(tf.constant([0.1, -0.2]), variable)])

  assert (outcome(native_step) is None) == native_steps


@pytest.mark.parametrize("module", [keras.optimizers, tf_bridge],
                         ids=["native", "bridged"])
def test_keras3_saved_state_of_another_size_is_skipped_with_a_warning(
    module):
  """Keras 3's own rule (what `load_weights` into a model not trained yet
  relies on): a store of another number of variables is skipped, with
  Keras's warning, and nothing changes."""
  variables = [keras.Variable(np.ones((3, 2), np.float32), name="kernel")]
  optimizer = module.Adam(learning_rate=0.1)
  optimizer.apply([tf.fill((3, 2), 0.5)], variables)
  before = snapshot(optimizer, variables)
  sgd = module.SGD(momentum=0.9)
  sgd.build(variables)
  store = {str(i): v.numpy() for i, v in enumerate(sgd.variables)}
  with pytest.warns(UserWarning, match=(
      r"Skipping variable loading for optimizer 'adam\w*', because it has "
      r"4 variables whereas the saved optimizer has 3 variables.")):
    optimizer.load_own_variables(store)
  assert_unchanged(optimizer, variables, before)


def test_keras3_saved_state_of_other_shapes_is_refused_atomically():
  """Native assigns the store's variables one by one and fails at the
  first of another shape, half-assigned; the bridge refuses it first."""
  optimizer, variables, step = keras3_setup()
  step(good_grads())
  before = snapshot(optimizer, variables)
  store = {str(i): v.numpy() for i, v in enumerate(optimizer.variables)}
  store["3"] = np.zeros((2, 3), np.float32)
  with pytest.raises(ValueError, match=(
      r"The saved state of optimizer 'adam\w*' does not match it: saved "
      r"variable 3 has shape \(2, 3\), expected \(3, 2\) for "
      r"'adam\w*/kernel_velocity'.")):
    optimizer.load_own_variables(store)
  assert_unchanged(optimizer, variables, before)


def test_legacy_saved_state_of_another_optimizer_is_refused():
  optimizer, variables, step = legacy_setup()
  step(good_grads())
  before = snapshot(optimizer, variables)
  with pytest.raises(ValueError, match=(
      r"on optimizer Adam with a\s+weight list of length 3, but the "
      r"optimizer was expecting 7 weights")):
    optimizer.set_weights([np.zeros(1)] * 3)
  assert_unchanged(optimizer, variables, before)


def test_checkpoint_of_other_variables_is_refused_by_tensorflow(tmp_path):
  optimizer, variables, step = keras3_setup()
  step(good_grads())
  path = tf.train.Checkpoint(optimizer=optimizer).write(str(tmp_path / "c"))
  other = [keras.Variable(np.ones((4, 4), np.float32), name="kernel"),
           keras.Variable(np.zeros(2, np.float32), name="bias"),
           keras.Variable(np.ones((5, 2), np.float32), name="emb")]
  restored = tf_bridge.Adam(learning_rate=0.1)
  restored.build(other)
  with pytest.raises((ValueError, tf.errors.InvalidArgumentError),
                     match="shape"):
    tf.train.Checkpoint(optimizer=restored).read(path)
