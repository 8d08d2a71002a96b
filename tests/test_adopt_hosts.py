"""`tf_bridge.legacy.adopt` and `tf_bridge.tf_keras.adopt`: a user's class
(tests/port_classes.py) on tf_keras's hosts trains a tf_keras model in `fit`
as the class itself does; its arguments, config, slots, checkpoints and
saved models are the class's. `tf_bridge.adopt` on Keras's JAX backend and
of a TF1 class under MirroredStrategy (tests/scripts/adopted_elsewhere.py,
a process per backend: both settings are fixed at process start), and
`python -m tf_bridge.parity --native ... --arguments`. A model with an
Embedding (its gradient a `tf.IndexedSlices`) trained by an adopted class
with a sparse hook of its own, on Keras 3 and on tf_keras's hosts, eagerly
and on whole batches too, with the hosts' clipping too, TF Addons' LazyAdam
among them (tests/scripts/adopted_sparse_addons.py). Adopted classes under
tf_keras's `mixed_float16` policy, on both its hosts, a lazy one among them,
and the TF1 class `AdagradDecay` against itself in TF1's own
MixedPrecisionLossScaleOptimizer, overflowing steps among them (in
adopted_elsewhere.py: the policy is global). A class that takes its
rate as `lr` (2019's `_set_hyper("learning_rate", lr)`) on the three hosts.
Ground truth is the class itself; each comparison has a mutant (one
argument 1 % off) that must part from it, and the sparse ones the class
given its gradients densified."""

import inspect
import json
import os
import pathlib
import subprocess
import sys
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import adopt_fits
import originals
import port_classes
import tf_bridge
import tf_bridge.legacy
import tf_bridge.tf_keras
from tf_bridge import _fused, parity

pytestmark = pytest.mark.xdist_group("adopt_hosts")

RTOL, ATOL = 1e-5, 1e-6
TESTS = pathlib.Path(__file__).parent
schedules = tf_keras.optimizers.schedules

# Each case: the host's adopt, the class, its arguments (a function of a
# multiplier `k` of one of them: k=1.01 is the mutant).
CASES = {
    "legacy.adopt(OptimizerV2 class)": (
        "legacy", port_classes.CenteredMomentumSGD,
        lambda k: dict(learning_rate=0.05, momentum=0.9 * k, decay=0.01)),
    "legacy.adopt(OptimizerV2 class, schedule)": (
        "legacy", port_classes.CenteredMomentumSGD,
        lambda k: dict(learning_rate=schedules.ExponentialDecay(0.05 * k, 2,
                                                                0.9),
                       momentum=0.5)),
    "legacy.adopt(TF1 class)": (
        "legacy", port_classes.AdagradDecay,
        lambda k: dict(learning_rate=0.1, accumulator_decay_step=3,
                       accumulator_decay_rate=0.9 * k)),
    "tf_keras.adopt(tf_keras class)": (
        "tf_keras", port_classes.SignMomentum,
        lambda k: dict(learning_rate=0.01 * k, beta=0.9)),
    "tf_keras.adopt(tf_keras class, schedule)": (
        "tf_keras", port_classes.SignMomentum,
        lambda k: dict(learning_rate=schedules.PiecewiseConstantDecay(
            [4], [0.02 * k, 0.01]), beta=0.9)),
}


@pytest.fixture(scope="module")
def adopted():
  """Each class adopted once on its host (a second host's adoption of one
  class would take its registered name)."""
  return {(host, cls): getattr(tf_bridge, host).adopt(cls)
          for host, cls, _ in CASES.values()}


@pytest.fixture(scope="module")
def fits(adopted, elsewhere):
  """Per case: the class's, the adoption's and the mutant's tf_keras
  models after the same fit, and their weights (the processes elsewhere
  run meanwhile)."""
  del elsewhere
  runs = {}
  for name, (host, cls, arguments) in CASES.items():
    adoption = adopted[host, cls]
    models = [adopt_fits.model_of(tf_keras, make)
              for make in (lambda: cls(**arguments(1.0)),  # pylint: disable=cell-var-from-loop
                           lambda: adoption(**arguments(1.0)),  # pylint: disable=cell-var-from-loop
                           lambda: adoption(**arguments(1.01)))]  # pylint: disable=cell-var-from-loop
    runs[name] = models, [adopt_fits.fit(model) for model in models]
  return runs


def _within(actual, expected):
  return all(np.allclose(a, e, rtol=RTOL, atol=ATOL)
             for a, e in zip(actual, expected))


@pytest.mark.parametrize("name", CASES)
def test_adopted_class_trains_as_the_class_in_tf_keras_fit(fits, name):
  native, adoption, mutant = fits[name][1]
  _, _, initial = adopt_fits.data()
  for got, want in zip(adoption, native):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(mutant, native)
  assert max(float(np.max(np.abs(w - i)))
             for w, i in zip(native, initial)) > 1e-2


@pytest.mark.parametrize("host,cls,options", [
    ("legacy", port_classes.CenteredMomentumSGD, dict(decay=0.01)),
    ("legacy", port_classes.AdagradDecay, dict(learning_rate=0.1)),
    ("tf_keras", port_classes.SignMomentum, dict(clipnorm=1.0)),
], ids=["OptimizerV2", "TF1", "tf_keras"])
def test_adopted_class_is_a_class_of_the_host_and_the_users_module(
    adopted, host, cls, options):
  """Its host's base, the class's name, module, arguments (positionally
  too) and registration; `get_config` holds the class's own config and
  round-trips through tf_keras's serialization."""
  adoption = adopted[host, cls]
  base = {"legacy": tf_bridge.legacy.LegacyOptimizer,
          "tf_keras": tf_bridge.tf_keras.TfKerasOptimizer}[host]
  assert issubclass(adoption, base)
  assert (adoption.__module__, adoption.__name__) == ("port_classes",
                                                      cls.__name__)
  assert adoption.adopted_class is cls
  assert tf_keras.saving.get_registered_object(
      f"port_classes>{cls.__name__}") is adoption
  optimizer = adoption(**options)
  config = optimizer.get_config()
  # A TF1 class has no config.
  native_config = (cls(**options).get_config()
                   if hasattr(cls, "get_config") else {})
  for key, value in native_config.items():
    if key not in ("jit_compile", "is_legacy_optimizer"):
      assert config[key] == pytest.approx(value), key
  restored = tf_keras.optimizers.deserialize(
      tf_keras.optimizers.serialize(optimizer), use_legacy_optimizer=(
          host == "legacy"))
  assert type(restored) is adoption
  assert restored.get_config() == config


