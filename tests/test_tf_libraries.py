"""The optimizers of the other TF libraries against their originals.

Hugging Face transformers 4.57's TF `AdamWeightDecay`, `WarmUp` and
`create_optimizer`, TF Model Garden 2.20's `LARS`, `LAMB`,
`AdamWeightDecay`, `ExponentialMovingAverage`, schedules and
`OptimizerFactory`, and TF Recommenders 0.7.7's `ClippyAdagrad`, run as
the ground truth beside their bridged twins and ports
(tests/scripts/tf_libraries.py, in a process of its own: `originals.run`):
100 steps on named variables, dense and sparse, each case with a mutant
port that must part from the original; TFRS's own unit tests of its
optimizer on the bridged tf_keras class, Model Garden's own tests of its
factory, schedules and LAMB on the bridged module. BERT's TF1
`AdamWeightDecayOptimizer` no longer runs: its published formula is the
ground truth here.
"""

import re

import jax.numpy as jnp
import keras
import numpy as np
import pytest
import tensorflow as tf

import jaxopt_port
import tf_bridge.legacy.tf1
import tf_bridge.tf1
from tf_bridge import testing

import originals
from bridge_cases import keras_trajectory

# One worker runs this module (README runs pytest with --dist loadgroup),
# so its process runs once.
pytestmark = pytest.mark.xdist_group("tf_libraries")

RTOL, ATOL = 1e-5, 1e-6  # test_bridge_parity's.
CASES = [
    "hf.AdamWeightDecay dense", "hf.AdamWeightDecay sparse",
    "hf.AdamWeightDecay include amsgrad",
    "tf_models.AdamWeightDecay dense", "tf_models.AdamWeightDecay sparse",
    "tf_models.LARS classic", "tf_models.LARS classic nesterov",
    "tf_models.LARS popular", "tf_models.LARS popular nesterov",
    "tf_models.LAMB dense", "tf_models.LAMB sparse",
    "tf_models.LAMB empty adaptation list",
    "addons.LAMB empty adaptation list",
    "hf.create_optimizer weight decay", "hf.create_optimizer adam",
    "tfrs.ClippyAdagrad dense", "tfrs.ClippyAdagrad sparse",
    "tfrs.ClippyAdagrad exported clipped accumulator",
    "tfrs.ClippyAdagrad standard accumulator",
]


@pytest.fixture(scope="module")
def runs(request):
  """The script's results; the quick profile runs its cases alone."""
  return originals.run("tf_libraries.py", *(
      ["--cases"] if request.config.getoption("quick") else []))


def test_every_case_ran(runs):
  assert sorted(runs["cases"]) == sorted(CASES)


@pytest.mark.parametrize("side", ["bridged", "port"])
@pytest.mark.parametrize("name", CASES)
def test_equals_the_original(runs, name, side):
  _assert_equals_the_original(runs, name, side)


# TFRS's ClippyAdagrad is a tf_keras 2.11+ optimizer: also bridged there.
@pytest.mark.parametrize("name", [c for c in CASES if c.startswith("tfrs.")])
def test_tf_keras_class_equals_the_original(runs, name):
  _assert_equals_the_original(runs, name, "bridged on tf_keras")


@pytest.mark.parametrize("label, expected", [("weight decay", "legacy"),
                                             ("adam", "tf_keras")])
def test_create_optimizer_makes_the_originals_generation(runs, label,
                                                         expected):
  """Hugging Face's `create_optimizer` makes its OptimizerV2
  `AdamWeightDecay`, or without weight decay tf_keras's 2.11+ `Adam`: the
  bridged function makes the twin of the same generation."""
  assert runs["cases"][f"hf.create_optimizer {label}"]["generations"] == [
      expected, expected]


