"""TF Addons' optimizers against numpy implementations of their formulas.

TF Addons cannot be installed beside TensorFlow 2.21, so the ground truth is
TFA's published formula, written here in float64 numpy one variable at a time
(the ports run in float32): 100 steps on a scalar, a vector and a matrix, for
a grid of each optimizer's arguments, at gradient scales 1 and 1e-4.
"""

import functools
import inspect
import warnings

import jax
import jaxopt_port
import numpy as np
import pytest
from jaxopt_port import addons
from jaxopt_port.addons import _conditional_gradient

from tf_bridge import testing

STEPS = 100


def adam_numpy(beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False):
  """tf_keras legacy Adam (ResourceApplyAdam), one variable."""
  def step(p, g, s, lr, t):
    m = s.get("m", 0) + (g - s.get("m", 0)) * (1 - beta_1)
    v = s.get("v", 0) + (g * g - s.get("v", 0)) * (1 - beta_2)
    s.update(m=m, v=v)
    if amsgrad:
      s["vhat"] = np.maximum(s.get("vhat", 0), v)
    alpha = lr * np.sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t)
    return p - m * alpha / (np.sqrt(s["vhat"] if amsgrad else v) + epsilon)
  return step


def sgd_numpy(momentum=0.0, nesterov=False):
  def step(p, g, s, lr, t):
    if not momentum:
      return p - lr * g
    s["m"] = momentum * s.get("m", 0) - lr * g
    return p + (momentum * s["m"] - lr * g if nesterov else s["m"])
  return step


def decoupled_numpy(inner, weight_decay):
  """TFA's DecoupledWeightDecayExtension; on a sparse gradient (`touched`:
  its rows) only the touched rows decay before the inner step."""
  def step(p, g, s, lr, t, touched=True):
    return inner(p - weight_decay * p * touched, g, s, lr, t)
  return step


def rectified_adam_numpy(beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                         weight_decay=0.0, amsgrad=False, sma_threshold=5.0,
                         total_steps=0, warmup_proportion=0.1, min_lr=0.0):
  def step(p, g, s, lr, t):
    if total_steps > 0:
      warmup = total_steps * warmup_proportion
      decay_steps = max(total_steps - warmup, 1)
      lr = (lr * t / warmup if t <= warmup else
            lr + (min_lr - lr) / decay_steps * min(t - warmup, decay_steps))
    s["m"] = beta_1 * s.get("m", 0) + (1 - beta_1) * g
    s["v"] = beta_2 * s.get("v", 0) + (1 - beta_2) * g * g
    second = s["v"]
    if amsgrad:
      s["vhat"] = second = np.maximum(s.get("vhat", 0), s["v"])
    sma_inf = 2 / (1 - beta_2) - 1
    sma = sma_inf - 2 * t * beta_2 ** t / (1 - beta_2 ** t)
    m_hat = s["m"] / (1 - beta_1 ** t)
    if sma >= sma_threshold:
      r = np.sqrt((sma - 4) / (sma_inf - 4) * (sma - 2) / (sma_inf - 2)
                  * sma_inf / sma)
      u = r * m_hat / (np.sqrt(second / (1 - beta_2 ** t)) + epsilon)
    else:
      u = m_hat
    return p - lr * (u + weight_decay * p)
  return step


def adabelief_numpy(beta_1=0.9, beta_2=0.999, epsilon=1e-14,
                    weight_decay=0.0, amsgrad=False, rectify=True,
                    sma_threshold=5.0, total_steps=0, warmup_proportion=0.1,
                    min_lr=0.0):
  """TFA's AdaBelief; on a sparse gradient (`touched`: its rows) `v` grows
  and `p` moves on the touched rows only (the moments decay everywhere)."""
  def step(p, g, s, lr, t, touched=True):
    if total_steps > 0:
      warmup = total_steps * warmup_proportion
      decay_steps = max(total_steps - warmup, 1)
      lr = (lr * t / warmup if t <= warmup else
            lr + (min_lr - lr) / decay_steps * min(t - warmup, decay_steps))
    s["m"] = beta_1 * s.get("m", 0) + (1 - beta_1) * g
    s["v"] = beta_2 * s.get("v", 0) + touched * (
        (1 - beta_2) * (g - s["m"]) ** 2 + epsilon)
    second = s["v"]
    if amsgrad:
      s["vhat"] = second = np.maximum(s.get("vhat", 0), s["v"])
    m_hat = s["m"] / (1 - beta_1 ** t)
    u = m_hat / (np.sqrt(second / (1 - beta_2 ** t)) + epsilon)
    sma_inf = 2 / (1 - beta_2) - 1
    sma = sma_inf - 2 * t * beta_2 ** t / (1 - beta_2 ** t)
    if rectify and sma >= sma_threshold:
      u = u * np.sqrt((sma - 4) * (sma - 2) * sma_inf
                      / ((sma_inf - 4) * (sma_inf - 2) * sma))
    elif rectify:
      u = m_hat
    return np.where(touched, p - lr * (u + weight_decay * p), p)
  return step


def yogi_numpy(beta1=0.9, beta2=0.999, epsilon=1e-3,
               l1_regularization_strength=0.0, l2_regularization_strength=0.0,
               initial_accumulator_value=1e-6, activation="sign"):
  l1, l2 = l1_regularization_strength, l2_regularization_strength

  def step(p, g, s, lr, t):
    lr_t = lr * np.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
    direction = g
    if beta1:
      s["m"] = s.get("m", 0) * beta1 + g * (1 - beta1)
      direction = s["m"]
    v = s.get("v", initial_accumulator_value + 0 * p)
    difference = g * g - v
    sign = np.sign(difference) if activation == "sign" else np.tanh(
        10 * difference)
    s["v"] = v + (1 - beta2) * sign * g * g
    rate = lr_t / (np.sqrt(s["v"]) + epsilon)
    new = p - rate * direction
    if l1 > 0:  # argmin_w a/2 w^2 + b w + c |w|, with b = -new.
      a, b, c = 1 + l2 * rate, -new, l1 * rate
      new = np.where(np.abs(b) > c, (c * np.sign(b) - b) / a, 0.0)
    elif l2 > 0:
      new = new / (1 + l2 * rate)
    return new
  return step


def novograd_numpy(beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=0.0,
                   grad_averaging=False, amsgrad=False):
  def step(p, g, s, lr, t):
    energy = np.sum(g * g)
    s["v"] = energy if t == 1 else s["v"] * beta_2 + energy * (1 - beta_2)
    second = s["v"]
    if amsgrad:
      s["vhat"] = second = max(s.get("vhat", 0.0), s["v"])
    d = g / (np.sqrt(second) + epsilon) + weight_decay * p
    if grad_averaging and t > 1:
      d = d * (1 - beta_1)
    s["m"] = s.get("m", 0) * beta_1 - lr * d
    return p + s["m"]
  return step