def test_a_hyperparameter_set_after_fit_reaches_the_step(adopted):
  """An OptimizerV2 class's hyperparameters are variables in its adoption
  too: `optimizer.momentum = 0.5` after `fit` has traced its step changes
  the next epoch's steps as it does the class's (unset, they part)."""
  cls = port_classes.CenteredMomentumSGD
  runs = []
  for make, changed in ((cls, True), (adopted["legacy", cls], True),
                        (adopted["legacy", cls], False)):
    model = adopt_fits.model_of(tf_keras, lambda: make(0.05, 0.9))  # pylint: disable=cell-var-from-loop
    adopt_fits.fit(model, epochs=1)
    if changed:
      model.optimizer.momentum = 0.5
    runs.append(adopt_fits.fit(model, epochs=1))
  native, adoption, unchanged = runs
  assert float(adopted["legacy", cls](0.05, 0.9).momentum) == pytest.approx(0.9)
  for got, want in zip(adoption, native):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(unchanged, native)


def test_positional_arguments_are_the_classes(adopted):
  optimizer = adopted["legacy", port_classes.CenteredMomentumSGD](0.02, 0.8)
  assert optimizer.get_config()["learning_rate"] == pytest.approx(0.02)
  assert optimizer.get_config()["momentum"] == pytest.approx(0.8)


def test_slots_are_the_classes(fits):
  """`get_slot(var, name)` on OptimizerV2 under the class's slot names; on
  tf_keras 2.11+ the variables are named as the class's."""
  for name in ("legacy.adopt(OptimizerV2 class)", "legacy.adopt(TF1 class)"):
    (native, model, _), _ = fits[name]
    # tf_keras runs a TF1 class in its `TFOptimizer` wrapper.
    names = getattr(native.optimizer, "optimizer",
                    native.optimizer).get_slot_names()
    assert sorted(model.optimizer.get_slot_names()) == sorted(names)
    for variable in model.trainable_variables:
      for slot in names:
        assert (model.optimizer.get_slot(variable, slot).shape
                == variable.shape)
  (native, model, _), _ = fits["tf_keras.adopt(tf_keras class)"]

  def names_of(optimizer):  # Less the layers' numbers, which differ.
    return [v.name.split("/")[:2] for v in optimizer.variables]
  assert names_of(model.optimizer) == names_of(native.optimizer)


@pytest.mark.parametrize("host,cls,options", [
    ("legacy", port_classes.CenteredMomentumSGD, dict(momentum=0.9)),
    ("tf_keras", port_classes.SignMomentum, dict(beta=0.9))])
def test_checkpoint_restores_and_training_continues(adopted, host, cls,
                                                    options, tmp_path):
  """`tf.train.Checkpoint` of model and adopted optimizer after a fit,
  restored into new ones: one more epoch ends where the written run's
  does; a new optimizer not restored does not."""
  make = lambda: adopted[host, cls](learning_rate=0.05, **options)  # pylint: disable=unnecessary-lambda-assignment
  written = adopt_fits.model_of(tf_keras, make)
  adopt_fits.fit(written, epochs=2)
  path = tf.train.Checkpoint(model=written,
                             optimizer=written.optimizer).save(
                                 str(tmp_path / "checkpoint"))
  continued = adopt_fits.fit(written, epochs=1)
  restored, fresh = (adopt_fits.model_of(tf_keras, make) for _ in range(2))
  tf.train.Checkpoint(model=restored, optimizer=restored.optimizer).restore(
      path).assert_existing_objects_matched()
  fresh.set_weights(restored.get_weights())
  assert int(restored.optimizer.iterations) == 8
  for got, want in zip(adopt_fits.fit(restored, epochs=1), continued):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(adopt_fits.fit(fresh, epochs=1), continued)


def test_another_class_of_the_registered_name_is_refused(adopted):
  """The other tf_keras host's adoption of a class adopted already, or
  the adoption of a class its user registered under its module's name,
  would replace a registered class: models saved with it would load as
  another."""
  del adopted
  with pytest.raises(ValueError, match=(
      r"'port_classes>CenteredMomentumSGD' is the registered name of the "
      r"adoption of port_classes.CenteredMomentumSGD on LegacyOptimizer; "
      r"adopting CenteredMomentumSGD on TfKerasOptimizer")):
    tf_bridge.tf_keras.adopt(port_classes.CenteredMomentumSGD)

  @tf_keras.saving.register_keras_serializable(package=__name__)
  class Registered(port_classes.CenteredMomentumSGD):
    pass
  with pytest.raises(ValueError, match=(
      rf"'{__name__}>Registered' is the registered name of "
      rf"{__name__}.*Registered; adopting Registered on LegacyOptimizer")):
    tf_bridge.legacy.adopt(Registered)


def test_adopting_a_class_again_gives_its_adoption():
  """A second `adopt(cls)` on a host (the parity command's, a test's) gives
  the class adopted first, which stays the registered one: a model saved
  with the class the user's module holds loads as that class."""
  assert (tf_bridge.adopt(port_classes.CenteredMomentumSGD)
          is port_classes.AdoptedCenteredMomentumSGD)
  assert keras.saving.get_registered_object(
      "port_classes>CenteredMomentumSGD") is (
          port_classes.AdoptedCenteredMomentumSGD)


