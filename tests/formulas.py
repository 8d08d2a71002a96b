"""Optimizer updates written here from their native sources (Keras 3's
`update_step`, tf_keras's legacy `_resource_apply_dense`, TensorFlow's
training kernels behind TF1), each with one-change mutants a port could
make: epsilon moved inside or outside a root, a bias correction dropped, a
schedule or a scale taken from the other generation, a slot started at
the wrong value. `test_native_parity.py` checks that each reference passes
the port-vs-native check and that each mutant fails it.

`FORMULAS[name]` is `(reference, {mutant label: factory}, arguments)`: a
factory takes the port's keyword arguments (those in `arguments`) and
returns an optax transformation.
"""

import jax
import jax.numpy as jnp
import optax


def _elementwise(slots, step):
  """An optax transformation with per-leaf slots `slots(p, **hyper)` (a
  tuple) and `step(g, p, slots, t, **hyper) -> (update, slots)`, `t` the
  step counted from 1 as a float."""

  def make(**hyper):
    def init(params):
      return (jnp.zeros([], jnp.int32),
              jax.tree.map(lambda p: slots(p, **hyper), params))

    def update(grads, state, params=None):
      count, leaves = state
      t = (count + 1).astype(jnp.float32)
      pairs = jax.tree.map(lambda g, p, s: step(g, p, s, t, **hyper), grads,
                           params, leaves)
      is_pair = lambda x: isinstance(x, tuple) and len(x) == 2  # noqa: E731
      updates = jax.tree.map(lambda pair: pair[0], pairs, is_leaf=is_pair)
      new = jax.tree.map(lambda pair: pair[1], pairs, is_leaf=is_pair)
      return updates, (count + 1, new)
    return optax.GradientTransformation(init, update)
  return make


def _renamed(factory, **names):
  """`factory` taking another generation's argument names (`ours=theirs`)."""
  theirs = {value: key for key, value in names.items()}
  return lambda **hyper: factory(**{theirs.get(k, k): v
                                    for k, v in hyper.items()})


def _tensors(factory):
  """`factory` with its float arguments made float32 tensors first, as
  OptimizerV2's `_get_hyper`, TF1's `_prepare` and some Keras 3 update
  steps (Nadam's `ops.cast(self.beta_1, ...)`) do, so that 1 - beta rounds
  as there."""
  return lambda **hyper: factory(**{
      k: jnp.float32(v) if isinstance(v, float) else v
      for k, v in hyper.items()})


def _zeros(count):
  return lambda p, **_: tuple(jnp.zeros_like(p) for _ in range(count))


def _root(x, epsilon, inside):
  return jnp.sqrt(x + epsilon) if inside else jnp.sqrt(x) + epsilon


def _ema(average, value, beta, increment):
  """beta average + (1 - beta) value, or as Keras 3 and TF's kernels write
  it (`increment`): average + (value - average) (1 - beta)."""
  if increment:
    return average + (value - average) * (1 - beta)
  return beta * average + (1 - beta) * value


def adam(eps_inside=False, bias_correction=True, eps_on_corrected=False,
         product_powers=False):
  """Keras 3 / legacy / TF1 Adam: the bias correction folded into the rate,
  epsilon added to sqrt(v) uncorrected (`eps_on_corrected`: the paper's
  form, epsilon added to sqrt(v / (1 - beta_2^t))); `product_powers`: the
  powers beta^t kept as running products, as TF1 keeps them."""

  def step(g, p, slots, t, learning_rate, beta_1, beta_2, epsilon):
    del p
    m, v, power_1, power_2 = slots
    if not product_powers:
      power_1, power_2 = beta_1 ** t, beta_2 ** t
    m = _ema(m, g, beta_1, increment=True)
    v = _ema(v, g * g, beta_2, increment=True)
    powers = ((power_1 * beta_1, power_2 * beta_2) if product_powers
              else (power_1, power_2))
    if eps_on_corrected:
      update = (m / (1 - power_1)) / _root(v / (1 - power_2), epsilon,
                                           eps_inside)
      return -learning_rate * update, (m, v, *powers)
    alpha = learning_rate * (jnp.sqrt(1 - power_2) / (1 - power_1)
                             if bias_correction else 1.0)
    return -alpha * m / _root(v, epsilon, eps_inside), (m, v, *powers)
  return _elementwise(
      lambda p, beta_1, beta_2, **_: (
          jnp.zeros_like(p), jnp.zeros_like(p),
          jnp.asarray(beta_1, jnp.float32), jnp.asarray(beta_2, jnp.float32)),
      step)


