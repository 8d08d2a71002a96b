"""TF Addons' Adam relatives: LazyAdam, RectifiedAdam, AdaBelief, Yogi,
NovoGrad and LAMB."""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _adam, _checks
from jaxopt_port._base import (UpdateStep, cast_like,
                               one_minus_in_dtype, with_legacy_base_arguments)
from jaxopt_port._tree import map_leaves
from jaxopt_port.addons._decoupled import matches


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
                                slots=_adam.LegacyAdamSlots,
                                complement=one_minus_in_dtype)


def _warmed_up(lr: jax.Array, t: jax.Array, total_steps: Any,
               warmup_proportion: Any, min_lr: Any) -> jax.Array:
  """RectifiedAdam's and AdaBelief's built-in schedule: `lr` grows linearly
  over `total_steps * warmup_proportion` steps, then falls linearly to
  `min_lr` at `total_steps` (`t` is the 1-based step)."""
  total = cast_like(total_steps, lr)
  warmup = total * cast_like(warmup_proportion, lr)
  decay_steps = jnp.maximum(total - warmup, 1.0)
  decay_rate = (cast_like(min_lr, lr) - lr) / decay_steps
  return jnp.where(t <= warmup, lr * (t / warmup),
                   lr + decay_rate * jnp.minimum(t - warmup, decay_steps))


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
        lr = _warmed_up(lr, t, total_steps, warmup_proportion, min_lr)
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

