"""Trains under `ParameterServerStrategy` with two parameter servers and two
workers (in-process servers on loopback), one step at a time (each step
joined before the next is scheduled, on whichever worker is free: a
repeatable run): each bridged class and its native twin run the same
program; prints, per case, the largest difference of
their final weights, how far the weights moved, and on how many servers the
variables live, as JSON; among them a user's lazy OptimizerV2 class
(tests/port_classes.py's `LazyMomentum`, whose sparse hook moves the
touched rows only) adopted on tf_keras's OptimizerV2, against the class
itself. Then a bridged optimizer whose update of a variable reads
another's (`skip_nonfinite`) is refused with its error.

Run as its own process: the servers live as long as it does.
"""

import json
import os
import socket
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=wrong-import-position
import tensorflow as tf  # pylint: disable=wrong-import-position
import keras  # pylint: disable=wrong-import-position
import tf_keras  # pylint: disable=wrong-import-position

import port_classes  # pylint: disable=wrong-import-position
import tf_bridge  # pylint: disable=wrong-import-position
import tf_bridge.legacy  # pylint: disable=wrong-import-position
import tf_bridge.legacy.tf1  # pylint: disable=wrong-import-position

STEPS = 4


def in_process_cluster(servers, workers):
  """A cluster of `servers` parameter servers and `workers` workers in this
  process, on free loopback ports."""
  sockets = [socket.socket() for _ in range(servers + workers)]
  for each in sockets:
    each.bind(("127.0.0.1", 0))
  ports = [each.getsockname()[1] for each in sockets]
  for each in sockets:
    each.close()
  spec = tf.train.ClusterSpec({
      "worker": [f"127.0.0.1:{port}" for port in ports[:workers]],
      "ps": [f"127.0.0.1:{port}" for port in ports[workers:]]})
  for job, count in (("worker", workers), ("ps", servers)):
    for index in range(count):
      tf.distribute.Server(spec, job_name=job, task_index=index,
                           protocol="grpc", start=True)
  return tf.distribute.cluster_resolver.SimpleClusterResolver(
      spec, rpc_layer="grpc")


def model_of(layers, models, partitioned):
  """An embedding model (sparse gradients) with dense layers after it; its
  starting weights fixed."""
  model = models.Sequential([
      layers.Input((4,), dtype="int32"), layers.Embedding(64, 4),
      layers.GlobalAveragePooling1D(), layers.Dense(6, activation="tanh"),
      layers.Dense(1)])
  rng = np.random.default_rng(1)
  weights = model.get_weights()
  if partitioned:  # Each shard comes as a weight of its own.
    assert weights[0].shape == (32, 4), [w.shape for w in weights]
  model.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                     for w in weights])
  return model


def batches():
  rng = np.random.default_rng(0)
  tokens = rng.permutation(64).reshape(16, 4).astype(np.int32)
  targets = rng.standard_normal((16, 1)).astype(np.float32)
  return [(tokens[i:i + 4], targets[i:i + 4]) for i in range(0, 16, 4)]


def custom_loop(strategy, coordinator, make_optimizer, legacy):
  """`STEPS` steps scheduled on the worker: the weights before and after,
  and the optimizer."""
  layers, models = (tf_keras.layers, tf_keras) if legacy else (keras.layers,
                                                                keras)
  with strategy.scope():
    model = model_of(layers, models, partitioned=False)
    optimizer = make_optimizer()
  initial = model.get_weights()

  @tf.function
  def step(tokens, targets):
    def replica_step(tokens, targets):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(tokens) - targets) ** 2)
      variables = model.trainable_variables
      grads = tape.gradient(loss, variables)
      if legacy:
        optimizer.apply_gradients(zip(grads, variables))
      else:
        optimizer.apply(grads, variables)
    strategy.run(replica_step, args=(tokens, targets))

  for tokens, targets in batches()[:STEPS]:
    coordinator.schedule(step, args=(tf.constant(tokens),
                                     tf.constant(targets)))
    coordinator.join()
  return initial, model.get_weights(), model