def adamw(decay_with_rate=True, coupled=False):
  """Keras 3 AdamW: w -= w weight_decay lr, then Adam's step; `coupled`:
  the decay added to the gradient instead (Adam with L2)."""

  def make(learning_rate, beta_1, beta_2, epsilon, weight_decay):
    inner = adam()(learning_rate=learning_rate, beta_1=beta_1,
                   beta_2=beta_2, epsilon=epsilon)

    def update(grads, state, params=None):
      if coupled:
        grads = jax.tree.map(lambda g, p: g + weight_decay * p, grads, params)
      updates, state = inner.update(grads, state, params)
      if not coupled:
        rate = learning_rate if decay_with_rate else 1.0
        updates = jax.tree.map(lambda u, p: u - p * weight_decay * rate,
                               updates, params)
      return updates, state
    return optax.GradientTransformation(inner.init, update)
  return make


def nadam(legacy=False, schedule_of=None, eps_inside=False,
          v_correction=True):
  """Keras 3 Nadam (momentum schedule u_t = beta_1 (1 - 0.5 0.96^t), its
  moments in increment form) or tf_keras's legacy one (`legacy`:
  0.96^(schedule_decay t)), the product of the u_t a per-leaf slot;
  `schedule_of`: the other generation's schedule."""
  legacy_schedule = legacy if schedule_of is None else schedule_of == "legacy"

  def step(g, p, slots, t, learning_rate, beta_1, beta_2, epsilon,
           schedule_decay=0.004):
    del p
    m, v, product = slots
    scale = schedule_decay if legacy_schedule else 1.0
    u_t = beta_1 * (1 - 0.5 * 0.96 ** (scale * t))
    u_next = beta_1 * (1 - 0.5 * 0.96 ** (scale * (t + 1)))
    product = (product * u_t if legacy  # Keras 3 rounds as written here.
               else product * beta_1 * (1 - 0.5 * 0.96 ** t))
    m = _ema(m, g, beta_1, increment=not legacy)
    v = _ema(v, g * g, beta_2, increment=not legacy)
    m_hat = (u_next * m / (1 - product * u_next)
             + (1 - u_t) * g / (1 - product))
    v_hat = v / (1 - beta_2 ** t) if v_correction else v
    return (-learning_rate * m_hat / _root(v_hat, epsilon, eps_inside),
            (m, v, product))
  return _elementwise(
      lambda p, **_: (jnp.zeros_like(p), jnp.zeros_like(p),
                      jnp.ones([], p.dtype)), step)


def lamb(layer_adaptation=True, bias_correction=True, eps_inside=False):
  """Keras 3 Lamb: Adam's direction scaled by ||w|| / ||direction|| per
  variable (1 where either norm is 0)."""

  def step(g, p, slots, t, learning_rate, beta_1, beta_2, epsilon):
    m, v = slots
    m = beta_1 * m + (1 - beta_1) * g
    v = beta_2 * v + (1 - beta_2) * g * g
    m_hat = m / (1 - beta_1 ** t) if bias_correction else m
    v_hat = v / (1 - beta_2 ** t) if bias_correction else v
    direction = m_hat / _root(v_hat, epsilon, eps_inside)
    ratio = 1.0
    if layer_adaptation:
      w_norm = jnp.linalg.norm(p)
      d_norm = jnp.linalg.norm(direction)
      ratio = jnp.where((w_norm > 0) & (d_norm > 0), w_norm / d_norm, 1.0)
    return -learning_rate * ratio * direction, (m, v)
  return _elementwise(_zeros(2), step)


def rmsprop(eps_inside, ones_start=False):
  """RMSprop without momentum: Keras 3 (epsilon inside the root) and
  tf_keras legacy (outside); `ones_start`: the accumulator starts at 1 as
  TF1's does."""

  def step(g, p, slots, t, learning_rate, rho, epsilon):
    del p, t
    (v,) = slots
    v = rho * v + (1 - rho) * g * g
    return -learning_rate * g / _root(v, epsilon, eps_inside), (v,)
  return _elementwise(
      lambda p, **_: ((jnp.ones_like if ones_start else jnp.zeros_like)(p),),
      step)


