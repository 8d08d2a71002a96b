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
import numpy as np
import pytest

import formulas
import grids
import mutants
import sampling
from tf_bridge import catalog, testing

STEPS = 100
NATIVE = [d for d in catalog.CATALOG if d.has_native]


# The classes whose hyperparameter mutants run here (`sampling`); they run
# their whole grid, where their mutants bind.
MUTANT_CLASSES = [name for index, name in enumerate(
    sorted(d.name for d in NATIVE)) if sampling.whole(index)]


def _cases():
  """Each class's own grid at every gradient scale, and its generation's
  base arguments (shared code) at scale 1: every base point on every sixth
  class (`sampling`, shifted by the point), all of them for MUTANT_CLASSES
  (and for every class in the long profile)."""
  for index, declaration in enumerate(NATIVE):
    base = {catalog.KERAS: grids.KERAS_BASE,
            catalog.LEGACY: grids.LEGACY_BASE,
            catalog.TF_KERAS: grids.TF_KERAS_BASE}.get(
                declaration.generation, [])
    for kwargs in grids.OWN.get(declaration.name, [{}]):
      for scale in grids.GRAD_SCALES:
        yield declaration.name, kwargs, scale
    for position, kwargs in enumerate(base):
      if not (sampling.whole(index + position, shift=3)
              or declaration.name in MUTANT_CLASSES):
        continue
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
  if declaration.generation in (catalog.LEGACY, catalog.TF_KERAS):
    import tf_keras
    return tf_keras.optimizers.schedules
  import keras
  return keras.optimizers.schedules


def _native_trajectory(declaration, kwargs, initial, gradients):
  return _native_trajectories(declaration, [kwargs], initial, gradients)[0]