def test_tfrs_own_tests_pass_on_the_bridged_tf_keras_class(runs):
  """TFRS's `ClippyAdagradTest` (7 tests: one step dense and sparse in
  float32 and float64, clipping with both accumulator updates, in a
  `tf.function`, config round trip) passes on the original and on
  `tf_bridge.tf_keras.tfrs.ClippyAdagrad`; with its variable threshold 5 %
  larger (a mutant) the clipping and config tests fail."""
  results = runs["tfrs_own_tests"]
  assert results["original"] == {"ran": 7, "failed": []}
  assert results["bridged"] == {"ran": 7, "failed": []}
  assert results["mutant"]["ran"] == 7
  assert {"test_single_step_clip", "test_get_config"} <= set(
      results["mutant"]["failed"])


def _assert_equals_the_original(runs, name, side):
  case = runs["cases"][name]
  testing.compare_trajectories(case[side], case["original"], rtol=RTOL,
                               atol=ATOL, actual_name=side,
                               expected_name=name.split()[0])


@pytest.mark.parametrize("name", CASES)
def test_a_mutant_parts_from_the_original(runs, name):
  """The check above fails on a port with one argument slightly off (the
  other library's name test, a 5 % larger eeta or clipping threshold, a
  warm-up a step longer, no `include_in_weight_decay`, no global clip)."""
  case = runs["cases"][name]
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(case["mutant"], case["original"], rtol=RTOL,
                                 atol=ATOL)


def test_warm_up_is_hugging_faces(runs):
  schedules = runs["schedules"]
  assert max(schedules["original"]) > 0.09  # Warmed up, then decayed.
  np.testing.assert_allclose(schedules["bridged"], schedules["original"],
                             rtol=0, atol=0)
  np.testing.assert_allclose(schedules["port"], schedules["original"],
                             rtol=1e-6, atol=1e-9)


GARDEN_SCHEDULES = [
    "PolynomialDecayWithOffset", "ExponentialDecayWithOffset",
    "CosineDecayWithOffset", "PiecewiseConstantDecayWithOffset",
    "DirectPowerDecay", "PowerAndLinearDecay", "PowerDecayWithOffset",
    "StepCosineDecayWithOffset", "LinearWarmup", "PolynomialWarmUp"]


def test_every_model_garden_schedule_ran(runs):
  assert sorted(runs["garden_schedules"]) == sorted(GARDEN_SCHEDULES)


@pytest.mark.parametrize("name", GARDEN_SCHEDULES)
def test_model_garden_schedule(runs, name):
  """`jaxopt_port.tf_models.<Name>` equals Model Garden's at each of 300
  steps (NaN where it is NaN: StepCosineDecayWithOffset after its last
  boundary), and a mutant (one argument off) does not; the bridged
  schedules (`tf_bridge.legacy.tf_models.<Name>` on tf_keras,
  `tf_bridge.tf_models.<Name>` on Keras 3) compute Model Garden's floats."""
  values = {side: np.array(runs["garden_schedules"][name][side], np.float64)
            for side in ("original", "port", "mutant", "bridged",
                         "bridged keras3")}
  assert np.ptp(values["original"][np.isfinite(values["original"])]) > 1e-3
  np.testing.assert_allclose(values["port"], values["original"], rtol=1e-6,
                             atol=0)
  for side in ("bridged", "bridged keras3"):
    np.testing.assert_array_equal(values[side], values["original"])
  with pytest.raises(AssertionError):
    np.testing.assert_allclose(values["mutant"], values["original"],
                               rtol=1e-6, atol=0)


@pytest.mark.parametrize("label", ["dynamic", "start_step 5 fixed decay"])
def test_model_garden_moving_average(runs, label):
  """`jaxopt_port.tf_models.exponential_moving_average` keeps Model Garden's
  averages (`shadow_copy`'s slots) over 60 steps of legacy Adam; TF Addons'
  moving average (it starts at the params, counts one step less) parts."""
  run = runs["garden_moving_averages"][label]
  original = run["original"]["trajectory"]
  testing.compare_trajectories(run["port"], [step[2:] for step in original],
                               rtol=RTOL, atol=ATOL, actual_name="port",
                               expected_name="Model Garden")
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(run["mutant"],
                                 [step[2:] for step in original], rtol=RTOL,
                                 atol=ATOL)


