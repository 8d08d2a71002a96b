"""Configs are plain data: deserialization resolves class names through
Keras's registry, never evaluates code or unpickles."""

import ast
import json
import pathlib
import re
import zipfile

import keras
import numpy as np
import pytest
import tf_keras

import tf_bridge
import tf_bridge.addons
import tf_bridge.legacy
import tf_bridge.legacy.addons

ROOT = pathlib.Path(__file__).resolve().parents[1]
LAMBDA = {"class_name": "__lambda__",
          "config": {"code": "lambda step: __import__('os').getcwd()",
                     "defaults": None, "closure": None}}


def plain(value):
  """True for JSON data: dicts with string keys, lists, str, numbers,
  bools and None, all the way down."""
  if isinstance(value, dict):
    return all(isinstance(k, str) and plain(v) for k, v in value.items())
  if isinstance(value, (list, tuple)):
    return all(plain(v) for v in value)
  return value is None or isinstance(value, (str, int, float, bool))


@pytest.mark.parametrize("make,serialize,deserialize", [
    (lambda: tf_bridge.Adam(0.01, skip_nonfinite=True),
     keras.optimizers.serialize, keras.optimizers.deserialize),
    (lambda: tf_bridge.addons.Lookahead(tf_bridge.addons.Yogi(0.02),
                                        sync_period=3),
     keras.optimizers.serialize, keras.optimizers.deserialize),
    (lambda: tf_bridge.Muon(exclude_layers=["head"]),
     keras.optimizers.serialize, keras.optimizers.deserialize),
    (lambda: tf_bridge.legacy.addons.Lookahead(
        tf_bridge.legacy.addons.RectifiedAdam(0.01)),
     tf_keras.optimizers.serialize, tf_keras.optimizers.deserialize),
], ids=["Adam", "Lookahead(Yogi)", "Muon", "legacy.Lookahead(RAdam)"])
def test_configs_are_plain_data_and_round_trip_through_json(make, serialize,
                                                            deserialize):
  config = serialize(make())
  assert plain(config)
  restored = deserialize(json.loads(json.dumps(config)))
  assert type(restored) is type(make())
  assert serialize(restored)["config"] == config["config"]


def test_a_lambda_learning_rate_is_refused_in_safe_mode():
  config = keras.optimizers.serialize(tf_bridge.Adam())
  config["config"]["learning_rate"] = LAMBDA
  with pytest.raises(ValueError, match="Requested the deserialization of a "
                     "Python lambda"):
    keras.optimizers.deserialize(config)


@pytest.mark.parametrize("deserialize,config", [
    (keras.optimizers.deserialize,
     keras.optimizers.serialize(tf_bridge.addons.Lookahead(
         tf_bridge.addons.Yogi()))),
    (tf_keras.optimizers.deserialize,
     tf_keras.optimizers.serialize(tf_bridge.legacy.addons.Lookahead(
         tf_bridge.legacy.addons.Yogi()))),
], ids=["keras3", "legacy"])
@pytest.mark.parametrize("payload", [
    LAMBDA,
    {"class_name": "builtins>eval", "config": {"source": "1 + 1"}},
    {"module": "os", "class_name": "system", "config": {"command": "true"},
     "registered_name": None},
    {"class_name": "keras.optimizers>Adam", "config": {}},
], ids=["lambda", "eval", "os.system", "native-class"])
def test_an_inner_optimizer_must_be_a_registered_bridged_class(
    deserialize, config, payload):
  """A wrapper's inner-optimizer slot accepts a registered tf_bridge class
  and nothing else (not even a native Keras optimizer)."""
  config["config"]["optimizer"] = payload
  with pytest.raises(ValueError, match=re.escape(
      f"`optimizer` holds a serialized object named "
      f"{payload['class_name']!r}: only a registered tf_bridge optimizer or "
      "a learning rate schedule may appear there (configs are plain "
      "data).")):
    deserialize(config)


def small_model(optimizer):
  model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
  model.compile(optimizer=optimizer, loss="mse")
  x = np.arange(12, dtype=np.float32).reshape(4, 3)
  model.fit(x, np.ones((4, 2), np.float32), epochs=1, verbose=0)
  return model


def test_load_model_in_safe_mode_restores_a_bridged_optimizer(tmp_path):
  model = small_model(tf_bridge.Adam(0.01, skip_nonfinite=True))
  path = tmp_path / "model.keras"
  model.save(path)
  loaded = keras.models.load_model(path, safe_mode=True)
  assert type(loaded.optimizer) is tf_bridge.Adam
  for got, want in zip(loaded.optimizer.variables, model.optimizer.variables):
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_load_model_in_safe_mode_refuses_a_file_whose_config_carries_code(
    tmp_path):
  model = small_model(tf_bridge.Adam(0.01))
  path = tmp_path / "model.keras"
  model.save(path)
  tampered = tmp_path / "tampered.keras"
  with zipfile.ZipFile(path) as source, zipfile.ZipFile(tampered, "w") as out:
    for item in source.infolist():
      data = source.read(item.filename)
      if item.filename == "config.json":
        config = json.loads(data)
        config["compile_config"]["optimizer"]["config"]["learning_rate"] = (
            LAMBDA)
        data = json.dumps(config).encode()
      out.writestr(item, data)
  with pytest.raises(ValueError, match="Requested the deserialization of a "
                     "Python lambda"):
    keras.models.load_model(tampered, safe_mode=True)


def test_the_packages_never_evaluate_or_unpickle():
  """No eval/exec/compile calls and no pickle-like imports in the sources."""
  forbidden_calls = {"eval", "exec", "compile", "__import__"}
  forbidden_modules = {"pickle", "cPickle", "dill", "marshal", "shelve",
                       "cloudpickle", "joblib"}
  found = []
  sources = [*ROOT.glob("jaxopt_port/**/*.py"), *ROOT.glob("tf_bridge/**/*.py")]
  assert len(sources) > 20
  for source in sources:
    tree = ast.parse(source.read_text(), filename=str(source))
    for node in ast.walk(tree):
      if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
          and node.func.id in forbidden_calls):
        found.append(f"{source.name}:{node.lineno} {node.func.id}()")
      names = ([a.name for a in node.names] if isinstance(node, ast.Import)
               else [node.module or ""] if isinstance(node, ast.ImportFrom)
               else [])
      found += [f"{source.name}:{node.lineno} import {name}" for name in names
                if name.split(".")[0] in forbidden_modules]
  assert found == []
