"""The ordinary ways of writing a training program, run with the bridged
Keras 3 and tf_keras legacy classes: the final weights of each one's native
twin (issue #16's conformance programs). Native trains alike in every
program, so it runs two of them (its fit and its eager tape loop, checked
to agree) and its fit is every program's reference. One test per class
runs all its programs, so a class's traces are shared: every program for
every sixth class, `fit` for the others (tests/sampling.py; the long
profile runs every program of every class; every class's steps in a
`tf.function` equal native's step by step in tests/test_bridge_parity.py)."""

import numpy as np
import pytest
import tensorflow as tf
import keras
import tf_keras

import mutants
import sampling
import tf_bridge
import tf_bridge.legacy
import tf_bridge.tf_keras
from tf_bridge import catalog

RTOL, ATOL = 1e-5, 1e-6
X = np.random.RandomState(0).rand(16, 4).astype("float32")
Y = np.random.RandomState(1).rand(16, 1).astype("float32")
RATE = 0.05
# Arguments where a class's defaults would hide a program's differences.
ARGUMENTS = {"SGD": {"momentum": 0.9}, "Adadelta": {"learning_rate": 1.0}}


def _cases(generation):
  return [d for d in catalog.CATALOG if d.has_native
          and d.generation == generation and d.native_backend == "tensorflow"]


def _arguments(declaration, **extra):
  return {**declaration.required, "learning_rate": RATE,
          **ARGUMENTS.get(declaration.class_name, {}), **extra}


def _weights():
  """Fixed starting weights for Dense(3) then Dense(1) on 4 inputs."""
  rng = np.random.default_rng(0)
  return [rng.standard_normal(shape).astype("float32") * 0.5
          for shape in ((4, 3), (3,), (3, 1), (1,))]


PROGRAMS = ("functional fit", "subclassed fit", "custom train_step",
            "GradientTape eager", "GradientTape in tf.function",
            "build() first")
# What every class runs (`sampling`): `fit`; a sampled class runs every
# program.
CENTRAL_PROGRAMS = ("functional fit",)


def _sampled_programs(cases, declaration, programs=PROGRAMS):
  """Those of `programs` `declaration`, a case of `cases`, runs in this
  run."""
  return programs if sampling.whole(cases.index(declaration)) else (
      CENTRAL_PROGRAMS)