@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="touched")
def adabelief(beta_1: float = 0.9, beta_2: float = 0.999,
              epsilon: float | None = 1e-14, weight_decay: float = 0.0,
              amsgrad: bool = False, rectify: bool = True,
              sma_threshold: float = 5.0, total_steps: int = 0,
              warmup_proportion: float = 0.1, min_lr: float = 0.0
              ) -> UpdateStep:
  """AdaBelief, as `tfa.optimizers.AdaBelief`: Adam whose second moment is
  the variance of the gradient around its mean (the "belief"), rectified as
  RectifiedAdam by default. With `t` the 1-based step and `lr` scheduled as
  `rectified_adam`'s when `total_steps > 0`::

    m = beta_1 * m + (1 - beta_1) * g
    v = beta_2 * v + (1 - beta_2) * (g - m)**2 + epsilon
    m_hat = m / (1 - beta_1**t);  v_hat = sqrt(v [or max v] / (1 - beta_2**t))
    u = r * m_hat / (v_hat + epsilon) if s >= sma_threshold else m_hat
      (rectify; r and s as rectified_adam's)
    u = m_hat / (v_hat + epsilon)                    (not rectify)
    p = p - lr * (u + weight_decay * p)

  On sparse gradients (TFA's sparse path) both moments decay on every row
  but `v` grows and `p` moves on the touched rows only.

  Its step reads slots as they were before it: pass `applied_as_is=True` to
  `update` where the updates go to the params as they are (README, Speed).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2: In [0, 1).
    epsilon: >= 0; 0 or None means 1e-7, as TFA's `epsilon or
      backend.epsilon()`.
    weight_decay, min_lr: >= 0.
    amsgrad: Use the running maximum of `v`.
    rectify: RectifiedAdam's rectification.
    sma_threshold, total_steps, warmup_proportion: As `rectified_adam`'s.

  Reference: Zhuang et al., 2020, "AdaBelief Optimizer: Adapting Stepsizes
  by the Belief in Observed Gradients".
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  _checks.check_range("weight_decay", weight_decay, 0.0)
  _checks.check_range("min_lr", min_lr, 0.0)
  _checks.check_range("warmup_proportion", warmup_proportion, 0.0, 1.0)
  _checks.check_optional_int("total_steps", total_steps, 0)
  epsilon = _checks.nonzero_epsilon(epsilon)
  scheduled = not _checks.is_python_zero(total_steps)
  decays = not _checks.is_python_zero(weight_decay)

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return RectifiedAdamSlots(zeros, zeros, zeros if amsgrad else None)

  def update(grads, slots, params, learning_rate, iteration,
             touched_rows=None):
    if decays:
      _checks.require_params(params, "adabelief with weight_decay needs the "
                             "params")
    if touched_rows is None:
      touched_rows = jax.tree.map(lambda _: True, grads)

    def leaf_step(g, m, v, vhat, p, touched):
      t = (iteration + 1).astype(g.dtype)
      lr = cast_like(learning_rate, g)
      if scheduled:
        lr = _warmed_up(lr, t, total_steps, warmup_proportion, min_lr)
      b1, b2 = cast_like(beta_1, g), cast_like(beta_2, g)
      eps = cast_like(epsilon, g)
      b1_power, b2_power = jnp.power(b1, t), jnp.power(b2, t)
      m = b1 * m + (1.0 - b1) * g
      if touched is True:  # TFA's dense kernel, in its order.
        v = b2 * v + (1.0 - b2) * jnp.square(g - m) + eps
      else:  # Its sparse kernel: v decays, then the touched rows grow.
        v = b2 * v + jnp.where(touched, jnp.square(g - m) * (1.0 - b2) + eps,
                               0.0)
      if amsgrad:
        vhat = jnp.maximum(vhat, v)
      m_corrected = m / (1.0 - b1_power)
      v_corrected = jnp.sqrt((vhat if amsgrad else v) / (1.0 - b2_power))
      direction = m_corrected / (v_corrected + eps)
      if rectify:
        sma_inf = 2.0 / (1.0 - b2) - 1.0
        sma = sma_inf - 2.0 * t * b2_power / (1.0 - b2_power)
        rectifier = jnp.sqrt((sma - 4.0) * (sma - 2.0) * sma_inf
                             / ((sma_inf - 4.0) * (sma_inf - 2.0) * sma))
        direction = jnp.where(sma >= cast_like(sma_threshold, g),
                              rectifier * direction, m_corrected)
      if decays:
        direction = direction + cast_like(weight_decay, p) * p
      return jnp.where(touched, -(lr * direction), 0.0), m, v, vhat

    updates, m, v, vhat = map_leaves(
        leaf_step, 4, grads, slots.m, slots.v,
        slots.vhat if amsgrad else slots.v,
        slots.m if params is None else params,  # (Unread without decay.)
        touched_rows)
    return updates, RectifiedAdamSlots(m, v, vhat if amsgrad else None)

  return UpdateStep(build, update, elementwise=True, reads_old_slots=True)


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
  def build(params):
    return YogiSlots(
        jax.tree.map(lambda p: jnp.full_like(p, initial_accumulator_value),
                     params),
        optax.tree.zeros_like(params))

  def update(grads, slots, params, learning_rate, iteration):
    if not (_checks.is_python_zero(l1) and _checks.is_python_zero(l2)):
      _checks.require_params(params, "yogi with l1/l2 regularization needs "
                             "the params")
    # At a beta1 of 0, `m` stays at zeros, unread (TF Addons keeps none).
    with_momentum = not _checks.is_python_zero(beta1)
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

    updates, v, m = map_leaves(
        leaf_step, 3, grads, slots.v, slots.m,
        optax.tree.zeros_like(grads) if params is None else params)
    # TFA's m at a beta1 set to 0 once made is g, as the step computes it.
    return updates, YogiSlots(v, m)

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


class LambSlots(NamedTuple):
  m: optax.Params
  v: optax.Params


def layer_adaptation_exclusions(
    exclude_from_weight_decay: Sequence[str] | None,
    exclude_from_layer_adaptation: Sequence[str] | None
) -> Sequence[str] | None:
  """The patterns LAMB excludes from layer adaptation: its own, or where it
  has none (None or empty, as TFA and Model Garden test it) those excluded
  from weight decay."""
  return exclude_from_layer_adaptation or exclude_from_weight_decay


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

  `exclude_from_layer_adaptation` defaults to (and when empty is)
  `exclude_from_weight_decay` (regular expressions of parameter paths,
  `re.search`). (Keras 3's `Lamb` has no weight decay of its own and adds
  epsilon the same way.)

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2: In [0, 1).
    epsilon, weight_decay: >= 0.

  Reference: You et al., 2020, "Large Batch Optimization for Deep Learning:
  Training BERT in 76 minutes".
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  _checks.check_range("weight_decay", weight_decay, 0.0)
  no_decay = matches(exclude_from_weight_decay)
  no_adaptation = matches(layer_adaptation_exclusions(
      exclude_from_weight_decay, exclude_from_layer_adaptation))

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
