"""Checkpoint files carry a run across: `tf_bridge.checkpoints.read` of a
file a TF program wrote, continued by the port, equals the program's own
continuation; `write` of the port's state into the program's file, restored
by the program's own code, continues the port's trajectory.

TF2 object-based files (`tf.train.Checkpoint`) of every optimizer with an
OptimizerV2 or TF1 class: native tf_keras legacy and TF1 optimizers, the
bridged classes where no native one exists (TF Addons, the classics, the
Keras 3 algorithms legacy lacks); TF1 `Saver` files of every TF1 optimizer in
a graph and session. K steps, a file, N steps more.
"""

import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import warnings

import jax
import jaxopt_port
import numpy as np
import optax
import pytest
import tensorflow as tf
import tf_keras
# What `tf.compat.v1.layers` is with tf_keras (TF_USE_LEGACY_KERAS=1), which
# this process does not set: Keras 3 has no TF1 layers.
from tf_keras.src.legacy_tf_layers import core as legacy_tf_layers

from tf_bridge import catalog, checkpoints, testing

K, N = 3, 3
PATHS = ("model/dense/kernel", "model/dense/bias", "late")
SHAPES = ((2, 3), (3,), (4,))
# Arguments that give each optimizer all its slots (and a count that decides).
ARGUMENTS = {
    "legacy.sgd": {"momentum": 0.9},
    # LARS's trust ratio at its default eeta (0.001) barely moves it.
    "tf_models.lars": {"eeta": 0.5, "weight_decay_rate": 0.01},
    "hf.adam_weight_decay": {"weight_decay_rate": 0.1, "amsgrad": True,
                             "exclude_from_weight_decay": ["bias"]},
    "legacy.adam": {"amsgrad": True, "beta_2": 0.5, "learning_rate": 0.1},
    "legacy.rmsprop": {"momentum": 0.5, "centered": True},
    "legacy.adadelta": {"learning_rate": 1.0},
    "adadelta": {"learning_rate": 1.0},
    "sgd": {"momentum": 0.9},
    "adam": {"amsgrad": True, "learning_rate": 0.1},
    "adamw": {"amsgrad": True, "learning_rate": 0.1},
    "rmsprop": {"momentum": 0.5, "centered": True},
    # beta_2 = 0.5: the momentum a file carries decides the update's sign.
    "lion": {"beta_1": 0.99, "beta_2": 0.5},
    "tf1.rmsprop": {"momentum": 0.5, "centered": True},
    "tf1.adadelta": {"learning_rate": 1.0},
    # AdagradDA reads its step count only through l1 and l2.
    "tf1.adagrad_da": {"l1_regularization_strength": 0.01,
                       "l2_regularization_strength": 0.01},
}
# (name, bridged writer): native writers where there are (TF1's run
# eagerly), and the bridged OptimizerV2 classes, TF1's too.
TF2_CASES = [(d.name, not d.has_native or d.generation == catalog.KERAS)
             for generation in (catalog.LEGACY, catalog.TF1,
                                *catalog.LIBRARIES)
             for d in catalog.legacy_hosted(generation)
             # TF1's stateless optimizers keep nothing in a TF2 checkpoint.
             if d.name not in ("tf1.gradient_descent",
                               "tf1.proximal_gradient_descent")]
TF2_CASES += [(d.name, True) for d in catalog.legacy_hosted(catalog.TF1)]
TF2_IDS = [name + ("-bridged" if bridged and catalog.lookup(name).has_native
                   else "") for name, bridged in TF2_CASES]
# TF1's own classes (BERT's AdamWeightDecay keeps other names).
TF1_CASES = [d.name for d in catalog.CATALOG
             if d.generation == catalog.TF1 and d.has_native]


def arguments(name):
  declaration = catalog.lookup(name)
  return {**declaration.required, **ARGUMENTS.get(name, {})}


def problem(seed):
  return testing.seeded_problem(K + 2 * N, seed, 1.0, SHAPES)


def writer_optimizer(declaration, bridged):
  """The checkpoint's writer: the native class, or the bridged OptimizerV2
  class."""
  if not bridged:
    return declaration.make_native(**ARGUMENTS.get(declaration.name, {}))
  module = importlib.import_module(declaration.legacy_bridge_path)
  return getattr(module, declaration.class_name)(**arguments(
      declaration.name))


class Tf2Program:
  """A TF2 training program: a module's variables and a late one (no
  gradient for the first K steps, so no slots in the first file), saved
  with `tf.train.Checkpoint`."""

  def __init__(self, declaration, initial, bridged=False, optimizer=None):
    self.optimizer = optimizer or writer_optimizer(declaration, bridged)
    self.variables = [tf.Variable(v, name=path.replace("/", "_"))
                      for v, path in zip(initial, PATHS)]
    model = tf.Module()
    model.dense = tf.Module()
    model.dense.kernel, model.dense.bias = self.variables[:2]
    counter = getattr(self.optimizer, "_global_step", None)
    extra = {} if counter is None else {"global_step": counter}
    self.checkpoint = tf.train.Checkpoint(
        model=model, late=self.variables[2], optimizer=self.optimizer,
        **extra)

  def steps(self, gradients, trained=len(PATHS)):
    trajectory = []
    for grads in gradients:
      testing.apply_gradients(self.optimizer,
                              [tf.constant(g) for g in grads[:trained]],
                              self.variables[:trained])
      trajectory.append([v.numpy() for v in self.variables])
    return trajectory


def port_steps(transform, params, state, gradients, paths=PATHS):
  trajectory = []
  for grads in gradients:
    updates, state = transform.update(dict(zip(paths, grads)), state, params)
    params = optax.apply_updates(params, updates)
    trajectory.append([np.asarray(params[p]) for p in paths])
  return trajectory, params, state


@pytest.mark.parametrize("name,bridged", TF2_CASES, ids=TF2_IDS)
def test_tf2_checkpoint_continues_in_jax_and_back(name, bridged, tmp_path):
  declaration = catalog.lookup(name)
  transform = declaration.make_port(**arguments(name))
  initial, gradients = problem(1)
  program = Tf2Program(declaration, initial, bridged)
  program.steps(gradients[:K], trained=2)
  first = program.checkpoint.write(str(tmp_path / "first"))
  native = program.steps(gradients[K:K + N])
  last = program.checkpoint.write(str(tmp_path / "last"))
  native_more = program.steps(gradients[K + N:])

  read_params, read_state = checkpoints.read(first, transform)
  assert sorted(read_params) == sorted(PATHS)
  continued, params, state = port_steps(transform, read_params, read_state,
                                        gradients[K:K + N])
  testing.compare_trajectories(continued, native, rtol=1e-5, atol=1e-6,
                               actual_name="port from the file",
                               initial=initial)
  fresh, _, _ = port_steps(transform, read_params,
                           transform.init(read_params), gradients[K:K + N])
  # The control: the same continuation from fresh state parts from the
  # program's, unless the state is never read (ConditionalGradient's slot
  # is scratch space): then no reader could be told from another.
  if not all(np.array_equal(a, b) for got, want in zip(fresh, continued)
             for a, b in zip(got, want)):
    with pytest.raises(AssertionError, match="part at step"):
      testing.compare_trajectories(fresh, native, rtol=1e-5, atol=1e-6)

  checkpoints.write(str(tmp_path / "back"), params, state, transform,
                    like=last)
  restored = Tf2Program(declaration, [np.zeros_like(v) for v in initial],
                        bridged)
  restored.checkpoint.read(str(tmp_path / "back")).expect_partial()
  testing.compare_trajectories(restored.steps(gradients[K + N:]), native_more,
                               rtol=1e-5, atol=1e-6,
                               actual_name="native from the port's file")
  if not np.array_equal(fresh[-1][0], continued[-1][0]):
    checkpoints.write(str(tmp_path / "reset"), params, transform.init(params),
                      transform, like=last)
    restored.checkpoint.read(str(tmp_path / "reset")).expect_partial()
    with pytest.raises(AssertionError, match="part at step"):
      testing.compare_trajectories(restored.steps(gradients[K + N:]),
                                   native_more, rtol=1e-5, atol=1e-6)



@pytest.mark.parametrize("name", ["legacy.sgd", "legacy.rmsprop"])
def test_a_slot_the_step_leaves_unread_is_in_no_file(name, tmp_path):
  """Without momentum, native keeps no momentum slot and the port keeps it
  at zeros, unread (one state layout for optax's inject_hyperparams): read
  fills it with zeros, write leaves it out, and both runs continue as the
  program's."""
  declaration = catalog.lookup(name)
  transform = declaration.make_port()
  initial, gradients = problem(2)
  program = Tf2Program(declaration, initial,
                       optimizer=declaration.make_native())
  program.steps(gradients[:K])
  first = program.checkpoint.write(str(tmp_path / "first"))
  native = program.steps(gradients[K:K + N])
  native_more = program.steps(gradients[K + N:])

  params, state = checkpoints.read(first, transform)
  assert all(not np.any(leaf) for leaf in state.slots.momentum.values())
  continued, params, state = port_steps(transform, params, state,
                                        gradients[K:K + N])
  testing.compare_trajectories(continued, native, rtol=1e-5, atol=1e-6,
                               actual_name="port from the file")
  back = str(tmp_path / "back")
  checkpoints.write(back, params, state, transform, like=first)
  assert ({key for key, _ in tf.train.list_variables(back)}
          == {key for key, _ in tf.train.list_variables(first)})
  restored = Tf2Program(declaration, [np.zeros_like(v) for v in initial],
                        optimizer=declaration.make_native())
  restored.checkpoint.read(back).expect_partial()
  testing.compare_trajectories(restored.steps(gradients[K + N:]), native_more,
                               rtol=1e-5, atol=1e-6,
                               actual_name="native from the port's file")

# TF Addons' wrappers of tf_keras's Adam (bridged: TFA cannot run beside
# TF 2.21; their variables and numbers are TFA 0.23's, test_tfa_originals),
# with their ports; settings under which the wrapper's own slots change
# within the continuation.
WRAPPERS = {
    "lookahead": ("Lookahead", {"sync_period": 2}, "slow"),
    "moving_average": ("MovingAverage", {"average_decay": 0.5}, "average"),
    "swa": ("SWA", {"start_averaging": 1, "average_period": 1}, "average"),
}


class WrapperProgram(Tf2Program):
  """`Tf2Program` with a TF Addons wrapper of tf_keras's Adam."""

  def __init__(self, name, initial):
    import tf_bridge.legacy  # pylint: disable=import-outside-toplevel
    from tf_bridge.legacy import addons  # pylint: disable=import-outside-toplevel
    class_name, settings, self.slot = WRAPPERS[name]
    super().__init__(None, initial, optimizer=getattr(addons, class_name)(
        tf_bridge.legacy.Adam(0.1), **settings))

  def own_slots(self):
    return [self.optimizer.get_slot(v, self.slot).numpy()
            for v in self.variables]