def tf1_rmsprop(ones_start=True, eps_inside=True):
  """TF1's RMSProp kernel: the mean square starts at 1, epsilon inside the
  root, momentum on the scaled step, optionally centered."""

  def step(g, p, slots, t, learning_rate, decay, momentum, epsilon,
           centered):
    del p, t
    mean_square, mean_gradient, velocity = slots
    mean_square = decay * mean_square + (1 - decay) * g * g
    denominator = mean_square
    if centered:
      mean_gradient = decay * mean_gradient + (1 - decay) * g
      denominator = mean_square - mean_gradient * mean_gradient
    velocity = (momentum * velocity
                + learning_rate * g / _root(denominator, epsilon, eps_inside))
    return -velocity, (mean_square, mean_gradient, velocity)
  return _elementwise(
      lambda p, **_: ((jnp.ones_like if ones_start else jnp.zeros_like)(p),
                      jnp.zeros_like(p), jnp.zeros_like(p)), step)


def adagrad(eps_inside, accumulate_first=True):
  """Adagrad: Keras 3 (epsilon inside the root), tf_keras legacy (outside),
  TF1 (epsilon 0); `accumulate_first=False` divides by the accumulator
  before this step's square is added."""

  def step(g, p, slots, t, learning_rate, initial_accumulator_value,
           epsilon=0.0):
    del p, t, initial_accumulator_value
    (accumulator,) = slots
    new = accumulator + g * g
    divisor = new if accumulate_first else accumulator
    return -learning_rate * g / _root(divisor, epsilon, eps_inside), (new,)
  return _elementwise(lambda p, initial_accumulator_value, **_: (
      jnp.full_like(p, initial_accumulator_value),), step)


def adamax(bias_correction=True):

  def step(g, p, slots, t, learning_rate, beta_1, beta_2, epsilon):
    del p
    m, u = slots
    m = beta_1 * m + (1 - beta_1) * g
    u = jnp.maximum(beta_2 * u, jnp.abs(g))
    correction = (1 - beta_1 ** t) if bias_correction else 1.0
    return -learning_rate * m / (correction * (u + epsilon)), (m, u)
  return _elementwise(_zeros(2), step)


def adadelta(eps_inside=True):

  def step(g, p, slots, t, learning_rate, rho, epsilon):
    del p, t
    accumulated_grad, accumulated_delta = slots
    accumulated_grad = rho * accumulated_grad + (1 - rho) * g * g
    delta = (-_root(accumulated_delta, epsilon, eps_inside) * g
             / _root(accumulated_grad, epsilon, eps_inside))
    accumulated_delta = rho * accumulated_delta + (1 - rho) * delta * delta
    return learning_rate * delta, (accumulated_grad, accumulated_delta)
  return _elementwise(_zeros(2), step)


def lion(interpolate_with="beta_1"):

  def step(g, p, slots, t, learning_rate, beta_1, beta_2):
    del p, t
    (m,) = slots
    beta = beta_1 if interpolate_with == "beta_1" else beta_2
    update = -learning_rate * jnp.sign(m * beta + g * (1 - beta))
    return update, (m * beta_2 + g * (1 - beta_2),)
  return _elementwise(_zeros(1), step)


def momentum(lookahead=True, dampened=False):
  """SGD with momentum as Keras writes it (v = momentum v - lr g, the
  Nesterov step momentum v - lr g), TF1's `accum` form being the same
  numbers at a constant rate; `dampened`: PyTorch's (1 - momentum) g."""

  def step(g, p, slots, t, learning_rate, momentum=0.0, nesterov=False):
    del p, t
    (velocity,) = slots
    velocity = momentum * velocity - learning_rate * (
        (1 - momentum) * g if dampened else g)
    if nesterov and lookahead:
      return momentum * velocity - learning_rate * g, (velocity,)
    return velocity, (velocity,)
  return _elementwise(_zeros(1), step)


