"""Running native optimizers of every generation on given variables and
gradients (`tf_bridge.testing`'s native side): Keras 3, tf_keras's
OptimizerV2 and 2.11+ ones, TF1's, in one `tf.function` call where they
can, a call per step where they cannot."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tf_bridge._state import _is_keras3


def native_trajectory(optimizer: Any, initial: Sequence[np.ndarray],
                      gradients: Sequence[Sequence[np.ndarray]], *,
                      backend: str | None = None,
                      names: Sequence[str] | None = None
                      ) -> list[list[np.ndarray]]:
  """Values of every variable after each step, `[step][variable]`, as numpy.

  `optimizer` is a fresh Keras 3 optimizer, a `tf_keras` OptimizerV2 or a
  TF1 `tf.compat.v1.train` optimizer. A gradient given as a `(values,
  indices)` pair is a sparse one (`tf.IndexedSlices` of rows of its
  variable; TensorFlow only), with every step's pair of the same shapes.
  `backend` (Keras 3 only): run it on that Keras backend, in a subprocess
  when it is not this process's (e.g. "jax" for `ScheduleFreeAdamW`, whose
  TensorFlow backend has a defect). `names`: the variables' names (by
  default `variable_<index>`), for optimizers that go by them (weight decay
  excluded from `bias`). A tf_keras optimizer of the 2.11+ generation
  (`tf_keras.optimizers.Adam`) runs too; `backend="eager"` runs a
  TensorFlow optimizer's steps eagerly, one call each (tf_keras's Nadam,
  whose step traced into a `tf.function` has a defect).
  """
  return native_trajectories([optimizer], initial, gradients,
                             backend=backend, names=names)[0]


def native_trajectories(optimizers: Sequence[Any],
                        initial: Sequence[np.ndarray],
                        gradients: Sequence[Sequence[np.ndarray]], *,
                        backend: str | None = None,
                        names: Sequence[str] | None = None
                        ) -> list[list[list[np.ndarray]]]:
  """`native_trajectory` of each of `optimizers`, each on variables of its
  own; the Keras 3 (TensorFlow backend) and OptimizerV2 ones' steps
  together in one `tf.function` call (one trace and one run for all: a
  call each costs a third more on small problems, as grids and mutant
  checks run them)."""
  names = names or [f"variable_{index}" for index in range(len(initial))]
  runs, together = {}, []
  for index, optimizer in enumerate(optimizers):
    variables = _built_for_one_call(optimizer, initial, names, backend)
    if variables is None:
      runs[index] = _trajectory_apart(optimizer, initial, gradients, backend,
                                      names)
    else:
      together.append((index, optimizer, variables))
  if together:
    runs.update(zip([index for index, _, _ in together], _steps_in_one_call(
        [(optimizer, variables) for _, optimizer, variables in together],
        gradients)))
  return [runs[index] for index in range(len(optimizers))]


def _built_for_one_call(optimizer: Any, initial: Sequence[np.ndarray],
                        names: Sequence[str], backend: str | None
                        ) -> list[Any] | None:
  """New variables at `initial`, `optimizer` built for them, where its
  steps can run in one `tf.function` call (a Keras 3 optimizer on this
  process's TensorFlow backend, an OptimizerV2 not run eagerly); None
  where they cannot."""
  if _is_keras3(optimizer):
    import keras  # pylint: disable=import-outside-toplevel
    if (backend not in (None, keras.backend.backend())
        or keras.backend.backend() != "tensorflow"):
      return None
    variables = [keras.Variable(value, name=name)
                 for name, value in zip(names, initial)]
    optimizer.build(variables)
    return variables
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if backend == "eager" or isinstance(optimizer, tf.compat.v1.train.Optimizer):
    return None
  variables = [tf.Variable(value, name=name)
               for name, value in zip(names, initial)]
  if hasattr(optimizer, "_create_all_weights"):  # OptimizerV2.
    optimizer._create_all_weights(variables)  # pylint: disable=protected-access
  else:
    optimizer.build(variables)
  return variables


def _trajectory_apart(optimizer: Any, initial: Sequence[np.ndarray],
                      gradients: Sequence[Sequence[np.ndarray]],
                      backend: str | None, names: Sequence[str]
                      ) -> list[list[np.ndarray]]:
  """`native_trajectory` of an optimizer whose steps run a call each: on
  another Keras backend, eagerly, or TF1's."""
  if _is_keras3(optimizer):
    import keras  # pylint: disable=import-outside-toplevel
    if backend is not None and backend != keras.backend.backend():
      from tf_bridge import _other_backend  # pylint: disable=import-outside-toplevel
      return _other_backend.run(backend, keras.optimizers.serialize(optimizer),
                                initial, gradients)[0]
    variables = [keras.Variable(value, name=name)
                 for name, value in zip(names, initial)]
    return [_apply_and_read(
        lambda grads: optimizer.apply(grads, variables), variables,
        [keras.ops.convert_to_tensor(g) for g in step]) for step in gradients]
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  variables = [tf.Variable(value, name=name)
               for name, value in zip(names, initial)]
  apply = lambda grads: apply_gradients(optimizer, grads, variables)  # pylint: disable=unnecessary-lambda-assignment
  tensors = [[_gradient_tensor(g, v) for g, v in zip(step, variables)]
             for step in gradients]
  if backend != "eager":
    # TF1 makes its slots at its first step: one trace (by hand, as in
    # `_steps_in_one_call`), a call per step.
    apply = tf.function(apply).get_concrete_function(tensors[0])
  return [_apply_and_read(apply, variables, grads) for grads in tensors]


def _steps_in_one_call(runs: Sequence[tuple[Any, Sequence[Any]]],
                       gradients: Sequence[Sequence[np.ndarray]]
                       ) -> list[list[list[np.ndarray]]]:
  """Every step of each built Keras 3 or OptimizerV2 optimizer on its
  variables (`runs`: pairs), all in one `tf.function` call (a
  `tf.while_loop` over the steps, as `model.fit` runs several steps per
  execution), the variables read after each step: the same numbers as a
  call per step, several times faster."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  steps = len(gradients)
  stacked = [tf.nest.map_structure(
      lambda *per_step: tf.constant(np.stack(per_step)),
      *[step[index] for step in gradients])
             for index in range(len(gradients[0]))]
  every_variable = [v for _, variables in runs for v in variables]

  def run():
    def step(index, values):
      for optimizer, variables in runs:
        apply_gradients(optimizer, [
            _gradient_tensor(tf.nest.map_structure(lambda g: g[index], g), v)
            for g, v in zip(stacked, variables)], variables)
      return index + 1, [array.write(index, tf.convert_to_tensor(variable))
                         for array, variable in zip(values, every_variable)]

    values = [tf.TensorArray(tf.as_dtype(variable.dtype), size=steps)
              for variable in every_variable]
    _, values = tf.while_loop(lambda index, _: index < steps, step,
                              (tf.constant(0), values))
    return [array.stack() for array in values]

  # Traced once, by hand: a `tf.function` called once per comparison would
  # count each new optimizer's trace as a retrace of the same code, and
  # TensorFlow warns after five ("triggered tf.function retracing").
  traced = tf.function(run, autograph=False).get_concrete_function()
  values = iter(value.numpy() for value in traced())
  trajectories = []
  for _, variables in runs:
    mine = [next(values) for _ in variables]
    trajectories.append([[value[step] for value in mine]
                         for step in range(steps)])
  return trajectories


def _gradient_tensor(gradient: Any, variable: Any) -> Any:
  """A dense gradient as a tensor; a `(values, indices)` pair as the
  `tf.IndexedSlices` of those rows of `variable`."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if isinstance(gradient, tuple):
    values, indices = gradient
    return tf.IndexedSlices(tf.convert_to_tensor(values),
                            tf.convert_to_tensor(indices),
                            tf.constant(tuple(variable.shape), tf.int32))
  return tf.convert_to_tensor(gradient)


def apply_gradients(optimizer: Any, grads: Sequence[Any],
                    variables: Sequence[Any]) -> None:
  """One step with an optimizer of any generation: Keras 3's `apply`,
  OptimizerV2's and TF1's `apply_gradients` (advancing the global step a TF1
  optimizer reads, AdagradDA's, as a TF1 training loop does)."""
  if _is_keras3(optimizer):
    optimizer.apply(list(grads), list(variables))
    return
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  step_counter = {}
  if isinstance(optimizer, tf.compat.v1.train.Optimizer):
    step_counter["global_step"] = getattr(optimizer, "_global_step", None)
  optimizer.apply_gradients(zip(grads, variables), **step_counter)


def _apply_and_read(apply, variables, grads):
  apply(grads)
  # `numpy()`, not np.array(variable): numpy 2 warns that Keras's and
  # TensorFlow's variables take no `copy` in `__array__`.
  return [np.array(v.numpy()) for v in variables]