@pytest.fixture(scope="module")
def saved(adopted, tmp_path_factory):
  """tf_keras models saved with an adopted optimizer of each host after a
  fit, and the optimizer's variables then."""
  directory = tmp_path_factory.mktemp("adopted_models")
  models = {}
  for host, cls, options in (
      ("legacy", port_classes.CenteredMomentumSGD, dict(momentum=0.9)),
      ("tf_keras", port_classes.SignMomentum, dict(beta=0.9))):
    model = adopt_fits.model_of(tf_keras, lambda: adopted[host, cls](  # pylint: disable=cell-var-from-loop
        learning_rate=0.05, **options))  # pylint: disable=cell-var-from-loop
    adopt_fits.fit(model, epochs=1)
    # As the classes' own: OptimizerV2's variables load from HDF5 (a
    # `.keras` file leaves them to be made at the next step).
    path = directory / ("legacy.h5" if host == "legacy" else "tf_keras.keras")
    with warnings.catch_warnings():  # That HDF5 is a legacy format.
      warnings.simplefilter("ignore", UserWarning)
      model.save(path)
    variables = model.optimizer.variables
    models[str(path)] = (host, cls, [np.asarray(v) for v in (
        variables() if callable(variables) else variables)])
  return models


@pytest.fixture(scope="module")
def elsewhere(saved):
  """tests/scripts/adopted_elsewhere.py on each backend, started at once:
  they run while this process tests."""
  processes = {backend: subprocess.Popen(
      [sys.executable, str(TESTS / "scripts" / "adopted_elsewhere.py"),
       backend, *(saved if backend == "tensorflow" else ())],
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
      env={**os.environ, "PYTHONPATH": os.pathsep.join(
          [str(TESTS), *filter(None, [os.environ.get("PYTHONPATH")])])})
               for backend in ("tensorflow", "jax")}
  yield processes
  for process in processes.values():
    if process.poll() is None:
      process.kill()
      process.wait()


def _result(process):
  out, err = process.communicate(timeout=900)
  assert process.returncode == 0, err[-4000:]
  return json.loads(out)


@pytest.fixture(scope="module")
def on_tensorflow(elsewhere):
  return _result(elsewhere["tensorflow"])


@pytest.fixture(scope="module")
def on_jax(elsewhere):
  return _result(elsewhere["jax"])


def test_saved_model_loads_in_a_fresh_process(saved, on_tensorflow):
  """`tf_keras.models.load_model` in a process that adopted the class (as
  importing a module that adopts its class does): the adopted class of the
  user's module, on its host, with the saved variables."""
  for (host, cls, variables), found in zip(saved.values(),
                                          on_tensorflow["loaded"]):
    base = {"legacy": "LegacyOptimizer", "tf_keras": "TfKerasOptimizer"}
    assert found["class"] == ["port_classes", cls.__name__, base[host]]
    assert found["config"]["learning_rate"] == pytest.approx(0.05)
    assert len(found["variables"]) == len(variables)
    for got, want in zip(found["variables"].values(), variables):
      np.testing.assert_array_equal(np.asarray(got, want.dtype), want)


def test_adopted_class_on_kerass_jax_backend(on_jax, on_tensorflow):
  """`tf_bridge.adopt(CenteredMomentumSGD)` trains on Keras's JAX backend
  (converted with TensorFlow, stepped in JAX) as on the TensorFlow backend
  and as the class itself trains the same tf_keras model; its mutant
  (momentum 1 % off) parts from the class."""
  assert on_jax["backend"] == "jax"
  assert on_tensorflow["backend"] == "tensorflow"
  native = [np.asarray(w) for w in on_tensorflow["native"]]
  for run in (on_jax["adopted"], on_tensorflow["adopted"]):
    for got, want in zip(run, native):
      np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  for got, want in zip(on_jax["adopted"], on_tensorflow["adopted"]):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(on_jax["mutant"], native)


@pytest.mark.parametrize("name", ["EntrySignSGD", "LazyMomentum"])
def test_adopted_sparse_hook_on_kerass_jax_backend(on_jax, on_tensorflow,
                                                   name):
  """On Keras's JAX backend a sparse gradient (BCOO over rows) reaches the
  adopted class's own sparse hook, converted for each number of entries:
  the table ends where the class's does given the same `tf.IndexedSlices`;
  the mutant and the class given them densified part from it."""
  adopted = on_jax["sparse apply"][name]
  native = on_tensorflow["sparse apply"][name]
  np.testing.assert_allclose(adopted["adopted"], native["native"],
                             rtol=RTOL, atol=ATOL)
  assert adopted["sparse_steps"] == 1
  assert not _within([adopted["mutant"]], [native["native"]])
  assert not _within([native["densified"]], [native["native"]])


@pytest.mark.parametrize("host", ["keras", "legacy"])
def test_adopted_tf1_class_under_mirrored_strategy(on_tensorflow, host):
  """`adopt(AdagradDecay)` (a TF1 class with non-slot counters) trains
  under MirroredStrategy over two replicas as on one, in Keras 3 and, on
  OptimizerV2, in tf_keras; its mutant (decay rate 1 % off) parts."""
  runs = on_tensorflow["strategies"]
  assert runs["replicas"] == 2
  one = runs[host]["one"]
  for got, want in zip(runs[host]["mirrored"], one):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(runs[host]["mutant"], one)
  _, _, initial = adopt_fits.data()
  assert max(float(np.max(np.abs(np.asarray(w) - i)))
             for w, i in zip(one, initial)) > 1e-2