def ftrl(beta_in_l2=True, shrinkage_in_accumulator=False, l2_doubled=True):
  """FTRL-proximal as Keras 3, tf_keras legacy and TF's FtrlV2 kernel
  compute it: the shrinkage term enters the linear slot only, beta / (2 lr)
  joins the L2 strength."""

  def step(g, p, slots, t, learning_rate, learning_rate_power,
           initial_accumulator_value, l1_regularization_strength,
           l2_regularization_strength, l2_shrinkage_regularization_strength,
           beta):
    del t, initial_accumulator_value
    accumulator, linear = slots
    l2 = l2_regularization_strength + (
        beta / (2 * learning_rate) if beta_in_l2 else 0.0)
    shrunk = g + 2 * l2_shrinkage_regularization_strength * p
    new = accumulator + (shrunk * shrunk if shrinkage_in_accumulator
                         else g * g)
    power = -learning_rate_power
    linear = linear + shrunk - (new ** power - accumulator ** power) / (
        learning_rate) * p
    quadratic = new ** power / learning_rate + (2 * l2 if l2_doubled else l2)
    l1 = l1_regularization_strength
    value = (jnp.clip(linear, -l1, l1) - linear) / quadratic
    return value - p, (new, linear)
  return _elementwise(lambda p, initial_accumulator_value, **_: (
      jnp.full_like(p, initial_accumulator_value), jnp.zeros_like(p)), step)


def adafactor(epsilon_2_floor=True, clipping=True, row_normalized=True):
  """Keras 3 Adafactor: factored second moments for rank >= 2 (rows over
  their mean times columns), a full one below, the step scaled by
  max(epsilon_2, rms(w)) and clipped to rms <= clip_threshold."""

  def rms(x):
    return jnp.sqrt(jnp.mean(x * x))

  def slots(p, **_):
    if p.ndim < 2:
      return (jnp.zeros([], p.dtype), jnp.zeros([], p.dtype),
              jnp.zeros_like(p))
    return (jnp.zeros(p.shape[:-1], p.dtype),
            jnp.zeros(p.shape[:-2] + p.shape[-1:], p.dtype),
            jnp.zeros_like(p))

  def step(g, p, slots, t, learning_rate, beta_2_decay, epsilon_1,
           epsilon_2, clip_threshold, relative_step):
    del relative_step  # Keras clips the rate at 1/sqrt(t) either way.
    r, c, v = slots
    rate = jnp.minimum(learning_rate, 1 / jnp.sqrt(t))
    alpha = (jnp.maximum(epsilon_2, rms(p)) if epsilon_2_floor
             else rms(p)) * rate
    regulated = g * g + epsilon_1
    beta_2_t = 1 - t ** beta_2_decay
    if p.ndim >= 2:
      r = beta_2_t * r + (1 - beta_2_t) * jnp.mean(regulated, axis=-1)
      c = beta_2_t * c + (1 - beta_2_t) * jnp.mean(regulated, axis=-2)
      rows = r / jnp.mean(r, axis=-1, keepdims=True) if row_normalized else r
      v = rows[..., None] * c[..., None, :]
    else:
      v = beta_2_t * v + (1 - beta_2_t) * regulated
    u = g / jnp.sqrt(v)
    if clipping:
      u = u / jnp.maximum(1.0, rms(u) / clip_threshold)
    return -alpha * u, (r, c, v)
  return _elementwise(slots, step)


def proximal(adaptive, l1_scaled=True, l2_scaled=True):
  """TF's proximal kernels: a gradient step at rate a (lr, or
  lr / sqrt(accumulator) for ProximalAdagrad), then soft-thresholding by
  a l1 and division by 1 + a l2."""

  def step(g, p, slots, t, learning_rate, l1_regularization_strength,
           l2_regularization_strength, initial_accumulator_value=0.1):
    del t, initial_accumulator_value
    (accumulator,) = slots
    rate = learning_rate
    if adaptive:
      accumulator = accumulator + g * g
      rate = learning_rate / jnp.sqrt(accumulator)
    moved = p - rate * g
    threshold = l1_regularization_strength * (rate if l1_scaled else 1.0)
    shrunk = jnp.sign(moved) * jnp.maximum(jnp.abs(moved) - threshold, 0.0)
    value = shrunk / (1 + l2_regularization_strength
                      * (rate if l2_scaled else 1.0))
    return value - p, (accumulator,)
  return _elementwise(lambda p, initial_accumulator_value=0.1, **_: (
      jnp.full_like(p, initial_accumulator_value),), step)


