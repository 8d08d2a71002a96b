"""Every port equals its native Keras optimizer at every step, per grid point.

Keras 3 ports against `keras.optimizers` (TensorFlow backend; JAX backend
for ScheduleFreeAdamW), legacy ports against `tf_keras.optimizers.legacy`, TF1
ports against `tf.compat.v1.train` run eagerly: 100 steps on a scalar, a vector and a
matrix variable, seeded gradients of scale 1 and 1e-4 (where epsilon
placement decides the result), rtol 1e-5 and atol 1e-6.
"""

import functools
import inspect
import warnings

import jaxopt_port
import pytest

import grids
import mutants
from tf_bridge import catalog, testing

STEPS = 100
NATIVE = [d for d in catalog.CATALOG if d.has_native]


def _cases():
  for declaration in NATIVE:
    base = {catalog.KERAS: grids.KERAS_BASE,
            catalog.LEGACY: grids.LEGACY_BASE}.get(declaration.generation, [])
    for kwargs in grids.OWN.get(declaration.name, [{}]):
      for scale in grids.GRAD_SCALES:
        yield declaration.name, kwargs, scale
    for kwargs in base:
      if (kwargs == grids.LOSS_SCALE_POINT
          and declaration.name in grids.SCALE_INVARIANT):
        continue
      if declaration.name in grids.NO_LR_ALIAS and "lr" in kwargs:
        continue
      if declaration.name in grids.NO_LEARNING_RATE_DECAY and (
          "decay" in kwargs or isinstance(kwargs.get("learning_rate"), tuple)):
        continue
      yield declaration.name, kwargs, 1.0


CASES = list(_cases())


def _schedules(declaration):
  if declaration.generation == catalog.LEGACY:
    import tf_keras
    return tf_keras.optimizers.schedules
  import keras
  return keras.optimizers.schedules


def _native_trajectory(declaration, kwargs, initial, gradients):
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # tf_keras: `lr` deprecated.
    optimizer = declaration.make_native(
        **grids.build(kwargs, _schedules(declaration)))
  return testing.native_trajectory(optimizer, initial, gradients,
                                   backend=declaration.native_backend)


def _port(declaration, kwargs):
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    return declaration.make_port(**grids.build(kwargs, jaxopt_port.schedules))


@functools.lru_cache(maxsize=None)
def _problem(scale):
  return testing.seeded_problem(STEPS, seed=0, grad_scale=scale)


def test_every_native_optimizer_has_a_grid():
  assert sorted(d.name for d in NATIVE) == sorted(grids.OWN)


# Learning-rate multipliers tried, in turn, until a point's native
# trajectory moves testing.POWER tolerances (else a transform that does
# nothing would pass it: Adadelta at Keras's default 0.001, SGD at
# gradients of 1e-4).
MULTIPLIERS = (1, 10, 100, 1000)


def _default_rate(declaration):
  rate = inspect.signature(declaration.port).parameters[
      "learning_rate"].default
  return declaration.required.get("learning_rate", rate)


@functools.lru_cache(maxsize=None)
def _strong_point(name, label, scale):
  """The grid point `label` of `name`, its learning rate raised tenfold as
  long as its native trajectory cannot tell a do-nothing transform apart:
  (kwargs, native trajectory)."""
  declaration = catalog.lookup(name)
  kwargs = dict(LABELLED[name, label])
  initial, gradients = _problem(scale)
  fixed = "learning_rate" in kwargs or "lr" in kwargs
  for multiplier in (1,) if fixed else MULTIPLIERS:
    point = (kwargs if multiplier == 1 else
             {**kwargs, "learning_rate": _default_rate(declaration)
              * multiplier})
    expected = _native_trajectory(declaration, point, initial, gradients)
    if testing.movement(expected, initial, rtol=RTOL,
                        atol=ATOL) >= testing.POWER:
      break
  return point, expected


RTOL, ATOL = 1e-5, 1e-6
LABELLED = {(n, grids.label(k)): k for n, k, _ in CASES}


@pytest.mark.parametrize(
    "name,kwargs,scale", CASES,
    ids=[f"{n}-{grids.label(k)}-g{s:g}" for n, k, s in CASES])
def test_port_equals_native(name, kwargs, scale):
  declaration = catalog.lookup(name)
  initial, gradients = _problem(scale)
  point, expected = _strong_point(name, grids.label(kwargs), scale)
  actual = testing.transform_trajectory(_port(declaration, point), initial,
                                        gradients)
  testing.compare_trajectories(actual, expected, rtol=RTOL, atol=ATOL,
                               expected_name=declaration.native_path,
                               initial=initial)

  if kwargs and kwargs not in grids.SAME_TRAJECTORY_AS_DEFAULT:
    # The grid point changes something: the default at the same rate parts.
    rate = {k: v for k, v in point.items() if k == "learning_rate"
            and "learning_rate" not in kwargs}
    default = _native_trajectory(declaration, rate, initial, gradients)
    with pytest.raises(AssertionError, match="part at step"):
      testing.compare_trajectories(default, expected, rtol=RTOL, atol=ATOL,
                                   initial=initial)


@pytest.mark.parametrize("name", sorted({n for n, _, _ in CASES}))
def test_every_hyperparameter_mutant_parts_from_native(name):
  """Each hyperparameter mutant (`mutants.perturbed`) of the port parts from
  native at some grid point of `test_port_equals_native`."""
  declaration = catalog.lookup(name)
  survivors = []
  for hyperparameter in mutants.numeric_hyperparameters(declaration):
    killed = False
    for case_name, kwargs, scale in CASES:
      if case_name != name:
        continue
      point, expected = _strong_point(name, grids.label(kwargs), scale)
      mutant = mutants.perturbed(declaration, point, hyperparameter)
      if mutant is None:
        continue
      initial, gradients = _problem(scale)
      try:
        transform = _port(declaration, mutant)
      except ValueError:
        continue  # Out of the argument's range here: no mutant.
      try:
        testing.compare_trajectories(
            testing.transform_trajectory(transform, initial, gradients),
            expected, rtol=RTOL, atol=ATOL, initial=initial)
      except AssertionError:
        killed = True
        break
    if not killed:
      survivors.append(hyperparameter)
  assert not survivors, (name, survivors)
