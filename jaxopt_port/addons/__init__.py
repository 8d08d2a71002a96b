"""TensorFlow Addons' optimizers (`tfa.optimizers`, end-of-life).

TF Addons' optimizers were OptimizerV2 subclasses: each function here takes
its TFA class's arguments with their names and defaults, plus OptimizerV2's
`lr`, `decay` and clipping arguments, and computes TFA's formula in float32.
TF Addons cannot be installed beside TensorFlow 2.21; the tests check each
port against a numpy implementation of the published formula. The wrappers
(`moving_average`, `swa`, `lookahead`) wrap any optax transformation.
"""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any, Callable, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _adam, _checks, _sgd
from jaxopt_port._base import (REQUIRED, UpdateStep, cast_like, map_leaves,
                               one_minus_in_dtype, path_name,
                               with_legacy_base_arguments)
from jaxopt_port._sharding import on_whole_array
from jaxopt_port.addons._wrappers import (AveragedState, LookaheadState,
                                          average_params, lookahead,
                                          moving_average, swa)
from jaxopt_port.legacy import AdamSlots
from jaxopt_port.tf1 import proximal_adagrad_update_step

__all__ = [
    "AveragedState", "LookaheadState", "adamw", "average_params", "cocob",
    "conditional_gradient", "decoupled_weight_decay", "lamb", "lazy_adam",
    "lookahead", "moving_average", "novograd", "proximal_adagrad",
    "rectified_adam", "sgdw", "swa", "yogi",
]


def _matches(patterns: Sequence[str] | None) -> Callable[[Any], bool]:
  """Whether a tree path's name matches one of `patterns` (`re.search`, as
  TFA matches variable names)."""
  compiled = [re.compile(pattern) for pattern in patterns or []]
  return lambda path: any(p.search(path_name(path)) for p in compiled)


def _decay_terms(params: Any, weight_decay: Any,
                 excluded: Callable[[Any], bool]) -> Any:
  """`-weight_decay * p` per parameter (0 where excluded), as TFA's
  DecoupledWeightDecayExtension subtracts before the step."""
  return jax.tree_util.tree_map_with_path(
      lambda path, p: jnp.zeros_like(p) if excluded(path)
      else -(cast_like(weight_decay, p) * p), params)


def _with_decoupled_decay(step: UpdateStep, weight_decay: Any,
                          exclude_from_weight_decay: Sequence[str] | None
                          ) -> UpdateStep:
  excluded = _matches(exclude_from_weight_decay)

  def update(grads, slots, params, learning_rate, iteration):
    _checks.require_params(params, "Decoupled weight decay needs the params")
    decay = _decay_terms(params, weight_decay, excluded)
    updates, slots = step.update(grads, slots,
                                 jax.tree.map(jnp.add, params, decay),
                                 learning_rate, iteration)
    return jax.tree.map(jnp.add, decay, updates), slots

  return UpdateStep(step.build, update, elementwise=(
      step.elementwise and not exclude_from_weight_decay))