def _programs(K, make_optimizer, legacy, build_first=True, names=None):
  """name -> final weights, for each program written with Keras module `K`
  (keras or tf_keras) and a fresh optimizer from `make_optimizer` (without
  "build() first" where it has no build: TF1's), or for those of `names`."""
  start = _weights()

  def dense_layers():
    return [K.layers.Dense(3, activation="tanh"), K.layers.Dense(1)]

  def functional():
    inputs = K.Input((4,))
    first, second = dense_layers()
    return K.Model(inputs, second(first(inputs)))

  class Subclassed(K.Model):
    def __init__(self):
      super().__init__()
      self.first, self.second = dense_layers()

    def call(self, inputs):
      return self.second(self.first(inputs))

  class CustomStep(Subclassed):
    def train_step(self, data):
      inputs, targets = data
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(self(inputs, training=True)
                                        - targets))
      variables = self.trainable_variables
      self.optimizer.apply_gradients(zip(tape.gradient(loss, variables),
                                         variables))
      return {"loss": loss}

  def fitted(model):
    model(X[:1])  # Built, so the starting weights can be set.
    model.set_weights(start)
    model.compile(make_optimizer(), "mse")
    model.fit(X, Y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    return model.get_weights()

  def tape_loop(in_function, build_first):
    variables = [tf.Variable(w) if legacy else keras.Variable(w)
                 for w in start]
    optimizer = make_optimizer()
    if build_first:
      if hasattr(optimizer, "_create_all_weights"):  # OptimizerV2.
        optimizer._create_all_weights(variables)  # pylint: disable=protected-access
      else:
        optimizer.build(variables)

    def step(inputs, targets):
      with tf.GradientTape() as tape:
        hidden = tf.tanh(inputs @ variables[0] + variables[1])
        loss = tf.reduce_mean(tf.square(hidden @ variables[2] + variables[3]
                                        - targets))
      gradients = tape.gradient(loss, variables)
      optimizer.apply_gradients(zip(gradients, variables))

    if in_function:
      step = tf.function(step)
    for epoch in range(2):
      del epoch
      for first in range(0, 16, 8):
        step(tf.constant(X[first:first + 8]), tf.constant(Y[first:first + 8]))
    return [np.asarray(v.numpy()) for v in variables]

  programs = {"functional fit": lambda: fitted(functional()),
              "subclassed fit": lambda: fitted(Subclassed()),
              "custom train_step": lambda: fitted(CustomStep()),
              "GradientTape eager": lambda: tape_loop(False, False),
              "GradientTape in tf.function": lambda: tape_loop(True, False)}
  if build_first:
    programs["build() first"] = lambda: tape_loop(True, True)
  return {name: run() for name, run in programs.items()
          if names is None or name in names}


def _native(K, make_optimizer, legacy, build_first=True):
  """Native's weights for every program: native trains alike in each, so
  its functional fit is the reference of every bridged program (a third of
  native's runs). Its eager tape loop, the most different program, must
  agree with it here."""
  ran = _programs(K, make_optimizer, legacy, build_first,
                  names=("functional fit", "GradientTape eager"))
  reference = ran["functional fit"]
  _assert_programs_equal({"native": ran["GradientTape eager"]},
                         {"native": reference})
  return dict.fromkeys(PROGRAMS if build_first else PROGRAMS[:-1], reference)


def _assert_programs_equal(bridged, native):
  """Each program `bridged` ran trains to native's weights for it."""
  moved = 0.0
  start = _weights()
  for program, got in bridged.items():
    want = native[program]
    assert len(got) == len(want), program
    for g, w, s in zip(got, want, start):
      np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL,
                                 err_msg=program)
      moved = max(moved, float(np.max(np.abs(w - s))))
  # The programs train, by more than 10 tolerances: a do-nothing step
  # would fail.
  assert moved > 10 * (ATOL + RTOL * 2.0)


def _assert_bridged_programs_equal_native(K, declaration, bridged_class,
                                          legacy, programs):
  """Every program of `bridged_class` (`programs`, None: all) trains to
  native's weights; its functional fit with the learning rate's mutant
  (`mutants.perturbed`) does not, so the check can fail (the long
  profile's tests/fit_mutant_cases.py tries every hyperparameter's
  mutant)."""
  native = _native(K, lambda: declaration.native_class()(
      **_arguments(declaration)), legacy=legacy)
  bridged = _programs(K, lambda: bridged_class(**_arguments(declaration)),
                      legacy=legacy, names=programs)
  _assert_programs_equal(bridged, native)
  mutant = _programs(K, lambda: bridged_class(**mutants.perturbed(
      declaration, _arguments(declaration), "learning_rate")),
                     legacy=legacy, names=("functional fit",))
  with pytest.raises(AssertionError, match="Not equal to tolerance"):
    _assert_programs_equal(mutant, {"functional fit": native["functional fit"]})


@pytest.mark.parametrize("declaration", _cases(catalog.KERAS),
                         ids=lambda d: d.name)
def test_keras_programs(declaration):
  _assert_bridged_programs_equal_native(
      keras, declaration, getattr(tf_bridge, declaration.class_name),
      legacy=False,
      programs=_sampled_programs(_cases(catalog.KERAS), declaration))


@pytest.mark.parametrize("declaration", _cases(catalog.LEGACY),
                         ids=lambda d: d.name)
def test_legacy_programs(declaration):
  _assert_bridged_programs_equal_native(
      tf_keras, declaration, getattr(tf_bridge.legacy, declaration.class_name),
      legacy=True,
      programs=_sampled_programs(_cases(catalog.LEGACY), declaration))