def cocob_numpy(alpha=100.0):
  """Orabona and Tommasi's COCOB-Backprop (Algorithm 2), as TFA writes it."""
  def step(p, g, s, lr, t):
    del lr, t
    s["L"] = np.maximum(s.get("L", 1e-8), np.abs(g))
    s["G"] = s.get("G", 0) + np.abs(g)
    s["S"] = s.get("S", 0) + g
    offset = s.get("offset", 0 * p)
    s["R"] = np.maximum(s.get("R", 0) - g * offset, 0)
    new_offset = -s["S"] / (s["L"] * np.maximum(s["G"] + s["L"],
                                                alpha * s["L"])) * (
                                                    s["R"] + s["L"])
    s["offset"] = new_offset
    return p - offset + new_offset
  return step


def conditional_gradient_numpy(lambda_=0.01, epsilon=1e-7, ord="fro"):  # pylint: disable=redefined-builtin
  def step(p, g, s, lr, t):
    if ord == "fro":
      direction = g / (np.sqrt(np.sum(g * g)) + epsilon)
    else:
      matrix = np.atleast_2d(g)
      u, _, vt = np.linalg.svd(matrix)
      direction = np.outer(u[:, 0], vt[0]).reshape(g.shape)
    return lr * p - (1 - lr) * lambda_ * direction
  return step


def proximal_adagrad_numpy(initial_accumulator_value=0.1,
                           l1_regularization_strength=0.0,
                           l2_regularization_strength=0.0):
  def step(p, g, s, lr, t):
    s["a"] = s.get("a", initial_accumulator_value) + g * g
    rate = lr / np.sqrt(s["a"])
    v = p - rate * g
    return (np.sign(v) * np.maximum(np.abs(v) - rate
                                    * l1_regularization_strength, 0)
            / (1 + rate * l2_regularization_strength))
  return step


def lamb_numpy(beta_1=0.9, beta_2=0.999, epsilon=1e-6, weight_decay=0.0,
               exclude=(), exclude_adaptation=None):
  """TFA's LAMB; `exclude` names the variables not decayed, and (unless
  `exclude_adaptation` names others) not adapted."""
  if exclude_adaptation is None:
    exclude_adaptation = exclude

  def step(p, g, s, lr, t, name=""):
    s["m"] = s.get("m", 0) * beta_1 + g * (1 - beta_1)
    s["v"] = s.get("v", 0) * beta_2 + g * g * (1 - beta_2)
    u = (s["m"] / (1 - beta_1 ** t)) / (
        np.sqrt(s["v"] / (1 - beta_2 ** t)) + epsilon)
    if name not in exclude:
      u = u + weight_decay * p
    if name in exclude_adaptation:
      return p - lr * u
    w_norm, u_norm = np.linalg.norm(p), np.linalg.norm(u)
    ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
    return p - ratio * lr * u
  return step


def numpy_trajectory(make_step, learning_rate, initial, gradients,
                     names=False):
  params = [p.astype(np.float64) for p in initial]
  states = [{} for _ in params]
  trajectory = []
  for t, grads in enumerate(gradients, 1):
    for index, grad in enumerate(grads):
      extra = {"name": f"variable_{index}"} if names else {}
      params[index] = np.asarray(make_step(
          params[index], grad.astype(np.float64), states[index],
          learning_rate, t, **extra), np.float64)
    trajectory.append([p.copy() for p in params])
  return trajectory


# Points where a 1e-3 change of the rectifier's settings shows
# (test_every_hyperparameter_mutant_parts_from_formula): an epsilon as large
# as the second moment; a threshold just below the length of the SMA at
# step 6 (5.38957 at beta_2 = 0.9, where float32 computes it to 2e-6; at
# 0.999 its float32 error, 0.04, is larger than 1e-3 of it), so 1.001
# times it moves that step's rectification; a short schedule that holds
# `min_lr` for most steps.
RECTIFIER_BINDS = [{"beta_2": 0.9, "epsilon": 1.0, "sma_threshold": 5.385},
                   {"total_steps": 30, "warmup_proportion": 0.2,
                    "min_lr": 5e-3}]