def decoupled_weight_decay(factory: Callable[..., optax.GradientTransformation]
                           ) -> Callable[..., optax.GradientTransformationExtraArgs]:
  """TFA's `extend_with_decoupled_weight_decay` for any optax transform
  factory: the returned factory takes `weight_decay` first, then `factory`'s
  arguments, and `exclude_from_weight_decay` (regular expressions of tree
  paths, `re.search`). Each step first decays the params, `p = p -
  weight_decay * p` (not scaled by the learning rate: schedule both
  together, as TFA advises), then runs `factory`'s transform on the decayed
  params.

  `decoupled_weight_decay(jaxopt_port.legacy.adam)` is TFA's `AdamW`.

  Reference: Loshchilov and Hutter, 2019, "Decoupled Weight Decay
  Regularization".
  """
  inner_parameters = list(inspect.signature(factory).parameters.values())

  @functools.wraps(factory, assigned=("__module__", "__doc__"), updated=())
  def with_weight_decay(weight_decay, *args, exclude_from_weight_decay=None,
                        **kwargs):
    _checks.check_range("weight_decay", weight_decay, 0.0)
    inner = factory(*args, **kwargs)
    excluded = _matches(exclude_from_weight_decay)

    def update_fn(grads, state, params=None, **extra_args):
      _checks.require_params(params, "Decoupled weight decay needs the params")
      decay = _decay_terms(params, weight_decay, excluded)
      updates, state = inner.update(
          grads, state, jax.tree.map(jnp.add, params, decay), **extra_args)
      return jax.tree.map(jnp.add, decay, updates), state

    return optax.GradientTransformationExtraArgs(inner.init, update_fn)

  with_weight_decay.__name__ = with_weight_decay.__qualname__ = (
      factory.__name__ + "w")
  with_weight_decay.__signature__ = inspect.Signature(
      [inspect.Parameter("weight_decay",
                         inspect.Parameter.POSITIONAL_OR_KEYWORD)]
      + [p for p in inner_parameters if p.kind != p.KEYWORD_ONLY]
      + [inspect.Parameter("exclude_from_weight_decay",
                           inspect.Parameter.KEYWORD_ONLY, default=None)]
      + [p for p in inner_parameters if p.kind == p.KEYWORD_ONLY])
  return with_weight_decay