def test_a_class_taking_its_rate_as_lr_on_tf_kerass_host(on_tensorflow):
  """`tf_bridge.tf_keras.adopt(LrMomentum)` (in adopted_elsewhere.py: one
  tf_keras host per process adopts a class) takes `lr`, first
  positionally, as tf_keras's learning rate, set between epochs too (and
  `momentum`, an attribute for `beta`, the argument the class keeps as its
  `momentum`), and trains as the class itself; its mutant (`lr` 1 % off)
  parts."""
  run = on_tensorflow["lr"]
  native = [np.asarray(w) for w in run["native"]]
  for got, want in zip(run["adopted"], native):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(run["mutant"], native)


def _assert_wrapped(run, wrapper, weights):
  """What adopted_elsewhere.wrapped found: the adoption inside tf_keras's
  `wrapper`, a float32 slot per weight, the config round trip."""
  assert run["optimizers"] == [wrapper, True]
  assert run["float variables"] == ["float32"] * weights
  assert run["round trip"] == [True, True]


@pytest.mark.parametrize("name", [
    "tf_keras.adopt(tf_keras class)", "legacy.adopt(OptimizerV2 lazy class)",
    "legacy.adopt(OptimizerV2 lazy class), clipnorm"])
def test_adopted_class_under_tf_kerass_mixed_float16(on_tensorflow, name):
  """Under tf_keras's `mixed_float16` policy (adopted_elsewhere.py: it is
  global), whose `compile` wraps the optimizer in tf_keras's
  LossScaleOptimizer (OptimizerV2's, or tf_keras 2.11+'s V3), the adoption
  ends where the class itself ends after the same fit (a lazy class on the
  Embedding model, its sparse hook run on the unscaled sparse gradient,
  clipped too, its Dense layer's gradient dense: the class given them
  densified parts); its mutant (one argument 1 % off) parts. Its slots are
  float32, and the wrapper's config deserializes to the adoption inside
  it, with an equal config."""
  run = on_tensorflow["mixed_float16"][name]
  wrapper = ("LossScaleOptimizerV3" if name.startswith("tf_keras")
             else "LossScaleOptimizer")
  native = [np.asarray(w) for w in run["native"]]
  _assert_wrapped(run, wrapper, len(native))
  for got, want in zip(run["adopted"], native):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(run["mutant"], native)
  if "densified" in run:
    assert not _within(run["densified"], native)
  sparse = "lazy" in name
  _, _, initial = adopt_fits.sparse_data() if sparse else adopt_fits.data()
  assert max(float(np.max(np.abs(w - i)))
             for w, i in zip(native, initial)) > 1e-2


@pytest.mark.parametrize("setting", ["default", "growth every 2 steps"])
def test_adopted_tf1_class_under_tf_kerass_mixed_float16(on_tensorflow,
                                                         setting):
  """`tf_bridge.legacy.adopt(AdagradDecay)` in tf_keras's `fit` under
  `mixed_float16` (inside tf_keras's LossScaleOptimizer: as `compile` wraps
  it, and with the scale growing every 2 finite steps) against the TF1
  class itself in TF1's MixedPrecisionLossScaleOptimizer with the same
  dynamic loss scale (initial 2**15, growth steps, multiplier 2), stepped
  by `minimize`. The second batch of each epoch overflows float16 once
  scaled (adopted_elsewhere.overflowing_data): both skip it (the weights
  stay as they were) and halve the scale. After every step the scales are
  equal and the weights agree at the file's tolerance (float16 is in the
  forward and backward passes both sides compute with the same tf_keras
  layers on the same weights; the updates are float32: measured 6e-8).
  The mutant (learning rate 1 % off) and the adoption without loss
  scaling (it applies the overflowing batches) part."""
  run = on_tensorflow["mixed_float16"]["legacy.adopt(TF1 class)"][setting]
  growth_steps = {"default": 2000, "growth every 2 steps": 2}[setting]
  assert run["settings"] == [[2.0**15, growth_steps],
                             [2.0**15, growth_steps, 2.0]]
  _, _, initial = adopt_fits.data()
  _assert_wrapped(run, "LossScaleOptimizer", len(initial))
  assert run["truth float variables"] == ["float32"] * len(initial)
  scales = [step["loss scale"] for step in run["truth"]]
  assert [step["loss scale"] for step in run["adopted"]] == scales
  expected = {"default": [2**15] + [2**14] * 4 + [2**13] * 4 + [2**12] * 3,
              "growth every 2 steps": [2**15, 2**14, 2**14, 2**15] * 3}
  assert scales == expected[setting]
  for adopted, truth in zip(run["adopted"], run["truth"]):
    for got, want in zip(adopted["weights"], truth["weights"]):
      np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  for steps in (run["adopted"], run["truth"]):
    before = [initial] + [step["weights"] for step in steps[:-1]]
    for i, step in enumerate(steps):
      skipped = i % 4 == 1  # Each epoch's second batch, the overflowing one.
      assert _within(step["weights"], before[i]) == skipped, i
      if skipped:
        for got, want in zip(step["weights"], before[i]):
          np.testing.assert_array_equal(got, want)
  if setting == "default":
    final = [np.asarray(w) for w in run["truth"][-1]["weights"]]
    assert not _within(run["mutant"], final)
    assert not _within(run["unscaled"], final)
    assert max(float(np.max(np.abs(w - i)))
               for w, i in zip(final, initial)) > 1e-2


def test_adopted_lazy_class_under_mirrored_strategy(on_tensorflow):
  """`adopt(LazyMomentum)` trains the Embedding model under
  MirroredStrategy over two replicas (the sparse gradient all-reduced) as
  the class itself does on one device in tf_keras; its mutant parts."""
  runs = on_tensorflow["sparse strategy"]
  native = [np.asarray(w) for w in runs["native"]]
  for got, want in zip(runs["mirrored"], native):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(runs["mutant"], native)


