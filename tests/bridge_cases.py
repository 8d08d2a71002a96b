"""What the bridge tests share: the bridged class of a catalog entry, the
seeded problem (the last variable gets sparse gradients), a Keras
trajectory, an optimizer's built variables, every bridged class with
its native and port, what a call did, and the bridge's compiled step as
TensorFlow optimizes it."""

import functools
import importlib
import typing

import keras
import numpy as np
import tensorflow as tf
import tf_keras

import tf_bridge
from tf_bridge import catalog, testing


STEPS = 50
SHAPES = ((), (5,), (4, 3), (6, 3))  # The last one gets sparse gradients.


def bridged_class(declaration):
  """The declaration's own class: Keras 3's for Keras 3 and TF1 ports,
  OptimizerV2's for legacy ones, tf_keras's 2.11+ for its own."""
  return getattr(importlib.import_module(declaration.bridge_path),
                 declaration.class_name)


def built_variables(optimizer, variables):
  """The optimizer's variables, in order, once it has built its state for
  `variables` (Keras 3's `build`, OptimizerV2's `_create_all_weights`)."""
  if isinstance(optimizer, keras.optimizers.Optimizer):
    optimizer.build(variables)
    return optimizer.variables
  optimizer._create_all_weights(variables)  # pylint: disable=protected-access
  return optimizer.variables()


@functools.lru_cache(maxsize=None)
def problem(sparse):
  initial, gradients = testing.seeded_problem(STEPS, 1, 1.0, SHAPES)
  if not sparse:
    return initial, gradients
  rng = np.random.default_rng(7)
  steps = []
  for step_gradients in gradients:
    rows = rng.integers(0, 6, size=3)
    indices = np.array([rows[0], rows[1], rows[0], rows[2]], np.int32)
    values = rng.standard_normal((4, 3)).astype(np.float32)
    steps.append(step_gradients[:3] + [(values, indices)])
  return initial, steps


def to_tensor(gradient, sparse):
  if isinstance(gradient, tuple):
    values, indices = gradient
    slices = tf.IndexedSlices(tf.constant(values), tf.constant(indices),
                              tf.constant([6, 3]))
    return slices if sparse else tf.convert_to_tensor(slices)
  return tf.constant(gradient)


def densify(gradients):
  return [[np.asarray(to_tensor(g, sparse=False)) for g in step]
          for step in gradients]


def keras_trajectory(optimizer, initial, gradients, *, sparse=False,
                     in_function=False, names=None):
  """Like `testing.native_trajectory`, with IndexedSlices, tf.function and
  the variables' `names` (default `variable_0`, `variable_1`, ...)."""
  keras3 = isinstance(optimizer, keras.optimizers.Optimizer)
  names = names or [f"variable_{index}" for index in range(len(initial))]
  variables = [(keras.Variable if keras3 else tf.Variable)(value, name=name)
               for value, name in zip(initial, names)]

  def apply(step_gradients):
    testing.apply_gradients(optimizer, step_gradients, variables)

  if in_function:
    apply = tf.function(apply)
  trajectory = []
  for step_gradients in gradients:
    apply([to_tensor(g, sparse) for g in step_gradients])
    trajectory.append([np.array(keras.ops.convert_to_numpy(v))
                       for v in variables])
  return trajectory


class BridgedCase(typing.NamedTuple):
  declaration: catalog.Declaration
  optimizer_class: type
  on_tf_keras: bool  # Of tf_keras: an OptimizerV2 class or a 2.11+ one.

  def make(self, **kwargs):
    return self.optimizer_class(**{**self.declaration.required, **kwargs})


def _all_classes():
  """Every bridged class: each declaration's own, and the OptimizerV2 hosts
  of Keras 3 algorithms legacy lacks, of TF1's and of the other libraries'
  optimizers."""
  for declaration in catalog.CATALOG:
    yield BridgedCase(declaration, bridged_class(declaration),
                      declaration.generation in (catalog.LEGACY,
                                                 catalog.TF_KERAS))
  for generation in (catalog.LEGACY, catalog.TF1, *catalog.LIBRARIES):
    for declaration in catalog.legacy_hosted(generation):
      if declaration.generation != catalog.LEGACY:
        yield BridgedCase(
            declaration,
            getattr(importlib.import_module(declaration.legacy_bridge_path),
                    declaration.class_name), True)