@pytest.mark.parametrize("name", WRAPPERS)
def test_a_tfa_wrapper_checkpoint_continues_in_jax_and_back(name, tmp_path):
  """A wrapper's file: its own slots (`slow`, `average`) and its inner
  optimizer's (`m`, `v`, under the wrapper's object) read into the port's
  state, whose continuation equals the program's, slots included; written
  back, the program continues on the port's trajectory. Reading the inner
  optimizer's slots as fresh ones parts."""
  import jaxopt_port  # pylint: disable=import-outside-toplevel
  _, settings, slot = WRAPPERS[name]
  transform = getattr(jaxopt_port.addons, name)(
      jaxopt_port.legacy.adam(0.1), **settings)
  initial, gradients = problem(2)
  program = WrapperProgram(name, initial)
  program.steps(gradients[:K], trained=2)
  first = program.checkpoint.write(str(tmp_path / "first"))
  native = program.steps(gradients[K:K + N])
  native_slots = program.own_slots()
  last = program.checkpoint.write(str(tmp_path / "last"))
  native_more = program.steps(gradients[K + N:])

  params, state = checkpoints.read(first, transform)
  continued, params, state = port_steps(transform, params, state,
                                        gradients[K:K + N])
  testing.compare_trajectories(continued, native, rtol=1e-5, atol=1e-6,
                               actual_name="port from the wrapper's file",
                               initial=initial)
  testing.compare_trajectories(
      [[np.asarray(getattr(state, slot)[p]) for p in PATHS]], [native_slots],
      rtol=1e-5, atol=1e-6, actual_name=f"the port's {slot}")
  _, fresh_inner = checkpoints.read(first, transform)
  fresh_inner = fresh_inner._replace(inner_state=transform.init(
      params).inner_state)
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(
        port_steps(transform, checkpoints.read(first, transform)[0],
                   fresh_inner, gradients[K:K + N])[0],
        native, rtol=1e-5, atol=1e-6)

  checkpoints.write(str(tmp_path / "back"), params, state, transform,
                    like=last)
  restored = WrapperProgram(name, [np.zeros_like(v) for v in initial])
  restored.checkpoint.read(str(tmp_path / "back")).expect_partial()
  testing.compare_trajectories(restored.steps(gradients[K + N:]), native_more,
                               rtol=1e-5, atol=1e-6,
                               actual_name="the wrapper from the port's file")
  testing.compare_trajectories([restored.own_slots()],
                               [program.own_slots()], rtol=1e-5, atol=1e-6,
                               actual_name=f"the restored {slot}")


def test_a_wrapper_file_read_with_a_plain_port_is_refused(tmp_path):
  import jaxopt_port  # pylint: disable=import-outside-toplevel
  initial, gradients = problem(2)
  program = WrapperProgram("lookahead", initial)
  program.steps(gradients[:K])
  path = program.checkpoint.write(str(tmp_path / "ckpt"))
  with pytest.raises(ValueError, match=re.escape(
      f"{path!r} holds a TF Addons wrapper and the optimizer it wraps, and "
      "the transform is the port of one optimizer: read it with the port")):
    checkpoints.read(path, jaxopt_port.legacy.adam(0.1))
  with pytest.raises(ValueError, match=re.escape(
      f"{path!r} (its wrapped optimizer, optimizer/lh_base_optimizer) does "
      "not hold this transform's slots: missing momentum; extra m, v.")):
    checkpoints.read(path, jaxopt_port.addons.lookahead(
        jaxopt_port.legacy.sgd(0.1, momentum=0.9), sync_period=2))


class GanProgram:
  """A GAN's TF2 program, as TensorFlow's DCGAN tutorial saves it:
  `tf.train.Checkpoint(generator_optimizer=..., discriminator_optimizer=
  ..., generator=..., discriminator=...)`, tf_keras's Adam and SGD with
  momentum taking turns on their own variables."""

  def __init__(self, initial):
    self.generator = [tf.Variable(v) for v in initial[:2]]
    self.discriminator = [tf.Variable(initial[2])]
    self.optimizers = (tf_keras.optimizers.legacy.Adam(0.1),
                       tf_keras.optimizers.legacy.SGD(0.1, momentum=0.9))
    generator, discriminator = tf.Module(), tf.Module()
    generator.weights, discriminator.weights = (self.generator,
                                                self.discriminator)
    self.checkpoint = tf.train.Checkpoint(
        generator=generator, discriminator=discriminator,
        generator_optimizer=self.optimizers[0],
        discriminator_optimizer=self.optimizers[1])

  def steps(self, gradients):
    trajectory = []
    for grads in gradients:
      for optimizer, variables, part in zip(
          self.optimizers, (self.generator, self.discriminator),
          (grads[:2], grads[2:])):
        testing.apply_gradients(optimizer, [tf.constant(g) for g in part],
                                variables)
      trajectory.append([v.numpy() for v in self.generator])
    return trajectory


def test_one_optimizer_of_a_gan_checkpoint_continues_in_jax_and_back(
    tmp_path, capsys):
  """`optimizer=` picks the generator's optimizer of a GAN's file: its
  variables and slots only; written back, the other optimizer's state is
  copied, and the program continues on the port's trajectory. Without it,
  or with a name the file lacks, the file is refused naming its
  optimizers."""
  import jaxopt_port  # pylint: disable=import-outside-toplevel
  initial, gradients = problem(3)
  program = GanProgram(initial)
  program.steps(gradients[:K])
  saved = program.checkpoint.write(str(tmp_path / "gan"))
  native = program.steps(gradients[K:K + N])
  native_more = program.steps(gradients[K + N:])

  transform = jaxopt_port.legacy.adam(0.1)
  params, state = checkpoints.read(saved, transform,
                                   optimizer="generator_optimizer")
  assert sorted(params) == ["generator/weights/0", "generator/weights/1"]
  paths = ("generator/weights/0", "generator/weights/1")
  continued, params, state = port_steps(
      transform, params, state, [g[:2] for g in gradients[K:K + N]], paths)
  testing.compare_trajectories(continued, native, rtol=1e-5, atol=1e-6,
                               actual_name="port of the generator's file",
                               initial=initial[:2])
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(port_steps(
        transform, checkpoints.read(saved, transform,
                                    optimizer="generator_optimizer")[0],
        transform.init(params), [g[:2] for g in gradients[K:K + N]],
        paths)[0], native, rtol=1e-5, atol=1e-6)

  checkpoints.write(str(tmp_path / "back"), params, state, transform,
                    like=saved, optimizer="generator_optimizer")
  restored = GanProgram([np.zeros_like(v) for v in initial])
  restored.checkpoint.read(str(tmp_path / "back")).expect_partial()
  # The generator's trajectory (its gradients do not depend on the
  # discriminator, whose state the file keeps as `like` had it).
  testing.compare_trajectories(restored.steps(gradients[K + N:]),
                               native_more, rtol=1e-5, atol=1e-6,
                               actual_name="the GAN from the port's file")

  with pytest.raises(ValueError, match=re.escape(
      "holds the state of 2 optimizers (discriminator_optimizer, "
      "generator_optimizer): name the one to read with optimizer= (one of "
      "discriminator_optimizer, generator_optimizer).")):
    checkpoints.read(saved, transform)
  with pytest.raises(ValueError, match=re.escape(
      f"{saved!r} holds no optimizer at 'optimizer'; it holds "
      "discriminator_optimizer, generator_optimizer.")):
    checkpoints.read(saved, transform, optimizer="optimizer")

  # The command: inspect lists each optimizer; convert --object takes one.
  from tf_bridge.checkpoints import __main__ as command  # pylint: disable=import-outside-toplevel
  assert command.main(["inspect", saved]) == 0
  listed = capsys.readouterr().out
  assert ("optimizer at 'discriminator_optimizer'\nits slots (momentum) "
          "point to jaxopt_port.legacy.sgd") in listed
  assert ("optimizer at 'generator_optimizer'\nits slots (m, v) point to "
          "jaxopt_port.legacy.adam") in listed
  assert command.main([
      "convert", saved, str(tmp_path / "orbax"), "--optimizer",
      "legacy.adam", "--arguments", '{"learning_rate": 0.1}', "--object",
      "generator_optimizer", "--to", "orbax"]) == 0
  converted_params, converted = checkpoints.read(str(tmp_path / "orbax"),
                                                 transform)
  read_params, read_state = checkpoints.read(
      saved, transform, optimizer="generator_optimizer")
  assert sorted(converted_params) == sorted(read_params)
  assert all(np.array_equal(a, b) for a, b in zip(
      jax.tree.leaves(converted), jax.tree.leaves(read_state)))


TF1_PATHS = ("dense/kernel", "dense/bias", "late")


class Tf1Program:
  """A TF1 training program: a `tf.compat.v1.layers.dense` layer and a
  variable of its own, a `global_step`, gradients fed to `apply_gradients`
  in a session, saved with `Saver`."""

  def __init__(self, declaration, initial, **optimizer_arguments):
    self.graph = tf.Graph()
    with self.graph.as_default():
      inputs = tf.compat.v1.placeholder(tf.float32, [None, SHAPES[0][0]])
      with warnings.catch_warnings():  # tf.layers.dense is deprecated.
        warnings.simplefilter("ignore", UserWarning)
        legacy_tf_layers.dense(inputs, SHAPES[0][1])
      tf.compat.v1.get_variable("late", shape=SHAPES[2])
      variables = {v.op.name: v
                   for v in tf.compat.v1.trainable_variables()}
      self.variables = [variables[path] for path in TF1_PATHS]
      self.gradients = [tf.compat.v1.placeholder(tf.float32, shape)
                        for shape in SHAPES]
      global_step = tf.compat.v1.train.get_or_create_global_step()
      step_argument = ({"global_step": global_step}
                       if declaration.native_arguments else {})
      optimizer = declaration.make_native(
          **{**ARGUMENTS.get(declaration.name, {}), **step_argument,
             **optimizer_arguments})
      self.train = optimizer.apply_gradients(
          zip(self.gradients, self.variables), global_step=global_step)
      self.saver = tf.compat.v1.train.Saver()
      self.session = tf.compat.v1.Session(graph=self.graph)
      self.session.run(tf.compat.v1.global_variables_initializer())
      for variable, value in zip(self.variables, initial):
        variable.load(value, self.session)

  def save(self, path):
    with self.graph.as_default():
      return self.saver.save(self.session, str(path))

  def restore(self, path):
    with self.graph.as_default():
      self.saver.restore(self.session, str(path))

  def steps(self, gradients):
    trajectory = []
    for grads in gradients:
      self.session.run(self.train, dict(zip(self.gradients, grads)))
      trajectory.append(self.session.run(self.variables))
    return trajectory


@pytest.mark.parametrize("name", TF1_CASES)
def test_tf1_saver_file_continues_in_jax_and_back(name, tmp_path):
  declaration = catalog.lookup(name)
  transform = declaration.make_port(**arguments(name))
  initial, gradients = problem(2)
  program = Tf1Program(declaration, initial)
  program.steps(gradients[:K])
  first = program.save(tmp_path / "first")
  native = program.steps(gradients[K:K + N])
  last = program.save(tmp_path / "last")
  native_more = program.steps(gradients[K + N:])

  read_params, read_state = checkpoints.read(first, transform)
  assert sorted(read_params) == sorted(TF1_PATHS)
  assert int(read_state.iterations) == K
  continued, params, state = port_steps(transform, read_params, read_state,
                                        gradients[K:K + N], TF1_PATHS)
  testing.compare_trajectories(continued, native, rtol=1e-5, atol=1e-6,
                               actual_name="port from the file",
                               initial=initial)
  fresh, _, _ = port_steps(transform, read_params,
                           transform.init(read_params), gradients[K:K + N],
                           TF1_PATHS)
  if not all(np.array_equal(a, b) for got, want in zip(fresh, continued)
             for a, b in zip(got, want)):
    with pytest.raises(AssertionError, match="part at step"):
      testing.compare_trajectories(fresh, native, rtol=1e-5, atol=1e-6)

  checkpoints.write(str(tmp_path / "back"), params, state, transform,
                    like=last)
  restored = Tf1Program(declaration, initial)
  restored.restore(tmp_path / "back")
  testing.compare_trajectories(restored.steps(gradients[K + N:]), native_more,
                               rtol=1e-5, atol=1e-6,
                               actual_name="native from the port's file")
  if not np.array_equal(fresh[-1][0], continued[-1][0]):
    checkpoints.write(str(tmp_path / "reset"), params, transform.init(params),
                      transform, like=last)
    restored.restore(tmp_path / "reset")
    with pytest.raises(AssertionError, match="part at step"):
      testing.compare_trajectories(restored.steps(gradients[K + N:]),
                                   native_more, rtol=1e-5, atol=1e-6)


