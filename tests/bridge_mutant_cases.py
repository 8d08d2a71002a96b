"""(Run by tests/test_bridge_mutants.py in a fresh process.)

The bridge-vs-native check kills every hyperparameter mutant: each
bridged class with a native class, made with one numeric hyperparameter
perturbed by a relative 1e-3 (`mutants.perturbed`), parts from native at
`test_bridge_parity`'s tolerance, on its problem, at the default point or
else at a grid point of tests/grids.py where it does (those that set the
hyperparameter tried first: `mutants.search_order`); at each such point
the unmutated class equals native, so the point is a bridge parity check
of its own."""

import functools

import keras
import pytest
import tf_keras

import grids
import mutants
from bridge_cases import ALL_CLASSES, IDS, problem
from tf_bridge import catalog, testing

RTOL, ATOL = 1e-5, 1e-6  # test_bridge_parity's.
CASES = [i for i, case in enumerate(ALL_CLASSES)
         if case.declaration.has_native
         and case.declaration.native_backend == "tensorflow"]


def _points(declaration):
  """The default point, then the optimizer's grid points."""
  return [{}] + [p for p in grids.OWN.get(declaration.name, []) if p]


def _schedules(legacy):
  return (tf_keras.optimizers.schedules if legacy
          else keras.optimizers.schedules)


@functools.lru_cache(maxsize=None)
def _native(case_index, label):
  declaration = ALL_CLASSES[case_index].declaration
  point = _labelled(case_index)[label]
  initial, gradients = problem(sparse=False)
  return testing.native_trajectory(
      declaration.make_native(**grids.build(point, _schedules(
          declaration.generation == catalog.LEGACY))), initial, gradients)


@functools.lru_cache(maxsize=None)
def _labelled(case_index):
  return {grids.label(p): p for p in _points(ALL_CLASSES[case_index]
                                             .declaration)}


def _bridged(case, point):
  return testing.native_trajectory(
      case.make(**grids.build(point, _schedules(case.on_tf_keras))),
      *problem(sparse=False))


def _bridged_mutant(case, mutant):
  """The bridged class made with `mutant`'s hyperparameters fed as tensors
  (`mutants.fed`), its steps in one `tf.function` call
  (`testing.native_trajectory` runs any Keras optimizer so)."""
  return testing.native_trajectory(
      case.make(**grids.build(mutants.fed(case.declaration, mutant),
                              _schedules(case.on_tf_keras))),
      *problem(sparse=False))


@pytest.mark.parametrize("case_index", CASES,
                         ids=[IDS[i] for i in CASES])
def test_every_hyperparameter_mutant_parts_bridge_from_native(case_index):
  case = ALL_CLASSES[case_index]
  declaration = case.declaration
  survivors, checked = [], set()
  for hyperparameter in mutants.numeric_hyperparameters(declaration):
    killed = False
    for _, point in mutants.search_order(
        declaration, list(_labelled(case_index).values()), hyperparameter):
      label = grids.label(point)
      mutant = mutants.perturbed(declaration, point, hyperparameter)
      if mutant is None:
        continue
      try:
        mutant_run = _bridged_mutant(case, mutant)
      except ValueError:
        continue  # Out of the argument's range here: no mutant.
      expected = _native(case_index, label)
      verdict = mutants.parts(mutant_run, expected, rtol=RTOL, atol=ATOL)
      if verdict is None:
        continue
      if label not in checked:  # The point itself is a passing check.
        testing.compare_trajectories(_bridged(case, point), expected,
                                     rtol=RTOL, atol=ATOL,
                                     actual_name="bridge",
                                     expected_name=declaration.native_path)
        checked.add(label)
      if verdict:
        killed = True
        break
    if not killed:
      survivors.append(hyperparameter)
  assert not survivors, (IDS[case_index], survivors)