def _parity(capsys, *arguments):
  """The command's `main` in this process: its exit status, stdout and
  stderr."""
  try:
    status = parity.main(list(arguments))
  except SystemExit as exit_:
    status = exit_.code
  out, err = capsys.readouterr()
  return status, out, err


@pytest.mark.parametrize("arguments,message", [
    ({"bogus": 1}, "port_classes:CenteredMomentumSGD takes no argument "
     "bogus; it takes learning_rate, momentum (and through **kwargs its "
     "base's lr, decay, clipnorm, clipvalue, global_clipnorm)."),
    ({"decay": 0.01}, "tf_bridge.adopt(port_classes:CenteredMomentumSGD), "
     "a Keras 3 class, takes no decay (an argument of the class's base that "
     "Keras 3's lacks); the class, its port and its adoption all take "
     "learning_rate, momentum, clipnorm, clipvalue, global_clipnorm."),
])
def test_parity_native_refuses_arguments_not_every_run_takes(
    capsys, arguments, message):
  status, _, err = _parity(capsys, "--native",
                           "port_classes:CenteredMomentumSGD",
                           "--arguments", json.dumps(arguments))
  assert status == 2
  assert "error: --arguments: " + message in err


def test_parity_native_needs_a_required_argument(capsys):
  status, _, err = _parity(capsys, "--native", "port_classes:AdagradDecay")
  assert status == 2
  assert ("error: --arguments: port_classes:AdagradDecay needs "
          "learning_rate, which has no default.") in err


def test_parity_native_arguments_build_every_run(capsys, tmp_path,
                                                 monkeypatch):
  """`--arguments` build the class, its port and its adoption: all rows
  pass with them, and end elsewhere than with the class's defaults; an
  adoption given momentum 1 % off fails its row (exit status 1)."""
  def rows(*extra):
    report = tmp_path / "report.json"
    status, out, err = _parity(
        capsys, "--native", "port_classes:CenteredMomentumSGD", "--steps",
        "10", "--json", str(report), *extra)
    assert status in (0, 1), out + err
    return status, json.loads(report.read_text())["implementations"]

  chosen = ("--arguments", json.dumps({"learning_rate": 0.02,
                                       "momentum": 0.9}))
  status, given = rows(*chosen)
  assert status == 0 and all(row["ok"] for row in given)
  _, defaults = rows()
  assert {round(row["final_loss"], 6) for row in given}.isdisjoint(
      round(row["final_loss"], 6) for row in defaults)
  adopt = tf_bridge.adopt

  def mutated(cls):
    adoption = adopt(cls)
    return lambda **arguments: adoption(
        **{**arguments, "momentum": arguments["momentum"] * 1.01})
  monkeypatch.setattr(tf_bridge, "adopt", mutated)
  status, mutant = rows(*chosen)
  assert status == 1
  assert [row["ok"] for row in mutant] == [True, True, False]


# Each sparse case: the library the adoption trains in (its adopt), the
# class, its arguments (`k`: a multiplier of one, 1.01 for the mutant), and
# the fit: on the arrays (a batch dimension Keras traces as None, the last
# batch partial: the adoption is given the entries' sum padded to the
# table's rows), eagerly, or on whole batches (entries as they come).
LAZY_MOMENTUM = (port_classes.LazyMomentum,
                 lambda k: dict(learning_rate=0.05, momentum=0.9 * k))
ROW_DECAY_ADAGRAD = (port_classes.RowDecayAdagrad,
                     lambda k: dict(learning_rate=0.1, decay=0.9 * k))
EAGER, WHOLE_BATCHES = dict(run_eagerly=True), dict(whole_batches=True)


def _lazy_tf_keras_momentum(**clipping):
  """tf_keras 2.11+'s LazyTfKerasMomentum, clipped by its base."""
  return (port_classes.LazyTfKerasMomentum,
          lambda k: dict(learning_rate=0.05, beta=0.9 * k, **clipping))


def _lazy_momentum_clipped(**clipping):
  """LazyMomentum with OptimizerV2's (or Keras 3's) clipping of its
  gradients, applied before its sparse hook by the host."""
  return (port_classes.LazyMomentum,
          lambda k: dict(learning_rate=0.05, momentum=0.9 * k, **clipping))


SPARSE_CASES = {
    "adopt(OptimizerV2 lazy class)": ("keras", *LAZY_MOMENTUM, {}),
    "adopt(OptimizerV2 lazy class), eager": ("keras", *LAZY_MOMENTUM, EAGER),
    "adopt(OptimizerV2 lazy class), whole batches": (
        "keras", *LAZY_MOMENTUM, WHOLE_BATCHES),
    "adopt(TF1 class)": ("keras", *ROW_DECAY_ADAGRAD, {}),
    "legacy.adopt(OptimizerV2 lazy class)": ("legacy", *LAZY_MOMENTUM, {}),
    "legacy.adopt(OptimizerV2 lazy class), eager": (
        "legacy", *LAZY_MOMENTUM, EAGER),
    # The clipping of a `tf.IndexedSlices` keeps it sparse (by the norm of
    # its entries, repeated indices apart), on both hosts (OptimizerV2's
    # clipnorm: under mixed_float16, in adopted_elsewhere.py).
    "legacy.adopt(OptimizerV2 lazy class), global_clipnorm": (
        "legacy", *_lazy_momentum_clipped(global_clipnorm=0.05), {}),
    "adopt(OptimizerV2 lazy class), clipnorm": (
        "keras", *_lazy_momentum_clipped(clipnorm=0.05), {}),
    # tf_keras 2.11+ sums repeated indices itself, into a number of entries
    # known only when the step runs (eagerly, a number each step).
    "tf_keras.adopt(TF1 class)": ("tf_keras", *ROW_DECAY_ADAGRAD, {}),
    # Its clipping of a `tf.IndexedSlices` keeps it sparse too.
    "tf_keras.adopt(tf_keras lazy class), clipnorm": (
        "tf_keras", *_lazy_tf_keras_momentum(clipnorm=0.05), {}),
    "tf_keras.adopt(tf_keras lazy class), global_clipnorm": (
        "tf_keras", *_lazy_tf_keras_momentum(global_clipnorm=0.05), {}),
    "tf_keras.adopt(TF1 class), eager": (
        "tf_keras", *ROW_DECAY_ADAGRAD, EAGER),
}
LIBRARIES = {"keras": (keras, tf_bridge.adopt),
             "legacy": (tf_keras, tf_bridge.legacy.adopt),
             "tf_keras": (tf_keras, tf_bridge.tf_keras.adopt)}


