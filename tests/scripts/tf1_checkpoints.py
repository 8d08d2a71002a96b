"""`tf_bridge.checkpoints` inside a TF1 program: eager execution disabled
(which holds for the process: a process of its own), a graph, a session, a
`Saver`. The program trains AdamOptimizer K steps and saves; `read` gives
the port the state, which continues N steps; `write` puts the port's state
into the program's keys, and the program's `Saver.restore` continues N
more; `inspect` and `convert` (to orbax and back to a TF1 file) run in the
program too, and so do `read` and `write` of a TF2 object-based file the
program writes (`tf.compat.v1.train.Checkpoint`); `restore` (into Keras 3,
which runs eagerly only) and `read` of a Keras 3 file (through its model)
are refused with the reason. Prints JSON: each
side's trajectory, whether the restored slots are the port's bit for bit,
what `inspect` printed and the refusal.

Run by tests/test_checkpoints.py."""

import contextlib
import io
import json
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # pylint: disable=wrong-import-position
import optax  # pylint: disable=wrong-import-position
import tensorflow as tf  # pylint: disable=wrong-import-position

tf.compat.v1.disable_eager_execution()

import jaxopt_port  # pylint: disable=wrong-import-position
from tf_bridge import checkpoints  # pylint: disable=wrong-import-position
from tf_bridge.checkpoints import __main__ as command  # pylint: disable=wrong-import-position

K, N = 3, 3
RATE = 0.05
rng = np.random.default_rng(0)
INITIAL = {"dense/kernel": rng.standard_normal((2, 3)).astype(np.float32),
           "dense/bias": rng.standard_normal(3).astype(np.float32)}
GRADIENTS = [{name: rng.standard_normal(value.shape).astype(np.float32)
              for name, value in INITIAL.items()} for _ in range(K + 2 * N)]
NAMES = sorted(INITIAL)

def object_path(name):
  return name.replace("/", "_")


variables = {name: tf.compat.v1.get_variable(name, initializer=value)
             for name, value in INITIAL.items()}
fed = {name: tf.compat.v1.placeholder(tf.float32, value.shape)
       for name, value in INITIAL.items()}
global_step = tf.compat.v1.train.get_or_create_global_step()
optimizer = tf.compat.v1.train.AdamOptimizer(RATE)
train = optimizer.apply_gradients([(fed[n], variables[n]) for n in NAMES],
                                  global_step=global_step)
saver = tf.compat.v1.train.Saver()
objects = tf.compat.v1.train.Checkpoint(optimizer=optimizer,
                                        global_step=global_step, **{
                                            object_path(n): variables[n]
                                            for n in NAMES})
session = tf.compat.v1.Session()
session.run(tf.compat.v1.global_variables_initializer())
directory = tempfile.mkdtemp()
transform = jaxopt_port.tf1.adam(RATE)


def program_steps(gradients):
  trajectory = []
  for grads in gradients:
    session.run(train, {fed[n]: grads[n] for n in NAMES})
    trajectory.append([session.run(variables[n]).tolist() for n in NAMES])
  return trajectory


def port_steps(params, state, gradients, key=str):
  """The port's steps on params and state keyed by `key` of the variables'
  names."""
  trajectory = []
  for grads in gradients:
    updates, state = transform.update(
        {key(n): g for n, g in grads.items()}, state, params)
    params = optax.apply_updates(params, updates)
    trajectory.append([np.asarray(params[key(n)]).tolist() for n in NAMES])
  return trajectory, params, state


def slots_are(state, key=str):
  """Whether the program's slots, beta powers and step are the state's,
  bit for bit."""
  pairs = [(optimizer.get_slot(variables[n], slot), getattr(state.slots,
                                                            slot)[key(n)])
           for n in NAMES for slot in ("m", "v")]
  pairs += [(power, getattr(state.slots, name)) for power, name in zip(
      optimizer._get_beta_accumulators(), ("beta1_power", "beta2_power"))]  # pylint: disable=protected-access
  pairs.append((global_step, state.iterations))
  return all(np.array_equal(session.run(v), np.asarray(value))
             for v, value in pairs)


def path(name):
  return os.path.join(directory, name)


program_steps(GRADIENTS[:K])
first = saver.save(session, path("first"))
tf2_first = objects.save(path("objects"), session=session)
native = program_steps(GRADIENTS[K:K + N])
last = saver.save(session, path("last"))
tf2_last = objects.save(path("objects"), session=session)
native_more = program_steps(GRADIENTS[K + N:])
result = {"native": native, "native_more": native_more}

params, state = checkpoints.read(first, transform)
result["read"], params, state = port_steps(params, state,
                                           GRADIENTS[K:K + N])
checkpoints.write(path("back"), params, state, transform, like=last)
saver.restore(session, path("back"))
result["written_bit_identical"] = slots_are(state)
result["written"] = program_steps(GRADIENTS[K + N:])

listing = io.StringIO()
with contextlib.redirect_stdout(listing):
  assert command.main(["inspect", last]) == 0
  assert command.main(["convert", first, path("orbax"), "--optimizer",
                       "tf1.adam", "--arguments", json.dumps(
                           {"learning_rate": RATE}), "--to", "orbax"]) == 0
  assert command.main(["convert", path("orbax"), path("converted"),
                       "--optimizer", "tf1.adam", "--arguments",
                       json.dumps({"learning_rate": RATE}), "--to",
                       "tf1"]) == 0
result["inspect"] = listing.getvalue()
saver.restore(session, path("converted"))
result["converted"] = program_steps(GRADIENTS[K:K + N])

tf2_params, tf2_state = checkpoints.read(tf2_first, transform)
result["tf2_read"], tf2_params, tf2_state = port_steps(
    tf2_params, tf2_state, GRADIENTS[K:K + N], object_path)
checkpoints.write(path("tf2_back"), tf2_params, tf2_state, transform,
                  like=tf2_last)
objects.restore(path("tf2_back")).run_restore_ops(session)
result["tf2_written_bit_identical"] = slots_are(tf2_state, object_path)
result["tf2_written"] = program_steps(GRADIENTS[K + N:])

try:
  import keras  # pylint: disable=import-outside-toplevel,wrong-import-position
  checkpoints.restore(first, keras.Sequential(), keras.optimizers.Adam())
except RuntimeError as error:
  result["restore_refused"] = str(error)
with open(path("model.weights.h5"), "wb"):
  pass
try:
  checkpoints.read(path("model.weights.h5"), jaxopt_port.adam(RATE),
                   model=keras.Sequential())
except RuntimeError as error:
  result["keras3_refused"] = str(error)
json.dump(result, sys.stdout)