@with_legacy_base_arguments(learning_rate=0.001)
def adamw(weight_decay: float, learning_rate: Any = 0.001,
          beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
          amsgrad: bool = False, *,
          exclude_from_weight_decay: Sequence[str] | None = None
          ) -> UpdateStep:
  """AdamW, as `tfa.optimizers.AdamW`: legacy Adam after a decoupled decay.

  ::

    p = p - weight_decay * p          (not scaled by the learning rate)
    p = <tf_keras legacy Adam step>

  (Keras 3's `AdamW` decays by `weight_decay * learning_rate * p`.) On
  sparse gradients TFA decays only the touched rows while its Adam step moves
  every row; the bridge gives the dense result.

  Args:
    weight_decay: Required, >= 0.
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2, epsilon, amsgrad: As `jaxopt_port.legacy.adam`.
    exclude_from_weight_decay: Regular expressions of parameter paths not
      decayed.
  """
  del learning_rate
  _checks.check_range("weight_decay", weight_decay, 0.0)
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  return _with_decoupled_decay(
      _adam.adam_update_step(beta_1, beta_2, epsilon, amsgrad, slots=AdamSlots,
                             complement=one_minus_in_dtype),
      weight_decay, exclude_from_weight_decay)


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="rows")
def sgdw(weight_decay: float, learning_rate: Any = 0.001,
         momentum: float = 0.0, nesterov: bool = False, *,
         exclude_from_weight_decay: Sequence[str] | None = None
         ) -> UpdateStep:
  """SGDW, as `tfa.optimizers.SGDW`: legacy SGD after a decoupled decay
  `p = p - weight_decay * p`. On sparse gradients only the touched rows
  decay and move (TFA's sparse path; the bridge does the same).

  Args:
    weight_decay: Required, >= 0.
    learning_rate: A float or a schedule. Defaults to 0.001 (TFA's).
    momentum, nesterov: As `jaxopt_port.legacy.sgd`.
    exclude_from_weight_decay: Regular expressions of parameter paths not
      decayed.
  """
  del learning_rate
  _checks.check_range("weight_decay", weight_decay, 0.0)
  _checks.check_range("momentum", momentum, 0.0, 1.0)
  return _with_decoupled_decay(_sgd.sgd_update_step(momentum, nesterov),
                               weight_decay, exclude_from_weight_decay)


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="rows")
def lazy_adam(beta_1: float = 0.9, beta_2: float = 0.999,
              epsilon: float = 1e-7, amsgrad: bool = False) -> UpdateStep:
  """LazyAdam, as `tfa.optimizers.LazyAdam`: legacy Adam on dense gradients;
  on sparse ones (`tf.IndexedSlices`, through the bridge) only the touched
  rows of the parameter and of `m`, `v` change, so embeddings train at the
  cost of their batch. (JAX gradients are dense, so the port is Adam.)

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2, epsilon, amsgrad: As `jaxopt_port.legacy.adam`.
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  return _adam.adam_update_step(beta_1, beta_2, epsilon, amsgrad,
                                slots=AdamSlots, complement=one_minus_in_dtype)


class RectifiedAdamSlots(NamedTuple):
  m: optax.Params
  v: optax.Params
  vhat: optax.Params | None  # With amsgrad.


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="params")
def rectified_adam(beta_1: float = 0.9, beta_2: float = 0.999,
                   epsilon: float = 1e-7, weight_decay: float = 0.0,
                   amsgrad: bool = False, sma_threshold: float = 5.0,
                   total_steps: int = 0, warmup_proportion: float = 0.1,
                   min_lr: float = 0.0) -> UpdateStep:
  """Rectified Adam, as `tfa.optimizers.RectifiedAdam`. With `t` the 1-based
  step::

    lr = lr * t / w                      if total_steps > 0 and t <= w
    lr = lr + (min_lr - lr) * min(t - w, d) / d      if total_steps > 0, t > w
      (w = total_steps * warmup_proportion, d = max(total_steps - w, 1))
    m = beta_1 * m + (1 - beta_1) * g;  v = beta_2 * v + (1 - beta_2) * g**2
    s_inf = 2 / (1 - beta_2) - 1;  s = s_inf - 2 t beta_2**t / (1 - beta_2**t)
    m_hat = m / (1 - beta_1**t);  v_hat = sqrt(v [or max v] / (1 - beta_2**t))
    r = sqrt((s - 4) (s - 2) s_inf / ((s_inf - 4) (s_inf - 2) s))
    u = r * m_hat / (v_hat + epsilon) if s >= sma_threshold else m_hat
    p = p - lr * (u + weight_decay * p)

  On sparse gradients TFA moves only the touched rows of `p` (the moments
  decay everywhere); the bridge does the same.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2: In [0, 1).
    epsilon, weight_decay, min_lr: >= 0.
    amsgrad: Use the running maximum of `v`.
    sma_threshold: The rectification starts when `s` reaches it.
    total_steps: With warmup_proportion and min_lr, TFA's built-in warmup and
      linear decay of the learning rate; 0 leaves it off.

  Reference: Liu et al., 2020, "On the Variance of the Adaptive Learning Rate
  and Beyond".
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  _checks.check_range("weight_decay", weight_decay, 0.0)
  _checks.check_range("min_lr", min_lr, 0.0)
  _checks.check_range("warmup_proportion", warmup_proportion, 0.0, 1.0)
  _checks.check_optional_int("total_steps", total_steps, 0)
  scheduled = not _checks.is_python_zero(total_steps)
  decays = not _checks.is_python_zero(weight_decay)

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return RectifiedAdamSlots(zeros, zeros, zeros if amsgrad else None)

  def update(grads, slots, params, learning_rate, iteration):
    if decays:
      _checks.require_params(params, "rectified_adam with weight_decay needs "
                             "the params")
    def leaf_step(g, m, v, vhat, p):
      t = (iteration + 1).astype(g.dtype)
      lr = cast_like(learning_rate, g)
      if scheduled:
        total = cast_like(total_steps, g)
        warmup = total * cast_like(warmup_proportion, g)
        decay_steps = jnp.maximum(total - warmup, 1.0)
        decay_rate = (cast_like(min_lr, g) - lr) / decay_steps
        lr = jnp.where(t <= warmup, lr * (t / warmup),
                       lr + decay_rate * jnp.minimum(t - warmup, decay_steps))
      b1, b2 = cast_like(beta_1, g), cast_like(beta_2, g)
      b1_power, b2_power = jnp.power(b1, t), jnp.power(b2, t)
      sma_inf = 2.0 / (1.0 - b2) - 1.0
      sma = sma_inf - 2.0 * t * b2_power / (1.0 - b2_power)
      m = b1 * m + (1.0 - b1) * g
      v = b2 * v + (1.0 - b2) * jnp.square(g)
      if amsgrad:
        vhat = jnp.maximum(vhat, v)
      m_corrected = m / (1.0 - b1_power)
      v_corrected = jnp.sqrt((vhat if amsgrad else v) / (1.0 - b2_power))
      rectifier = jnp.sqrt((sma - 4.0) / (sma_inf - 4.0) * (sma - 2.0)
                           / (sma_inf - 2.0) * sma_inf / sma)
      direction = jnp.where(
          sma >= cast_like(sma_threshold, g),
          rectifier * m_corrected / (v_corrected + cast_like(epsilon, g)),
          m_corrected)
      if decays:
        direction = direction + cast_like(weight_decay, p) * p
      return -(lr * direction), m, v, vhat

    updates, m, v, vhat = map_leaves(
        leaf_step, 4, grads, slots.m, slots.v,
        slots.vhat if amsgrad else slots.v,
        slots.m if params is None else params)  # (Unread without decay.)
    vhat = vhat if amsgrad else None
    return updates, RectifiedAdamSlots(m, v, vhat)

  return UpdateStep(build, update, elementwise=True)