@pytest.fixture(scope="module")
def sparse_adopted():
  return {(host, cls): LIBRARIES[host][1](cls)
          for host, cls, _, _ in SPARSE_CASES.values()}


def _sparse_weights(library, make, run_eagerly=False, whole_batches=False,
                    epochs=2):
  return adopt_fits.sparse_fit(
      adopt_fits.sparse_model_of(library, make, run_eagerly),
      epochs=epochs, whole_batches=whole_batches)


@pytest.fixture(scope="module")
def sparse_fits(sparse_adopted):
  """Per case: the class's weights after the fit in tf_keras, the
  adoption's, the mutant's, and the class's given its sparse gradients
  densified (what an adoption computed before it ran the sparse hook).
  The class's two fits depend on its arguments and data alone: made once
  for the cases (hosts, eager) that share them."""
  runs, references = {}, {}
  for name, (host, cls, arguments, options) in SPARSE_CASES.items():
    adoption = sparse_adopted[host, cls]
    library = LIBRARIES[host][0]
    data = dict(whole_batches=options.get("whole_batches", False))
    key = cls, tuple(sorted(arguments(1.0).items())), data["whole_batches"]
    if key not in references:
      references[key] = (
          _sparse_weights(tf_keras, lambda: cls(**arguments(1.0)), **data),  # pylint: disable=cell-var-from-loop
          _sparse_weights(tf_keras, lambda: adopt_fits.densifying(cls)(  # pylint: disable=cell-var-from-loop
              **arguments(1.0)), **data))  # pylint: disable=cell-var-from-loop
    native, densified = references[key]
    runs[name] = (
        native,
        _sparse_weights(library, lambda: adoption(**arguments(1.0)),  # pylint: disable=cell-var-from-loop
                        **options),
        _sparse_weights(library, lambda: adoption(**arguments(1.01)),  # pylint: disable=cell-var-from-loop
                        **options),
        densified)
  return runs


@pytest.mark.parametrize("name", SPARSE_CASES)
def test_adopted_class_runs_its_sparse_hook_in_fit(sparse_fits, name):
  """The class's own sparse hook runs on the Embedding's gradient: the
  adoption ends where the class ends in tf_keras's `fit`; its mutant and
  the class given the gradients densified part from it."""
  native, adoption, mutant, densified = sparse_fits[name]
  for got, want in zip(adoption, native):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(mutant, native)
  assert not _within(densified, native)
  _, _, initial = adopt_fits.sparse_data()
  assert max(float(np.max(np.abs(w - i)))
             for w, i in zip(native, initial)) > 1e-2


def test_numbers_of_entries_past_those_kept_are_summed_and_padded(
    sparse_adopted, sparse_fits, monkeypatch):
  """Eagerly, each number of entries converts the class again; past
  `_LENGTHS_KEPT` of them per variable (here 1: the partial batch's is
  the second) the entries are summed and padded, with the same numbers."""
  monkeypatch.setattr(_fused, "_LENGTHS_KEPT", 1)
  adoption = sparse_adopted["keras", port_classes.LazyMomentum]
  optimizer = adoption(0.05, 0.9)
  weights = _sparse_weights(keras, lambda: optimizer, run_eagerly=True)
  native = sparse_fits["adopt(OptimizerV2 lazy class), eager"][0]
  for got, want in zip(weights, native):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  seen = optimizer._fused._entry_lengths  # pylint: disable=protected-access
  assert list(seen.values()) == [{adopt_fits.BATCH * adopt_fits.IDS}]


def test_numbers_of_entries_are_kept_per_table_of_one_name(monkeypatch):
  """Two tables named alike (Keras 3 names both Embedding layers'
  "embeddings") each keep `_LENGTHS_KEPT` numbers of entries (here 1):
  each is given its entries as they come, neither padded for the other's."""
  monkeypatch.setattr(_fused, "_LENGTHS_KEPT", 1)
  tables = [tf.Variable(tf.zeros([6, 2]), name="embeddings")
            for _ in range(2)]
  grads = [tf.IndexedSlices(tf.ones([length, 2]), tf.range(length),
                            tf.constant([6, 2])) for length in (2, 3)]
  lengths_seen = {}
  values, indices, sparse = _fused.step_gradients(
      grads, tables, "summed_entries", lengths_seen)
  assert [v.shape.as_list() for v in values] == [[2, 2], [3, 2]]
  assert [i.numpy().tolist() for i in indices] == [[0, 1], [0, 1, 2]]
  assert sparse == (True, True)
  assert sorted(map(sorted, lengths_seen.values())) == [[2], [3]]


@pytest.mark.parametrize("cls", [port_classes.EntrySignSGD,
                                 port_classes.VisitSGD,
                                 port_classes.TopEntriesSGD])