@pytest.mark.parametrize("declaration", _cases(catalog.TF_KERAS),
                         ids=lambda d: d.name)
def test_tf_keras_programs(declaration):
  _assert_bridged_programs_equal_native(
      tf_keras, declaration,
      getattr(tf_bridge.tf_keras, declaration.class_name), legacy=True,
      programs=_sampled_programs(_cases(catalog.TF_KERAS), declaration))


def _tf1_native(declaration):
  """A native TF1 optimizer; AdagradDA's counts the `global_step` it was
  made with, as a TF1 program passes that step to `apply_gradients` (tf_keras
  passes its own counter, which AdagradDA does not read)."""
  arguments = _arguments(declaration)
  if declaration.native_arguments is None:
    return declaration.make_native(**arguments)

  class CountingAdagradDA(declaration.native_class()):  # pylint: disable=missing-class-docstring

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
      del global_step
      return super().apply_gradients(grads_and_vars,
                                     global_step=self._global_step, name=name)  # pylint: disable=protected-access

  return CountingAdagradDA(**arguments, **declaration.native_arguments())


def _functional_fit(K, optimizer):
  start = _weights()
  inputs = K.Input((4,))
  hidden = K.layers.Dense(3, activation="tanh")(inputs)
  model = K.Model(inputs, K.layers.Dense(1)(hidden))
  model.set_weights(start)
  model.compile(optimizer, "mse")
  model.fit(X, Y, batch_size=8, epochs=2, shuffle=False, verbose=0)
  return model.get_weights()


@pytest.mark.parametrize("declaration", _cases(catalog.TF1),
                         ids=lambda d: d.name)
def test_tf1_programs(declaration):
  """TF1's optimizers in tf_keras programs (fit wraps them in TFOptimizer);
  their OptimizerV2 hosts in the same programs and their Keras 3 classes in
  Keras 3's give the same weights."""
  import tf_bridge.legacy.tf1  # pylint: disable=import-outside-toplevel
  import tf_bridge.tf1  # pylint: disable=import-outside-toplevel
  native = _native(tf_keras, lambda: _tf1_native(declaration), legacy=True,
                   build_first=False)
  for legacy, module, K in ((True, tf_bridge.legacy.tf1, tf_keras),
                            (False, tf_bridge.tf1, keras)):
    bridged_class = getattr(module, declaration.class_name)
    _assert_programs_equal(_programs(K, lambda: bridged_class(  # pylint: disable=cell-var-from-loop
        **_arguments(declaration)), legacy=legacy, names=_sampled_programs(
            _cases(catalog.TF1), declaration, PROGRAMS[:-1])), native)


def _session_program(make_optimizer):
  """A TF1 program: a graph of `get_variable`s, a tensor loss, a session.
  Trains with `minimize(loss, global_step=...)` (the graph's trainable
  variables), then with `compute_gradients` and `apply_gradients(...,
  global_step)`; returns the weights, the global step, the slot names and
  the shapes `get_slot` gives and the optimizer's variable count."""
  graph = tf.Graph()
  with graph.as_default():
    weights = [tf.compat.v1.get_variable(f"w{i}", initializer=w)
               for i, w in enumerate(_weights())]
    hidden = tf.tanh(tf.constant(X) @ weights[0] + weights[1])
    loss = tf.reduce_mean(tf.square(hidden @ weights[2] + weights[3]
                                    - tf.constant(Y)))
    global_step = tf.compat.v1.train.get_or_create_global_step()
    optimizer = make_optimizer(global_step)
    minimized = optimizer.minimize(loss, global_step=global_step)
    grads_and_vars = optimizer.compute_gradients(loss)
    assert [v for _, v in grads_and_vars] == weights
    applied = optimizer.apply_gradients(grads_and_vars, global_step)
    names = sorted(optimizer.get_slot_names())
    slots = [[tuple(optimizer.get_slot(w, n).shape) for n in names]
             for w in weights]
    with tf.compat.v1.Session(graph=graph) as session:
      session.run(tf.compat.v1.global_variables_initializer())
      for train in (minimized, applied):
        for _ in range(3):
          session.run(train)
      return (session.run(weights), session.run(global_step), names, slots,
              len(optimizer.variables()))