BERT_PATHS = ("bert/dense/kernel", "bert/dense/bias", "bert/LayerNorm/gamma")
BERT = {"learning_rate": 0.01, "weight_decay_rate": 0.01,
        "exclude_from_weight_decay": ["LayerNorm", "layer_norm", "bias"]}


class BertProgram:
  """BERT's pre-training step as google-research/bert's `optimization.py`
  writes it in TF1 (the code itself no longer runs): per variable,
  `<name>/adam_m` and `<name>/adam_v` made by `get_variable`, Adam without
  bias correction and the decay inside the step for names no exclusion
  finds; `global_step` advanced by the loop; saved with `Saver`."""

  def __init__(self, initial):
    self.graph = tf.Graph()
    with self.graph.as_default():
      self.variables = [tf.compat.v1.get_variable(path, initializer=value)
                        for path, value in zip(BERT_PATHS, initial)]
      self.gradients = [tf.compat.v1.placeholder(tf.float32, v.shape)
                        for v in self.variables]
      global_step = tf.compat.v1.train.get_or_create_global_step()
      assignments = []
      for grad, param in zip(self.gradients, self.variables):
        name = param.op.name
        m, v = (tf.compat.v1.get_variable(
            f"{name}/{slot}", shape=param.shape, dtype=tf.float32,
            trainable=False, initializer=tf.zeros_initializer())
                for slot in ("adam_m", "adam_v"))
        next_m = tf.multiply(0.9, m) + tf.multiply(1.0 - 0.9, grad)
        next_v = (tf.multiply(0.999, v)
                  + tf.multiply(1.0 - 0.999, tf.square(grad)))
        update = next_m / (tf.sqrt(next_v) + 1e-6)
        if not any(re.search(r, name)
                   for r in BERT["exclude_from_weight_decay"]):
          update += BERT["weight_decay_rate"] * param
        assignments += [param.assign(param - BERT["learning_rate"] * update),
                        m.assign(next_m), v.assign(next_v)]
      self.train = tf.group(*assignments,
                            global_step.assign(global_step + 1))
      self.saver = tf.compat.v1.train.Saver()
      self.session = tf.compat.v1.Session(graph=self.graph)
      self.session.run(tf.compat.v1.global_variables_initializer())

  save, restore, steps = Tf1Program.save, Tf1Program.restore, Tf1Program.steps


def test_a_bert_checkpoint_continues_in_jax_and_back(tmp_path, capsys):
  """A BERT pre-training checkpoint (`<variable>/adam_m`, `adam_v`) reads
  into `jaxopt_port.tf1.adam_weight_decay`, which continues on the
  program's trajectory (from fresh state it parts); written back, the
  program restores it and continues on the port's."""
  transform = jaxopt_port.tf1.adam_weight_decay(**BERT)
  initial, gradients = problem(4)
  program = BertProgram(initial)
  program.steps(gradients[:K])
  first = program.save(tmp_path / "first")
  native = program.steps(gradients[K:K + N])
  last = program.save(tmp_path / "last")
  native_more = program.steps(gradients[K + N:])

  read_params, read_state = checkpoints.read(first, transform)
  assert sorted(read_params) == sorted(BERT_PATHS)
  assert int(read_state.iterations) == K
  from tf_bridge.checkpoints import __main__ as command  # pylint: disable=import-outside-toplevel
  assert command.main(["inspect", first]) == 0
  assert ("slots named by themselves (adam_m, adam_v) point to "
          "jaxopt_port.tf1.adam_weight_decay") in capsys.readouterr().out
  continued, params, state = port_steps(transform, read_params, read_state,
                                        gradients[K:K + N], BERT_PATHS)
  testing.compare_trajectories(continued, native, rtol=1e-5, atol=1e-6,
                               actual_name="port from BERT's file",
                               initial=initial)
  fresh, _, _ = port_steps(transform, read_params,
                           transform.init(read_params), gradients[K:K + N],
                           BERT_PATHS)
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(fresh, native, rtol=1e-5, atol=1e-6)

  checkpoints.write(str(tmp_path / "back"), params, state, transform,
                    like=last)
  restored = BertProgram(initial)
  restored.restore(tmp_path / "back")
  testing.compare_trajectories(restored.steps(gradients[K + N:]), native_more,
                               rtol=1e-5, atol=1e-6,
                               actual_name="BERT from the port's file")
  with pytest.raises(ValueError) as refused:  # Another TF1 optimizer's port.
    checkpoints.read(last, jaxopt_port.tf1.adam(0.01))
  assert "adam_m, adam_v" in str(refused.value)


def tf2_file(tmp_path, name, optimizer_arguments=None, steps=1):
  """A TF2 checkpoint of `name`'s native legacy optimizer after `steps`."""
  declaration = catalog.lookup(name)
  initial, gradients = problem(3)
  program = Tf2Program(declaration, initial)
  if optimizer_arguments is not None:
    program.optimizer = declaration.make_native(**optimizer_arguments)
    program.checkpoint = tf.train.Checkpoint(
        model=program.checkpoint.model, late=program.variables[2],
        optimizer=program.optimizer)
  program.steps(gradients[:steps])
  return program.checkpoint.write(str(tmp_path / name))


def test_momentum_slots_read_as_adam_are_refused_naming_both(tmp_path):
  path = tf2_file(tmp_path, "legacy.sgd")
  with pytest.raises(ValueError) as raised:
    checkpoints.read(path, catalog.lookup("legacy.adam").make_port())
  assert str(raised.value) == (
      f"{path!r} does not hold this transform's slots: missing m, v; extra "
      "momentum. Its slots (momentum) point to jaxopt_port.legacy.sgd, "
      "jaxopt_port.tf1.momentum, jaxopt_port.addons.sgdw, "
      "jaxopt_port.legacy.centered_momentum_sgd ....")


def test_tf1_momentum_slots_read_as_adam_are_refused_naming_the_class(
    tmp_path):
  program = Tf1Program(catalog.lookup("tf1.momentum"), problem(3)[0])
  path = program.save(tmp_path / "momentum")
  with pytest.raises(ValueError) as raised:
    checkpoints.read(path, catalog.lookup("tf1.adam").make_port())
  assert str(raised.value) == (
      f"{path!r} holds slots named 'Momentum' (e.g. 'dense/bias/Momentum'): "
      "they point to tensorflow.compat.v1.train.MomentumOptimizer (read it "
      "with jaxopt_port.tf1.momentum), and the transform's state has slots "
      "m, v and shared beta1_power, beta2_power.")
  with pytest.raises(ValueError, match="point to tensorflow.compat.v1.train"
                     ".MomentumOptimizer"):
    checkpoints.read(path, catalog.lookup("tf1.gradient_descent").make_port())


def test_a_tf1_optimizer_with_its_own_name_is_read(tmp_path):
  declaration = catalog.lookup("tf1.adam")
  initial, gradients = problem(4)
  program = Tf1Program(declaration, initial, name="Generator")
  program.steps(gradients[:K])
  path = program.save(tmp_path / "named")
  assert "dense/kernel/Generator_1" in dict(tf.train.list_variables(path))
  native = program.steps(gradients[K:K + N])
  transform = declaration.make_port(**arguments("tf1.adam"))
  continued, _, _ = port_steps(transform, *checkpoints.read(path, transform),
                               gradients[K:K + N], TF1_PATHS)
  testing.compare_trajectories(continued, native, rtol=1e-5, atol=1e-6)


def test_what_is_no_checkpoint_is_refused(tmp_path):
  with pytest.raises(FileNotFoundError, match=(
      f"'{tmp_path}/nothing' is not a TensorFlow checkpoint: expected the "
      "prefix of one")):
    checkpoints.read(str(tmp_path / "nothing"), catalog.lookup(
        "legacy.adam").make_port())
  with pytest.raises(FileNotFoundError, match="is a directory without a "
                     "`checkpoint` file"):
    checkpoints.read(str(tmp_path), catalog.lookup("legacy.adam").make_port())


