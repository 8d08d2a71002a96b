"""Every optimizer class of the installed Keras 3, tf_keras (its 2.11+
generation and legacy) and TF1 `compat.v1.train` has a port: a test fails
when one of them gains a class.

Skipped, by the project's rule, only the wrappers that are not algorithms:
`LossScaleOptimizer` (it wraps bridged classes, tested in test_bridge_keras_features.py),
`OptimizerMap` (the mapping `multi_optimizer` takes) and TF1's graph-only
`SyncReplicasOptimizer`.
"""

import inspect

import jaxopt_port
import keras
import tensorflow as tf
import tf_keras

from tf_bridge import catalog

NOT_ALGORITHMS = {"LossScaleOptimizer", "OptimizerMap", "SyncReplicasOptimizer"}
# Wrappers whose port takes transforms, so no catalog class declares them.
WRAPPERS = {("keras.optimizers", "MultiOptimizer"): jaxopt_port.multi_optimizer}


def optimizer_classes(module, base):
  return sorted(name for name, value in vars(module).items()
                if inspect.isclass(value) and issubclass(value, base)
                and value is not base and name not in NOT_ALGORITHMS)


def test_the_skipped_wrappers_exist():
  """The skip list names real classes (a renamed one would hide a gap)."""
  assert hasattr(keras.optimizers, "LossScaleOptimizer")
  assert hasattr(keras.optimizers, "OptimizerMap")
  assert hasattr(tf.compat.v1.train, "SyncReplicasOptimizer")


def test_every_native_optimizer_has_a_port():
  natives = {d.native_path for d in catalog.CATALOG if d.has_native}
  missing = []
  for module_name, module, base in (
      ("keras.optimizers", keras.optimizers, keras.optimizers.Optimizer),
      ("tf_keras.optimizers", tf_keras.optimizers,
       tf_keras.optimizers.Optimizer),
      ("tf_keras.optimizers.legacy", tf_keras.optimizers.legacy,
       tf_keras.optimizers.legacy.Optimizer),
      ("tensorflow.compat.v1.train", tf.compat.v1.train,
       tf.compat.v1.train.Optimizer)):
    for name in optimizer_classes(module, base):
      if (f"{module_name}.{name}" not in natives
          and (module_name, name) not in WRAPPERS):
        missing.append(f"{module_name}.{name}")
  assert not missing, f"Native optimizers without a port: {missing}"


def test_catalog_ground_truths_are_real_classes():
  for declaration in catalog.CATALOG:
    if declaration.has_native:
      assert inspect.isclass(declaration.native_class()), declaration.name
