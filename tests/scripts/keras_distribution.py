"""Keras 3 on its JAX backend under `keras.distribution`: `DataParallel` on 4
CPU devices and `ModelParallel` on a 2x2 mesh, `model.fit` with a bridged
optimizer and with the native one.

Prints JSON: per setting and optimizer, the final weights, and for each
optimizer variable that mirrors a model variable whether it has that
variable's sharding, and which model variables are sharded (not
replicated). Run as its own process: the device count and the
backend are read when JAX and Keras start.
"""

import json
import os

os.environ["KERAS_BACKEND"] = "jax"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=4")
# Compiled afresh, not read from the suite's JAX compilation cache
# (tests/conftest.py), as tests/scripts/sharded.py: a sharding run that
# read its multi-device programs from it stalled in a collective.
os.environ.pop("JAX_COMPILATION_CACHE_DIR", None)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # pylint: disable=wrong-import-position
import numpy as np  # pylint: disable=wrong-import-position

import tf_bridge  # pylint: disable=wrong-import-position


def distribution(setting):
  devices = keras.distribution.list_devices("cpu")
  if setting == "data_parallel":
    return keras.distribution.DataParallel(devices=devices)
  mesh = keras.distribution.DeviceMesh((2, 2), ["batch", "model"], devices)
  layout_map = keras.distribution.LayoutMap(mesh)
  layout_map[".*/dense.*/kernel"] = (None, "model")
  layout_map[".*/dense.*/bias"] = ("model",)
  return keras.distribution.ModelParallel(layout_map=layout_map,
                                          batch_dim_name="batch")


def train(setting, make_optimizer):
  keras.distribution.set_distribution(distribution(setting))
  rng = np.random.default_rng(0)
  inputs = rng.standard_normal((32, 6)).astype(np.float32)
  targets = rng.standard_normal((32, 4)).astype(np.float32)
  model = keras.Sequential([keras.layers.Input((6,)),
                            keras.layers.Dense(8, activation="tanh",
                                               name="dense"),
                            keras.layers.Dense(4, name="dense_out")])
  model.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                     for w in model.get_weights()])
  optimizer = make_optimizer()
  model.compile(optimizer=optimizer, loss="mse")
  model.fit(inputs, targets, batch_size=8, epochs=2, shuffle=False,
            verbose=0)
  by_path = {v.path.replace("/", "_"): v for v in model.trainable_variables}
  slots = {}
  for variable in optimizer.variables:
    name = variable.path.split("/", 1)[1]
    for prefix, mirrored in by_path.items():
      if name.startswith(prefix + "_") and tuple(variable.shape) == tuple(
          mirrored.shape):
        slots[name] = bool(variable.value.sharding.is_equivalent_to(
            mirrored.value.sharding, len(variable.shape)))
  return {"weights": [w.tolist() for w in model.get_weights()],
          "slots": slots,
          "sharded": {v.path: not v.value.sharding.is_fully_replicated
                      for v in model.trainable_variables}}


report = {}
for setting in ("data_parallel", "model_parallel"):
  report[setting] = {
      "bridged": train(setting, lambda: tf_bridge.Adam(0.05, amsgrad=True)),
      "native": train(setting,
                      lambda: keras.optimizers.Adam(0.05, amsgrad=True)),
  }
print(json.dumps(report))
