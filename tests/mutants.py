"""Hyperparameter mutants of a catalog entry, shared by the checks that must
kill them (port vs native, bridge vs native, sparse): each numeric
hyperparameter of its port perturbed by a relative 1e-3 (1e-3 if it is 0).
A check that no mutant of a hyperparameter fails leaves it untested."""

import inspect
import math
import os

from tf_bridge import testing

PERTURBATION = 1e-3
# The bridge's mutant check (tests/bridge_mutant_cases.py) searches the
# grid for a point where each hyperparameter's mutant parts in the long
# profile (tests/long_profile.sh, TEST_MUTANT_GRID=1); the suite searches
# it for the learning rate's alone and tries the others at the default
# point (one `tf.function` call).
SEARCH_GRID = os.environ.get("TEST_MUTANT_GRID") == "1"


def searches_grid(hyperparameter):
  """Whether `hyperparameter`'s mutant must part at some grid point."""
  return SEARCH_GRID or hyperparameter == "learning_rate"


def numeric_hyperparameters(declaration):
  """The port's own numeric arguments (the learning rate included, the
  host's base arguments not)."""
  parameters = inspect.signature(declaration.port).parameters
  base = set(getattr(declaration.port, "base_arguments", ())) - {
      "learning_rate"}
  return [name for name, parameter in parameters.items()
          if name not in base and (
              name == "learning_rate"
              or (isinstance(parameter.default, float)
                  and not isinstance(parameter.default, bool)))]


def value_at(declaration, point, name):
  """The value of argument `name` at `point`: given, required or the
  port's default."""
  return point.get(name, declaration.required.get(
      name, inspect.signature(declaration.port).parameters[name].default))


def perturbed(declaration, point, name, relative=PERTURBATION):
  """`point` with `name` perturbed by `relative` (`relative` itself if it is
  0); None where its value is not a number (a schedule, None)."""
  value = value_at(declaration, point, name)
  if not isinstance(value, (int, float)) or isinstance(value, bool):
    return None
  return {**point, name: value * (1 + relative) if value else relative}


def search_order(declaration, points, name):
  """`points` (argument dicts, the first the check's own point) in the
  order a mutant of `name` should try them, as (index, point): the first,
  then those that set `name` (a grid point sets an argument to make it
  bind), the farthest from its default first, then the rest. A mutant
  killed at its first try spares the reference runs of the points it would
  have visited in vain."""
  default = value_at(declaration, {}, name)

  def distance(value):
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool)
                  for v in (value, default))
    if not numbers or value == default:
      return 0.0
    if not value or not default:
      return math.inf
    return abs(math.log(abs(value / default)))

  setting = sorted((i for i, point in enumerate(points) if i and name in point),
                   key=lambda i: -distance(points[i][name]))
  rest = [i for i in range(1, len(points)) if i not in setting]
  return [(i, points[i]) for i in [0, *setting, *rest]]


def fed(declaration, mutant):
  """`mutant` with every numeric hyperparameter but the learning rate fed
  as a float32 tensor: the bridge feeds such runtime hyperparameters to its
  step, the same numbers, and one compiled step then serves every mutant of
  a point (baked in, each would compile its own)."""
  import tensorflow as tf
  tensors = {}
  for name in numeric_hyperparameters(declaration):
    value = value_at(declaration, mutant, name)
    if name != "learning_rate" and isinstance(value, float):
      tensors[name] = tf.constant(value, tf.float32)
  return {**mutant, **tensors}


def parts(actual, expected, *, rtol=1e-5, atol=1e-6, initial=None):
  """Whether the check `compare_trajectories` tells `actual` apart from
  `expected`: True, False, or None where it cannot tell (the reference
  moves too little: not a kill)."""
  try:
    testing.compare_trajectories(actual, expected, rtol=rtol, atol=atol,
                                 initial=initial)
  except AssertionError as error:
    return True if "part at step" in str(error) else None
  return False