@pytest.mark.parametrize("label", ["dynamic", "start_step 5 fixed decay"])
def test_bridged_moving_average_is_model_gardens(runs, label):
  """`tf_bridge.legacy.tf_models.ExponentialMovingAverage` around the
  bridged Adam keeps Model Garden's weights and averages over 60 steps in a
  `tf.function`, and its variables: `variables()` (the averages, then the
  inner optimizer's `Adam/iter`), `weights` (the inner optimizer's, named in
  its scope) and the checkpoint's keys (`ema_base_optimizer/...`)."""
  run = runs["garden_moving_averages"][label]
  testing.compare_trajectories(
      run["bridged"]["trajectory"], run["original"]["trajectory"],
      rtol=RTOL, atol=ATOL, actual_name="bridged",
      expected_name="Model Garden")
  for listing in ("variables", "weights", "keys"):
    assert run["bridged"][listing] == run["original"][listing]
  assert run["original"]["variables"][-1] == "Adam/iter:0"
  assert any("/ema_base_optimizer/m/" in key
             for key in run["original"]["keys"])


def test_moving_average_classes_build_from_each_others_config(runs):
  """Each class builds from the other's config (Model Garden's holds
  `start_step` as a float tensor, and a tf_keras Adam, which the bridged
  class makes its bridged twin of); both leave `trainable_weights_only`
  out."""
  configs = runs["garden_moving_average_configs"]
  assert configs["bridged from original"] == configs["bridged"]
  assert configs["bridged"]["inner"] == "tf_bridge.legacy.optimizers"
  original = configs["original"]["config"]
  assert configs["bridged"]["config"] == original
  assert configs["original from bridged"]["config"] == original


@pytest.mark.parametrize("side", ["bridged", "bridged from a dict"])
def test_optimizer_factory_builds_model_gardens_optimizer_bridged(runs,
                                                                  side):
  """From the same `OptimizationConfig` (LARS, a linear warm-up into a
  cosine decay, an EMA), Model Garden's `OptimizerFactory` and the bridged
  one (given the config, or its dict) build optimizers that take the same
  60 steps (weights and averages), with the same variables and checkpoint
  keys; a config whose warm-up is a step longer parts."""
  run = runs["garden_factory"]
  assert run["classes"] == ["official.modeling.optimization.lars",
                            "tf_bridge.legacy.tf_models"]
  testing.compare_trajectories(
      run[side]["trajectory"], run["original"]["trajectory"], rtol=RTOL,
      atol=ATOL, actual_name=side, expected_name="Model Garden's factory")
  for listing in ("variables", "weights", "keys"):
    assert run[side][listing] == run["original"][listing]
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(run["mutant"]["trajectory"],
                                 run["original"]["trajectory"], rtol=RTOL,
                                 atol=ATOL)


GARDEN_OWN_TESTS = {  # Model Garden's own test modules: tests, mutant's.
    "optimizer_factory_test": (32, {
        "test_constant_lr_with_warmup_schedule",
        "test_step_cosine_lr_schedule_with_warmup",
        "test_stepwise_lr_with_warmup_schedule"}),
    "lr_schedule_test": (12, {
        "test_power_linear_lr_schedule_general",
        "test_power_linear_lr_schedule_linear_only",
        "test_power_linear_lr_schedule_offset"}),
    "lamb_test": (5, {"test_sparse"}),
}