def test_a_truncated_checkpoint_is_refused(tmp_path):
  path = tf2_file(tmp_path, "legacy.adam")
  data = path + ".data-00000-of-00001"
  with open(data, "r+b") as file:
    file.truncate(os.path.getsize(data) // 2)
  with pytest.raises(ValueError, match="is not a readable TensorFlow "
                     "checkpoint \\(truncated or damaged\\?\\)"):
    checkpoints.read(path, catalog.lookup("legacy.adam").make_port())


def test_write_leaves_nothing_on_failure_and_never_touches_like(tmp_path):
  path = tf2_file(tmp_path, "legacy.adam")
  transform = catalog.lookup("legacy.adam").make_port(
      **arguments("legacy.adam"))
  params, state = checkpoints.read(path, transform)
  before = {name: open(name, "rb").read()
            for name in (path + ".index", path + ".data-00000-of-00001")}
  wrong = {**params, "late": np.zeros(5, np.float32)}
  with pytest.raises(ValueError, match=(
      r"params\['late'\] has shape \(5,\), and 'late/.ATTRIBUTES/"
      r"VARIABLE_VALUE' of '.*' \(4,\)\.")):
    checkpoints.write(str(tmp_path / "out"), wrong, state, transform,
                      like=path)
  with pytest.raises(ValueError, match=r"params do not have the variables of "
                     r".*: missing \['late'\], extra none\."):
    checkpoints.write(str(tmp_path / "out"),
                      {k: v for k, v in params.items() if k != "late"},
                      state, transform, like=path)
  assert sorted(os.listdir(tmp_path)) == sorted(
      os.path.basename(name) for name in before)
  checkpoints.write(str(tmp_path / "copy"), params, state, transform,
                    like=path)
  assert {name: open(name, "rb").read() for name in before} == before
  for name in before:  # The copy replaces nothing of `like`'s.
    os.remove(name.replace(path, str(tmp_path / "copy")))
  checkpoints.write(path, params, state, transform, like=path)
  assert sorted(os.listdir(tmp_path)) == sorted(
      os.path.basename(name) for name in before)


def test_a_slot_like_lacks_is_written_only_if_fresh(tmp_path):
  declaration = catalog.lookup("legacy.adam")
  initial, gradients = problem(5)
  program = Tf2Program(declaration, initial)
  program.steps(gradients[:K], trained=2)
  first = program.checkpoint.write(str(tmp_path / "first"))
  transform = declaration.make_port(**arguments("legacy.adam"))
  params, state = checkpoints.read(first, transform)
  checkpoints.write(str(tmp_path / "same"), params, state, transform,
                    like=first)
  _, params, state = port_steps(transform, params, state, gradients[K:])
  with pytest.raises(ValueError, match=(
      f"'{first}' has no slot m of variable 'late' \\(its variable had no "
      "gradient yet when it was saved\\)")):
    checkpoints.write(str(tmp_path / "out"), params, state, transform,
                      like=first)


def test_a_tf_keras_model_checkpoint_reads_as_its_live_optimizer(tmp_path):
  """Real layouts: tf_keras `fit` with `ModelCheckpoint` (TF format), and a
  `CheckpointManager` directory; the file's state equals the live
  optimizer's (`state_from_keras`), its variables the model's."""
  import tf_keras  # pylint: disable=import-outside-toplevel
  import tf_bridge  # pylint: disable=import-outside-toplevel
  model = tf_keras.Sequential([tf_keras.layers.Dense(3, input_shape=(2,)),
                               tf_keras.layers.Dense(1)])
  model.compile(tf_keras.optimizers.legacy.Adam(0.1, amsgrad=True), "mse")
  data = np.random.default_rng(6).standard_normal((8, 2)).astype(np.float32)
  saved = str(tmp_path / "fit" / "weights")
  model.fit(data, data[:, :1], epochs=2, batch_size=4, verbose=0,
            callbacks=[tf_keras.callbacks.ModelCheckpoint(
                saved, save_weights_only=True)])
  transform = catalog.lookup("legacy.adam").make_port(
      learning_rate=0.1, amsgrad=True)
  params, state = checkpoints.read(saved, transform)
  names = [f"layer_with_weights-{i}/{attribute}" for i in range(2)
           for attribute in ("kernel", "bias")]
  assert list(params) == sorted(names)
  live = tf_bridge.state_from_keras(model.optimizer, model.trainable_variables)
  for index, name in enumerate(names):
    np.testing.assert_array_equal(params[name],
                                  model.trainable_variables[index].numpy())
    for slot in ("m", "v", "vhat"):
      np.testing.assert_array_equal(getattr(state.slots, slot)[name],
                                    getattr(live.slots, slot)[index])
  assert int(state.iterations) == int(live.iterations) == 4

  manager = tf.train.CheckpointManager(
      tf.train.Checkpoint(model=model, optimizer=model.optimizer),
      str(tmp_path / "managed"), max_to_keep=2)
  manager.save()
  model.fit(data, data[:, :1], epochs=1, batch_size=4, verbose=0)
  manager.save()
  _, latest = checkpoints.read(str(tmp_path / "managed"), transform)
  assert int(latest.iterations) == 6


def test_the_command_inspects_and_converts_tf1_to_jax_and_back(tmp_path,
                                                                capsys):
  from tf_bridge.checkpoints import __main__ as command  # pylint: disable=import-outside-toplevel
  declaration = catalog.lookup("tf1.adam")
  initial, gradients = problem(7)
  program = Tf1Program(declaration, initial)
  program.steps(gradients[:K])
  path = program.save(tmp_path / "tf1")
  native = program.steps(gradients[K:])

  assert command.main(["inspect", path]) == 0
  stored = tf.train.load_checkpoint(path)
  assert capsys.readouterr().out == (
      f"checkpoint: {path}\n"
      "dialect: TF1 name-based (Saver)\n"
      "slots named 'Adam' point to tensorflow.compat.v1.train.AdamOptimizer "
      "(read it with jaxopt_port.tf1.adam)\n"
      "variables:\n"
      "  dense/bias [3] float32: slots Adam, Adam_1\n"
      "  dense/kernel [2, 3] float32: slots Adam, Adam_1\n"
      "  late [4] float32: slots Adam, Adam_1\n"
      "counters:\n"
      f"  global_step = {K}\n"
      "optimizer's own:\n"
      f"  beta1_power = {stored.get_tensor('beta1_power').tolist()}\n"
      f"  beta2_power = {stored.get_tensor('beta2_power').tolist()}\n")
  orbax_path = str(tmp_path / "jax")
  assert command.main(["convert", path, orbax_path, "--optimizer", "tf1.adam",
                       "--arguments", '{"learning_rate": 0.01}',
                       "--to", "orbax"]) == 0
  transform = declaration.make_port()
  params, state = checkpoints.read(orbax_path, transform)
  continued, params, state = port_steps(transform, params, state,
                                        gradients[K:K + N], TF1_PATHS)
  testing.compare_trajectories(continued, native[:N], rtol=1e-5, atol=1e-6)

  checkpoints.write_orbax(orbax_path + "-later", params, state)
  tf1_path = str(tmp_path / "back" / "model.ckpt")
  assert command.main(["convert", orbax_path + "-later", tf1_path,
                       "--optimizer", "tf1.adam", "--to", "tf1"]) == 0
  restored = Tf1Program(declaration, [np.zeros_like(v) for v in initial])
  restored.restore(tf1_path)
  testing.compare_trajectories(restored.steps(gradients[K + N:]), native[N:],
                               rtol=1e-5, atol=1e-6)


def test_the_command_names_what_it_cannot_do(tmp_path, capsys):
  from tf_bridge.checkpoints import __main__ as command  # pylint: disable=import-outside-toplevel
  path = tf2_file(tmp_path, "legacy.adam")
  with pytest.raises(SystemExit) as exited:
    command.main(["convert", path, str(tmp_path / "out"), "--optimizer",
                  "legacy.adam", "--arguments", '{"amsgrad": true}',
                  "--to", "tf1"])
  assert exited.value.code == 2
  assert capsys.readouterr().err == (
      "python -m tf_bridge.checkpoints: error: No TF1 optimizer keeps slots "
      "m, v, vhat: a TF1 Saver file holds the slots of a tf.compat.v1.train "
      "optimizer; read it with that optimizer's port "
      "(jaxopt_port.tf1.<name>).\n")
  assert not os.path.exists(tmp_path / "out.index")


def assert_restore_continues(continued, expected, actual_name, expected_name):
  """The run `continued(False)` resumes after a restore on `expected`, and
  `continued(True)`, with a fresh optimizer instead, parts from it: what the
  restore carried decides the trajectory."""
  testing.compare_trajectories(continued(False), expected, rtol=1e-5,
                               atol=1e-6, actual_name=actual_name,
                               expected_name=expected_name)
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(continued(True), expected, rtol=1e-5,
                                 atol=1e-6)


def keras3_model(name, initial=None):
  """Dense(3), Dense(1) on 2 inputs, starting from `initial` or from fixed
  weights: a control's parting must not depend on a random start (Lion
  steps by a sign, and from some starts a reset momentum gives the same
  signs for the control's steps)."""
  import keras  # pylint: disable=import-outside-toplevel
  model = keras.Sequential([keras.Input((2,)),
                            keras.layers.Dense(3, name="dense"),
                            keras.layers.Dense(1, name="dense_1")],
                           name=name)
  if initial is None:
    rng = np.random.default_rng(0)
    initial = [rng.standard_normal(w.shape).astype(np.float32) * 0.5
               for w in model.get_weights()]
  model.set_weights(initial)
  return model


def model_steps(model, apply, data, steps):
  """Steps of a model on mean squared error, each on its own batch; the
  weights after each."""
  trajectory = []
  for step in range(steps):
    inputs = data[4 * step:4 * step + 4]
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((model(inputs) - inputs[:, :1]) ** 2)
    variables = model.trainable_variables
    apply(tape.gradient(loss, variables), variables)
    trajectory.append([np.array(v) for v in model.get_weights()])
  return trajectory


@pytest.mark.parametrize("bridged", [False, True], ids=["native", "bridged"])
def test_a_tf_keras_checkpoint_restores_into_keras3(bridged, tmp_path):
  """tf_keras `save_weights` (legacy Adam with AMSGrad, which Keras 3
  refuses to restore) into a Keras 3 model with Keras 3's Adam, native or
  bridged: it continues as tf_keras does (the two Adams compute the same)."""
  import keras  # pylint: disable=import-outside-toplevel
  import tf_keras  # pylint: disable=import-outside-toplevel
  import tf_bridge  # pylint: disable=import-outside-toplevel
  data = np.random.default_rng(8).standard_normal((40, 2)).astype(np.float32)
  legacy_model = tf_keras.Sequential([
      tf_keras.layers.Dense(3, input_shape=(2,)), tf_keras.layers.Dense(1)])
  # A fixed start (a random one can leave a weight near 0, where the two
  # Adams' roundings part by more than atol: CI saw 1.3e-6 once).
  legacy_model.set_weights(keras3_model("start").get_weights())
  legacy_optimizer = tf_keras.optimizers.legacy.Adam(0.1, amsgrad=True)
  apply_legacy = lambda g, v: legacy_optimizer.apply_gradients(zip(g, v))
  model_steps(legacy_model, apply_legacy, data, K)
  legacy_model.optimizer = legacy_optimizer
  saved = str(tmp_path / "weights")
  legacy_model.save_weights(saved)
  expected = model_steps(legacy_model, apply_legacy, data[4 * K:], N)

  model = keras3_model("restored")
  optimizer = (tf_bridge.Adam if bridged else keras.optimizers.Adam)(
      0.1, amsgrad=True)
  checkpoints.restore(saved, model, optimizer)
  assert int(optimizer.iterations) == K
  continued = model_steps(model, optimizer.apply, data[4 * K:], N)
  testing.compare_trajectories(continued, expected, rtol=1e-5, atol=1e-6,
                               actual_name="Keras 3 after restore",
                               expected_name="tf_keras")
  again = keras3_model("again")
  before = again.get_weights()
  with pytest.raises(ValueError, match="Adam keeps no velocity_hat for "
                     "again/dense/kernel"):
    checkpoints.restore(saved, again, keras.optimizers.Adam(0.1))
  # Refused before anything was assigned: the model is as it was.
  for weight, value in zip(again.get_weights(), before):
    np.testing.assert_array_equal(weight, value)


@pytest.mark.parametrize("name,saved_by", [
    ("adam", "checkpoint"), ("rmsprop", "save_weights"), ("nadam", "checkpoint"),
    ("adafactor", "checkpoint")])
def test_a_tf_keras_2_11_checkpoint_restores_into_keras3(name, saved_by,
                                                         tmp_path):
  """A tf_keras 2.11+ optimizer's file (`tf.train.Checkpoint` or
  `save_weights`; its variables by position) into a Keras 3 model and
  Keras 3's optimizer (every slot: amsgrad, momentum and centered, Nadam's
  momentum product, Adafactor's factored moments): it continues as tf_keras
  would; a fresh optimizer (the weights alone) parts."""
  import keras  # pylint: disable=import-outside-toplevel
  source = catalog.lookup("tf_keras." + name)
  options = {**source.every_slot_arguments, "learning_rate": 0.05}
  data = np.random.default_rng(23).standard_normal((40, 2)).astype(
      np.float32)
  model = tf_keras_model()
  optimizer = source.make_native(**options)
  apply = lambda grads, variables: optimizer.apply_gradients(
      zip(grads, variables))
  model_steps(model, apply, data, K)
  if saved_by == "save_weights":
    model.optimizer = optimizer
    model.save_weights(str(tmp_path / "weights"))
    saved = str(tmp_path / "weights")
  else:
    saved = tf.train.Checkpoint(model=model, optimizer=optimizer).write(
        str(tmp_path / "run"))
  expected = model_steps(model, apply, data[4 * K:], N)

  def continued(fresh):
    target = keras3_model(f"from_tf_keras_{name}_{fresh}")
    make = getattr(keras.optimizers, source.class_name)
    keras_optimizer = make(**options)
    checkpoints.restore(saved, target, keras_optimizer)
    assert int(keras_optimizer.iterations) == K
    if fresh:
      keras_optimizer = make(**options)
    return model_steps(target, keras_optimizer.apply, data[4 * K:], N)

  assert_restore_continues(continued, expected, "Keras 3 after restore",
                           "tf_keras")


def test_a_keras3_optimizers_own_checkpoint_is_left_to_keras3(tmp_path):
  """`restore` is for other generations: a TF2 checkpoint of a Keras 3
  optimizer (it tracks the model's variables) is refused, saying Keras 3
  restores it itself; `inspect` names its writer."""
  import keras  # pylint: disable=import-outside-toplevel
  from tf_bridge.checkpoints import __main__ as command  # pylint: disable=import-outside-toplevel
  model = keras3_model("keras3_own")
  optimizer = keras.optimizers.Adam(0.1)
  optimizer.build(model.trainable_variables)
  saved = tf.train.Checkpoint(optimizer=optimizer).write(
      str(tmp_path / "own"))
  with pytest.raises(ValueError, match="holds a Keras 3 optimizer, of the "
                     "same generation: Keras 3 restores it itself"):
    checkpoints.restore(saved, keras3_model("keras3_own_target"),
                        keras.optimizers.Adam(0.1))
  assert "(a Keras 3 optimizer: read and convert it with its model" in (
      command.listing(saved))


def test_a_tf1_saver_file_restores_into_keras3(tmp_path):
  """A TF1 program's Adam (tf.compat.v1.layers) into Keras 3's Adam: the
  names map by path without the model's name, `global_step` is the count,
  and the run continues on TF1's trajectory."""
  import keras  # pylint: disable=import-outside-toplevel
  declaration = catalog.lookup("tf1.adam")
  initial, gradients = problem(9)
  program = Tf1Program(declaration, initial)
  program.steps(gradients[:K])
  path = program.save(tmp_path / "tf1")
  native = program.steps(gradients[K:K + N])

  model = keras.Sequential([keras.Input((2,)),
                            keras.layers.Dense(3, name="dense")],
                           name="sequential")
  optimizer = keras.optimizers.Adam(0.01)
  checkpoints.restore(path, model, optimizer)
  trajectory = []
  for grads in gradients[K:K + N]:
    optimizer.apply([tf.constant(g) for g in grads[:2]],
                    model.trainable_variables)
    trajectory.append([v.numpy() for v in model.trainable_variables])
  testing.compare_trajectories(trajectory, [step[:2] for step in native],
                               rtol=1e-5, atol=1e-6,
                               actual_name="Keras 3 after restore",
                               expected_name="TF1")
  with pytest.raises(ValueError, match=(
      "holds no value for the model's renamed/dense_1/kernel, "
      "renamed/dense_1/bias \\(its variables: dense/bias, dense/kernel, "
      "late\\): pass an assignment_map.")):
    checkpoints.restore(path, keras3_model("renamed"),
                        keras.optimizers.Adam(0.01))
  moved = keras.Sequential([keras.Input((2,)),
                            keras.layers.Dense(3, name="head")], name="m")
  checkpoints.restore(path, moved, keras.optimizers.Adam(0.01),
                      assignment_map={"dense/": "m/head/"})
  np.testing.assert_array_equal(moved.get_weights()[0],
                                tf.train.load_checkpoint(path).get_tensor(
                                    "dense/kernel"))


# Pairs whose algorithms differ in their arithmetic though their state
# means the same: Keras 3's Nadam parts from legacy Nadam from the first step
# of a fresh run (6e-5 after one step, 3e-3 after six on unit gradients), so
# only the restored state is compared there.
COMPUTED_OTHERWISE = {("nadam", "legacy.nadam")}
RESTORE_CASES = [(d.name, source) for d in catalog.CATALOG
                 if d.generation == catalog.KERAS
                 for source in d.same_state]


@pytest.mark.parametrize("target,source", RESTORE_CASES)
def test_every_generation_pair_restores_its_slots_and_continues(
    target, source, tmp_path):
  """Each pair of the catalog's `same_state`: the writer's TF2 (legacy) or
  TF1 Saver file into Keras 3's class, made with the same arguments. The
  Keras 3 optimizer's slots are the file's, mapped, and it continues on the
  writer's trajectory."""
  import keras  # pylint: disable=import-outside-toplevel
  writer = catalog.lookup(source)
  initial, gradients = problem(10)
  if writer.generation == catalog.TF1:
    program = Tf1Program(writer, initial)
    program.steps(gradients[:K])
    path = program.save(tmp_path / "file")
    scope = "dense/"
  else:
    program = Tf2Program(writer, initial)
    program.steps(gradients[:K])
    path = program.checkpoint.write(str(tmp_path / "file"))
    scope = "model/dense/"
  native = program.steps(gradients[K:K + N])
  model = keras.Sequential([keras.Input((2,)),
                            keras.layers.Dense(3, name="dense")], name="m")
  declaration = catalog.lookup(target)
  # The writer's arguments (its defaults included), by Keras 3's names
  # (TF1's `decay` is RMSprop's `rho`; legacy's is a learning-rate decay).
  renamed = {"beta1": "beta_1", "beta2": "beta_2"}
  if writer.generation == catalog.TF1:
    renamed["decay"] = "rho"
  taken = inspect.signature(declaration.native_class()).parameters
  written = {**{p.name: p.default for p in inspect.signature(
      writer.port).parameters.values() if p.default is not p.empty},
             **arguments(source)}
  optimizer = declaration.make_native(**{
      renamed.get(k, k): v for k, v in written.items()
      if renamed.get(k, k) in taken})
  checkpoints.restore(path, model, optimizer,
                      assignment_map={scope: "m/dense/"})
  import tf_bridge  # pylint: disable=import-outside-toplevel
  restored = tf_bridge.state_from_keras(optimizer, model.trainable_variables)
  _, written = checkpoints.read(path, writer.make_port(**arguments(source)))
  names = [scope + "kernel", scope + "bias"]
  for slot, own in declaration.same_state[source].items():
    kept = getattr(written.slots, slot)
    for index, name in enumerate(names):
      if isinstance(kept, dict):
        np.testing.assert_array_equal(getattr(restored.slots, own)[index],
                                      kept[name])
      else:
        np.testing.assert_array_equal(getattr(restored.slots, own), kept)
  assert int(restored.iterations) == int(written.iterations) == K
  trajectory = []
  for grads in gradients[K:K + N]:
    optimizer.apply([tf.constant(g) for g in grads[:2]],
                    model.trainable_variables)
    trajectory.append([v.numpy() for v in model.trainable_variables])
  if (target, source) in COMPUTED_OTHERWISE:
    return
  testing.compare_trajectories(trajectory, [step[:2] for step in native],
                               rtol=1e-5, atol=1e-6,
                               actual_name=f"Keras 3 {target} after restore",
                               expected_name=source)


KERAS3_CASES = [d.name for d in catalog.CATALOG
                if d.generation == catalog.KERAS]
# TF1's and TF Addons' optimizers on Keras 3 (`tf_bridge.tf1.Adam`,
# `tf_bridge.addons.LazyAdam`): the bridged classes write the files.
KERAS3_HOSTED_CASES = [d.name for d in catalog.CATALOG
                       if d.generation in (catalog.TF1, catalog.ADDONS)]


def port_model_steps(model, transform, params, state, data, names=None):
  """N port steps on `model`'s gradients (its variables take the params,
  keyed by `names`, by default the variables' paths)."""
  variables = model.trainable_variables
  names = names or [v.path for v in variables]
  trajectory = []
  for step in range(N):
    for variable, name in zip(variables, names):
      variable.assign(params[name])
    inputs = data[4 * step:4 * step + 4]
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((model(inputs) - inputs[:, :1]) ** 2)
    grads = tape.gradient(loss, variables)
    updates, state = transform.update(
        {name: g.numpy() for name, g in zip(names, grads)}, state, params)
    params = optax.apply_updates(params, updates)
    trajectory.append([np.asarray(params[name]) for name in names])
  return trajectory, params, state


def keras3_writer(declaration, **kwargs):
  """The native Keras 3 class, or the bridged one where Keras has none on
  TensorFlow (the classics; ScheduleFreeAdamW's TensorFlow backend is the
  defective one, docs/known-differences.md)."""
  kwargs = {**declaration.required, **kwargs}
  if (declaration.generation == catalog.KERAS and declaration.has_native
      and declaration.native_backend == "tensorflow"):
    return declaration.make_native(**kwargs)
  return getattr(importlib.import_module(declaration.bridge_path),
                 declaration.class_name)(**kwargs)


@pytest.mark.parametrize("name", KERAS3_CASES + KERAS3_HOSTED_CASES)
def test_a_keras3_file_continues_in_jax(name, tmp_path):
  """A Keras 3 model's `.weights.h5` (and `.keras`) with every Keras 3
  optimizer, and TF1's and TF Addons' on Keras 3, every slot: read with the
  model, the port continues as the model's optimizer does."""
  declaration = catalog.lookup(name)
  every = declaration.every_slot_arguments
  data = np.random.default_rng(11).standard_normal((40, 2)).astype(
      np.float32)
  model = keras3_model(f"writer_{name}")
  optimizer = keras3_writer(declaration, **{**every,
                                            **ARGUMENTS.get(name, {})})
  model.compile(optimizer=optimizer)
  model_steps(model, optimizer.apply, data, K)
  saved = str(tmp_path / "run.weights.h5")
  model.save_weights(saved)
  expected = model_steps(model, optimizer.apply, data[4 * K:], N)

  reader = keras3_model(f"reader_{name}")
  transform = declaration.make_port(**{**every, **ARGUMENTS.get(name, {})})
  params, state = checkpoints.read(saved, transform, model=reader)
  assert list(params) == [v.path for v in reader.trainable_variables]
  fresh, _, _ = port_model_steps(reader, transform, params,
                                 transform.init(params), data[4 * K:])
  continued, params, state = port_model_steps(reader, transform, params,
                                              state, data[4 * K:])
  testing.compare_trajectories(continued, [[s[i] for i in range(4)]
                                           for s in expected],
                               rtol=1e-5, atol=1e-6,
                               actual_name="port from the Keras 3 file")
  # Back: the port's state into the file, which the Keras 3 program loads
  # and continues from; a fresh state written so parts from it.
  later = model_steps(model, optimizer.apply, data[4 * (K + N):], N)
  written = str(tmp_path / "back.weights.h5")
  checkpoints.write(written, params, state, transform, like=saved,
                    model=reader)
  loaded = keras3_model(f"loaded_{name}")
  loaded_optimizer = keras3_writer(declaration, **{
      **every, **ARGUMENTS.get(name, {})})
  loaded.compile(optimizer=loaded_optimizer)
  loaded_optimizer.build(loaded.trainable_variables)
  loaded.load_weights(written)
  testing.compare_trajectories(
      model_steps(loaded, loaded_optimizer.apply, data[4 * (K + N):], N),
      later, rtol=1e-5, atol=1e-6, actual_name="Keras 3 from the port's file")
  # The control, unless the state is never read (VanillaSGD's count).
  if not all(np.array_equal(a, b) for got, want in zip(fresh, continued)
             for a, b in zip(got, want)):
    checkpoints.write(written, params, transform.init(params), transform,
                      like=saved, model=reader)
    loaded.load_weights(written)
    with pytest.raises(AssertionError, match="part at step"):
      testing.compare_trajectories(
          model_steps(loaded, loaded_optimizer.apply, data[4 * (K + N):], N),
          later, rtol=1e-5, atol=1e-6)
  if name == "adam":
    model.save(str(tmp_path / "run.keras"))
    again = keras3_model("again")
    _, from_keras = checkpoints.read(str(tmp_path / "run.keras"), transform,
                                     model=again)
    assert int(from_keras.iterations) == K + 2 * N
    with pytest.raises(ValueError, match="holds a Keras 3 optimizer, which "
                       "keeps its variables by position: pass the model it "
                       "was saved from as model="):
      checkpoints.read(saved, transform)
    with pytest.raises(ValueError, match="holds 14 optimizer variables, and "
                       "keras's Adam keeps 10"):
      checkpoints.read(saved, declaration.make_port(), model=again)
    # A param of another shape is refused by name, before the model takes
    # any param.
    before = [np.asarray(v.numpy()) for v in reader.trainable_variables]
    wrong = dict(params)
    last = list(wrong)[-1]
    wrong[last] = np.zeros((7,), np.float32)
    with pytest.raises(ValueError, match=re.escape(
        f"params[{last!r}] has shape (7,), and the model's variable has "
        f"shape {tuple(params[last].shape)}.")):
      checkpoints.write(str(tmp_path / "wrong.weights.h5"), wrong, state,
                        transform, like=saved, model=reader)
    assert all(np.array_equal(a, np.asarray(v.numpy())) for a, v in zip(
        before, reader.trainable_variables))
    assert not (tmp_path / "wrong.weights.h5").exists()


def test_the_command_carries_a_tf_keras_file_through_jax_and_back(tmp_path,
                                                                   capsys):
  """legacy file -> orbax -> the JAX run's later state -> `--to legacy
  --like` the program's file: the program restores it and continues on the
  JAX run's trajectory; `--to legacy` without `--like` and `--to keras3`
  say why they cannot."""
  from tf_bridge.checkpoints import __main__ as command  # pylint: disable=import-outside-toplevel
  declaration = catalog.lookup("legacy.adam")
  initial, gradients = problem(12)
  program = Tf2Program(declaration, initial)
  program.steps(gradients[:K])
  path = program.checkpoint.write(str(tmp_path / "run"))
  assert command.main(["inspect", path]) == 0
  listing = capsys.readouterr().out
  assert ("dialect: TF2 object-based; optimizer at 'optimizer'\n"
          "its slots (m, v, vhat) point to jaxopt_port.legacy.adam, "
          "jaxopt_port.addons.adabelief, jaxopt_port.addons.adamw, "
          "jaxopt_port.addons.lazy_adam ...\n") in listing
  assert "  late [4] float32: slots m, v, vhat\n" in listing
  assert f"counters:\n  iterations = {K}\n" in listing
  flags = ["--optimizer", "legacy.adam", "--arguments",
           '{"amsgrad": true, "beta_2": 0.5, "learning_rate": 0.1}']
  assert command.main(["convert", path, str(tmp_path / "jax"), *flags,
                       "--to", "orbax"]) == 0
  transform = declaration.make_port(**arguments("legacy.adam"))
  params, state = checkpoints.read(str(tmp_path / "jax"), transform)
  _, params, state = port_steps(transform, params, state,
                                gradients[K:K + N])
  expected, _, _ = port_steps(transform, params, state, gradients[K + N:])
  checkpoints.write_orbax(str(tmp_path / "jax-later"), params, state)
  like = program.checkpoint.write(str(tmp_path / "like"))
  assert command.main(["convert", str(tmp_path / "jax-later"),
                       str(tmp_path / "back"), *flags, "--to", "legacy",
                       "--like", like]) == 0
  restored = Tf2Program(declaration, [np.zeros_like(v) for v in initial])
  restored.checkpoint.read(str(tmp_path / "back")).expect_partial()
  testing.compare_trajectories(restored.steps(gradients[K + N:]), expected,
                               rtol=1e-5, atol=1e-6)
  capsys.readouterr()
  for to, reason in (("legacy", "give --like"),
                     ("keras3", "and --model (a function returning its "
                      "model)")):
    with pytest.raises(SystemExit):
      command.main(["convert", path, str(tmp_path / to), *flags, "--to", to])
    assert reason in capsys.readouterr().err


@pytest.mark.parametrize("name", ["adam", "rmsprop"])
def test_a_keras3_optimizer_in_a_tf_checkpoint_continues_in_jax_and_back(
    name, tmp_path):
  """Keras 3 on TensorFlow saved with `tf.train.Checkpoint(optimizer=...)`
  (a custom loop's `CheckpointManager`): the optimizer's variables by
  position, the model's as the optimizer's `_trainable_variables`."""
  declaration = catalog.lookup(name)
  options = {**declaration.every_slot_arguments, **ARGUMENTS.get(name, {})}
  data = np.random.default_rng(13).standard_normal((40, 2)).astype(
      np.float32)
  model = keras3_model(f"object_{name}")
  optimizer = declaration.make_native(**options)
  model_steps(model, optimizer.apply, data, K)
  manager = tf.train.CheckpointManager(
      tf.train.Checkpoint(optimizer=optimizer), str(tmp_path / "run"), 3)
  saved = manager.save()
  expected = model_steps(model, optimizer.apply, data[4 * K:], N)
  later = model_steps(model, optimizer.apply, data[4 * (K + N):], N)

  reader = keras3_model(f"object_reader_{name}")
  transform = declaration.make_port(**options)
  params, state = checkpoints.read(str(tmp_path / "run"), transform,
                                   model=reader)
  assert int(state.iterations) == K
  continued, params, state = port_model_steps(reader, transform, params,
                                              state, data[4 * K:])
  testing.compare_trajectories(continued, [s[:4] for s in expected],
                               rtol=1e-5, atol=1e-6,
                               actual_name="port from the TF checkpoint")
  checkpoints.write(str(tmp_path / "back"), params, state, transform,
                    like=saved, model=reader)
  loaded_model = keras3_model(f"object_loaded_{name}")
  loaded = declaration.make_native(**options)
  loaded.build(loaded_model.trainable_variables)
  tf.train.Checkpoint(optimizer=loaded).read(
      str(tmp_path / "back")).expect_partial()
  testing.compare_trajectories(
      model_steps(loaded_model, loaded.apply, data[4 * (K + N):], N), later,
      rtol=1e-5, atol=1e-6, actual_name="Keras 3 from the port's file")
  with pytest.raises(ValueError, match="holds a Keras 3 optimizer, which "
                     "keeps its variables by position: pass the model"):
    checkpoints.read(saved, transform)


def tf_keras_model():
  """keras3_model's model and start, in tf_keras."""
  model = tf_keras.Sequential([tf_keras.Input((2,)),
                               tf_keras.layers.Dense(3),
                               tf_keras.layers.Dense(1)])
  model.set_weights(keras3_model("tf_keras_start").get_weights())
  return model


TF_KERAS_CASES = [d.name for d in catalog.CATALOG
                  if d.generation == catalog.TF_KERAS]


@pytest.mark.parametrize("name", TF_KERAS_CASES)
def test_a_tf_keras_optimizer_checkpoint_continues_in_jax_and_back(
    name, tmp_path):
  """tf_keras's 2.11+ optimizers (`tf_keras.optimizers.Adam`, ...), which
  keep their variables by position, in `tf.train.Checkpoint(model=...,
  optimizer=...)` files (`model.save_weights` for Adam: the model at the
  root): `read` with the tf_keras model gives the params by object path
  (`model/layer_with_weights-0/kernel`) and the port's state, which
  continues as tf_keras does; `write` makes the file tf_keras restores and
  continues the port's trajectory from; the state reset (a control)
  parts."""
  declaration = catalog.lookup(name)
  options = {**declaration.every_slot_arguments, **ARGUMENTS.get(
      name.partition(".")[2], {})}
  if name in ("tf_keras.adadelta",):
    options["learning_rate"] = 1.0
  data = np.random.default_rng(21).standard_normal((40, 2)).astype(
      np.float32)

  def apply_with(optimizer):
    return lambda grads, variables: optimizer.apply_gradients(
        zip(grads, variables))

  model = tf_keras_model()
  optimizer = declaration.make_native(**options)
  model_steps(model, apply_with(optimizer), data, K)
  if name == "tf_keras.adam":
    model.optimizer = optimizer
    model.save_weights(str(tmp_path / "weights"))
    saved, prefix = str(tmp_path / "weights"), ""
  else:
    saved = tf.train.Checkpoint(model=model, optimizer=optimizer).write(
        str(tmp_path / "run"))
    prefix = "model/"
  expected = model_steps(model, apply_with(optimizer), data[4 * K:], N)
  later = model_steps(model, apply_with(optimizer), data[4 * (K + N):], N)

  reader = tf_keras_model()
  transform = declaration.make_port(**options)
  params, state = checkpoints.read(saved, transform, model=reader)
  names = [f"{prefix}layer_with_weights-{i}/{w}" for i in (0, 1)
           for w in ("kernel", "bias")]
  assert sorted(params) == sorted(names) and int(state.iterations) == K
  continued, params, state = port_model_steps(reader, transform, params,
                                              state, data[4 * K:], names)
  testing.compare_trajectories(continued, [s[:4] for s in expected],
                               rtol=1e-5, atol=1e-6,
                               actual_name="port from the tf_keras file")
  fresh, _, _ = port_model_steps(tf_keras_model(), transform,
                                 *checkpoints.read(saved, transform,
                                                   model=tf_keras_model())[:1],
                                 transform.init(params), data[4 * K:], names)
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(fresh, [s[:4] for s in expected],
                                 rtol=1e-5, atol=1e-6)
  checkpoints.write(str(tmp_path / "back"), params, state, transform,
                    like=saved, model=reader)
  loaded_model = tf_keras_model()
  loaded = declaration.make_native(**options)
  loaded.build(loaded_model.trainable_variables)
  root = ({"model": loaded_model} if prefix else
          {"layer_with_weights-0": loaded_model.layers[0],
           "layer_with_weights-1": loaded_model.layers[1]})
  tf.train.Checkpoint(optimizer=loaded, **root).read(
      str(tmp_path / "back")).expect_partial()
  if name == "tf_keras.nadam":
    # tf_keras's Nadam counts its momentum product's updates in Python,
    # which no file holds: restored from any checkpoint (its own too) it
    # multiplies the product again until that count catches up. Set as the
    # uninterrupted optimizer has it.
    loaded._u_product_counter = K + N + 1  # pylint: disable=protected-access
  testing.compare_trajectories(
      model_steps(loaded_model, apply_with(loaded), data[4 * (K + N):], N),
      later, rtol=1e-5, atol=1e-6, actual_name="tf_keras from the port's file")


def test_a_count_the_file_lacks_is_refused_where_the_step_reads_it(
    tmp_path):
  """A TF1 program that saved no `global_step`: AdagradDA's step is that
  count, so its file is refused with the reason; Adam's keeps its bias
  correction in `beta1_power`, so its file reads."""
  initial, gradients = problem(14)
  for name, readable in (("tf1.adagrad_da", False), ("tf1.adam", True)):
    declaration = catalog.lookup(name)
    program = Tf1Program(declaration, initial)
    program.steps(gradients[:K])
    with program.graph.as_default():
      saver = tf.compat.v1.train.Saver(
          [v for v in tf.compat.v1.global_variables()
           if v.op.name != "global_step"])
      path = saver.save(program.session, str(tmp_path / name))
    assert "global_step" not in dict(tf.train.list_variables(path))
    transform = declaration.make_port(**arguments(name))
    if readable:
      native = program.steps(gradients[K:])
      continued, _, _ = port_steps(transform,
                                   *checkpoints.read(path, transform),
                                   gradients[K:], TF1_PATHS)
      testing.compare_trajectories(continued, native, rtol=1e-5, atol=1e-6)
    else:
      with pytest.raises(ValueError, match=(
          "holds no step count \\(TF1 keeps it only as `global_step`, which "
          "this program did not save\\), and this optimizer's step depends "
          "on it")):
        checkpoints.read(path, transform)
  import keras  # pylint: disable=import-outside-toplevel
  with pytest.raises(ValueError, match="holds no step count .*, and Keras "
                     "3's Adam reads its count"):
    checkpoints.restore(str(tmp_path / "tf1.adam"), keras.Sequential(
        [keras.Input((2,)), keras.layers.Dense(3, name="dense")]),
                        keras.optimizers.Adam(0.01))


def test_the_command_carries_a_keras3_file_through_jax_and_back(
    tmp_path, monkeypatch):
  """`--model MODULE:FUNCTION` gives the command the model Keras 3 files
  need: `.weights.h5` -> orbax -> `--to keras3 --like`, which the Keras 3
  program loads and continues from."""
  from tf_bridge.checkpoints import __main__ as command  # pylint: disable=import-outside-toplevel
  monkeypatch.chdir(tmp_path)
  (tmp_path / "cli_models.py").write_text(
      "import keras\n"
      "def build():\n"
      "  return keras.Sequential([keras.Input((2,)), keras.layers.Dense(3, "
      "name='dense'), keras.layers.Dense(1, name='dense_1')], "
      "name='cli_model')\n")
  declaration = catalog.lookup("adam")
  data = np.random.default_rng(15).standard_normal((40, 2)).astype(
      np.float32)
  model = keras3_model("cli_model")
  optimizer = declaration.make_native(learning_rate=0.1)
  model.compile(optimizer=optimizer)
  model_steps(model, optimizer.apply, data, K)
  model.save_weights("run.weights.h5")
  expected = model_steps(model, optimizer.apply, data[4 * K:], N)
  flags = ["--optimizer", "adam", "--arguments", '{"learning_rate": 0.1}',
           "--model", "cli_models:build"]
  assert command.main(["convert", "run.weights.h5", "jax", *flags,
                       "--to", "orbax"]) == 0
  assert command.main(["convert", "jax", "back.weights.h5", *flags,
                       "--to", "keras3", "--like", "run.weights.h5"]) == 0
  loaded = keras3_model("cli_model")
  loaded_optimizer = declaration.make_native(learning_rate=0.1)
  loaded.compile(optimizer=loaded_optimizer)
  loaded_optimizer.build(loaded.trainable_variables)
  loaded.load_weights("back.weights.h5")
  testing.compare_trajectories(
      model_steps(loaded, loaded_optimizer.apply, data[4 * K:], N), expected,
      rtol=1e-5, atol=1e-6, actual_name="Keras 3 through the command")


def test_the_command_carries_a_tf_keras_2_11_file_through_jax_and_back(
    tmp_path, monkeypatch, capsys):
  """A tf_keras 2.11+ optimizer's `tf.train.Checkpoint` file: `inspect`
  lists its variables by position and its count; `convert` with `--model`
  (the tf_keras model) takes it to orbax and back into the program's keys
  (`--like`), which tf_keras restores and continues from."""
  from tf_bridge.checkpoints import __main__ as command  # pylint: disable=import-outside-toplevel
  monkeypatch.chdir(tmp_path)
  (tmp_path / "cli_tf_keras_models.py").write_text(
      "import tf_keras\n"
      "def build():\n"
      "  return tf_keras.Sequential([tf_keras.Input((2,)), "
      "tf_keras.layers.Dense(3), tf_keras.layers.Dense(1)])\n")
  declaration = catalog.lookup("tf_keras.rmsprop")
  options = {"learning_rate": 0.05, "momentum": 0.5, "centered": True}
  data = np.random.default_rng(16).standard_normal((40, 2)).astype(
      np.float32)
  model = tf_keras_model()
  optimizer = declaration.make_native(**options)
  apply = lambda grads, variables: optimizer.apply_gradients(
      zip(grads, variables))
  model_steps(model, apply, data, K)
  saved = tf.train.Checkpoint(model=model, optimizer=optimizer).write("run")
  expected = model_steps(model, apply, data[4 * K:], N)
  assert command.main(["inspect", saved]) == 0
  listed = capsys.readouterr().out
  assert ("optimizer at 'optimizer' keeps its 13 variables by position (a "
          "tf_keras 2.11+ optimizer" in listed)  # The count, 4 x 3 slots.
  assert "  model/layer_with_weights-0/kernel [2, 3] float32" in listed
  assert "  12: [1] float32" in listed and f"iterations = {K}" in listed
  flags = ["--optimizer", "tf_keras.rmsprop", "--arguments",
           json.dumps(options), "--model", "cli_tf_keras_models:build"]
  assert command.main(["convert", saved, "jax", *flags, "--to",
                       "orbax"]) == 0
  assert command.main(["convert", "jax", "back", *flags, "--to", "legacy",
                       "--like", saved]) == 0
  loaded_model = tf_keras_model()
  loaded = declaration.make_native(**options)
  loaded.build(loaded_model.trainable_variables)
  tf.train.Checkpoint(model=loaded_model, optimizer=loaded).read(
      "back").expect_partial()
  assert int(loaded.iterations) == K
  testing.compare_trajectories(
      model_steps(loaded_model, lambda g, v: loaded.apply_gradients(
          zip(g, v)), data[4 * K:], N), expected, rtol=1e-5, atol=1e-6,
      actual_name="tf_keras through the command")


@pytest.mark.parametrize("suffix", [".keras", ".weights.h5"])
def test_a_tf_keras_2_11_model_file_continues_in_jax_and_back(suffix,
                                                              tmp_path):
  """tf_keras's own model files (`model.save("run.keras")`,
  `save_weights("run.weights.h5")`: optimizer variables by position, as
  Keras 3's) of a tf_keras 2.11+ optimizer: `read` with the tf_keras model
  (params by variable name) continues as tf_keras does, a fresh state
  parts, and `write` gives the `.weights.h5` file tf_keras loads and
  continues the port's trajectory from."""
  declaration = catalog.lookup("tf_keras.adam")
  options = {"learning_rate": 0.1, "amsgrad": True}
  data = np.random.default_rng(17).standard_normal((40, 2)).astype(
      np.float32)
  model = tf_keras_model()
  optimizer = declaration.make_native(**options)
  model.compile(optimizer=optimizer, loss="mse")
  apply = lambda grads, variables: optimizer.apply_gradients(
      zip(grads, variables))
  model_steps(model, apply, data, K)
  saved = str(tmp_path / f"run{suffix}")
  if suffix == ".keras":
    model.save(saved)
  else:
    model.save_weights(saved)
  expected = model_steps(model, apply, data[4 * K:], N)
  later = model_steps(model, apply, data[4 * (K + N):], N)

  reader = tf_keras_model()
  names = [v.name.partition(":")[0] for v in reader.trainable_variables]
  transform = declaration.make_port(**options)
  params, state = checkpoints.read(saved, transform, model=reader)
  assert sorted(params) == sorted(names) and int(state.iterations) == K
  continued, params, state = port_model_steps(reader, transform, params,
                                              state, data[4 * K:], names)
  testing.compare_trajectories(continued, expected, rtol=1e-5, atol=1e-6,
                               actual_name="port from the tf_keras file")
  fresh, _, _ = port_model_steps(reader, transform, *checkpoints.read(
      saved, transform, model=reader)[:1], transform.init(params),
                                 data[4 * K:], names)
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(fresh, expected, rtol=1e-5, atol=1e-6)
  checkpoints.write(str(tmp_path / "back.weights.h5"), params, state,
                    transform, like=saved, model=reader)
  loaded_model = tf_keras_model()
  loaded = declaration.make_native(**options)
  loaded_model.compile(optimizer=loaded, loss="mse")
  loaded.build(loaded_model.trainable_variables)
  loaded_model.load_weights(str(tmp_path / "back.weights.h5"))
  assert int(loaded.iterations) == K + N
  testing.compare_trajectories(
      model_steps(loaded_model, lambda g, v: loaded.apply_gradients(
          zip(g, v)), data[4 * (K + N):], N), later, rtol=1e-5, atol=1e-6,
      actual_name="tf_keras from the port's file")


def keras3_steps(optimizer, model, gradients):
  """`optimizer.apply` of the kernel's and bias's gradients; the weights
  after each step."""
  trajectory = []
  for grads in gradients:
    optimizer.apply([tf.constant(g) for g in grads[:2]],
                    model.trainable_variables)
    trajectory.append([v.numpy() for v in model.trainable_variables])
  return trajectory


def by_address(state, names=None):
  """A state's leaves by path, a variable's entry its key: a dict key, or
  `names[i]` for the i-th of a list."""
  leaves = {}
  for path, leaf in jax.tree_util.tree_flatten_with_path(state)[0]:
    address = tuple(
        names[entry.idx] if names and isinstance(
            entry, jax.tree_util.SequenceKey) else
        entry.key if isinstance(entry, jax.tree_util.DictKey) else
        jax.tree_util.keystr((entry,)) for entry in path)
    leaves[address] = np.asarray(leaf)
  return leaves


def bridged_keras3(name):
  declaration = catalog.lookup(name)
  return getattr(importlib.import_module(declaration.bridge_path),
                 declaration.class_name)(**own_arguments(name))


def own_arguments(name):
  return {**arguments(name), **OWN_ARGUMENTS.get(name, {})}


# A file of the algorithm's own writer (TF1's class, its OptimizerV2 twin)
# into its class on Keras 3: TF1's, TF Addons', another library's, a Keras 3
# algorithm legacy lacks, a classic.
OWN_CASES = ["tf1.adam", "tf1.ftrl", "addons.lazy_adam",
             "hf.adam_weight_decay", "tf_models.lars", "lion", "momentum_sgd"]
OWN_ARGUMENTS = {"momentum_sgd": {"momentum": 0.9}}


@pytest.mark.parametrize("name", OWN_CASES)
def test_a_file_restores_into_its_algorithms_keras3_class(name, tmp_path):
  """`restore` into the Keras 3 class of the writer's own algorithm
  (`tf_bridge.tf1.Adam` for TF1's `AdamOptimizer`): the state is the
  file's, bit for bit (TF1 Adam's beta powers too), and the run continues
  on the writer's trajectory; a fresh optimizer parts."""
  import keras  # pylint: disable=import-outside-toplevel
  import tf_bridge  # pylint: disable=import-outside-toplevel
  declaration = catalog.lookup(name)
  initial, gradients = problem(31)
  if declaration.generation == catalog.TF1:
    program = Tf1Program(declaration, initial)
    program.steps(gradients[:K])
    path, scope = program.save(tmp_path / "file"), "dense/"
  else:
    writer = getattr(importlib.import_module(declaration.legacy_bridge_path),
                     declaration.class_name)(**own_arguments(name))
    program = Tf2Program(declaration, initial, optimizer=writer)
    program.steps(gradients[:K])
    path = program.checkpoint.write(str(tmp_path / "file"))
    scope = "model/dense/"
  native = program.steps(gradients[K:K + N])

  def continued(fresh):
    model = keras.Sequential([keras.Input((2,)),
                              keras.layers.Dense(3, name="dense")], name="m")
    optimizer = bridged_keras3(name)
    checkpoints.restore(path, model, optimizer,
                        assignment_map={scope: "m/dense/"})
    assert int(optimizer.iterations) == K
    if fresh:
      optimizer = bridged_keras3(name)
    else:
      from tf_bridge import _state  # pylint: disable=import-outside-toplevel
      _, written = checkpoints.read(path, catalog.lookup(
          "legacy." + name if name == "momentum_sgd" else name).make_port(
              **own_arguments(name)))
      restored = by_address(_state.state_of(
          optimizer, model.trainable_variables, declaration),
                            [scope + "kernel", scope + "bias"])
      written = by_address(written)
      assert restored and set(restored) <= set(written)
      for address, leaf in restored.items():
        np.testing.assert_array_equal(leaf, written[address], err_msg=str(
            address))
    return keras3_steps(optimizer, model, gradients[K:K + N])

  expected = [step[:2] for step in native]
  assert_restore_continues(continued, expected, "after restore", name)


def test_a_tf1_adam_file_into_keras3_adam_needs_its_count_to_be_adams(
    tmp_path):
  """Keras 3's Adam keeps no beta powers: it derives its bias correction
  from its count. A TF1 Adam file whose `global_step` is not its Adam's
  steps (here 2 more), or a Keras 3 Adam of other betas, is refused with
  that reason and nothing assigned; `tf_bridge.tf1.Adam`, which keeps the
  powers, takes the file and continues on TF1's trajectory. A file of
  another algorithm, or a class that is no Keras 3 optimizer of the
  catalog, is refused naming it."""
  import keras  # pylint: disable=import-outside-toplevel
  import tf_bridge  # pylint: disable=import-outside-toplevel
  declaration = catalog.lookup("tf1.adam")
  initial, gradients = problem(32)
  program = Tf1Program(declaration, initial)
  program.steps(gradients[:K])
  counted = program.save(tmp_path / "counted")
  with program.graph.as_default():
    program.session.run(tf.compat.v1.train.get_global_step().assign_add(2))
  path = program.save(tmp_path / "offset")
  native = program.steps(gradients[K:K + N])

  def model():
    return keras.Sequential([keras.Input((2,)),
                             keras.layers.Dense(3, name="dense")], name="m")

  target = model()
  before = target.get_weights()
  with pytest.raises(ValueError, match=(
      "keeps beta1_power = .*, which tf_bridge.Adam \\(or "
      "keras.optimizers.Adam\\) does not keep: it derives it from its step "
      f"count \\(the file's global_step: {K + 2}\\) and its beta1, beta2, "
      "epsilon, which give .* restore it into tf_bridge.tf1.Adam")):
    checkpoints.restore(path, target, keras.optimizers.Adam(0.01))
  for weight, value in zip(target.get_weights(), before):
    np.testing.assert_array_equal(weight, value)
  with pytest.raises(ValueError, match="keeps beta1_power"):
    checkpoints.restore(counted, model(), keras.optimizers.Adam(
        0.01, beta_1=0.8))
  checkpoints.restore(counted, model(), keras.optimizers.Adam(0.01))

  optimizer = tf_bridge.tf1.Adam(0.01)
  checkpoints.restore(path, target, optimizer)
  assert int(optimizer.iterations) == K + 2
  testing.compare_trajectories(
      keras3_steps(optimizer, target, gradients[K:K + N]),
      [step[:2] for step in native], rtol=1e-5, atol=1e-6,
      actual_name="tf_bridge.tf1.Adam after restore", expected_name="TF1")

  with pytest.raises(ValueError, match=(
      "does not hold the state of tf_bridge.tf1.RMSProp: .* holds slots "
      "named 'Adam' .* point to tensorflow.compat.v1.train.AdamOptimizer")):
    checkpoints.restore(path, model(), tf_bridge.tf1.RMSProp(0.01))
  with pytest.raises(ValueError, match=(
      "is a TF1 Saver file, and no optimizer that writes one keeps the "
      "state of tf_bridge.addons.LazyAdam")):
    checkpoints.restore(path, model(), tf_bridge.addons.LazyAdam(0.01))
  with pytest.raises(TypeError, match=(
      "tf_keras.src.optimizers.adam.Adam is not a Keras 3 optimizer")):
    checkpoints.restore(path, model(), tf_keras.optimizers.Adam(0.01))


def test_restore_takes_the_files_learning_rate_as_tf_keras_resume_does(
    tmp_path):
  """A tf_keras run whose learning rate was lowered (as ReduceLROnPlateau
  does), saved by legacy Adam (`save_weights`) and by tf_keras 2.11+ Adam
  (`tf.train.Checkpoint`): tf_keras's own resume, into an optimizer made
  with the first rate, continues with the file's rate; so does the Keras 3
  optimizer after `restore`, on the same trajectory. One made with a
  schedule keeps it."""
  import keras  # pylint: disable=import-outside-toplevel
  data = np.random.default_rng(33).standard_normal((40, 2)).astype(
      np.float32)
  start = keras3_model("start").get_weights()

  def tf_keras_run(make, save, load):
    model = tf_keras.Sequential([tf_keras.layers.Dense(3, input_shape=(2,)),
                                 tf_keras.layers.Dense(1)])
    model.set_weights(start)
    optimizer = make(0.1)
    model_steps(model, lambda g, v: optimizer.apply_gradients(zip(g, v)),
                data, K)
    optimizer.learning_rate = 0.02
    saved = save(model, optimizer)
    resumed = tf_keras.Sequential([
        tf_keras.layers.Dense(3, input_shape=(2,)), tf_keras.layers.Dense(1)])
    again = make(0.1)
    load(resumed, again, saved)
    expected = model_steps(
        resumed, lambda g, v: again.apply_gradients(zip(g, v)),
        data[4 * K:], N)
    return saved, expected, float(again.learning_rate)

  def save_weights(model, optimizer):
    model.optimizer = optimizer
    model.save_weights(str(tmp_path / "legacy"))
    return str(tmp_path / "legacy")

  def load_weights(model, optimizer, saved):
    model.optimizer = optimizer
    model.load_weights(saved)

  def write(model, optimizer):
    return tf.train.Checkpoint(model=model, optimizer=optimizer).write(
        str(tmp_path / "tf_keras"))

  def read(model, optimizer, saved):
    optimizer.build(model.trainable_variables)
    tf.train.Checkpoint(model=model, optimizer=optimizer).read(saved)

  for make, save, load in (
      (tf_keras.optimizers.legacy.Adam, save_weights, load_weights),
      (tf_keras.optimizers.Adam, write, read)):
    saved, expected, rate = tf_keras_run(make, save, load)
    assert rate == np.float32(0.02)
    model = keras3_model(f"resumed_{make.__module__.split('.')[-2]}")
    optimizer = keras.optimizers.Adam(0.1)
    checkpoints.restore(saved, model, optimizer)
    continued = model_steps(model, optimizer.apply, data[4 * K:], N)
    assert float(optimizer.learning_rate) == rate
    testing.compare_trajectories(continued, expected, rtol=1e-5, atol=1e-6,
                                 actual_name="Keras 3 after restore",
                                 expected_name="tf_keras's resume")
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)
    scheduled = keras.optimizers.Adam(schedule)
    checkpoints.restore(saved, keras3_model("scheduled"), scheduled)
    assert scheduled._learning_rate is schedule  # pylint: disable=protected-access
    assert int(scheduled.iterations) == K


