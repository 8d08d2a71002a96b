"""TF1 programs in graphs and sessions take the bridged TF1 classes
(`tf_bridge.legacy.tf1`) as they take `tf.compat.v1.train`'s: the same
variables by name and kind (`w/Adam`, `w/Adam_1`, `beta1_power`, no
OptimizerV2 `iter` or hyperparameter variables; reference variables, TF1's
default under `tf.compat.v1.disable_v2_behavior()`, and resource ones), the
same steps, and `Saver` files that either side restores and continues from
(tests/scripts/tf1_graphs.py, a process of its own); in this process's TF2
behaviour too (a `tf.Graph`: resource variables). The controls that prove
the step and file checks can fail run for every sixth class and kind of
variable (`sampling`; all in the long profile)."""

import json
import pathlib
import subprocess
import sys

import pytest

import sampling
from tf_bridge import testing

# One worker runs this module (README runs pytest with --dist loadgroup).
pytestmark = pytest.mark.xdist_group("tf1_graphs")

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "tf1_graphs.py"
NAMES = ["tf1.gradient_descent", "tf1.momentum", "tf1.adam", "tf1.adagrad",
         "tf1.adagrad_da", "tf1.adadelta", "tf1.rmsprop", "tf1.ftrl",
         "tf1.proximal_adagrad", "tf1.proximal_gradient_descent"]
MODES = ["resource", "reference"]
RTOL, ATOL = 1e-5, 1e-6
CONTROLLED = [run for index, run in enumerate(
    f"{mode}/{name}" for mode in MODES for name in NAMES)
              if sampling.whole(index, shift=2)]


@pytest.fixture(scope="module")
def runs():
  result = subprocess.run([sys.executable, str(SCRIPT), *CONTROLLED],
                          capture_output=True, text=True, timeout=900,
                          check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout)


def test_every_tf1_class_ran(runs):
  for mode in MODES:
    assert sorted(runs[mode]) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", MODES)
def test_the_graph_holds_tf1s_variables(runs, mode, name):
  """The graph's global variables after `minimize`, by name and kind, are
  those the native class makes."""
  run = runs[mode][name]
  assert run["bridged"]["variables"] == run["native"]["variables"]
  kinds = {kind for name, kind in run["native"]["variables"]
           if name != "global_step"}  # Made by TF1's default, a reference.
  assert kinds == ({"RefVariable"} if mode == "reference"
                   else {"ResourceVariable"})


def test_adams_variables_are_named_as_tf1_names_them(runs):
  names = [name for name, _ in runs["reference"]["tf1.adam"]["bridged"][
      "variables"]]
  assert names == ["beta1_power", "beta2_power", "dense/kernel",
                   "dense/kernel/Adam", "dense/kernel/Adam_1", "embedding",
                   "embedding/Adam", "embedding/Adam_1", "global_step"]
  names = [name for name, _ in runs["resource"]["tf1.rmsprop"]["bridged"][
      "variables"]]
  assert "embedding/RMSProp_2" in names and not any(
      name.startswith("RMSProp/") for name in names)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", MODES)
