"""(Run by tests/test_bridge_mutants.py in a fresh process.)

The bridge-vs-native check kills every hyperparameter mutant: each
bridged class with a native class, made with one numeric hyperparameter
perturbed by a relative 1e-3 (`mutants.perturbed`), parts from native at
`test_bridge_parity`'s tolerance, on its problem, at the default point or
else at a grid point of tests/grids.py where it does (those that set the
hyperparameter tried first: `mutants.search_order`); at each such point
the unmutated class equals native, so the point is a bridge parity check
of its own. The suite searches the grid for the learning rate's mutant
alone and tries the other hyperparameters' at the default point
(`mutants.SEARCH_GRID`)."""

import functools

import keras
import pytest
import tf_keras

import grids
import mutants
import sampling
from bridge_cases import ALL_CLASSES, IDS, problem
from tf_bridge import catalog, testing

RTOL, ATOL = 1e-5, 1e-6  # test_bridge_parity's.
# Every sixth bridged class (`sampling`; every class in the long profile):
# test_programs kills every bridged class's learning-rate mutant.
CASES = [i for i, case in enumerate(ALL_CLASSES)
         if case.declaration.has_native
         and case.declaration.native_backend == "tensorflow"
         and sampling.whole(i, shift=2)]


def _points(declaration):
  """The default point, then the optimizer's grid points."""
  return [{}] + [p for p in grids.OWN.get(declaration.name, []) if p]


def _schedules(legacy):
  return (tf_keras.optimizers.schedules if legacy
          else keras.optimizers.schedules)


@functools.lru_cache(maxsize=None)
def _labelled(case_index):
  return {grids.label(p): p for p in _points(ALL_CLASSES[case_index]
                                             .declaration)}


def _native(case, point):
  declaration = case.declaration
  return declaration.make_native(**grids.build(point, _schedules(
      declaration.generation == catalog.LEGACY)))


def _bridged(case, point):
  return case.make(**grids.build(point, _schedules(case.on_tf_keras)))


def _next_mutant(case, order, hyperparameter):
  """The next point of `order` where the bridged class takes a mutant of
  `hyperparameter`, and that mutant, made with its hyperparameters fed as
  tensors (`mutants.fed`: one compiled step serves every mutant of a
  point): (label, optimizer), or None when no point is left."""
  for _, point in order:
    mutant = mutants.perturbed(case.declaration, point, hyperparameter)
    if mutant is None:
      continue
    try:
      return grids.label(point), _bridged(
          case, mutants.fed(case.declaration, mutant))
    except ValueError:
      continue  # Out of the argument's range here: no mutant.
  return None


@pytest.mark.parametrize("case_index", CASES,
                         ids=[IDS[i] for i in CASES])
def test_every_hyperparameter_mutant_parts_bridge_from_native(case_index):
  """Each hyperparameter's mutant tries its points in `search_order`;
  each round runs the mutants at their next point, those of a point
  together with native and the unmutated class there, in one
  `tf.function` call (`testing.native_trajectories`)."""
  case = ALL_CLASSES[case_index]
  declaration = case.declaration
  labelled = _labelled(case_index)
  orders = {hyperparameter: iter(mutants.search_order(
      declaration, list(labelled.values()), hyperparameter)[
          :None if mutants.searches_grid(hyperparameter) else 1])
            for hyperparameter in mutants.numeric_hyperparameters(
                declaration)}
  assert "learning_rate" in orders, IDS[case_index]
  natives, survivors, checked = {}, [], set()
  initial, gradients = problem(sparse=False)
  while orders:
    rounds = {}
    for hyperparameter, order in list(orders.items()):
      found = _next_mutant(case, order, hyperparameter)
      if found is None:
        survivors.append(hyperparameter)
        del orders[hyperparameter]
      else:
        rounds.setdefault(found[0], {})[hyperparameter] = found[1]
    for label, batch in rounds.items():
      point = labelled[label]
      runs = {**batch, "native": _native(case, point)} if (
          label not in natives) else dict(batch)
      if label not in checked:
        runs["bridged"] = _bridged(case, point)
      runs = dict(zip(runs, testing.native_trajectories(
          list(runs.values()), initial, gradients)))
      natives.setdefault(label, runs.get("native"))
      verdicts = {hyperparameter: mutants.parts(
          runs[hyperparameter], natives[label], rtol=RTOL, atol=ATOL)
                  for hyperparameter in batch}
      if label not in checked and any(
          verdict is not None for verdict in verdicts.values()):
        # The point itself is a passing check.
        testing.compare_trajectories(runs["bridged"], natives[label],
                                     rtol=RTOL, atol=ATOL,
                                     actual_name="bridge",
                                     expected_name=declaration.native_path)
        checked.add(label)
      for hyperparameter, verdict in verdicts.items():
        if verdict:
          del orders[hyperparameter]
  assert not [hyperparameter for hyperparameter in survivors
              if mutants.searches_grid(hyperparameter)], (
                  IDS[case_index], survivors)