def test_convert_to_tf1_writes_the_count_the_source_kept(tmp_path):
  """A TF1 program that saved no `global_step`: `convert --to tf1`,
  directly and through orbax, writes none (never an invented count), and
  the program's own Saver restores the file and continues; a file with a
  `global_step` keeps its count. `write(..., global_step=False)` and
  `convert --like` into a file with a `global_step` write none either."""
  from tf_bridge.checkpoints import __main__ as command  # pylint: disable=import-outside-toplevel
  declaration = catalog.lookup("tf1.adam")
  initial, gradients = problem(34)
  program = Tf1Program(declaration, initial)
  program.steps(gradients[:K])
  counted = program.save(tmp_path / "counted")
  with program.graph.as_default():
    saver = tf.compat.v1.train.Saver(
        [v for v in tf.compat.v1.global_variables()
         if v.op.name != "global_step"])
    path = saver.save(program.session, str(tmp_path / "uncounted"))
  native = program.steps(gradients[K:])
  convert = ["--optimizer", "tf1.adam", "--to"]
  assert command.main(["convert", path, str(tmp_path / "direct"), *convert,
                       "tf1"]) == 0
  assert command.main(["convert", path, str(tmp_path / "jax"), *convert,
                       "orbax"]) == 0
  assert command.main(["convert", str(tmp_path / "jax"),
                       str(tmp_path / "through_orbax"), *convert, "tf1"]) == 0
  for written in ("direct", "through_orbax"):
    assert "global_step" not in dict(tf.train.list_variables(
        str(tmp_path / written)))
    with program.graph.as_default():
      saver.restore(program.session, str(tmp_path / written))
    testing.compare_trajectories(program.steps(gradients[K:]), native,
                                 rtol=1e-5, atol=1e-6,
                                 actual_name=f"TF1 from the {written} file")
  assert command.main(["convert", counted, str(tmp_path / "kept"), *convert,
                       "tf1"]) == 0
  assert tf.train.load_checkpoint(str(tmp_path / "kept")).get_tensor(
      "global_step") == K
  # Into the keys of a file with a `global_step`: the uncounted run's file
  # holds what the program's own Saver file of that run holds.
  assert command.main(["convert", path, str(tmp_path / "converted_like"),
                       *convert, "tf1", "--like", counted]) == 0
  params, state = checkpoints.read(path, declaration.make_port())
  checkpoints.write(str(tmp_path / "written_like"), params, state,
                    declaration.make_port(), like=counted, global_step=False)
  original = tf.train.load_checkpoint(path)
  for written in ("converted_like", "written_like"):
    reader = tf.train.load_checkpoint(str(tmp_path / written))
    assert (reader.get_variable_to_shape_map()
            == original.get_variable_to_shape_map())
    for key in original.get_variable_to_shape_map():
      np.testing.assert_array_equal(reader.get_tensor(key),
                                    original.get_tensor(key), err_msg=key)