class YogiSlots(NamedTuple):
  v: optax.Params
  m: optax.Params


def _solve(a: jax.Array, b: jax.Array, c: jax.Array) -> jax.Array:
  """argmin_w a/2 w**2 + b w + c |w|: `(c sign(b) - b) / a` where |b| > c."""
  return (jnp.abs(b) > c).astype(b.dtype) * ((c * jnp.sign(b) - b) / a)


@with_legacy_base_arguments(learning_rate=0.01, sparse_rows="params")
def yogi(beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-3,
         l1_regularization_strength: float = 0.0,
         l2_regularization_strength: float = 0.0,
         initial_accumulator_value: float = 1e-6,
         activation: str = "sign") -> UpdateStep:
  """Yogi, as `tfa.optimizers.Yogi`. With `t` the 1-based step::

    lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)
    m = m * beta1 + g * (1 - beta1)
    v = v + (1 - beta2) * sign(g**2 - v) * g**2     (tanh(10 (g**2 - v)))
    rate = lr_t / (sqrt(v) + epsilon);  p' = p - rate * m
    p = prox(p', rate * l1, rate * l2)     (TFA's l1/l2 proximal step)

  With beta1 = 0 there is no `m` and the step uses `g`. On sparse gradients
  only the touched rows of `p` move while `m` decays everywhere (TFA's
  sparse path; the bridge too).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.01.
    beta1, beta2: In [0, 1).
    epsilon, l1_regularization_strength, l2_regularization_strength: >= 0.
    initial_accumulator_value: Start of `v`, >= 0.
    activation: "sign" (the paper's) or "tanh" (a smooth sign).

  Reference: Zaheer et al., 2018, "Adaptive Methods for Nonconvex
  Optimization".
  """
  _checks.check_moment_arguments(beta1, beta2, epsilon,
                                 names=("beta1", "beta2"))
  l1, l2 = l1_regularization_strength, l2_regularization_strength
  for name, value in (("l1_regularization_strength", l1),
                      ("l2_regularization_strength", l2),
                      ("initial_accumulator_value", initial_accumulator_value)):
    _checks.check_range(name, value, 0.0)
  if activation not in ("sign", "tanh"):
    raise ValueError(f"`activation` must be 'sign' or 'tanh'. Received: "
                     f"activation={activation!r}")
  with_momentum = not _checks.is_python_zero(beta1)

  def build(params):
    return YogiSlots(
        jax.tree.map(lambda p: jnp.full_like(p, initial_accumulator_value),
                     params),
        optax.tree.zeros_like(params) if with_momentum else None)

  def update(grads, slots, params, learning_rate, iteration):
    if not (_checks.is_python_zero(l1) and _checks.is_python_zero(l2)):
      _checks.require_params(params, "yogi with l1/l2 regularization needs "
                             "the params")
    t = (iteration + 1).astype(jnp.float32)

    def leaf_step(g, v, m, p):
      b1, b2 = cast_like(beta1, g), cast_like(beta2, g)
      lr = cast_like(learning_rate, g) * jnp.sqrt(
          1 - jnp.power(b2, t)) / (1 - jnp.power(b1, t))
      direction = g
      if with_momentum:
        m = m * b1 + g * (1 - b1)
        direction = m
      squared = g * g
      sign = (jnp.sign(squared - v) if activation == "sign"
              else jnp.tanh(10 * (squared - v)))
      v = v + (1 - b2) * sign * squared
      rate = lr / (jnp.sqrt(v) + cast_like(epsilon, g))
      new = p - rate * direction
      if not _checks.is_python_zero(l1):
        new = _solve(1 + cast_like(l2, g) * rate, -new, cast_like(l1, g) * rate)
      elif not _checks.is_python_zero(l2):
        new = new / (1 + cast_like(l2, g) * rate)
      return new - p, v, m

    zeros = optax.tree.zeros_like(grads)  # For absent params and momentum.
    updates, v, m = map_leaves(leaf_step, 3, grads, slots.v,
                               slots.m if with_momentum else zeros,
                               zeros if params is None else params)
    return updates, YogiSlots(v, m if with_momentum else None)

  return UpdateStep(build, update, elementwise=True)