def test_steps_are_natives(runs, mode, name):
  """6 steps (dense and an embedding's sparse gradient) equal native's; a
  learning rate 1 % larger parts (CONTROLLED)."""
  run, controlled = runs[mode][name], f"{mode}/{name}" in CONTROLLED
  expected = run["native"]["trajectory"]
  testing.compare_trajectories(run["bridged"]["trajectory"], expected,
                               rtol=RTOL, atol=ATOL, actual_name="bridged",
                               expected_name=name)
  assert ("mutant" in run) == controlled
  if not controlled:
    return
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(run["mutant"]["trajectory"], expected,
                                 rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", MODES)
def test_saver_files_move_both_ways(runs, mode, name):
  """A Saver file either side wrote after 3 steps, restored by the other
  side's program, continues the writer's run; without it the run parts
  (CONTROLLED)."""
  run, controlled = runs[mode][name], f"{mode}/{name}" in CONTROLLED
  expected = run["native"]["trajectory"][3:]
  for reader, writer in (("bridged", "native"), ("native", "bridged")):
    testing.compare_trajectories(
        run[reader]["from " + writer], expected, rtol=RTOL, atol=ATOL,
        actual_name=f"{reader} from {writer}'s file",
        expected_name=name)
  assert ("fresh" in run["bridged"]) == controlled
  if not controlled:
    return
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(run["bridged"]["fresh"], expected,
                                 rtol=RTOL, atol=ATOL)


def test_what_a_tf1_graph_does_not_keep_is_asked_for():
  """In a TF1 graph there is no OptimizerV2 step count: OptimizerV2's
  `decay` is refused, naming TF1's way; AdagradDA with l1 (whose step reads
  the count) and a Keras schedule ask for the `global_step` given to
  `minimize`."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_keras  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.tf1  # pylint: disable=import-outside-toplevel
  with tf.Graph().as_default():
    w = tf.compat.v1.get_variable("w", initializer=np.ones(2, np.float32))
    loss = tf.reduce_sum(w ** 2)
    with pytest.raises(ValueError, match=r"^Adam\(decay=0\.1\) decays its "
                       r"rate by OptimizerV2's step count, which a TF1 "
                       r"graph does not keep"):
      tf_bridge.legacy.tf1.Adam(0.1, decay=0.1).minimize(loss)
    with pytest.raises(ValueError, match=r"^AdagradDA's step reads the step "
                       r"count, which a TF1 graph keeps as the global step: "
                       r"pass global_step="):
      tf_bridge.legacy.tf1.AdagradDA(
          0.1, l1_regularization_strength=0.01).minimize(loss)
    # Without l1 or l2 its step does not read the count.
    tf_bridge.legacy.tf1.AdagradDA(0.1).minimize(loss)
    with pytest.raises(ValueError, match=r"^its LearningRateSchedule reads "
                       r"the step count, which a TF1 graph keeps as the "
                       r"global step"):
      tf_bridge.legacy.tf1.GradientDescent(
          tf_keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)
      ).minimize(loss)


def test_a_keras_schedule_reads_the_global_step_in_a_tf1_graph():
  """A Keras schedule as the bridged class's rate, evaluated at the global
  step `minimize` takes: TF1's own decayed rate tensor's steps; the same
  schedule at step 0 (no decay) parts."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_keras  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.tf1  # pylint: disable=import-outside-toplevel

  def steps(make):
    with tf.Graph().as_default():
      w = tf.compat.v1.get_variable("w", initializer=np.ones(2, np.float32))
      step = tf.compat.v1.train.get_or_create_global_step()
      train = make(step).minimize(tf.reduce_sum(w ** 2), global_step=step)
      with tf.compat.v1.Session() as session:
        session.run(tf.compat.v1.global_variables_initializer())
        trajectory = []
        for _ in range(4):
          # `w` read by a run of its own: fetched beside `train`, it may be
          # read before the step.
          session.run(train)
          trajectory.append(session.run(w).tolist())
        return trajectory

  native = steps(lambda step: tf.compat.v1.train.GradientDescentOptimizer(
      tf.compat.v1.train.exponential_decay(0.3, step, 1, 0.5)))
  bridged = steps(lambda step: tf_bridge.legacy.tf1.GradientDescent(
      tf_keras.optimizers.schedules.ExponentialDecay(0.3, 1, 0.5)))
  testing.compare_trajectories(bridged, native, rtol=RTOL, atol=ATOL)
  undecayed = steps(lambda step: tf_bridge.legacy.tf1.GradientDescent(0.3))
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(undecayed, native, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("native_class,bridged_class,arguments", [
    ("AdamOptimizer", "Adam", {}),
    ("RMSPropOptimizer", "RMSProp", {"momentum": 0.5, "centered": True})])
def test_a_tf2_processs_graph_holds_tf1s_variables(native_class,
                                                   bridged_class, arguments):
  """In a `tf.Graph` of this process (TF2 behaviour: resource variables),
  as under `disable_v2_behavior`: the native class's variable names."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.tf1  # pylint: disable=import-outside-toplevel

  def names(make):
    with tf.Graph().as_default() as graph:
      w = tf.compat.v1.get_variable("w", initializer=np.ones(2, np.float32))
      step = tf.compat.v1.train.get_or_create_global_step()
      make(0.1, **arguments).minimize(tf.reduce_sum(w ** 2), global_step=step)
      return sorted(v.op.name for v in graph.get_collection(
          tf.compat.v1.GraphKeys.GLOBAL_VARIABLES))

  expected = names(getattr(tf.compat.v1.train, native_class))
  assert names(getattr(tf_bridge.legacy.tf1, bridged_class)) == expected
  assert f"w/{bridged_class}_1" in expected