TF1_CHECKPOINTS = os.path.join(os.path.dirname(__file__), "scripts",
                               "tf1_checkpoints.py")


def test_every_function_works_inside_a_tf1_program():
  """tests/scripts/tf1_checkpoints.py, eager execution disabled: `read` of
  the program's Saver file and of its `tf.compat.v1.train.Checkpoint`
  continues on its trajectory, `write` into each (restored by the
  program's own `Saver.restore` and `Checkpoint.restore`) gives its
  slots, beta powers and step bit for bit and continues on it, `inspect`
  lists the file and `convert` to orbax and back gives a file the program
  restores and continues from; `restore` and `read` of a Keras 3 file
  (Keras 3 runs eagerly only) are refused with that reason."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  # The script imports the code under test, as this process does.
  environment = {**os.environ, "PYTHONPATH": os.pathsep.join(
      filter(None, [root, os.environ.get("PYTHONPATH")]))}
  result = subprocess.run([sys.executable, TF1_CHECKPOINTS],
                          capture_output=True, text=True, timeout=600,
                          env=environment, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  run = json.loads(result.stdout)
  trajectory = lambda steps: [[np.asarray(v, np.float32) for v in step]
                              for step in steps]
  for continued, expected in (("read", "native"), ("tf2_read", "native"),
                              ("converted", "native"),
                              ("written", "native_more"),
                              ("tf2_written", "native_more")):
    testing.compare_trajectories(trajectory(run[continued]),
                                 trajectory(run[expected]), rtol=1e-5,
                                 atol=1e-6, actual_name=continued,
                                 expected_name="the TF1 program")
  assert run["written_bit_identical"] and run["tf2_written_bit_identical"]
  assert run["inspect"].splitlines()[1:3] == [
      "dialect: TF1 name-based (Saver)",
      "slots named 'Adam' point to tensorflow.compat.v1.train.AdamOptimizer "
      "(read it with jaxopt_port.tf1.adam)"]
  assert "  global_step = 6" in run["inspect"].splitlines()
  assert run["restore_refused"].startswith(
      "restore puts a checkpoint into a Keras 3 model and optimizer, which "
      "run eagerly only, and eager execution is off here")
  assert "is read and written through its Keras model, which runs eagerly: "\
      "eager execution is off here" in run["keras3_refused"]


def test_a_tfrs_checkpoint_restores_into_its_keras3_class(tmp_path):
  """TF Recommenders' ClippyAdagrad is a tf_keras 2.11+ optimizer: its file
  (`tf.train.Checkpoint`, written here by its bridged tf_keras twin, with
  the clipping factors) restores into `tf_bridge.tfrs.ClippyAdagrad` on
  Keras 3, which continues on its trajectory; a fresh one parts."""
  import tf_bridge.tf_keras.tfrs  # pylint: disable=import-outside-toplevel
  import tf_bridge.tfrs  # pylint: disable=import-outside-toplevel
  options = {"learning_rate": 0.1, "export_clipping_factors": True}
  data = np.random.default_rng(35).standard_normal((40, 2)).astype(
      np.float32)
  model = tf_keras_model()
  optimizer = tf_bridge.tf_keras.tfrs.ClippyAdagrad(**options)
  apply = lambda grads, variables: optimizer.apply_gradients(
      zip(grads, variables))
  model_steps(model, apply, data, K)
  saved = tf.train.Checkpoint(model=model, optimizer=optimizer).write(
      str(tmp_path / "run"))
  expected = model_steps(model, apply, data[4 * K:], N)

  def continued(fresh):
    target = keras3_model(f"from_tfrs_{fresh}")
    keras_optimizer = tf_bridge.tfrs.ClippyAdagrad(**options)
    checkpoints.restore(saved, target, keras_optimizer)
    assert int(keras_optimizer.iterations) == K
    if fresh:
      keras_optimizer = tf_bridge.tfrs.ClippyAdagrad(**options)
    return model_steps(target, keras_optimizer.apply, data[4 * K:], N)

  assert_restore_continues(continued, expected, "Keras 3 after restore",
                           "tf_keras")
