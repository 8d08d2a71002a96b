"""Every bridged class against its native Keras class and its port, step by
step, in a `tf.function`; every sixth class eagerly too (`sampling`; every
class in the long profile)."""

import functools

import pytest
import tf_keras

import tf_bridge
import tf_bridge.legacy
from tf_bridge import catalog, testing

import sampling
from bridge_cases import (problem, keras_trajectory, ALL_CLASSES, IDS,
                          native_dense_trajectory)


def test_legacy_classes_never_stand_in_for_a_native_legacy_class():
  """A Keras 3 port is not OptimizerV2's algorithm of the same name."""
  assert hasattr(tf_bridge.legacy, "AdamW") and hasattr(tf_bridge.legacy,
                                                        "Lion")
  for declaration in catalog.CATALOG:
    legacy_class = getattr(tf_bridge.legacy, declaration.class_name, None)
    if legacy_class and hasattr(tf_keras.optimizers.legacy,
                                declaration.class_name):
      assert catalog.lookup(f"legacy.{declaration.port.__name__}")


@functools.lru_cache(maxsize=None)
def _references(name):
  """(port trajectory, native trajectory or None) of catalog entry `name`
  on the dense problem: shared by its eager and tf.function cases and by
  every class hosting it."""
  declaration = catalog.lookup(name)
  initial, gradients = problem(sparse=False)
  port = testing.transform_trajectory(declaration.make_port(), initial,
                                      gradients)
  native = (native_dense_trajectory(declaration, {}, gradients)
            if declaration.has_native else None)
  return port, native


MODES = sampling.traced_and_eager(len(ALL_CLASSES), shift=1)


@pytest.mark.parametrize(
    "case,in_function", MODES,
    ids=[f"{IDS[case]}-{'tf.function' if in_function else 'eager'}"
         for case, in_function in MODES])
def test_bridged_equals_native_and_port(case, in_function):
  declaration = ALL_CLASSES[case].declaration
  initial, gradients = problem(sparse=False)
  bridged = keras_trajectory(ALL_CLASSES[case].make(), initial, gradients,
                             in_function=in_function)
  testing.compare_trajectories(bridged, _references(declaration.name)[0],
                               rtol=1e-5, atol=1e-6,
                               actual_name="bridge", expected_name="port")
  if declaration.has_native:
    native = _references(declaration.name)[1]
    testing.compare_trajectories(bridged, native, rtol=1e-5, atol=1e-6,
                                 actual_name="bridge",
                                 expected_name=declaration.native_path)