@pytest.mark.parametrize("module", list(GARDEN_OWN_TESTS))
def test_model_gardens_own_tests_pass_on_the_bridged_module(runs, module):
  """Model Garden's own tests of `OptimizerFactory` (every optimizer type
  and schedule, warm-ups, clipping, the gradient aggregator, its errors and
  registry), of its schedules and of its LAMB pass on
  `tf_bridge.legacy.tf_models` standing for its modules, as on the
  originals; a mutant (a warm-up starting higher in the factory's registry,
  a longer linear decay, LAMB's beta_1 1 % larger) fails them."""
  ran, failed_by_the_mutant = GARDEN_OWN_TESTS[module]
  results = runs["garden_own_tests"][module]
  assert results["original"] == {"ran": ran, "failed": []}
  assert results["bridged"] == {"ran": ran, "failed": []}
  assert results["mutant"]["ran"] == ran
  assert failed_by_the_mutant <= set(results["mutant"]["failed"])


BAD_INPUTS = {  # The argument named where the original accepts nonsense.
    "hf unknown keyword": None, "tfrs both accumulator updates": None,
    "tfrs negative threshold": None, "lars negative momentum": "momentum",
    "hf negative weight decay": "weight_decay_rate"}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_input_raises_the_originals_error(runs, name):
  """Where the original raises (at construction, or at its first step),
  the bridged class and the port raise its exception type with its words
  (the argument may be added), at construction; where it accepts nonsense
  (a negative momentum or decay rate) they raise a ValueError naming the
  argument."""
  found = runs["bad_inputs"][name]
  original = found["original"]
  for side in ("bridged", "port"):
    if found[side] is None and side == "port":
      continue  # An unknown keyword: the port raises Python's TypeError.
    if original is None:
      assert found[side][0] == "ValueError"
      assert f"`{BAD_INPUTS[name]}`" in found[side][1]
    else:
      assert found[side][0] == original[0]
      assert found[side][1].startswith(original[1])


def test_lars_refuses_sparse_gradients_as_model_garden(runs):
  original = runs["sparse_lars"]["original"]
  bridged = runs["sparse_lars"]["bridged"]
  assert original == ["NotImplementedError",
                      "Applying sparse gradients is not implemented."]
  assert bridged[0] == original[0] and bridged[1].startswith(original[1])
  assert "embeddings:0" in bridged[1]
  sparse = jaxopt_port.RowSparse(jnp.array([1]), jnp.ones((1, 2)), 4)
  transform = jaxopt_port.tf_models.lars()
  params = {"embeddings": jnp.ones((4, 2))}
  with pytest.raises(NotImplementedError,
                     match=r"^Applying sparse gradients is not implemented\. "
                           r"\(The gradient at \['embeddings'\]"):
    transform.update({"embeddings": sparse}, transform.init(params), params)


# BERT's AdamWeightDecayOptimizer, from google-research/bert's
# optimization.py: no bias correction; decay inside the step for the names
# (without `:0`) no exclusion finds.
BERT = {"learning_rate": 0.01, "weight_decay_rate": 0.1,
        "exclude_from_weight_decay": ["LayerNorm", "bias$"]}
BERT_NAMES = ["dense/kernel", "dense/bias", "LayerNorm/gamma"]
BERT_SHAPES = [(4, 3), (3,), (3,)]


def bert_formula(initial, gradients, names, strip_suffix=True):
  params = [np.array(p, np.float64) for p in initial]
  m = [np.zeros_like(p) for p in params]
  v = [np.zeros_like(p) for p in params]
  trajectory = []
  for step in gradients:
    for i, (g, name) in enumerate(zip(step, names)):
      m[i] = 0.9 * m[i] + 0.1 * g
      v[i] = 0.999 * v[i] + 0.001 * g * g
      update = m[i] / (np.sqrt(v[i]) + 1e-6)
      if strip_suffix:
        name = re.sub(r":\d+$", "", name)
      if not any(re.search(r, name) for r in BERT["exclude_from_weight_decay"]):
        update = update + 0.1 * params[i]
      params[i] = params[i] - 0.01 * update
    trajectory.append([p.copy() for p in params])
  return trajectory