def adagrad_da(l1_by_step=True, l2_by_step=True, count_from_zero=False):
  """TF's AdagradDA kernel: the variable is recomputed each step from the
  summed gradients g_acc and squares gg_acc at n, TF1's global step plus
  one: w = -lr shrink(g_acc, l1 n) / (l2 n lr + sqrt(gg_acc));
  `count_from_zero`: n the global step itself."""

  def step(g, p, slots, t, learning_rate,
           initial_gradient_squared_accumulator_value,
           l1_regularization_strength, l2_regularization_strength):
    del initial_gradient_squared_accumulator_value
    summed, squares = slots
    summed = summed + g
    squares = squares + g * g
    n = t - 1 if count_from_zero else t
    threshold = l1_regularization_strength * (n if l1_by_step else 1.0)
    shrunk = jnp.sign(summed) * jnp.maximum(jnp.abs(summed) - threshold, 0.0)
    denominator = (l2_regularization_strength * (n if l2_by_step else 1.0)
                   * learning_rate + jnp.sqrt(squares))
    return -learning_rate * shrunk / denominator - p, (summed, squares)
  return _elementwise(
      lambda p, initial_gradient_squared_accumulator_value, **_: (
          jnp.zeros_like(p),
          jnp.full_like(p, initial_gradient_squared_accumulator_value)),
      step)


def muon(normalized=True, shape_scale=max, decay_with_rate=True,
         adam_ratio=True, dampened=False):
  """Keras 3 Muon: 2-D variables take momentum (m = momentum m + g, the
  Nesterov blend g + momentum m) orthogonalized by `ns_steps` quintic
  Newton-Schulz iterations on the Frobenius-normalized matrix (transposed
  when tall), scaled by sqrt(max(rows, cols)) rms_rate; the others take
  Adam at learning_rate adam_lr_ratio. Weight decay first: w -= w wd lr
  (`weight_decay` for Muon's, `adam_weight_decay` for Adam's)."""

  def orthogonalized(x, steps, a, b, c):
    tall = x.shape[-2] > x.shape[-1]
    if tall:
      x = x.T
    if normalized:
      x = x / (jnp.linalg.norm(x) + 1e-7)
    for _ in range(steps):
      gram = x @ x.T
      x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if tall else x

  def step(g, p, slots, t, learning_rate, adam_beta_1, adam_beta_2,
           adam_weight_decay, epsilon, weight_decay, muon_a, muon_b, muon_c,
           adam_lr_ratio, momentum, ns_steps, nesterov, rms_rate):
    m, v = slots
    is_muon = p.ndim == 2
    decay = weight_decay if is_muon else adam_weight_decay
    decayed = p
    if decay is not None:
      decayed = p - p * decay * (learning_rate if decay_with_rate else 1.0)
    if is_muon:
      m = m + (g * (1 - momentum) if dampened else g) + m * (momentum - 1)
      direction = orthogonalized(g + momentum * m if nesterov else m,
                                 ns_steps, muon_a, muon_b, muon_c)
      change = learning_rate * direction
      if rms_rate is not None:
        change = change * jnp.sqrt(float(shape_scale(p.shape))) * rms_rate
    else:
      rate = learning_rate * (adam_lr_ratio if adam_ratio else 1.0)
      alpha = rate * jnp.sqrt(1 - adam_beta_2 ** t) / (1 - adam_beta_1 ** t)
      m = _ema(m, g, adam_beta_1, increment=True)
      v = _ema(v, g * g, adam_beta_2, increment=True)
      change = m * alpha / (jnp.sqrt(v) + epsilon)
    return decayed - change - p, (m, v)
  return _elementwise(_zeros(2), step)


_ADAM = {"epsilon inside the root": adam(eps_inside=True),
         "no bias correction": adam(bias_correction=False),
         "epsilon on the corrected moment": adam(eps_on_corrected=True)}
_TF1_NAMES = {"beta_1": "beta1", "beta_2": "beta2"}
_TF1_ADAM = {"epsilon inside the root": adam(eps_inside=True,
                                             product_powers=True),
             "no bias correction": adam(bias_correction=False),
             "epsilon on the corrected moment": adam(eps_on_corrected=True,
                                                     product_powers=True)}
