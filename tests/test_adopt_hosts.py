"""`tf_bridge.legacy.adopt` and `tf_bridge.tf_keras.adopt`: a user's class
(tests/port_classes.py) on tf_keras's hosts trains a tf_keras model in `fit`
as the class itself does; its arguments, config, slots, checkpoints and
saved models are the class's. `tf_bridge.adopt` on Keras's JAX backend and
of a TF1 class under MirroredStrategy (tests/scripts/adopted_elsewhere.py,
a process per backend: both settings are fixed at process start), and
`python -m tf_bridge.parity --native ... --arguments`. Ground truth is the
class itself; each comparison has a mutant (one argument 1 % off) that
must part from it."""

import json
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import adopt_fits
import port_classes
import tf_bridge
import tf_bridge.legacy
import tf_bridge.tf_keras
from tf_bridge import parity

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