def _native_trajectories(declaration, points, initial, gradients):
  """Native's trajectory at each of `points` (kwargs), in one call where
  they can (`testing.native_trajectories`)."""
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # tf_keras: `lr` deprecated.
    optimizers = [declaration.make_native(
        **grids.build(kwargs, _schedules(declaration))) for kwargs in points]
  return testing.native_trajectories(optimizers, initial, gradients,
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


def _strong_point(name, label, scale):
  """The grid point `label` of `name`, its learning rate raised tenfold as
  long as its native trajectory cannot tell a do-nothing transform apart:
  (kwargs, native trajectory)."""
  return _strong_points(name, scale)[label]


@functools.lru_cache(maxsize=None)
def _strong_points(name, scale):
  """`_strong_point` of every grid point of `name` at `scale`, by label:
  the native runs of each multiplier together in one call."""
  declaration = catalog.lookup(name)
  initial, gradients = _problem(scale)
  pending = {grids.label(k): k for n, k, s in CASES
             if n == name and s == scale}
  found = {}
  for multiplier in MULTIPLIERS:
    if not pending:
      break
    points = {label: (kwargs if multiplier == 1 else
                      {**kwargs, "learning_rate": _default_rate(declaration)
                       * multiplier})
              for label, kwargs in pending.items()}
    runs = _native_trajectories(declaration, list(points.values()), initial,
                                gradients)
    for (label, point), expected in zip(points.items(), runs):
      fixed = "learning_rate" in pending[label] or "lr" in pending[label]
      if (fixed or multiplier == MULTIPLIERS[-1] or testing.movement(
          expected, initial, rtol=RTOL, atol=ATOL) >= testing.POWER):
        found[label] = point, expected
        del pending[label]
  return found


@functools.lru_cache(maxsize=None)
def _port_trajectories(name, scale):
  """The port's trajectory at each strong point of `name` at `scale`, by
  label: one jitted program for all (a compile each costs twice as much)."""
  declaration = catalog.lookup(name)
  points = _strong_points(name, scale)
  return dict(zip(points, testing.transform_trajectories(
      [_port(declaration, point) for point, _ in points.values()],
      *_problem(scale))))


RTOL, ATOL = 1e-5, 1e-6


@pytest.mark.parametrize("name,kwargs,scale", [
    grids.grouped(n, n, k, s, case_id=f"{n}-{grids.label(k)}-g{s:g}")
    for n, k, s in CASES])
def test_port_equals_native(name, kwargs, scale):
  declaration = catalog.lookup(name)
  initial, gradients = _problem(scale)
  label = grids.label(kwargs)
  point, expected = _strong_point(name, label, scale)
  testing.compare_trajectories(_port_trajectories(name, scale)[label],
                               expected, rtol=RTOL, atol=ATOL,
                               expected_name=declaration.native_path,
                               initial=initial)

  if kwargs and kwargs not in grids.SAME_TRAJECTORY_AS_DEFAULT:
    # The grid point changes something: the default at the same rate parts.
    rate = (point["learning_rate"] if "learning_rate" in point
            and "learning_rate" not in kwargs else None)
    default = _default_trajectory(name, rate, scale)
    with pytest.raises(AssertionError, match="part at step"):
      testing.compare_trajectories(default, expected, rtol=RTOL, atol=ATOL,
                                   initial=initial)


@functools.lru_cache(maxsize=None)
def _default_trajectory(name, rate, scale):
  """Native's trajectory at its defaults (at `rate` when not None): the
  control of every grid point of `name` at that rate and scale."""
  declaration = catalog.lookup(name)
  kwargs = {} if rate is None else {"learning_rate": rate}
  return _native_trajectory(declaration, kwargs, *_problem(scale))


@pytest.mark.parametrize("name", [
    grids.grouped(n, n, case_id=n) for n in MUTANT_CLASSES])
def test_every_hyperparameter_mutant_parts_from_native(name):
  """Each hyperparameter mutant (`mutants.perturbed`) of the port parts from
  native at some grid point of `test_port_equals_native` (the mutants
  still alive at a point run there together: one compile), for every
  sixth class (`sampling`; every class in the long profile). Every class
  meets a mutant in every run all the same: test_programs' learning-rate
  mutant of its bridged class."""
  declaration = catalog.lookup(name)
  alive = set(mutants.numeric_hyperparameters(declaration))
  for case_name, kwargs, scale in CASES:
    if case_name != name or not alive:
      continue
    point, expected = _strong_point(name, grids.label(kwargs), scale)
    transforms = {}
    for hyperparameter in alive:
      mutant = mutants.perturbed(declaration, point, hyperparameter)
      if mutant is None:
        continue
      try:
        transforms[hyperparameter] = _port(declaration, mutant)
      except ValueError:
        continue  # Out of the argument's range here: no mutant.
    if not transforms:
      continue
    initial, gradients = _problem(scale)
    runs = testing.transform_trajectories(list(transforms.values()),
                                          initial, gradients)
    for hyperparameter, run in zip(transforms, runs):
      if mutants.parts(run, expected, rtol=RTOL, atol=ATOL, initial=initial):
        alive.discard(hyperparameter)
  assert not alive, (name, sorted(alive))


def _port_arguments(declaration, names, point):
  """`point` with the port's defaults (and required values) for `names`."""
  parameters = inspect.signature(declaration.port).parameters
  defaults = {name: parameters[name].default for name in names
              if parameters[name].default is not inspect.Parameter.empty}
  return {**defaults, **declaration.required, **point}


def test_every_formula_names_port_arguments():
  for name, (_, _, accepted) in formulas.FORMULAS.items():
    parameters = inspect.signature(catalog.lookup(name).port).parameters
    assert accepted <= set(parameters), (name, accepted - set(parameters))


# Formula mutants (`formulas.py`): each family's update written from its
# native source, and one-change mutants of it a port could make. The
# reference must pass the port-vs-native check at every grid point it
# covers, and every mutant fail it at one point at least; for every sixth
# family (`sampling`; every family in the long profile).
@pytest.mark.parametrize("name", [
    grids.grouped(n, n, case_id=n) for index, n
    in enumerate(sorted(formulas.FORMULAS)) if sampling.whole(index, shift=1)])
def test_formula_mutants_part_from_native(name):
  reference, formula_mutants, accepted = formulas.FORMULAS[name]
  declaration = catalog.lookup(name)
  points = [(kwargs, scale) for case_name, kwargs, scale in CASES
            if case_name == name and set(kwargs) <= accepted
            and all(v is None or isinstance(v, (int, float))
                    for v in kwargs.values())
            and kwargs.get("epsilon", 1.0) != 0.0]
  assert len(points) >= 2
  killed = set()
  for kwargs, scale in points:
    point, expected = _strong_point(name, grids.label(kwargs), scale)
    arguments = _port_arguments(declaration, accepted, point)
    initial, gradients = _problem(scale)

    alive = [label for label in formula_mutants if label not in killed]
    truth, *runs = testing.transform_trajectories(
        [reference(**arguments)]
        + [formula_mutants[label](**arguments) for label in alive],
        initial, gradients)
    testing.compare_trajectories(truth, expected, rtol=RTOL, atol=ATOL,
                                 initial=initial,
                                 expected_name=f"{name} at {arguments}")
    for label, run in zip(alive, runs):
      if mutants.parts(run, expected, rtol=RTOL, atol=ATOL, initial=initial):
        killed.add(label)
  assert killed == set(formula_mutants), (name, sorted(
      set(formula_mutants) - killed))


@pytest.mark.parametrize("name", sorted(d.name for d in NATIVE))
def test_exactly_zero_gradients_equal_native(name):
  """Gradients with exact zeros (a whole first step, then a zero row and
  scattered zero elements), as untouched embedding rows and dead units
  give: the port equals native, where a formula that divides by
  sign(0) or sqrt(0) would not (a surviving mutmut mutant of Lion's step)."""
  declaration = catalog.lookup(name)
  initial, gradients = testing.seeded_problem(8, seed=3, grad_scale=1.0)
  rng = np.random.default_rng(4)
  zeroed = [[np.zeros_like(g) for g in gradients[0]]]
  for step in gradients[1:]:
    step = [np.where(rng.random(g.shape) < 0.3, 0.0, g).astype(g.dtype)
            for g in step]
    if step[-1].ndim:
      step[-1][0] = 0.0  # A row no step touches.
    zeroed.append(step)
  for multiplier in MULTIPLIERS:
    point = ({} if multiplier == 1 else
             {"learning_rate": _default_rate(declaration) * multiplier})
    expected = _native_trajectory(declaration, point, initial, zeroed)
    if testing.movement(expected, initial, rtol=RTOL,
                        atol=ATOL) >= testing.POWER:
      break
  testing.compare_trajectories(
      testing.transform_trajectory(_port(declaration, point), initial,
                                   zeroed),
      expected, rtol=RTOL, atol=ATOL, initial=initial,
      expected_name=declaration.native_path)