class NovoGradSlots(NamedTuple):
  m: optax.Params
  v: optax.Params  # A scalar per parameter: the layer's gradient energy.
  vhat: optax.Params | None  # With amsgrad.


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="rows")
def novograd(beta_1: float = 0.9, beta_2: float = 0.999,
             epsilon: float = 1e-7, weight_decay: float = 0.0,
             grad_averaging: bool = False, amsgrad: bool = False
             ) -> UpdateStep:
  """NovoGrad, as `tfa.optimizers.NovoGrad`: Adam-like, with one second
  moment per layer (per parameter tensor)::

    n = ||g||**2;  v = n on the first step, else beta_2 * v + (1 - beta_2) n
    d = g / (sqrt(v [or max v]) + epsilon) + weight_decay * p
    d = d * (1 - beta_1)        (grad_averaging, after the first step)
    m = beta_1 * m - lr * d;  p = p + m       (Keras momentum)

  On sparse gradients only the touched rows of `p` and `m` change (TFA's
  sparse path; the bridge too).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2: In [0, 1).
    epsilon, weight_decay: >= 0.
    grad_averaging: Scale the normalized gradient by `1 - beta_1`.
    amsgrad: Use the running maximum of `v`.

  Reference: Ginsburg et al., 2019, "Stochastic Gradient Methods with
  Layer-wise Adaptive Moments for Training of Deep Networks".
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  _checks.check_range("weight_decay", weight_decay, 0.0)
  decays = not _checks.is_python_zero(weight_decay)

  def build(params):
    # Reduced from each parameter: on a mesh, laid out as its norm will be.
    scalars = jax.tree.map(lambda p: jnp.zeros_like(p).sum(), params)
    return NovoGradSlots(optax.tree.zeros_like(params), scalars,
                         scalars if amsgrad else None)

  def update(grads, slots, params, learning_rate, iteration):
    if decays:
      _checks.require_params(params, "novograd with weight_decay needs the "
                             "params")
    first = iteration == 0

    def leaf_step(g, m, v, vhat, p):
      b1, b2 = cast_like(beta_1, g), cast_like(beta_2, g)
      energy = jnp.sum(jnp.square(g))
      v = jnp.where(first, energy, v * b2 + energy * (1 - b2))
      if amsgrad:
        vhat = jnp.maximum(vhat, v)
      d = g / (jnp.sqrt(vhat if amsgrad else v) + cast_like(epsilon, g))
      if decays:
        d = d + cast_like(weight_decay, g) * p
      if grad_averaging:
        d = jnp.where(first, d, d * (1 - b1))
      m = m * b1 - cast_like(learning_rate, g) * d
      return m, m, v, vhat

    updates, m, v, vhat = map_leaves(
        leaf_step, 4, grads, slots.m, slots.v,
        slots.vhat if amsgrad else slots.v,
        slots.m if params is None else params)  # (Unread without decay.)
    return updates, NovoGradSlots(m, v, vhat if amsgrad else None)

  return UpdateStep(build, update)


class COCOBSlots(NamedTuple):
  lr: optax.Params  # The running maximum |g| (TFA's slot name), from 1e-8.
  grad_norm_sum: optax.Params
  gradients_sum: optax.Params
  tilde_w: optax.Params  # The offset of p from its start.
  reward: optax.Params


@with_legacy_base_arguments(learning_rate=0.0)
def cocob(alpha: float = 100.0, learning_rate: float = 0.0) -> UpdateStep:
  """COCOB-Backprop, as `tfa.optimizers.COCOB`: learning-rate free (the
  `learning_rate` argument is ignored, as TFA has none; `alpha` comes first,
  as in TFA's `COCOB(alpha)`)::

    L = max(L, |g|);  G = G + |g|;  S = S + g
    R = max(R - g * w~, 0)
    w~' = -S / (L * max(G + L, alpha * L)) * (R + L)
    p = p - w~ + w~';  w~ = w~'

  Args:
    alpha: >= 1; bounds the step early in training.

  Reference: Orabona and Tommasi, 2017, "Training Deep Networks without
  Learning Rates Through Coin Betting".
  """
  _checks.check_range("alpha", alpha, 1.0)
  del learning_rate

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return COCOBSlots(jax.tree.map(lambda p: jnp.full_like(p, 1e-8), params),
                      zeros, zeros, zeros, zeros)

  def update(grads, slots, params, learning_rate, iteration):
    del params, learning_rate, iteration

    def leaf_step(g, lr, norm_sum, grad_sum, tilde_w, reward):
      lr = jnp.maximum(lr, jnp.abs(g))
      grad_sum = grad_sum + g
      norm_sum = norm_sum + jnp.abs(g)
      reward = jnp.maximum(reward - g * tilde_w, 0)
      bound = jnp.maximum(norm_sum + lr, cast_like(alpha, g) * lr)
      new_w = -grad_sum / (lr * bound) * (reward + lr)
      return new_w - tilde_w, lr, norm_sum, grad_sum, new_w, reward

    updates, *fields = map_leaves(leaf_step, 6, grads, *slots)
    return updates, COCOBSlots(*fields)

  return UpdateStep(build, update, elementwise=True)


class ConditionalGradientSlots(NamedTuple):
  # TFA creates this slot and never writes it; kept so that the bridged
  # class's variables (and so checkpoints) are TFA's.
  conditional_gradient: optax.Params


def _top_singular_direction(g: jax.Array) -> jax.Array:
  """`u1 v1^T` of `g` (rank < 2 padded to a row; leading axes batched)."""
  matrix = g.reshape((1,) * (2 - g.ndim) + g.shape) if g.ndim < 2 else g
  flat = matrix.reshape((-1,) + matrix.shape[-2:])
  return jax.vmap(_rank_one_direction)(flat).reshape(g.shape)


def _rank_one_direction(matrix: jax.Array) -> jax.Array:
  """`u1 v1^T` of one matrix, by power iteration on its smaller Gram matrix.

  Not `jnp.linalg.svd`: on CPU that is a LAPACK call TensorFlow cannot run,
  and the bridge carries this function into TensorFlow. The iteration stops
  when the distance still to go, estimated from how fast the steps shrink,
  is below the dtype's epsilon, or when the steps stop shrinking at rounding
  level; `u` and `v` are then polished against the matrix itself. Within a
  few times float32 LAPACK's own error on random matrices; like any SVD,
  arbitrary when the top singular value is repeated.
  A zero matrix gives LAPACK's `e1 e1^T`.
  """
  rows, columns = matrix.shape
  # The Gram matrix of the smaller side; of the static one where the other
  # is symbolic (a sparse gradient's touched rows).
  if isinstance(rows, int) and (not isinstance(columns, int)
                                or rows < columns):
    return _rank_one_direction(matrix.T).T
  largest = jnp.max(jnp.abs(matrix))
  corner = jnp.zeros_like(matrix).at[0, 0].set(1)
  # Scaled to a largest entry of 1 so the Gram matrix neither under- nor
  # overflows; the direction does not depend on the scale.
  a = jnp.where(largest > 0, matrix / jnp.where(largest > 0, largest, 1),
                corner)
  gram = a.T @ a
  epsilon = jnp.finfo(a.dtype).eps
  rounding_level = 64 * columns ** 0.5 * epsilon

  def unit(x):
    return x / jnp.linalg.norm(x)

  def going_on(carry):
    _, change, previous_change, count = carry
    shrink = change / previous_change
    still_to_go = jnp.where(shrink < 1, change * shrink / (1 - shrink),
                            jnp.inf)
    stalled = (shrink >= 1) & (change <= rounding_level)
    return (count < 3) | ((count < 20_000) & (still_to_go > epsilon)
                          & ~stalled)

  def power_step(carry):
    v, change, _, count = carry
    w = unit(gram @ v)
    return w, jnp.linalg.norm(w - v), change, count + 1

  start = gram[:, jnp.argmax(jnp.sum(gram * gram, axis=0))]
  infinity = jnp.asarray(jnp.inf, a.dtype)
  v, *_ = jax.lax.while_loop(going_on, power_step,
                             (unit(start), infinity, infinity, 0))
  u = unit(a @ v)
  v = unit(a.T @ u)
  return jnp.outer(unit(a @ v), v)


@with_legacy_base_arguments(learning_rate=REQUIRED, sparse_rows="rows")
def conditional_gradient(lambda_: float = 0.01, epsilon: float = 1e-7,
                         ord: str = "fro") -> UpdateStep:  # pylint: disable=redefined-builtin
  """Conditional gradient (Frank-Wolfe), as
  `tfa.optimizers.ConditionalGradient`, over the ball of radius `lambda_`::

    s = g / (||g||_F + epsilon)                 (ord="fro")
    s = u1 v1^T, the top singular pair of g     (ord="nuclear")
    p = learning_rate * p - (1 - learning_rate) * lambda_ * s

  (TFA's parameterization: `learning_rate` is the weight kept on `p`.) TFA's
  nuclear form handles rank <= 2 (a scalar or vector as one row); here
  higher ranks are batched over their leading axes. On sparse gradients only
  the touched rows move (TFA's sparse path; the bridge too).

  Args:
    learning_rate: A float or a schedule (required, as in TFA).
    lambda_: The constraint radius, >= 0.
    epsilon: >= 0.
    ord: "fro" or "nuclear".

  Reference: Frank and Wolfe, 1956; Jaggi, 2013, "Revisiting Frank-Wolfe".
  """
  _checks.check_range("lambda_", lambda_, 0.0)
  _checks.check_range("epsilon", epsilon, 0.0)
  if ord not in ("fro", "nuclear"):
    raise ValueError(f"`ord` must be 'fro' or 'nuclear'. Received: ord={ord!r}")

  def update(grads, slots, params, learning_rate, iteration):
    del iteration
    _checks.require_params(params, "conditional_gradient sets the params from "
                           "them")

    def step(g, p):
      if ord == "fro":
        s = g / (jnp.sum(g ** 2) ** 0.5 + cast_like(epsilon, g))
      else:
        s = on_whole_array(_top_singular_direction, g)
      lr = cast_like(learning_rate, p)
      return p * lr - (1 - lr) * cast_like(lambda_, p) * s - p

    return jax.tree.map(step, grads, params), slots

  return UpdateStep(
      lambda params: ConditionalGradientSlots(
          jax.tree.map(jnp.zeros_like, params)), update)


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="rows")
def proximal_adagrad(initial_accumulator_value: float = 0.1,
                     l1_regularization_strength: float = 0.0,
                     l2_regularization_strength: float = 0.0) -> UpdateStep:
  """Proximal Adagrad, as `tfa.optimizers.ProximalAdagrad` (the kernel of
  `jaxopt_port.tf1.proximal_adagrad`, with TFA's defaults and OptimizerV2's
  base arguments).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    initial_accumulator_value: > 0.
    l1_regularization_strength, l2_regularization_strength: >= 0.
  """
  _checks.check_range("initial_accumulator_value", initial_accumulator_value,
                      0.0, low_open=True)
  _checks.check_range("l1_regularization_strength",
                      l1_regularization_strength, 0.0)
  _checks.check_range("l2_regularization_strength",
                      l2_regularization_strength, 0.0)
  return proximal_adagrad_update_step(initial_accumulator_value,
                                      l1_regularization_strength,
                                      l2_regularization_strength)


class LambSlots(NamedTuple):
  m: optax.Params
  v: optax.Params


@with_legacy_base_arguments(learning_rate=0.001)
def lamb(beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-6,
         weight_decay: float = 0.0,
         exclude_from_weight_decay: Sequence[str] | None = None,
         exclude_from_layer_adaptation: Sequence[str] | None = None
         ) -> UpdateStep:
  """LAMB, as `tfa.optimizers.LAMB`. With `t` the 1-based step::

    m = m * beta_1 + g * (1 - beta_1);  v = v * beta_2 + g**2 * (1 - beta_2)
    u = (m / (1 - beta_1**t)) / (sqrt(v / (1 - beta_2**t)) + epsilon)
    u = u + weight_decay * p                    (unless excluded)
    r = ||p|| / ||u|| if both > 0 else 1        (unless excluded)
    p = p - r * lr * u

  `exclude_from_layer_adaptation` defaults to `exclude_from_weight_decay`
  (regular expressions of parameter paths, `re.search`). (Keras 3's `Lamb`
  has no weight decay of its own and adds epsilon the same way.)

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2: In [0, 1).
    epsilon, weight_decay: >= 0.

  Reference: You et al., 2020, "Large Batch Optimization for Deep Learning:
  Training BERT in 76 minutes".
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  _checks.check_range("weight_decay", weight_decay, 0.0)
  no_decay = _matches(exclude_from_weight_decay)
  no_adaptation = _matches(exclude_from_weight_decay
                           if exclude_from_layer_adaptation is None
                           else exclude_from_layer_adaptation)

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return LambSlots(zeros, zeros)

  def update(grads, slots, params, learning_rate, iteration):
    _checks.require_params(params, "lamb scales its step by the params' norm")
    t = (iteration + 1).astype(jnp.float32)

    def leaf_step(path, g, m, v, p):
      b1, b2 = cast_like(beta_1, g), cast_like(beta_2, g)
      m = m * b1 + g * (1 - b1)
      v = v * b2 + g * g * (1 - b2)
      m_hat = m / (1 - jnp.power(b1, t))
      v_hat = v / (1 - jnp.power(b2, t))
      direction = m_hat / (jnp.sqrt(v_hat) + cast_like(epsilon, g))
      if not no_decay(path):
        direction = direction + cast_like(weight_decay, p) * p
      ratio = 1.0
      if not no_adaptation(path):
        w_norm = jnp.linalg.norm(p.ravel())
        g_norm = jnp.linalg.norm(direction.ravel())
        ratio = jnp.where(w_norm > 0, jnp.where(g_norm > 0, w_norm / g_norm,
                                                1.0), 1.0)
      return -(ratio * cast_like(learning_rate, g) * direction), m, v

    updates, m, v = map_leaves(leaf_step, 3, grads, slots.m, slots.v, params,
                               with_path=True)
    return updates, LambSlots(m, v)

  return UpdateStep(build, update)