# name: (port, numpy step factory, learning rate used, grid of arguments).
CASES = {
    "adamw": (addons.adamw,
              lambda weight_decay, **k: decoupled_numpy(adam_numpy(**k),
                                                        weight_decay),
              0.01, [{"weight_decay": 0.01},
                     {"weight_decay": 0.1, "amsgrad": True, "beta_2": 0.9,
                      "epsilon": 1e-3}]),
    "sgdw": (addons.sgdw,
             lambda weight_decay, **k: decoupled_numpy(sgd_numpy(**k),
                                                       weight_decay),
             0.05, [{"weight_decay": 0.01},
                    {"weight_decay": 0.05, "momentum": 0.9, "nesterov": True}]),
    "lazy_adam": (addons.lazy_adam, adam_numpy, 0.01,
                  [{}, {"beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-3}]),
    "rectified_adam": (addons.rectified_adam, rectified_adam_numpy, 0.01,
                       [{}, {"weight_decay": 0.01, "amsgrad": True,
                             "beta_2": 0.9, "sma_threshold": 4.0},
                        {"total_steps": 80, "warmup_proportion": 0.2,
                         "min_lr": 1e-3, "epsilon": 1e-3},
                        *RECTIFIER_BINDS]),
    "adabelief": (addons.adabelief, adabelief_numpy, 0.01,
                  [{}, {"rectify": False, "weight_decay": 0.01,
                        "amsgrad": True, "beta_2": 0.9},
                   {"total_steps": 80, "warmup_proportion": 0.2,
                    "min_lr": 1e-3, "epsilon": 1e-7, "sma_threshold": 4.0},
                   *RECTIFIER_BINDS]),
    "yogi": (addons.yogi, yogi_numpy, 0.01,
             [{}, {"l1_regularization_strength": 1e-3,
                   "l2_regularization_strength": 0.1},
              {"l2_regularization_strength": 0.1, "activation": "tanh",
               "beta1": 0.0, "epsilon": 1e-5}]),
    "novograd": (addons.novograd, novograd_numpy, 0.01,
                 [{}, {"weight_decay": 0.01, "grad_averaging": True},
                  {"amsgrad": True, "beta_2": 0.5, "epsilon": 1e-3}]),
    "cocob": (addons.cocob, cocob_numpy, 0.0, [{}, {"alpha": 10.0}]),
    "conditional_gradient": (
        addons.conditional_gradient, conditional_gradient_numpy, 0.9,
        [{}, {"lambda_": 0.5, "epsilon": 1e-3}, {"ord": "nuclear"}]),
    "proximal_adagrad": (
        addons.proximal_adagrad, proximal_adagrad_numpy, 0.1,
        [{}, {"l1_regularization_strength": 0.01,
              "l2_regularization_strength": 0.1,
              "initial_accumulator_value": 1.0}]),
    "lamb": (addons.lamb, lamb_numpy, 0.01,
             [{}, {"weight_decay": 0.01, "beta_1": 0.5, "epsilon": 1e-3}]),
}

# Gradients of 1e-4 barely move a step whose epsilon is 1.
GRID = [(name, kwargs, scale) for name, (_, _, _, grid) in CASES.items()
        for kwargs in grid for scale in (1.0, 1e-4)
        if scale == 1.0 or kwargs.get("epsilon", 0.0) < 1.0]


# Yogi's l2 step divides by 1 + l2 * rate with rate = lr_t / (sqrt(v) +
# epsilon) in the hundreds at gradient scale 1e-4: float32 rounding of
# 1 - beta2**t (TFA's and the port's arithmetic) is amplified through it.
# In float64 the port equals the formula to 1e-15
# (test_float64_port_equals_formula).
LOOSER = {("yogi", 1e-4): {"rtol": 1e-4, "atol": 1e-5}}


@functools.lru_cache(maxsize=None)
def problem(scale):
  return testing.seeded_problem(STEPS, seed=2, grad_scale=scale)


@pytest.mark.parametrize(
    "name,kwargs,scale", GRID,
    ids=[f"{n}-{','.join(f'{k}={v}' for k, v in a.items()) or 'defaults'}"
         f"-g{s:g}" for n, a, s in GRID])
def test_port_equals_formula(name, kwargs, scale):
  port, numpy_step, learning_rate, _ = CASES[name]
  initial, gradients = problem(scale)
  expected = numpy_trajectory(numpy_step(**kwargs), learning_rate, initial,
                              gradients)
  actual = testing.transform_trajectory(
      port(**kwargs, learning_rate=learning_rate), initial, gradients)
  tolerance = {"rtol": 1e-5, "atol": 1e-6}
  if "l2_regularization_strength" in kwargs:
    tolerance = LOOSER.get((name, scale), tolerance)
  testing.compare_trajectories(actual, expected, **tolerance,
                               expected_name="numpy")


# Arguments the algorithm does not read, by design: COCOB has no learning
# rate (TFA's takes none).
UNREAD = {"cocob": {"learning_rate"}}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_hyperparameter_mutant_parts_from_formula(name):
  """Each numeric hyperparameter of a TFA port perturbed by a relative 1e-3
  (`mutants.perturbed`) parts from TFA's formula at some point of
  `test_port_equals_formula` (its grid, both gradient scales)."""
  import mutants  # pylint: disable=import-outside-toplevel
  from tf_bridge import catalog  # pylint: disable=import-outside-toplevel
  port, numpy_step, learning_rate, grid = CASES[name]
  declaration = catalog.lookup(f"addons.{name}")
  survivors = []
  for hyperparameter in mutants.numeric_hyperparameters(declaration):
    if hyperparameter in UNREAD.get(name, ()):
      continue
    killed = False
    for _, kwargs in mutants.search_order(declaration, grid, hyperparameter):
      point = {**kwargs, "learning_rate": learning_rate}
      mutant = mutants.perturbed(declaration, point, hyperparameter)
      for scale in (1.0, 1e-4):
        initial, gradients = problem(scale)
        expected = numpy_trajectory(numpy_step(**kwargs), learning_rate,
                                    initial, gradients)
        tolerance = {"rtol": 1e-5, "atol": 1e-6}
        if "l2_regularization_strength" in kwargs:
          tolerance = LOOSER.get((name, scale), tolerance)
        try:
          actual = testing.transform_trajectory(port(**mutant), initial,
                                                gradients)
        except ValueError:
          break  # Out of the argument's range here.
        killed = bool(mutants.parts(actual, expected, **tolerance))
        if killed:
          break
      if killed:
        break
    if not killed:
      survivors.append(hyperparameter)
  assert not survivors, (name, survivors)


def test_float64_port_equals_formula():
  """With float64 arithmetic (a process with jax_enable_x64) every port
  equals its numpy formula to 1e-12 on every grid point: the float32
  differences above are rounding, not formula."""
  import json  # pylint: disable=import-outside-toplevel
  import pathlib  # pylint: disable=import-outside-toplevel
  import subprocess  # pylint: disable=import-outside-toplevel
  import sys  # pylint: disable=import-outside-toplevel
  script = pathlib.Path(__file__).parent / "scripts" / "addons_float64.py"
  result = subprocess.run([sys.executable, str(script)], capture_output=True,
                          text=True, timeout=900, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  differences = json.loads(result.stdout)
  assert len(differences) == len(GRID)
  worst = max(differences, key=lambda item: item[1])
  assert worst[1] < 1e-12, worst


def test_lamb_exclusions_match_paths():
  initial, gradients = problem(1.0)
  transform = addons.lamb(0.01, weight_decay=0.1,
                          exclude_from_weight_decay=["variable_2"])
  expected = numpy_trajectory(
      lamb_numpy(weight_decay=0.1, exclude=("variable_2",)), 0.01, initial,
      gradients, names=True)
  testing.compare_trajectories(
      testing.transform_trajectory(transform, initial, gradients), expected,
      rtol=1e-5, atol=1e-6)


def test_lamb_layer_adaptation_exclusion_alone():
  """`exclude_from_layer_adaptation` without `exclude_from_weight_decay`:
  the named variable decays but takes no trust ratio; the others both."""
  initial, gradients = problem(1.0)
  transform = addons.lamb(0.01, weight_decay=0.1,
                          exclude_from_layer_adaptation=["variable_1"])
  expected = numpy_trajectory(
      lamb_numpy(weight_decay=0.1, exclude_adaptation=("variable_1",)), 0.01,
      initial, gradients, names=True)
  actual = testing.transform_trajectory(transform, initial, gradients)
  testing.compare_trajectories(actual, expected, rtol=1e-5, atol=1e-6)
  # The exclusion binds: with both adapted the second variable parts.
  adapted = numpy_trajectory(lamb_numpy(weight_decay=0.1), 0.01, initial,
                             gradients, names=True)
  assert np.max(np.abs(adapted[-1][1] - expected[-1][1])) > 1e-3


@pytest.mark.parametrize("module", ["tf_bridge.addons",
                                    "tf_bridge.legacy.addons"])
def test_lamb_name_methods_are_tfas(module):
  """TF Addons LAMB's `_do_use_weight_decay` and `_do_layer_adaptation`
  (its tests and Model Garden's call them) on the bridged classes:
  `re.search` of the patterns, the layer-adaptation list falling back to
  the weight-decay one when None or empty, as TFA's constructor sets it
  (`if exclude_from_layer_adaptation: ... else: exclude_from_weight_decay`;
  the trajectories: tests/test_tf_libraries.py, against TFA)."""
  import importlib  # pylint: disable=import-outside-toplevel
  lamb = importlib.import_module(module).LAMB
  for adaptation in (None, []):
    optimizer = lamb(0.01, weight_decay=0.01,
                     exclude_from_weight_decay=["var1"],
                     exclude_from_layer_adaptation=adaptation)
    assert optimizer._do_use_weight_decay("var0")  # pylint: disable=protected-access
    assert not optimizer._do_use_weight_decay("var1_weight")  # pylint: disable=protected-access
    assert not optimizer._do_layer_adaptation("var1")  # pylint: disable=protected-access
  optimizer = lamb(0.01, exclude_from_layer_adaptation=["^var1$"])
  assert optimizer._do_use_weight_decay("var1")  # pylint: disable=protected-access
  assert not optimizer._do_layer_adaptation("var1")  # pylint: disable=protected-access
  assert optimizer._do_layer_adaptation("var10")  # pylint: disable=protected-access


# OptimizerV2's base arguments on TF Addons' ports (TFA's optimizers were
# OptimizerV2 ones): `lr` for `learning_rate`, the `decay` of the rate,
# clipping of each gradient. COCOB has no learning rate.
BASE_OPTIONS = [{"lr": 0.02, "decay": 0.05}, {"clipvalue": 0.05},
                {"clipnorm": 0.1}, {"global_clipnorm": 0.1}]


def _clipped(grads, clipvalue=None, clipnorm=None, global_clipnorm=None):
  grads = [np.clip(g, -clipvalue, clipvalue) if clipvalue else g
           for g in grads]
  if clipnorm:
    grads = [g * clipnorm / max(np.linalg.norm(g), clipnorm) for g in grads]
  if global_clipnorm:
    norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    grads = [g * global_clipnorm / max(norm, global_clipnorm) for g in grads]
  return grads


# ConditionalGradient steps along the normalized gradient: clipping it by
# its norm cannot change the step (nothing to test there).
BASE_GRID = [(name, options) for name in sorted(set(CASES) - {"cocob"})
             for options in BASE_OPTIONS
             if not (name == "conditional_gradient"
                     and {"clipnorm", "global_clipnorm"} & set(options))]


@pytest.mark.parametrize("name,options", BASE_GRID,
                         ids=[f"{n}-{','.join(o)}" for n, o in BASE_GRID])
def test_port_takes_optimizer_v2_base_arguments(name, options):
  """Each port with OptimizerV2's `lr`, `decay` and clipping equals its
  formula at `lr / (1 + decay * iterations)` on the clipped gradients, and
  parts from the port without them."""
  port, numpy_step, learning_rate, grid = CASES[name]
  kwargs = grid[0]
  initial, gradients = problem(1.0)
  options = dict(options)
  rate = options.pop("lr", learning_rate)
  decay = options.pop("decay", 0.0)
  params = [p.astype(np.float64) for p in initial]
  states = [{} for _ in params]
  expected = []
  step = numpy_step(**kwargs)
  for t, grads in enumerate(gradients, 1):
    grads = _clipped([g.astype(np.float64) for g in grads], **options)
    params = [np.asarray(step(p, g, s, rate / (1 + decay * (t - 1)), t))
              for p, g, s in zip(params, grads, states)]
    expected.append([p.copy() for p in params])
  arguments = {**kwargs, **options, "learning_rate": learning_rate}
  if rate != learning_rate:  # `lr` wins over `learning_rate`, as in Keras.
    arguments.update(lr=rate, decay=decay)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # `lr`, as Keras.
    actual = testing.transform_trajectory(port(**arguments), initial,
                                          gradients)
  testing.compare_trajectories(actual, expected, rtol=1e-5, atol=2e-6,
                               expected_name="numpy")
  plain = testing.transform_trajectory(
      port(**kwargs, learning_rate=learning_rate), initial, gradients)
  assert max(np.max(np.abs(a - b)) for a, b in zip(actual[-1], plain[-1])
             ) > 1e-4


def test_decoupled_weight_decay_of_legacy_adam_is_adamw():
  """The general wrapper on any factory equals TFA's AdamW."""
  adamw = addons.decoupled_weight_decay(jaxopt_port.legacy.adam)
  assert adamw.__name__ == "adamw"
  assert list(inspect.signature(adamw).parameters)[:3] == [
      "weight_decay", "learning_rate", "beta_1"]
  initial, gradients = problem(1.0)
  testing.compare_trajectories(
      testing.transform_trajectory(adamw(0.05, 0.01), initial, gradients),
      testing.transform_trajectory(addons.adamw(0.05, 0.01), initial,
                                   gradients), rtol=1e-6, atol=1e-7)
  excluded = adamw(0.05, 0.01, exclude_from_weight_decay=["variable_[12]"])
  plain = jaxopt_port.legacy.adam(0.01)
  got = testing.transform_trajectory(excluded, initial, gradients)
  want = testing.transform_trajectory(plain, initial, gradients)
  for got_step, want_step in zip(got, want):
    np.testing.assert_array_equal(got_step[1], want_step[1])


def numpy_direction(matrix):
  u, _, vt = np.linalg.svd(np.asarray(matrix, np.float64))
  return np.outer(u[:, 0], vt[0])


def test_nuclear_direction_equals_numpy_svd():
  """ConditionalGradient's `u1 v1^T` (power iteration, no LAPACK) equals
  numpy's SVD on random matrices, wide and tall, within a few times float32
  LAPACK's own error (relative to the largest entry: 5e-5 on the 300 x 120
  matrix, whose top singular values are 1 % apart, where float32 LAPACK is
  2e-5 off), with leading axes batched; a zero gradient gives LAPACK's
  e1 e1^T. (In float64, test_float64_port_equals_formula: 1e-12.)"""
  direction = jax.jit(_conditional_gradient._top_singular_direction)  # pylint: disable=protected-access
  rng = np.random.default_rng(5)
  dtype, rtol = np.float32, 1e-4
  for shape in [(1, 1), (1, 7), (7, 1), (3, 4), (40, 24), (24, 40),
                (300, 120)]:
    matrix = rng.standard_normal(shape).astype(dtype)
    want = numpy_direction(matrix)
    np.testing.assert_allclose(direction(matrix), want, rtol=0,
                               atol=rtol * np.abs(want).max(),
                               err_msg=str(shape))
  batch = rng.standard_normal((2, 3, 5, 4)).astype(dtype)
  np.testing.assert_allclose(
      direction(batch), [[numpy_direction(m) for m in row] for row in batch],
      atol=rtol)
  np.testing.assert_array_equal(direction(np.zeros((2, 3), dtype)),
                                [[1, 0, 0], [0, 0, 0]])
  np.testing.assert_allclose(direction(np.array([3.0, -4.0], dtype)),
                             [0.6, -0.8], rtol=rtol)
  # Gradients near float32's limits: the Gram matrix of the raw entries
  # would overflow (1e25) or underflow (1e-25); the direction is the same.
  matrix = rng.standard_normal((3, 4)).astype(dtype)
  for scale in (1e25, 1e-25):
    np.testing.assert_allclose(direction(matrix * dtype(scale)),
                               numpy_direction(matrix), rtol=0, atol=rtol,
                               err_msg=str(scale))


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_bridged_nuclear_conditional_gradient_runs_in_tensorflow(legacy):
  """TFA's ConditionalGradient(ord="nuclear") bridged: the step (a while
  loop, not LAPACK's SVD, which TensorFlow does not register) runs in
  TensorFlow, eagerly and in a tf.function, and follows numpy's SVD formula
  on a matrix, a vector and a scalar."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.addons  # pylint: disable=import-outside-toplevel
  module = tf_bridge.legacy.addons if legacy else tf_bridge.addons
  initial, gradients = testing.seeded_problem(
      8, seed=4, grad_scale=1.0, shapes=[(6, 4), (5,), ()])
  expected = numpy_trajectory(
      conditional_gradient_numpy(lambda_=1.0, ord="nuclear"), 0.5, initial,
      gradients)
  for in_function in (False, True):
    optimizer = module.ConditionalGradient(0.5, lambda_=1.0, ord="nuclear")
    variables = [tf.Variable(value) for value in initial]
    apply = lambda grads: testing.apply_gradients(optimizer, grads, variables)
    apply = tf.function(apply) if in_function else apply
    actual = []
    for step in gradients:
      apply([tf.constant(g) for g in step])
      actual.append([v.numpy() for v in variables])
    testing.compare_trajectories(actual, expected, rtol=1e-5, atol=1e-6,
                                 expected_name="numpy")


SPARSE = [("sgdw", {"weight_decay": 0.05, "momentum": 0.9}, "rows"),
          ("adamw", {"weight_decay": 0.05}, "touched"),
          ("adabelief", {"weight_decay": 0.01}, "touched"),
          ("adabelief", {"rectify": False, "amsgrad": True}, "touched"),
          ("rectified_adam", {"weight_decay": 0.01}, "params"),
          ("yogi", {}, "params"),
          ("novograd", {"weight_decay": 0.01}, "rows"),
          ("conditional_gradient", {}, "rows"),
          ("conditional_gradient", {"ord": "nuclear"}, "rows"),
          ("proximal_adagrad", {"l1_regularization_strength": 0.01}, "rows")]


@pytest.mark.parametrize("name,kwargs,lazy", SPARSE,
                         ids=[s[0] + "".join(f"-{v}" for v in s[1].values()
                                             if isinstance(v, str))
                              for s in SPARSE])
@pytest.mark.parametrize("legacy", [True, False], ids=["legacy", "keras3"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_bridged_sparse_follows_tfa_sparse_path(name, kwargs, lazy, legacy,
                                                dtype):
  """On IndexedSlices (duplicates summed) TFA moves only the touched rows of
  the variable, and, where `lazy` is "rows", of its slots too ("params": the
  slots update everywhere). numpy: the dense formula, then untouched rows
  restored; "touched": TFA's sparse formula, told the touched rows (AdamW
  decays only those; AdaBelief's `v` grows only there). In TFA's three
  dtypes, as `test_bridged_class_in_tfa_dtypes`."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.addons  # pylint: disable=import-outside-toplevel
  from tf_bridge import catalog  # pylint: disable=import-outside-toplevel
  port, numpy_step, learning_rate, _ = CASES[name]
  assert catalog.lookup(f"addons.{name}").sparse_rows(**kwargs) == lazy
  if dtype == "float16" and name != "conditional_gradient":
    learning_rate *= 10  # Moves far beyond float16's rounding.
  rng = np.random.default_rng(3)
  value = rng.standard_normal((6, 3)).astype(dtype)
  tolerance = DTYPES.get(dtype, {"rtol": 1e-5, "atol": 1e-6})
  optimizer_class = getattr(
      tf_bridge.legacy.addons if legacy else tf_bridge.addons,
      catalog.lookup(f"addons.{name}").class_name)
  optimizer = optimizer_class(learning_rate=learning_rate, **kwargs)
  variable = tf.Variable(value, name="embedding")
  step = numpy_step(**kwargs)
  initial = {"a": kwargs.get("initial_accumulator_value", 0.1)}  # Not zero.
  expected, state = value.astype(np.float64), {}
  rate = float(np.float32(learning_rate))  # As OptimizerV2 keeps it.
  for t in range(1, 31):
    indices = rng.integers(0, 6, size=4)
    values = rng.standard_normal((4, 3)).astype(dtype)
    dense = np.zeros((6, 3))
    np.add.at(dense, indices, values)
    untouched = sorted(set(range(6)) - set(indices.tolist()))
    old_state = {k: np.copy(v) for k, v in state.items()}
    if lazy == "touched":
      mask = np.isin(np.arange(6), indices)[:, None]
      new = step(expected, dense, state, rate, t, touched=mask)
    else:
      new = step(expected, dense, state, rate, t)
      new[untouched] = expected[untouched]
    if lazy == "rows":
      for key, slot in state.items():
        if np.shape(slot) == expected.shape:  # (Created at step 1.)
          old = old_state.get(key, np.full(expected.shape,
                                           initial.get(key, 0.0)))
          slot[untouched] = old[untouched]
    expected = new
    optimizer.apply_gradients([(tf.IndexedSlices(
        tf.constant(values), tf.constant(indices.astype(np.int32)),
        tf.constant([6, 3])), variable)])
    np.testing.assert_allclose(variable.numpy(), expected, **tolerance,
                               err_msg=f"step {t}")
  assert np.max(np.abs(expected - value)) > 10 * tolerance["atol"]


@pytest.mark.parametrize("legacy", [True, False], ids=["legacy", "keras3"])
def test_decay_var_list_decays_only_the_listed_variables(legacy):
  """TFA's `apply_gradients(..., decay_var_list=)` and `minimize(...,
  decay_var_list=)` (Keras 3: `apply(..., decay_var_list=)`) on the bridged
  AdamW, eagerly and in a
  tf.function: the listed variables follow AdamW's formula, the others
  Adam's; without a list (or with an empty one) every variable decays, as
  in TFA; a list takes priority over `exclude_from_weight_decay`."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.addons  # pylint: disable=import-outside-toplevel
  initial, gradients = testing.seeded_problem(12, seed=6, grad_scale=1.0)
  adamw, adam = decoupled_numpy(adam_numpy(), 0.05), adam_numpy()
  module = tf_bridge.legacy.addons if legacy else tf_bridge.addons
  for in_function in (False, True):
    optimizer = module.AdamW(0.05, 0.01, exclude_from_weight_decay=["v1"])
    variables = [tf.Variable(v, name=f"v{i}") for i, v in enumerate(initial)]
    want = [v.astype(np.float64) for v in initial]
    states = [{} for _ in initial]

    def apply(grads, decayed, through_apply=False):
      listed = [variables[i] for i in decayed]
      if through_apply:  # Keras 3's `apply(grads, variables)`.
        optimizer.apply(grads, variables, decay_var_list=listed)
      else:
        optimizer.apply_gradients(zip(grads, variables),
                                  decay_var_list=listed)

    apply = tf.function(apply) if in_function else apply
    for t, step in enumerate(gradients, 1):
      decayed = [(0, 2), (1,), (), (0, 1, 2)][t % 4]
      if t % 3 or not legacy:
        apply([tf.constant(g) for g in step], decayed,
              through_apply=not legacy and t % 3 == 0)
      else:
        optimizer.minimize(
            lambda: sum(tf.reduce_sum(v * g) for v, g in zip(variables, step)),
            variables, decay_var_list=[variables[i] for i in decayed])
      for i, g in enumerate(step):
        rule = adamw if i in (decayed or (0, 2)) else adam
        want[i] = rule(want[i], g.astype(np.float64), states[i], 0.01, t)
      for i, variable in enumerate(variables):
        np.testing.assert_allclose(variable.numpy(), want[i], rtol=1e-5,
                                   atol=1e-6, err_msg=f"step {t}, v{i}")


def test_extend_with_decoupled_weight_decay_of_legacy_classes():
  """TFA's `extend_with_decoupled_weight_decay` of tf_keras's legacy Adam
  (native, or its bridged twin) is TFA's AdamW, of SGD with momentum TFA's
  SGDW; anything else is refused with TypeError."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_keras  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.addons as tfa  # pylint: disable=import-outside-toplevel
  initial, gradients = testing.seeded_problem(10, seed=7, grad_scale=1.0)

  def trajectory(optimizer):
    variables = [tf.Variable(v) for v in initial]
    out = []
    for step in gradients:
      optimizer.apply_gradients(zip([tf.constant(g) for g in step],
                                    variables))
      out.append([v.numpy() for v in variables])
    return out

  adam_w = tfa.extend_with_decoupled_weight_decay(
      tf_keras.optimizers.legacy.Adam)
  assert adam_w is tfa.extend_with_decoupled_weight_decay(
      tf_bridge.legacy.Adam)
  assert list(inspect.signature(adam_w.port).parameters)[:2] == [
      "weight_decay", "learning_rate"]
  testing.compare_trajectories(
      trajectory(adam_w(0.05, learning_rate=0.01)),
      trajectory(tfa.AdamW(0.05, 0.01)), rtol=1e-6, atol=1e-7,
      expected_name="AdamW")
  sgd_w = tfa.extend_with_decoupled_weight_decay(
      tf_keras.optimizers.legacy.SGD)
  testing.compare_trajectories(
      trajectory(sgd_w(0.05, learning_rate=0.1, momentum=0.9)),
      trajectory(tfa.SGDW(0.05, 0.1, momentum=0.9)), rtol=1e-6, atol=1e-7,
      expected_name="SGDW")
  with pytest.raises(TypeError, match="Received: base_optimizer=<class 'int'>"):
    tfa.extend_with_decoupled_weight_decay(int)


@pytest.mark.parametrize("base,kwargs,mode", [
    ("Adam", {}, "touched"), ("SGD", {"momentum": 0.9}, "rows"),
    ("Nadam", {}, "touched")], ids=["Adam", "SGD", "Nadam"])
def test_extended_class_decays_touched_rows_of_sparse_gradients(base, kwargs,
                                                                mode):
  """`extend_with_decoupled_weight_decay(base)` on IndexedSlices, TFA's
  sparse path: the touched rows decay, then the base's own sparse step runs
  (lazy for SGD, moments everywhere for Adam, Nadam's variable on touched
  rows only): equal to decaying those rows by hand and applying the bridged
  base class."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.addons as tfa  # pylint: disable=import-outside-toplevel
  from jaxopt_port import sparse_mode  # pylint: disable=import-outside-toplevel
  base_class = getattr(tf_bridge.legacy, base)
  extended = tfa.extend_with_decoupled_weight_decay(base_class)(
      0.05, learning_rate=0.05, **kwargs)
  assert sparse_mode(extended._fused.transform(0.05)) == mode  # pylint: disable=protected-access
  plain = base_class(learning_rate=0.05, **kwargs)
  rng = np.random.default_rng(8)
  value = rng.standard_normal((6, 3)).astype(np.float32)
  decayed, by_hand = tf.Variable(value), tf.Variable(value)
  for _ in range(12):
    indices = rng.integers(0, 6, size=4).astype(np.int32)
    values = rng.standard_normal((4, 3)).astype(np.float32)
    mask = np.isin(np.arange(6), indices)[:, None].astype(np.float32)
    grad = tf.IndexedSlices(tf.constant(values), tf.constant(indices),
                            tf.constant([6, 3]))
    extended.apply_gradients([(grad, decayed)])
    by_hand.assign(by_hand.numpy() - 0.05 * by_hand.numpy() * mask)
    plain.apply_gradients([(grad, by_hand)])
    np.testing.assert_allclose(decayed.numpy(), by_hand.numpy(), rtol=1e-6,
                               atol=1e-7)
  assert np.max(np.abs(decayed.numpy() - value)) > 0.1


def test_decoupled_decay_tells_a_touched_inner_transform_its_rows():
  """`decoupled_weight_decay` of a transform that learns the touched rows
  (AdaBelief): on RowSparse gradients it decays those rows and passes them
  on, equal to decaying them by hand and running the transform."""
  def belief(learning_rate=0.01):
    return addons.adabelief(learning_rate=learning_rate)

  decoupled = addons.decoupled_weight_decay(belief)(0.05)
  assert jaxopt_port.sparse_mode(decoupled) == "touched"
  inner = belief()
  rng = np.random.default_rng(9)
  params = by_hand = jax.numpy.asarray(rng.standard_normal((6, 3)),
                                       jax.numpy.float32)
  state, inner_state = decoupled.init(params), inner.init(params)
  for _ in range(6):
    indices = rng.integers(0, 6, size=3)
    grad = jaxopt_port.RowSparse(jax.numpy.asarray(indices),
                                 jax.numpy.asarray(rng.standard_normal((3, 3)),
                                                   jax.numpy.float32), 6)
    updates, state = decoupled.update(grad, state, params)
    params = jaxopt_port.apply_updates(params, updates)
    mask = np.isin(np.arange(6), indices)[:, None]
    by_hand = jax.numpy.where(mask, by_hand - 0.05 * by_hand, by_hand)
    updates, inner_state = inner.update(grad, inner_state, by_hand)
    by_hand = jaxopt_port.apply_updates(by_hand, updates)
    np.testing.assert_allclose(params, by_hand, rtol=1e-6, atol=1e-7)


def test_tfa_names_of_hyperparameters_and_slots():
  """TFA's names where the port's differ: Yogi's hyperparameters `beta_1`
  and `beta_2` (its arguments are `beta1`, `beta2`) through `_get_hyper`,
  `_set_hyper` and attributes, with effect on the next step; LAMB's old
  `weight_decay_rate`; ConditionalGradient's `conditional_gradient` slot
  (created, never written, as TFA's); `lr=` on the Keras 3 classes is
  Keras's learning rate, as it was OptimizerV2's."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.addons as tfa  # pylint: disable=import-outside-toplevel
  yogi = tfa.Yogi(0.01, beta1=0.8)
  assert (yogi._get_hyper("beta_1"), yogi.beta_1, yogi.beta1) == (0.8, 0.8, 0.8)  # pylint: disable=protected-access
  variable = tf.Variable(np.ones(3, np.float32))
  yogi.apply_gradients([(tf.constant([1.0, -2.0, 0.5]), variable)])
  yogi._set_hyper("beta_1", 0.0)  # pylint: disable=protected-access
  assert yogi.beta1 == 0.0 and yogi.get_config()["beta1"] == 0.0
  before = variable.numpy()
  yogi.apply_gradients([(tf.constant([1.0, -2.0, 0.5]), variable)])
  m = yogi.get_slot(variable, "m").numpy()
  np.testing.assert_allclose(m, [1.0, -2.0, 0.5])  # beta_1 = 0: m = g.
  assert not np.array_equal(variable.numpy(), before)
  with pytest.raises(TypeError, match="got both 'beta_1' and 'beta1'"):
    tfa.Yogi(beta1=0.9, beta_1=0.9)

  for module in (tfa, tf_bridge.addons):
    assert module.LAMB(weight_decay_rate=0.05)._arguments["weight_decay"] == 0.05  # pylint: disable=protected-access

  gradient = tfa.ConditionalGradient(0.5)
  gradient.apply_gradients([(tf.constant([1.0, -2.0, 0.5]), variable)])
  assert gradient.get_slot_names() == ["conditional_gradient"]
  np.testing.assert_array_equal(
      gradient.get_slot(variable, "conditional_gradient").numpy(), 0)

  import keras  # pylint: disable=import-outside-toplevel
  values = []
  for kwargs in ({"lr": 0.5}, {"learning_rate": 0.5}):
    adam = tf_bridge.addons.LazyAdam(**kwargs)
    assert float(adam.learning_rate) == 0.5
    weight = keras.Variable([1.0, 2.0])
    adam.apply_gradients([(tf.constant([1.0, 1.0]), weight)])
    adam.learning_rate = 0.05  # As a callback sets it.
    adam.apply_gradients([(tf.constant([1.0, 1.0]), weight)])
    values.append(weight.numpy())
  np.testing.assert_array_equal(values[0], values[1])
  np.testing.assert_allclose(values[0], [0.45, 1.45], rtol=1e-5)


# `tfa.optimizers` 0.23's constructors (from its source; TFA cannot be
# installed beside TensorFlow 2.21): the arguments a call may pass
# positionally, in order, with their defaults (REQUIRED: none).
REQUIRED = object()
TFA_SIGNATURES = {
    "AdamW": [("weight_decay", REQUIRED), ("learning_rate", 0.001),
              ("beta_1", 0.9), ("beta_2", 0.999), ("epsilon", 1e-7),
              ("amsgrad", False), ("name", "AdamW")],
    "SGDW": [("weight_decay", REQUIRED), ("learning_rate", 0.001),
             ("momentum", 0.0), ("nesterov", False), ("name", "SGDW")],
    "AdaBelief": [("learning_rate", 0.001), ("beta_1", 0.9),
                  ("beta_2", 0.999), ("epsilon", 1e-14),
                  ("weight_decay", 0.0), ("amsgrad", False),
                  ("rectify", True), ("sma_threshold", 5.0),
                  ("total_steps", 0), ("warmup_proportion", 0.1),
                  ("min_lr", 0.0), ("name", "AdaBelief")],
    "LazyAdam": [("learning_rate", 0.001), ("beta_1", 0.9),
                 ("beta_2", 0.999), ("epsilon", 1e-7), ("amsgrad", False),
                 ("name", "LazyAdam")],
    "RectifiedAdam": [("learning_rate", 0.001), ("beta_1", 0.9),
                      ("beta_2", 0.999), ("epsilon", 1e-7),
                      ("weight_decay", 0.0), ("amsgrad", False),
                      ("sma_threshold", 5.0), ("total_steps", 0),
                      ("warmup_proportion", 0.1), ("min_lr", 0.0),
                      ("name", "RectifiedAdam")],
    "Yogi": [("learning_rate", 0.01), ("beta1", 0.9), ("beta2", 0.999),
             ("epsilon", 1e-3), ("l1_regularization_strength", 0.0),
             ("l2_regularization_strength", 0.0),
             ("initial_accumulator_value", 1e-6), ("activation", "sign"),
             ("name", "Yogi")],
    "NovoGrad": [("learning_rate", 0.001), ("beta_1", 0.9), ("beta_2", 0.999),
                 ("epsilon", 1e-7), ("weight_decay", 0.0),
                 ("grad_averaging", False), ("amsgrad", False),
                 ("name", "NovoGrad")],
    "ConditionalGradient": [("learning_rate", REQUIRED), ("lambda_", 0.01),
                            ("epsilon", 1e-7), ("ord", "fro"),
                            ("name", "ConditionalGradient")],
    "ProximalAdagrad": [("learning_rate", 0.001),
                        ("initial_accumulator_value", 0.1),
                        ("l1_regularization_strength", 0.0),
                        ("l2_regularization_strength", 0.0),
                        ("name", "ProximalAdagrad")],
    "LAMB": [("learning_rate", 0.001), ("beta_1", 0.9), ("beta_2", 0.999),
             ("epsilon", 1e-6), ("weight_decay", 0.0),
             ("exclude_from_weight_decay", None),
             ("exclude_from_layer_adaptation", None), ("name", "LAMB")],
    "MovingAverage": [("optimizer", REQUIRED), ("average_decay", 0.99),
                      ("num_updates", None), ("start_step", 0),
                      ("dynamic_decay", False), ("name", "MovingAverage")],
    "SWA": [("optimizer", REQUIRED), ("start_averaging", 0),
            ("average_period", 10), ("name", "SWA")],
    "MultiOptimizer": [("optimizers_and_layers", None),
                       ("optimizer_specs", None), ("name", "MultiOptimizer")],
    "Lookahead": [("optimizer", REQUIRED), ("sync_period", 6),
                  ("slow_step_size", 0.5), ("name", "Lookahead")],
    "COCOB": [("alpha", 100.0), ("use_locking", False), ("name", "COCOB")],
}


@pytest.mark.parametrize("name", sorted(TFA_SIGNATURES))
def test_constructor_signatures_are_tfa(name):
  """Every TFA optimizer and wrapper on `tf_bridge.legacy.addons` takes
  TFA's arguments in TFA's positional order with TFA's defaults, and a
  positional call binds as TFA's does."""
  import tf_bridge.legacy.addons as tfa  # pylint: disable=import-outside-toplevel
  optimizer_class = getattr(tfa, name)
  parameters = [p for p in inspect.signature(optimizer_class).parameters.values()
                if p.kind == p.POSITIONAL_OR_KEYWORD]
  got = [(p.name, REQUIRED if p.default is inspect.Parameter.empty
          else p.default) for p in parameters]
  assert got == TFA_SIGNATURES[name]
  if name == "AdamW":
    optimizer = optimizer_class(0.1, 0.01, 0.8, 0.99, 1e-5, True, "mine")
    assert (optimizer.weight_decay, optimizer.beta_1, optimizer.amsgrad,
            optimizer._name) == (0.1, 0.8, True, "mine")  # pylint: disable=protected-access


def test_moving_average_num_updates_caps_the_decay():
  """TFA's deprecated `num_updates`: the decay is min(average_decay,
  (1 + n) / (10 + n)), fixed at construction, and kept in the config."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.addons as tfa  # pylint: disable=import-outside-toplevel
  optimizer = tfa.MovingAverage("sgd", 0.99, 2)
  assert optimizer.num_updates == 2
  assert optimizer.get_config()["num_updates"] == 2
  variable = tf.Variable([1.0, 2.0])
  average, value = np.array([1.0, 2.0]), np.array([1.0, 2.0])
  for _ in range(3):
    optimizer.apply_gradients([(tf.constant([1.0, -1.0]), variable)])
    value = value - 0.01 * np.array([1.0, -1.0])
    average = average - (1 - 3 / 12) * (average - value)
  np.testing.assert_allclose(optimizer.get_slot(variable, "average").numpy(),
                             average, rtol=1e-6)
  with pytest.raises(ValueError, match="`num_updates` must be None or an "
                     "integer >= 0. Received: num_updates=-1"):
    tfa.MovingAverage("sgd", num_updates=-1)


# TF Addons' own tests run each optimizer in float16, float32 and float64
# (`assertAllCloseAccordingToType`); float16 within its rounding: each step
# rounds the variable (2**-11 relative).
DTYPES = {"float16": {"rtol": 2e-2, "atol": 2e-2},
          "float64": {"rtol": 1e-9, "atol": 1e-12}}
DTYPE_GRID = [(name, dtype, legacy) for name in sorted(CASES)
              for dtype in DTYPES for legacy in (True, False)]


@pytest.mark.parametrize(
    "name,dtype,legacy", DTYPE_GRID,
    ids=[f"{'legacy' if l else 'keras3'}-{n}-{d}" for n, d, l in DTYPE_GRID])
def test_bridged_class_in_tfa_dtypes(name, dtype, legacy):
  """Each bridged TFA class on float16 and float64 variables (eager) against
  the numpy formula in float64: float64 computed in float64, float16
  within float16's rounding of the steps."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.addons  # pylint: disable=import-outside-toplevel
  from tf_bridge import catalog  # pylint: disable=import-outside-toplevel
  _, numpy_step, learning_rate, grid = CASES[name]
  initial, gradients = testing.seeded_problem(20, seed=12, grad_scale=1.0)
  initial = [v.astype(dtype) for v in initial]
  if dtype == "float16" and name not in ("conditional_gradient", "cocob"):
    learning_rate *= 10  # Moves far beyond float16's rounding.
  # OptimizerV2 keeps the learning rate in a float32 variable (TFA too:
  # `_decayed_lr(var_dtype)` casts it), so a float64 step uses its float32
  # value.
  kwargs = grid[1] if name == "cocob" else grid[0]  # alpha 10 moves more.
  expected = numpy_trajectory(numpy_step(**kwargs),
                              float(np.float32(learning_rate)), initial,
                              gradients)
  module = tf_bridge.legacy.addons if legacy else tf_bridge.addons
  optimizer = getattr(module, catalog.lookup(f"addons.{name}").class_name)(
      **{**kwargs, "learning_rate": learning_rate})
  variables = [tf.Variable(v) for v in initial]
  actual = []
  for step in gradients:
    optimizer.apply_gradients(zip([tf.constant(g.astype(dtype))
                                   for g in step], variables))
    actual.append([v.numpy() for v in variables])
  assert actual[-1][0].dtype == np.dtype(dtype)
  testing.compare_trajectories(actual, expected, **DTYPES[dtype],
                               expected_name="numpy")


# The public methods and properties of TFA 0.23's classes beyond
# OptimizerV2's (from its source).
TFA_METHODS = {
    "MovingAverage": ["assign_average_vars", "shadow_copy", "has_shadow_copy",
                      "swap_weights"],
    "SWA": ["assign_average_vars"],
    "Lookahead": ["weights", "learning_rate", "lr"],
    "MultiOptimizer": ["create_optimizer_spec",
                       "maybe_initialize_optimizer_spec"],
    "AdamW": ["minimize", "apply_gradients"],
    "AveragedOptimizerWrapper": ["average_op", "assign_average_vars",
                                 "weights", "learning_rate", "lr"],
    "DecoupledWeightDecayExtension": ["minimize", "apply_gradients",
                                      "get_config", "from_config"],
}


@pytest.mark.parametrize("name", sorted(TFA_METHODS))
def test_tfa_methods_exist(name):
  import tf_bridge.legacy.addons as tfa  # pylint: disable=import-outside-toplevel
  optimizer_class = getattr(tfa, name)
  # Hyperparameters are attributes of an instance (OptimizerV2's lookup).
  instance = optimizer_class("sgd") if name == "Lookahead" else None
  assert [m for m in TFA_METHODS[name] if not hasattr(optimizer_class, m)
          and not hasattr(instance, m)] == []