def partitioned_fit(strategy, make_optimizer):
  """tf_keras `model.fit` with every weight in two shards (a
  `variable_partitioner`): `STEPS` epochs of one step (`fit` joins its
  workers at each epoch's end), each on the same batch (whichever worker
  runs it): a repeatable run."""
  with strategy.scope():
    model = model_of(tf_keras.layers, tf_keras, partitioned=True)
    model.compile(optimizer=make_optimizer(), loss="mse")
  initial = model.get_weights()

  def dataset(_):
    return tf.data.Dataset.from_tensors(batches()[0]).repeat()

  model.fit(tf_keras.utils.experimental.DatasetCreator(dataset),
            epochs=STEPS, steps_per_epoch=1, verbose=0)
  return initial, model.get_weights(), model


def servers(model):
  """How many devices the model's weights live on."""
  return len({(w.value if isinstance(w, keras.Variable) else w).device
              for w in model.trainable_weights})


def largest_difference(a, b):
  return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b))


def main():
  resolver = in_process_cluster(servers=2, workers=2)
  strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
  partitioned = tf.distribute.experimental.ParameterServerStrategy(
      resolver, variable_partitioner=(
          tf.distribute.experimental.partitioners.FixedShardsPartitioner(2)))
  coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(
      strategy)
  legacy = tf_keras.optimizers.legacy
  lazy = port_classes.LazyMomentum
  adopted_lazy = tf_bridge.legacy.adopt(lazy)
  # name: (bridged, native, Keras generation is legacy).
  loops = {
      "legacy.Adam": (lambda: tf_bridge.legacy.Adam(0.05),
                      lambda: legacy.Adam(0.05), True),
      "legacy.Nadam": (lambda: tf_bridge.legacy.Nadam(0.05),
                       lambda: legacy.Nadam(0.05), True),
      "legacy.SGD": (lambda: tf_bridge.legacy.SGD(0.05, momentum=0.9),
                     lambda: legacy.SGD(0.05, momentum=0.9), True),
      "legacy.tf1.Adam": (
          lambda: tf_bridge.legacy.tf1.Adam(0.05),
          lambda: tf.compat.v1.train.AdamOptimizer(0.05), True),
      "keras3.Adam": (lambda: tf_bridge.Adam(0.05),
                      lambda: keras.optimizers.Adam(0.05), False),
      "keras3.Adafactor": (lambda: tf_bridge.Adafactor(0.05),
                           lambda: keras.optimizers.Adafactor(0.05), False),
      "legacy.adopt(LazyMomentum)": (lambda: adopted_lazy(0.05, 0.9),
                                     lambda: lazy(0.05, 0.9), True),
  }
  report = {}
  for name, (bridged, native, is_legacy) in loops.items():
    initial, ours, model = custom_loop(strategy, coordinator, bridged,
                                       is_legacy)
    _, theirs, _ = custom_loop(strategy, coordinator, native, is_legacy)
    report[name] = {
        "max_abs_diff": largest_difference(ours, theirs),
        "moved": largest_difference(initial, ours),
        "servers": servers(model)}
  # The adoption with its momentum 1 % off, against the class.
  _, mutant, _ = custom_loop(strategy, coordinator,
                             lambda: adopted_lazy(0.05, 0.909), True)
  report["legacy.adopt(LazyMomentum)"]["mutant_diff"] = largest_difference(
      mutant, theirs)
  for name, (bridged, native) in {
      "fit.legacy.Adagrad": (lambda: tf_bridge.legacy.Adagrad(0.5),
                             lambda: legacy.Adagrad(0.5)),
      "fit.legacy.Adam": (lambda: tf_bridge.legacy.Adam(0.05),
                          lambda: legacy.Adam(0.05)),
      "fit.legacy.adopt(LazyMomentum)": (lambda: adopted_lazy(0.05, 0.9),
                                         lambda: lazy(0.05, 0.9))}.items():
    initial, ours, model = partitioned_fit(partitioned, bridged)
    _, theirs, _ = partitioned_fit(partitioned, native)
    report[name] = {
        "max_abs_diff": largest_difference(ours, theirs),
        "moved": largest_difference(initial, ours),
        "servers": servers(model),
        "sparse_steps": sum(1 for key in model.optimizer._fused._steps  # pylint: disable=protected-access
                            if key[0] == "tf-device" and any(key[4]))}
  try:
    custom_loop(strategy, coordinator,
                lambda: tf_bridge.legacy.Adam(0.05, skip_nonfinite=True),
                True)
  except Exception as error:  # pylint: disable=broad-except
    report["refused"] = f"{type(error).__name__}: {error}"
  json.dump(report, sys.stdout)


if __name__ == "__main__":
  main()