@pytest.fixture(scope="module")
def bert_problem():
  return testing.seeded_problem(100, 3, 1.0, BERT_SHAPES)


@pytest.mark.parametrize("side", ["port", "legacy", "keras"])
def test_bert_adam_weight_decay_is_berts_formula(bert_problem, side):
  """The port (on tf_keras's names, `dense/bias:0`), the OptimizerV2 class
  and the Keras 3 class follow BERT's formula for 100 steps; the formula
  matching `bias$` against the names with `:0` (a mutant) does not."""
  initial, gradients = bert_problem
  legacy_names = [f"{name}:0" for name in BERT_NAMES]
  if side == "port":
    actual = testing.transform_trajectory(
        jaxopt_port.tf1.adam_weight_decay(**BERT), initial, gradients,
        names=legacy_names)
  elif side == "legacy":
    actual = keras_trajectory(tf_bridge.legacy.tf1.AdamWeightDecay(**BERT),
                              initial, gradients, names=BERT_NAMES)
  else:  # Keras 3 names have no "/": its paths are the names.
    actual = keras_trajectory(
        tf_bridge.tf1.AdamWeightDecay(**BERT), initial, gradients,
        names=[name.replace("/", "_") for name in BERT_NAMES])
  expected = bert_formula(initial, gradients, legacy_names)
  testing.compare_trajectories(actual, expected, rtol=RTOL, atol=ATOL,
                               actual_name=side, expected_name="BERT")
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(
        actual, bert_formula(initial, gradients, legacy_names,
                             strip_suffix=False), rtol=RTOL, atol=ATOL)


def test_bert_slots_are_berts_names():
  variable = tf.Variable(np.ones((2,), np.float32), name="dense/bias")
  optimizer = tf_bridge.legacy.tf1.AdamWeightDecay(0.01)
  optimizer.apply_gradients([(tf.ones((2,)), variable)])
  assert optimizer.get_slot_names() == ["adam_m", "adam_v"]
  keras_variable = keras.Variable(np.ones((2,), np.float32), name="bias")
  keras_optimizer = tf_bridge.tf1.AdamWeightDecay(0.01)
  keras_optimizer.build([keras_variable])
  assert [v.name for v in keras_optimizer.variables][-2:] == [
      "bias_adam_m", "bias_adam_v"]


@pytest.mark.parametrize("host", ["legacy", "keras"])
def test_create_optimizer_saves_and_loads_with_its_warm_up(host, tmp_path):
  """A model compiled with the bridged `create_optimizer`'s optimizer (its
  learning rate a `WarmUp`) saves and loads as itself: same class, same
  config, the schedule a `WarmUp` again (registered with its host)."""
  import tf_keras  # pylint: disable=import-outside-toplevel
  import tf_bridge.hf  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.hf  # pylint: disable=import-outside-toplevel
  library, module = ((tf_keras, tf_bridge.legacy.hf) if host == "legacy"
                     else (keras, tf_bridge.hf))
  optimizer, schedule = module.create_optimizer(
      0.01, num_train_steps=100, num_warmup_steps=10, weight_decay_rate=0.01)
  assert isinstance(schedule, module.WarmUp)
  assert float(schedule(5)) == pytest.approx(0.005)
  model = library.Sequential([library.Input((3,)), library.layers.Dense(2)])
  model.compile(optimizer, "mse")
  model.fit(np.ones((8, 3)), np.ones((8, 2)), verbose=0)
  model.save(tmp_path / "model.keras")
  loaded = library.models.load_model(tmp_path / "model.keras").optimizer
  assert type(loaded) is module.AdamWeightDecay
  assert loaded.get_config() == optimizer.get_config()
  rate = (loaded._hyper["learning_rate"] if host == "legacy"  # pylint: disable=protected-access
          else loaded._learning_rate)  # pylint: disable=protected-access
  assert type(rate) is module.WarmUp