_ADAMAX = {"no bias correction": adamax(bias_correction=False)}
_ADADELTA = {"epsilon outside the roots": adadelta(eps_inside=False)}
_MOMENTUM = {"Nesterov without the look-ahead": momentum(lookahead=False),
             "dampened velocity": momentum(dampened=True)}
_FTRL = {"beta left out of L2": ftrl(beta_in_l2=False),
         "shrinkage in the accumulator": ftrl(shrinkage_in_accumulator=True),
         "L2 not doubled": ftrl(l2_doubled=False)}
_FTRL_ARGUMENTS = {"learning_rate", "learning_rate_power", "initial_accumulator_value",
         "l1_regularization_strength", "l2_regularization_strength",
         "l2_shrinkage_regularization_strength", "beta"}
_PROXIMAL_ARGUMENTS = {"learning_rate", "l1_regularization_strength",
                       "l2_regularization_strength"}
_PROXIMAL_MUTANTS = {"l1 threshold not scaled by the rate": dict(
    l1_scaled=False), "l2 not scaled by the rate": dict(l2_scaled=False)}


def _proximal_mutants(adaptive):
  return {label: proximal(adaptive, **change)
          for label, change in _PROXIMAL_MUTANTS.items()}


FORMULAS = {
    "adam": (adam(), _ADAM, {"learning_rate", "beta_1", "beta_2",
                             "epsilon"}),
    "legacy.adam": (adam(), _ADAM, {"learning_rate", "beta_1", "beta_2",
                                    "epsilon"}),
    "tf1.adam": (_tensors(_renamed(adam(product_powers=True), **_TF1_NAMES)), {
        label: _tensors(_renamed(f, **_TF1_NAMES))
        for label, f in _TF1_ADAM.items()},
                 {"learning_rate", "beta1", "beta2", "epsilon"}),
    "nadam": (_tensors(nadam()), {
        "legacy's momentum schedule": _tensors(nadam(schedule_of="legacy")),
        "epsilon inside the root": _tensors(nadam(eps_inside=True)),
        "v not bias-corrected": _tensors(nadam(v_correction=False))},
              {"learning_rate", "beta_1", "beta_2", "epsilon"}),
    "legacy.nadam": (_tensors(nadam(legacy=True)), {
        "Keras 3's momentum schedule": _tensors(nadam(
            legacy=True, schedule_of="keras")),
        "epsilon inside the root": _tensors(nadam(legacy=True,
                                                  eps_inside=True)),
        "v not bias-corrected": _tensors(nadam(legacy=True,
                                               v_correction=False))},
                     {"learning_rate", "beta_1", "beta_2", "epsilon",
                      "schedule_decay"}),
    "lamb": (lamb(), {"no layer adaptation": lamb(layer_adaptation=False),
                      "no bias correction": lamb(bias_correction=False),
                      "epsilon inside the root": lamb(eps_inside=True)},
             {"learning_rate", "beta_1", "beta_2", "epsilon"}),
    "rmsprop": (rmsprop(eps_inside=True), {
        "epsilon outside the root": rmsprop(eps_inside=False),
        "accumulator starting at 1 (TF1's)": rmsprop(eps_inside=True,
                                                     ones_start=True)},
                {"learning_rate", "rho", "epsilon"}),
    "legacy.rmsprop": (rmsprop(eps_inside=False), {
        "epsilon inside the root": rmsprop(eps_inside=True),
        "accumulator starting at 1 (TF1's)": rmsprop(eps_inside=False,
                                                     ones_start=True)},
                       {"learning_rate", "rho", "epsilon"}),
    "tf1.rmsprop": (tf1_rmsprop(), {
        "accumulator starting at 0 (Keras's)": tf1_rmsprop(ones_start=False),
        "epsilon outside the root": tf1_rmsprop(eps_inside=False)},
                    {"learning_rate", "decay", "momentum", "epsilon",
                     "centered"}),
    "adagrad": (adagrad(eps_inside=True), {
        "epsilon outside the root": adagrad(eps_inside=False),
        "accumulated after the step": adagrad(eps_inside=True,
                                              accumulate_first=False)},
                {"learning_rate", "initial_accumulator_value", "epsilon"}),
    "legacy.adagrad": (adagrad(eps_inside=False), {
        "epsilon inside the root": adagrad(eps_inside=True),
        "accumulated after the step": adagrad(eps_inside=False,
                                              accumulate_first=False)},
                       {"learning_rate", "initial_accumulator_value",
                        "epsilon"}),
    "tf1.adagrad": (adagrad(eps_inside=False), {
        "accumulated after the step": adagrad(eps_inside=False,
                                              accumulate_first=False)},
                    {"learning_rate", "initial_accumulator_value"}),
    "adamax": (adamax(), _ADAMAX, {"learning_rate", "beta_1", "beta_2",
                                   "epsilon"}),
    "legacy.adamax": (adamax(), _ADAMAX, {"learning_rate", "beta_1",
                                          "beta_2", "epsilon"}),
    "adadelta": (adadelta(), _ADADELTA, {"learning_rate", "rho", "epsilon"}),
    "legacy.adadelta": (adadelta(), _ADADELTA, {"learning_rate", "rho",
                                                "epsilon"}),
    "tf1.adadelta": (adadelta(), _ADADELTA, {"learning_rate", "rho",
                                             "epsilon"}),
    "lion": (lion(), {"the update interpolated with beta_2": lion(
        interpolate_with="beta_2")}, {"learning_rate", "beta_1", "beta_2"}),
    "sgd": (momentum(), _MOMENTUM, {"learning_rate", "momentum",
                                    "nesterov"}),
    "legacy.sgd": (momentum(), _MOMENTUM, {"learning_rate", "momentum",
                                           "nesterov"}),
    "tf1.momentum": (_renamed(momentum(), nesterov="use_nesterov"), {
        label: _renamed(f, nesterov="use_nesterov")
        for label, f in _MOMENTUM.items()},
                     {"learning_rate", "momentum", "use_nesterov"}),
    "ftrl": (ftrl(), _FTRL, _FTRL_ARGUMENTS),
    "legacy.ftrl": (ftrl(), _FTRL, _FTRL_ARGUMENTS),
    "tf1.ftrl": (ftrl(), _FTRL, _FTRL_ARGUMENTS),
    "adafactor": (adafactor(), {
        "no epsilon_2 floor": adafactor(epsilon_2_floor=False),
        "no update clipping": adafactor(clipping=False),
        "rows not normalized": adafactor(row_normalized=False)},
                  {"learning_rate", "beta_2_decay", "epsilon_1", "epsilon_2",
                   "clip_threshold", "relative_step"}),
    "tf1.proximal_adagrad": (proximal(adaptive=True),
                             _proximal_mutants(adaptive=True),
                             _PROXIMAL_ARGUMENTS | {
                                 "initial_accumulator_value"}),
    "tf1.proximal_gradient_descent": (proximal(adaptive=False),
                                      _proximal_mutants(adaptive=False),
                                      _PROXIMAL_ARGUMENTS),
    "tf1.adagrad_da": (adagrad_da(), {
        "l1 threshold not scaled by the step": adagrad_da(l1_by_step=False),
        "l2 not scaled by the step": adagrad_da(l2_by_step=False),
        "step counted from 0": adagrad_da(count_from_zero=True)},
                       _PROXIMAL_ARGUMENTS | {
                           "initial_gradient_squared_accumulator_value"}),
    "muon": (muon(), {
        "no normalization before Newton-Schulz": muon(normalized=False),
        "scaled by the smaller side": muon(shape_scale=min),
        "weight decay without the rate": muon(decay_with_rate=False),
        "Adam without adam_lr_ratio": muon(adam_ratio=False),
        "dampened momentum": muon(dampened=True)},
             {"learning_rate", "adam_beta_1", "adam_beta_2",
              "adam_weight_decay", "epsilon", "weight_decay", "muon_a",
              "muon_b", "muon_c", "adam_lr_ratio", "momentum", "ns_steps",
              "nesterov", "rms_rate"}),
    "adamw": (adamw(), {
        "weight decay without the rate": adamw(decay_with_rate=False),
        "L2 in the gradient": adamw(coupled=True)},
              {"learning_rate", "beta_1", "beta_2", "epsilon",
               "weight_decay"}),
}