ALL_CLASSES = list(_all_classes())
# `Adam`, `legacy.Adam`, `tf1.Adam`, ...: the public path below tf_bridge.
IDS = [case.optimizer_class.registered_name.replace(">", ".")
       .removeprefix("tf_bridge.").removeprefix("tf_bridge")
       for case in ALL_CLASSES]


def native_dense_trajectory(declaration, kwargs, gradients):
  """The native class's trajectory on dense gradients, on its ground-truth
  backend (a subprocess on Keras's JAX backend for ScheduleFreeAdamW), its
  steps in one `tf.function` call (the same numbers as eager steps)."""
  return testing.native_trajectory(declaration.make_native(**kwargs),
                                   problem(sparse=False)[0], gradients,
                                   backend=declaration.native_backend)


VOCABULARY = 320


def fit_data():
  """Every token id once, so no batch has duplicate indices (where Keras 3's
  TensorFlow backend is defective; see test_bridged_sparse)."""
  rng = np.random.default_rng(0)
  tokens = rng.permutation(VOCABULARY).reshape(64, 5).astype(np.int32)
  targets = rng.standard_normal((64, 1)).astype(np.float32)
  return tokens, targets


def make_model(layers_module, models_module, seed=0):
  rng = np.random.default_rng(seed)
  model = models_module.Sequential([
      layers_module.Input((5,), dtype="int32"),
      layers_module.Embedding(VOCABULARY, 4),
      layers_module.GlobalAveragePooling1D(),
      layers_module.Dense(8, activation="tanh"),
      layers_module.Dense(1)])
  model.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                     for w in model.get_weights()])
  return model


def fit(optimizer, legacy, callbacks=(), jit_compile=False, epochs=3):
  tokens, targets = fit_data()
  if legacy:
    model = make_model(tf_keras.layers, tf_keras)
    model.compile(optimizer=optimizer, loss="mse")
  else:
    model = make_model(keras.layers, keras)
    model.compile(optimizer=optimizer, loss="mse", jit_compile=jit_compile)
  model.fit(tokens, targets, batch_size=16, epochs=epochs, shuffle=False,
            verbose=0, callbacks=list(callbacks))
  return model


def optimizer_values(optimizer):
  variables = optimizer.variables
  return [keras.ops.convert_to_numpy(v)
          for v in (variables() if callable(variables) else variables)]


def outcome(call):
  """What a call did: None if it returned, else its error's type and
  message."""
  try:
    call()
  except Exception as error:  # pylint: disable=broad-except
    return type(error), str(error)
  return None


def bridged_step_hlo(optimizer, variable, grad):
  """TensorFlow's optimized HLO of the bridge's compiled step (reads, the
  XLA call, assignments) after one `grad` for `variable` (one variable: a
  `keras.Variable` or a `tf.Variable`)."""
  def tf_variable(v):
    return v.value if isinstance(v, keras.Variable) else v

  testing.apply_gradients(optimizer, [grad], [variable])
  fused = optimizer._fused  # pylint: disable=protected-access
  (_, apply, _), = [f for k, f in fused._steps.items()  # pylint: disable=protected-access
                    if k[0] == "tf"]
  state = [tf_variable(s)
           for s in optimizer._state_variables]  # pylint: disable=protected-access
  grads, indices, _ = tf_bridge._fused.step_gradients(  # pylint: disable=protected-access
      [grad], [tf_variable(variable)], fused.sparse_rows)
  return apply.experimental_get_compiler_ir(
      [tf_variable(variable).handle], grads, [s.handle for s in state],
      fused.rate_inputs(tf.constant(0.01), optimizer.iterations), indices,
      tf.constant(0))(stage="optimized_hlo")