@pytest.mark.parametrize("declaration", _cases(catalog.TF1),
                         ids=lambda d: d.name)
def test_tf1_session_programs(declaration):
  """The OptimizerV2 hosts of TF1's algorithms take TF1's own calls in a
  graph and a session (`minimize` with a `global_step` and no `var_list`,
  `compute_gradients`, `apply_gradients` with a `global_step`, `get_slot`,
  `get_slot_names`, `variables()`): the weights and the step TF1's class
  gives, its slot names and shapes."""
  import tf_bridge.legacy.tf1  # pylint: disable=import-outside-toplevel
  arguments = _arguments(declaration)

  def native(global_step):
    if declaration.native_arguments is None:
      return declaration.make_native(**arguments)
    return declaration.native_class()(**arguments, global_step=global_step)

  bridged_class = getattr(tf_bridge.legacy.tf1, declaration.class_name)
  got = _session_program(lambda _: bridged_class(**arguments))
  want = _session_program(native)
  _assert_programs_equal({"session": got[0]}, {"session": want[0]})
  assert got[1] == want[1] == 6
  assert got[2:4] == want[2:4]
  assert got[4] >= len(got[2]) * len(_weights())


HOSTED = [d for d in catalog.legacy_hosted() if d.generation == catalog.KERAS
          and d.native_backend == "tensorflow"]


@pytest.mark.parametrize("declaration", HOSTED, ids=lambda d: d.name)
def test_hosted_programs(declaration):
  """A Keras 3 algorithm that tf_keras lacks, hosted as an OptimizerV2
  (`tf_bridge.legacy.AdamW`), in tf_keras programs gives the weights native
  Keras 3 gives in Keras 3's."""
  native = _native(keras, lambda: declaration.native_class()(
      **_arguments(declaration)), legacy=False)
  bridged_class = getattr(tf_bridge.legacy, declaration.class_name)
  _assert_programs_equal(_programs(tf_keras, lambda: bridged_class(
      **_arguments(declaration)), legacy=True,
      names=_sampled_programs(HOSTED, declaration)), native)


def _port_program(transform):
  """The programs' training in a JAX loop with the port: 2 epochs of 2
  batches of the same model and loss."""
  import jax  # pylint: disable=import-outside-toplevel
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  import optax  # pylint: disable=import-outside-toplevel

  def loss(params, inputs, targets):
    hidden = jnp.tanh(inputs @ params[0] + params[1])
    return jnp.mean(jnp.square(hidden @ params[2] + params[3] - targets))

  params = [jnp.asarray(w) for w in _weights()]
  state = transform.init(params)
  for _ in range(2):
    for first in range(0, 16, 8):
      grads = jax.grad(loss)(params, X[first:first + 8], Y[first:first + 8])
      updates, state = transform.update(grads, state, params)
      params = optax.apply_updates(params, updates)
  return [np.asarray(p) for p in params]


# Classes whose ground truth is their port: TF Addons' (no native class;
# the port is checked against TFA's formula in tests/test_addons.py),
# ScheduleFreeAdamW (native on Keras's JAX backend; tests/test_jax_backend.py
# compares fit there) and tf_keras's Nadam (whose traced step has native's
# defect; tests/test_tf_keras.py).
PORT_TRUTH = [d for d in catalog.CATALOG if d.generation == catalog.ADDONS
              or d.native_backend != "tensorflow"]


def _hosts(declaration):
  """(module, Keras module, of tf_keras) of each class of `declaration`."""
  if declaration.generation == catalog.TF_KERAS:
    return [(declaration.bridge_path, tf_keras, True)]
  return [(declaration.legacy_bridge_path, tf_keras, True),
          (declaration.bridge_path, keras, False)]


