"""(The long profile's: tests/long_profile.sh runs it in a fresh process.)

The `model.fit` check of tests/test_programs.py kills every hyperparameter
mutant: each bridged Keras 3, tf_keras 2.11+ and tf_keras legacy class
with a native twin,
made with one numeric hyperparameter perturbed by a relative 1e-3
(`mutants.perturbed`), trains a functional model to other weights than
native at the programs' tolerance, at its programs' arguments or else at
a grid point of tests/grids.py where it does (those that set the
hyperparameter tried first: `mutants.search_order`). The mutants' other
hyperparameters than the learning rate are fed as tensors (`mutants.fed`:
one compiled step per point). At each such point the unmutated class,
made with plain numbers, trains to native's weights, so the point is a fit
parity check of its own."""

import keras
import pytest
import tf_keras

import grids
import mutants
import tf_bridge
import tf_bridge.legacy
import tf_bridge.tf_keras
from tf_bridge import catalog
from test_programs import (_arguments, _assert_programs_equal, _cases,
                           _functional_fit)

CASES = (_cases(catalog.KERAS) + _cases(catalog.LEGACY)
         + _cases(catalog.TF_KERAS))
# Measured: a relative 1e-3 on these is below what the fit's 4 steps (or
# 16) can show at any grid point, and 1e-2 is killed. Lion's beta_1 only
# acts where it flips the sign of beta_1 m + (1 - beta_1) g, about 1 in
# 1000 element-steps at 1e-3; legacy Nadam's schedule_decay moves the
# momentum schedule 0.96^(schedule_decay t) by about 1e-7 relative per
# step at its default. Both are killed at 1e-3 by the 100-step
# port-vs-native and bridge-vs-native checks.
WIDER = {("lion", "beta_1"): 1e-2, ("tf_keras.lion", "beta_1"): 1e-2,
         ("legacy.nadam", "schedule_decay"): 1e-2}


def _host(declaration):
  if declaration.generation == catalog.LEGACY:
    return tf_keras, tf_bridge.legacy
  if declaration.generation == catalog.TF_KERAS:
    return tf_keras, tf_bridge.tf_keras
  return keras, tf_bridge


def _points(declaration):
  """The programs' arguments, then each grid point over them."""
  K, _ = _host(declaration)
  schedules = K.optimizers.schedules
  return [_arguments(declaration)] + [
      _arguments(declaration, **grids.build(point, schedules))
      for point in grids.OWN.get(declaration.name, []) if point]


def _parts(bridged, native):
  try:
    _assert_programs_equal({"fit": bridged}, {"fit": native})
  except AssertionError as error:
    if "Not equal to tolerance" in str(error):
      return True
    raise  # The programs did not train: this point cannot tell.
  return False


@pytest.mark.parametrize("declaration", CASES, ids=lambda d: d.name)
def test_every_hyperparameter_mutant_parts_fit_from_native(declaration):
  K, module = _host(declaration)
  bridged_class = getattr(module, declaration.class_name)
  natives, survivors = {}, []
  for hyperparameter in mutants.numeric_hyperparameters(declaration):
    killed = False
    for index, point in mutants.search_order(
        declaration, _points(declaration), hyperparameter):
      mutant = mutants.perturbed(
          declaration, point, hyperparameter,
          WIDER.get((declaration.name, hyperparameter), mutants.PERTURBATION))
      if mutant is None:
        continue
      try:
        mutant_optimizer = bridged_class(**mutants.fed(declaration, mutant))
      except ValueError:
        continue  # Out of the argument's range here: no mutant.
      if index not in natives:
        natives[index] = _functional_fit(
            K, declaration.native_class()(**point))
        # The point itself is a passing fit parity check.
        assert not _parts(_functional_fit(K, bridged_class(**point)),
                          natives[index]), point
      if _parts(_functional_fit(K, mutant_optimizer), natives[index]):
        killed = True
        break
      # The programs' own comparison (their arguments, 4 fit steps) tells
      # a learning rate 1.001 times native's apart.
      assert hyperparameter != "learning_rate", (declaration.name, point)
    if not killed:
      survivors.append(hyperparameter)
  assert not survivors, (declaration.name, survivors)