def test_a_class_taking_repeated_indices_as_they_come(cls, recwarn):
  """`EntrySignSGD` moves a row by each entry, `VisitSGD` counts each a
  visit to its row (by `tf.ones` of `tf.size` of them), `TopEntriesSGD`
  moves by its 8 entries of the largest norms (`tf.math.top_k`, k the
  smaller of their number and 8; their own
  `_resource_apply_sparse_duplicate_indices`): given the entries as they
  come, eagerly (a conversion per number) and of a number unknown where the
  step is traced (Keras 3 on arrays, a partial last batch: one conversion
  for every number), the adoption ends where the class does in tf_keras's
  `fit`, with no warning; its mutant and the class given the gradients
  densified part from it."""
  adoption = tf_bridge.adopt(cls)
  native = _sparse_weights(tf_keras, lambda: cls(0.01))
  eager = _sparse_weights(keras, lambda: adoption(0.01), run_eagerly=True)
  traced = _sparse_weights(keras, lambda: adoption(0.01))
  mutant = _sparse_weights(keras, lambda: adoption(0.0101))
  densified = _sparse_weights(tf_keras,
                              lambda: adopt_fits.densifying(cls)(0.01))
  for run in (eager, traced):
    for got, want in zip(run, native):
      np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(mutant, native)
  assert not _within(densified, native)
  assert not [w for w in recwarn if "sparse gradient" in str(w.message)]


# TensorFlow's linspace casts the number to int64, which JAX, in 32-bit
# mode, truncates with a warning while it converts the class.
@pytest.mark.filterwarnings("ignore:Explicitly requested dtype int64")
def test_a_sparse_hook_needing_its_number_of_entries_is_densified(recwarn):
  """`RampSGD`'s sparse hook weights its entries by a ramp over their
  order, `tf.linspace` to their number, a shape JAX cannot take from a
  value of the step where the number is unknown when the step is traced
  (Keras 3 on arrays): there the gradient is densified with a warning
  naming the variable, the op and the cause, and the class's dense hook
  runs, as the class given the gradients densified; eagerly the adoption
  ends where the class does."""
  cls = port_classes.RampSGD
  adoption = tf_bridge.adopt(cls)
  native = _sparse_weights(tf_keras, lambda: cls(0.01))
  eager = _sparse_weights(keras, lambda: adoption(0.01), run_eagerly=True)
  for got, want in zip(eager, native):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not [w for w in recwarn if "sparse gradient" in str(w.message)]
  with pytest.warns(UserWarning, match=(
      r"The sparse gradient of \S*embeddings:0 has a number of entries "
      r"unknown where the step is traced .* the optimizer cannot take one "
      r"\(tf_bridge.port cannot convert RampSGD's sparse hook for a number "
      r"of entries known only when the step runs \(its Range op\): "
      r"ConcretizationTypeError: Abstract tracer value encountered where "
      r"concrete value is expected: traced array with shape int32\[\]\).* "
      r"the gradient is densified")):
    traced = _sparse_weights(keras, lambda: adoption(0.01))
  densified = _sparse_weights(tf_keras,
                              lambda: adopt_fits.densifying(cls)(0.01))
  for got, want in zip(traced, densified):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(traced, native)


def test_model_saved_after_a_sparse_fit_loads_and_continues(sparse_adopted,
                                                            tmp_path):
  """`model.save` of a Keras 3 model after a sparse fit with an adoption:
  `load_model` gives the adopted class with the same variables, and one
  more epoch of each ends at the same weights."""
  adoption = sparse_adopted["keras", port_classes.LazyMomentum]
  written = adopt_fits.sparse_model_of(keras, lambda: adoption(0.05, 0.9))
  adopt_fits.sparse_fit(written)
  written.save(tmp_path / "model.keras")
  loaded = keras.models.load_model(tmp_path / "model.keras")
  assert type(loaded.optimizer) is adoption
  assert len(loaded.optimizer.variables) == len(written.optimizer.variables)
  for got, want in zip(loaded.optimizer.variables,
                       written.optimizer.variables):
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
  for got, want in zip(adopt_fits.sparse_fit(loaded, epochs=1),
                       adopt_fits.sparse_fit(written, epochs=1)):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_kerass_global_clipnorm_hands_an_adopted_class_a_dense_gradient(
    sparse_adopted, sparse_fits):
  """Keras 3's `global_clipnorm` scales each gradient by one factor, which
  makes a `tf.IndexedSlices` a dense tensor (OptimizerV2's keeps it
  sparse): an adopted lazy class's dense hook runs on it, as the class's
  own runs given its gradients clipped by their global norm and then
  densified (`gradient_transformers`). The mutant and the class with
  OptimizerV2's `global_clipnorm` (its sparse hook run) part from it."""
  cls = port_classes.LazyMomentum
  adoption = sparse_adopted["keras", cls]

  def clipped_then_densified(grads_and_vars):
    grads, _ = tf.clip_by_global_norm([g for g, _ in grads_and_vars], 0.05)
    return [(tf.convert_to_tensor(g), v)
            for g, (_, v) in zip(grads, grads_and_vars)]

  native = _sparse_weights(tf_keras, lambda: cls(
      0.05, 0.9, gradient_transformers=[clipped_then_densified]))
  adopted = _sparse_weights(keras, lambda: adoption(0.05, 0.9,
                                                    global_clipnorm=0.05))
  mutant = _sparse_weights(keras, lambda: adoption(0.05, 0.909,
                                                   global_clipnorm=0.05))
  sparse = sparse_fits[
      "legacy.adopt(OptimizerV2 lazy class), global_clipnorm"][0]
  for got, want in zip(adopted, native):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(mutant, native)
  assert not _within(sparse, native)


@pytest.fixture(scope="module")
def lazy_adam(tmp_path_factory):
  return originals.run("adopted_sparse_addons.py",
                       str(tmp_path_factory.mktemp("lazy_adam")))


@pytest.mark.parametrize("run,native", [
    ("keras", "native"), ("keras eager", "native"),
    ("keras whole batches", "native whole batches"), ("legacy", "native")])