@pytest.mark.parametrize("declaration", PORT_TRUTH, ids=lambda d: d.name)
def test_port_truth_programs(declaration):
  """Every program, Keras 3 and tf_keras, gives the weights of the port's
  JAX loop."""
  import importlib  # pylint: disable=import-outside-toplevel
  arguments = {**ADDON_ARGUMENTS.get(declaration.class_name, {}),
               "learning_rate": RATE}
  want = _port_program(declaration.make_port(**arguments))
  expected = dict.fromkeys(PROGRAMS, want)
  for path, K, legacy in _hosts(declaration):
    bridged_class = getattr(importlib.import_module(path),
                            declaration.class_name)
    _assert_programs_equal(_programs(K, lambda: bridged_class(  # pylint: disable=cell-var-from-loop
        **arguments), legacy=legacy, names=_sampled_programs(
            PORT_TRUTH, declaration)), expected)


# TFA's required `weight_decay`, and COCOB's alpha small enough to move.
ADDON_ARGUMENTS = {"AdamW": {"weight_decay": 0.01},
                   "SGDW": {"weight_decay": 0.01, "momentum": 0.9},
                   "COCOB": {"alpha": 10.0}}


@pytest.mark.parametrize("name", ["Adam", "SGD", "Lion"])
def test_keras_finalize_variable_values_with_ema(name):
  """`use_ema` with `finalize_variable_values` (what `fit` calls at its end)
  overwrites the variables with their moving averages, as native."""
  results = []
  for module in (keras.optimizers, tf_bridge):
    variables = [keras.Variable(w) for w in _weights()]
    optimizer = getattr(module, name)(learning_rate=RATE, use_ema=True,
                                      ema_momentum=0.5)
    for step in range(4):
      optimizer.apply_gradients(zip(
          [tf.constant(np.full(v.shape, 0.3 * (step + 1), "float32"))
           for v in variables], variables))
    before = [v.numpy() for v in variables]
    optimizer.finalize_variable_values(variables)
    results.append((before, [v.numpy() for v in variables]))
  (native_before, native), (bridged_before, bridged) = results
  for got, want, unfinalized in zip(bridged, native, native_before):
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert np.max(np.abs(want - unfinalized)) > 1e-3
  for got, want in zip(bridged_before, native_before):
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("legacy", [False, True], ids=["keras", "legacy"])
@pytest.mark.parametrize("indices", [
    [3, 0, 2], np.array([3, 0, 2], "int32"), np.array([3, 0, 2], "int64")],
                         ids=["list", "int32", "int64"])
def test_indexed_slices_index_types(legacy, indices):
  """tf.IndexedSlices with list, int32 and int64 indices, as native (Keras
  3's TensorFlow backend treats duplicates otherwise: README, Known
  differences)."""
  natives = tf_keras.optimizers.legacy if legacy else keras.optimizers
  bridges = tf_bridge.legacy if legacy else tf_bridge
  make = tf.Variable if legacy else keras.Variable
  results = []
  for module in (natives, bridges):
    variable = make(np.arange(8, dtype="float32").reshape(4, 2))
    optimizer = module.Adagrad(0.5)
    for scale in (1.0, -2.0):
      optimizer.apply_gradients([(tf.IndexedSlices(
          tf.constant(scale * np.ones((3, 2), "float32")),
          tf.constant(indices) if not isinstance(indices, list)
          else indices, tf.constant([4, 2])), variable)])
    results.append(variable.numpy())
  np.testing.assert_allclose(results[1], results[0], rtol=1e-6, atol=1e-7)
  np.testing.assert_array_equal(results[1][1], [2, 3])
  assert np.max(np.abs(results[1][[0, 2, 3]] - np.arange(8).reshape(4, 2)[
      [0, 2, 3]])) > 1e-2
