"""`tf.distribute.MultiWorkerMirroredStrategy` with 2 workers on this
machine: a custom training loop (GradientTape, `strategy.run`) with the
bridged `tf_bridge.Adam` and with native `keras.optimizers.Adam`, and with
the OptimizerV2 pair (`tf_bridge.legacy.SGD` / tf_keras's, momentum), on
the same model and data; then tf_keras `model.fit` with
`tf_bridge.legacy.Adam` and tf_keras's. The bridged runs equal the native
ones, and the bridged Keras 3 loop and `fit` equal the same programs run in
one process without a strategy. (Keras 3's own `model.fit`
fails under this strategy in Keras 3.15, native optimizers included: with
Keras 3, train in a custom loop as here.)

Run it as it is: it starts the two workers itself, on free ports of
127.0.0.1 (a worker's `TF_CONFIG` names both).
"""

import json
import os
import socket
import subprocess
import sys
import tempfile

STEPS = 10
GLOBAL_BATCH = 32


def worker(index, ports, out):
  os.environ["TF_CONFIG"] = json.dumps({
      "cluster": {"worker": [f"127.0.0.1:{port}" for port in ports]},
      "task": {"type": "worker", "index": index}})
  os.environ.setdefault("KERAS_BACKEND", "tensorflow")
  # Without TensorFlow's start-up lines (harmless: see the README); tf_bridge,
  # imported first, also holds back those TensorFlow writes before it reads
  # the variable.
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  import tf_bridge  # pylint: disable=import-outside-toplevel

  import keras  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_keras  # pylint: disable=import-outside-toplevel

  strategy = tf.distribute.MultiWorkerMirroredStrategy()
  rng = np.random.default_rng(0)
  x = rng.standard_normal((GLOBAL_BATCH * STEPS, 8)).astype(np.float32)
  y = np.sin(x @ rng.standard_normal((8, 1))).astype(np.float32)
  options = tf.data.Options()
  options.experimental_distribute.auto_shard_policy = (
      tf.data.experimental.AutoShardPolicy.DATA)

  def train(library, make_optimizer, strategy=strategy):
    with strategy.scope():
      library.utils.set_random_seed(0)
      model = library.Sequential([
          library.Input((8,)), library.layers.Dense(16, activation="tanh"),
          library.layers.Dense(1)])
      optimizer = make_optimizer()
    initial = [np.asarray(v.numpy()).tolist()
               for v in model.trainable_variables]
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(
        GLOBAL_BATCH).with_options(options)
    batches = iter(strategy.experimental_distribute_dataset(dataset))

    @tf.function
    def train_step(inputs):
      def step(x, y):
        with tf.GradientTape() as tape:
          loss = tf.reduce_sum((model(x) - y) ** 2) / GLOBAL_BATCH
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
      strategy.run(step, args=inputs)

    for _ in range(STEPS):
      train_step(next(batches))
    return {"initial": initial,
            "final": [np.asarray(v.numpy()).tolist()
                      for v in model.trainable_variables]}

  def fit(make_optimizer, strategy):
    with strategy.scope():
      tf_keras.utils.set_random_seed(0)
      model = tf_keras.Sequential([
          tf_keras.Input((8,)), tf_keras.layers.Dense(16, activation="tanh"),
          tf_keras.layers.Dense(1)])
      model.compile(optimizer=make_optimizer(), loss="mse")
    initial = [w.tolist() for w in model.get_weights()]
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(
        GLOBAL_BATCH).with_options(options)
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, verbose=0)
    return {"initial": initial,
            "final": [w.tolist() for w in model.get_weights()]}

  runs = {
      "keras.Adam": train(keras, lambda: keras.optimizers.Adam(0.01)),
      "tf_bridge.Adam": train(keras, lambda: tf_bridge.Adam(0.01)),
      "tf_keras.legacy.SGD": train(tf_keras, lambda: (
          tf_keras.optimizers.legacy.SGD(0.05, momentum=0.9))),
      "tf_bridge.legacy.SGD": train(tf_keras, lambda: (
          tf_bridge.legacy.SGD(0.05, momentum=0.9))),
      "fit tf_keras.legacy.Adam": fit(
          lambda: tf_keras.optimizers.legacy.Adam(0.01), strategy),
      "fit tf_bridge.legacy.Adam": fit(lambda: tf_bridge.legacy.Adam(0.01),
                                       strategy),
  }
  if index == 0:
    runs["tf_bridge.Adam, one process"] = train(
        keras, lambda: tf_bridge.Adam(0.01), tf.distribute.get_strategy())
    runs["fit tf_bridge.legacy.Adam, one process"] = fit(
        lambda: tf_bridge.legacy.Adam(0.01), tf.distribute.get_strategy())
    with open(out, "w", encoding="utf-8") as file:
      json.dump({"workers": strategy.cluster_resolver.cluster_spec()
                            .num_tasks("worker"), "runs": runs}, file)


def free_ports(count):
  sockets = [socket.socket() for _ in range(count)]
  for sock in sockets:
    sock.bind(("127.0.0.1", 0))
  ports = [sock.getsockname()[1] for sock in sockets]
  for sock in sockets:
    sock.close()
  return ports


def main():
  import numpy as np  # pylint: disable=import-outside-toplevel
  with tempfile.TemporaryDirectory() as directory:
    out = f"{directory}/runs.json"
    ports = ",".join(map(str, free_ports(2)))
    workers = [subprocess.Popen([sys.executable, __file__, "worker", str(i),
                                 ports, out]) for i in range(2)]
    codes = [w.wait(timeout=600) for w in workers]
    assert codes == [0, 0], f"workers exited with {codes}"
    with open(out, encoding="utf-8") as file:
      report = json.load(file)
  assert report["workers"] == 2
  runs = report["runs"]

  def largest_difference(a, b):
    return max(float(np.max(np.abs(np.asarray(u) - np.asarray(v))))
               for u, v in zip(a, b))

  for reference, bridged in (
      ("keras.Adam", "tf_bridge.Adam"),
      ("tf_keras.legacy.SGD", "tf_bridge.legacy.SGD"),
      ("tf_bridge.Adam, one process", "tf_bridge.Adam"),
      ("fit tf_keras.legacy.Adam", "fit tf_bridge.legacy.Adam"),
      ("fit tf_bridge.legacy.Adam, one process", "fit tf_bridge.legacy.Adam")):
    assert runs[reference]["initial"] == runs[bridged]["initial"]
    difference = largest_difference(runs[reference]["final"],
                                    runs[bridged]["final"])
    moved = largest_difference(runs[reference]["final"],
                               runs[reference]["initial"])
    print(f"2 workers, {STEPS} steps: {bridged} vs {reference}: max |diff| "
          f"{difference:.2e} (the weights moved by up to {moved:.2e})")
    assert difference <= 1e-6
    assert moved > 1e-2


if __name__ == "__main__":
  if len(sys.argv) > 1 and sys.argv[1] == "worker":
    worker(int(sys.argv[2]), [int(p) for p in sys.argv[3].split(",")],
           sys.argv[4])
  else:
    main()