def test_adopted_tf_addons_lazy_adam_trains_as_lazy_adam(lazy_adam, run,
                                                          native):
  """TF Addons' LazyAdam adopted on Keras 3 (on the arrays, eagerly, on
  whole batches) and on OptimizerV2 ends where LazyAdam itself ends in
  tf_keras's `fit`; LazyAdam given its gradients densified (Adam's step)
  parts from it, as the mutants do."""
  for got, want in zip(lazy_adam[run], lazy_adam[native]):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(lazy_adam["densified"], lazy_adam["native"])
  for mutant in ("keras mutant", "legacy mutant"):
    assert not _within(lazy_adam[mutant], lazy_adam["native"])


def test_adopted_lazy_adam_model_saved_and_loaded(lazy_adam):
  loaded = lazy_adam["loaded"]
  assert (loaded["class"], loaded["adopted"]) == ("LazyAdam", True)
  assert loaded["variables"] and all(loaded["variables"])
  for got, want in zip(loaded["continued"], loaded["written continued"]):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


# A class whose rate's argument is `lr`, kept as its `learning_rate`
# hyperparameter (packages and tutorials of 2019), adopted on OptimizerV2
# and on Keras 3.
LR_LIBRARIES = {"legacy": tf_keras, "keras": keras}


@pytest.fixture(scope="module")
def lr_adopted():
  return {"legacy": tf_bridge.legacy.adopt(port_classes.LrMomentum),
          "keras": tf_bridge.adopt(port_classes.LrMomentum)}


@pytest.mark.parametrize("host,rate", [
    ("legacy", "float"), ("legacy", "schedule"), ("keras", "float")])
def test_a_class_taking_its_rate_as_lr_trains_at_the_hosts_rate(
    lr_adopted, host, rate):
  """`LrMomentum(lr=...)`'s adoption takes `lr` as the class does (first
  positionally, or by name), a float or a schedule, as the host's learning
  rate, and trains as the class itself in tf_keras's `fit`; the rate set
  between epochs (`optimizer.learning_rate = 0.02`, as a callback sets it)
  changes the next epoch's steps as it does the class's, and so does its
  `momentum` (the hyperparameter its `beta` is kept as: on OptimizerV2 by
  that name, on Keras 3 an attribute for `beta`, which the next traced
  step reads); a mutant (`lr` 1 % off) parts from it."""
  cls, adoption = port_classes.LrMomentum, lr_adopted[host]
  library = LR_LIBRARIES[host]

  def lr(library, k=1.0):
    if rate == "float":
      return 0.05 * k
    return library.optimizers.schedules.ExponentialDecay(0.05 * k, 2, 0.9)

  def trained(library, make):
    model = adopt_fits.model_of(library, make)
    adopt_fits.fit(model, epochs=2)
    if rate == "float":
      model.optimizer.learning_rate = 0.02
      model.optimizer.momentum = 0.5
      if library is keras:
        # Keras 3 reads an attribute set after its step was traced at the
        # next trace (OptimizerV2's hyperparameter is a variable).
        model.make_train_function(force=True)
    return adopt_fits.fit(model, epochs=1)

  native = trained(tf_keras, lambda: cls(lr=lr(tf_keras), beta=0.8))
  adopted = trained(library, lambda: adoption(lr(library), 0.8))
  mutant = trained(library, lambda: adoption(lr=lr(library, 1.01),
                                             beta=0.8))
  for got, want in zip(adopted, native):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
  assert not _within(mutant, native)
  _, _, initial = adopt_fits.data()
  assert max(float(np.max(np.abs(w - i)))
             for w, i in zip(native, initial)) > 1e-2


def test_a_class_taking_its_rate_as_lr_keeps_the_name_and_its_config(
    lr_adopted):
  """The adoption's constructor names the arguments `lr` and `beta`, first
  and with the class's defaults, as the class does; its config holds the
  rate as the host's `learning_rate`, at the class's value (and `beta`
  on OptimizerV2 as the class's config does, as its `momentum`), and
  `from_config` takes it back (the class's own config does not come back:
  it holds the hyperparameters' names, `momentum` and `lr`, which
  OptimizerV2's `from_config` renames `learning_rate`, and the class's
  constructor refuses both). On OptimizerV2, `optimizer.lr` and
  `optimizer.momentum` read and set the hyperparameters as they do the
  class's; on Keras 3 `optimizer.momentum` reads and sets `beta`, which the
  config holds."""
  native = port_classes.LrMomentum(lr=0.05, beta=0.8)
  with pytest.raises(TypeError, match="Unexpected keyword argument"):
    port_classes.LrMomentum.from_config(native.get_config())
  for host, adoption in lr_adopted.items():
    parameters = inspect.signature(adoption).parameters
    assert list(parameters)[:2] == ["lr", "beta"]
    assert parameters["lr"].default == 0.001
    assert "learning_rate" not in parameters
    config = adoption(lr=0.05, beta=0.8).get_config()
    assert config["learning_rate"] == pytest.approx(native.get_config()["lr"])
    beta = "momentum" if host == "legacy" else "beta"
    assert config[beta] == pytest.approx(0.8)
    assert adoption.from_config(config).get_config() == config
  optimizer = lr_adopted["legacy"](0.05, 0.8)
  for handle in (native, optimizer):
    assert float(handle.lr) == pytest.approx(0.05)
    assert float(handle.momentum) == pytest.approx(0.8)
    handle.lr, handle.momentum = 0.02, 0.5
    assert float(handle.learning_rate) == pytest.approx(0.02)
    assert float(handle.momentum) == pytest.approx(0.5)
  optimizer = lr_adopted["keras"](0.05, 0.8)
  assert optimizer.momentum == pytest.approx(0.8)
  optimizer.momentum = 0.5
  assert optimizer.beta == pytest.approx(0.5)
  config = optimizer.get_config()
  assert config["beta"] == pytest.approx(0.5) and "momentum" not in config
