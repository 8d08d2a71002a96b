"""`assert_parity`: a JAX transform against a native Keras optimizer, per step.

Both run on the same seeded variables and the same seeded gradient sequence;
the first step where a variable differs beyond `atol + rtol * |native|` fails
the check, naming the step, the variable and the largest differences.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import jaxopt_port
import numpy as np
import optax

from tf_bridge._native_runs import (apply_gradients, native_trajectories,
                                    native_trajectory)

__all__ = ["apply_gradients", "assert_parity", "native_trajectories",
           "native_trajectory", "seeded_problem", "transform_trajectories",
           "transform_trajectory"]

DEFAULT_SHAPES = ((), (5,), (4, 3))


def seeded_problem(steps: int, seed: int, grad_scale: float,
                   shapes: Sequence[tuple[int, ...]] = DEFAULT_SHAPES,
                   ) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
  """Float32 initial values (one per shape) and `steps` lists of gradients."""
  rng = np.random.default_rng(seed)
  initial = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
  gradients = [[(grad_scale * rng.standard_normal(shape)).astype(np.float32)
                for shape in shapes] for _ in range(steps)]
  return initial, gradients


def transform_trajectory(transform: optax.GradientTransformation,
                         initial: Sequence[np.ndarray],
                         gradients: Sequence[Sequence[np.ndarray]], *,
                         names: Sequence[str] | None = None
                         ) -> list[list[np.ndarray]]:
  """The same trajectory for an optax transformation, one jitted step each.

  The params are a dict keyed by the native variables' names (`names`, by
  default `variable_0`, ...), so path-based options (Muon's
  `exclude_layers`, weight decay excluded from `bias`) see the same names
  on both sides (a tf_keras variable's name ends in `:0`).
  """
  return transform_trajectories([transform], initial, gradients,
                                names=names)[0]


def transform_trajectories(transforms: Sequence[optax.GradientTransformation],
                           initial: Sequence[np.ndarray],
                           gradients: Sequence[Sequence[np.ndarray]], *,
                           names: Sequence[str] | None = None
                           ) -> list[list[list[np.ndarray]]]:
  """`transform_trajectory` of each of `transforms`, their steps together
  in one jitted program: one XLA compile for all (a compile each costs
  several times more on small problems, as mutant checks run them). A
  gradient may be a `jaxopt_port.RowSparse` (a lookup's)."""
  names = names or [f"variable_{index}" for index in range(len(initial))]

  @jax.jit
  def step(all_params, all_states, grads):
    moved = [transform.update(grads, state, params)
             for transform, params, state in zip(transforms, all_params,
                                                 all_states)]
    return ([optax.apply_updates(params, updates)
             for params, (updates, _) in zip(all_params, moved)],
            [state for _, state in moved])

  params = {name: jnp.asarray(value) for name, value in zip(names, initial)}
  all_params = [params] * len(transforms)
  all_states = [transform.init(params) for transform in transforms]
  trajectories: list[list[list[np.ndarray]]] = [[] for _ in transforms]
  for step_gradients in gradients:
    all_params, all_states = step(all_params, all_states, {
        name: g if isinstance(g, jaxopt_port.RowSparse) else jnp.asarray(g)
        for name, g in zip(names, step_gradients)})
    for trajectory, moved in zip(trajectories, all_params):
      trajectory.append([np.asarray(moved[name]) for name in names])
  return trajectories


def _check_comparable(actual: Sequence[Sequence[np.ndarray]],
                      expected: Sequence[Sequence[np.ndarray]],
                      actual_name: str, expected_name: str) -> None:
  """Refuses trajectories that cannot be compared value by value: empty,
  of other lengths, variable counts, shapes or dtypes (a comparison that
  zips or broadcasts them would pass on wrong input). A float64 reference
  (a formula computed in numpy) may check a trajectory of any float dtype."""
  if not len(expected):
    raise AssertionError(f"The {expected_name} trajectory has no steps: "
                         "there is nothing to compare.")
  if len(actual) != len(expected):
    raise AssertionError(
        f"The {actual_name} trajectory has {len(actual)} steps, the "
        f"{expected_name} one {len(expected)}.")
  for step, (got_values, want_values) in enumerate(zip(actual, expected), 1):
    if not len(want_values):
      raise AssertionError(f"Step {step} of the {expected_name} trajectory "
                           "has no variables: there is nothing to compare.")
    if len(got_values) != len(want_values):
      raise AssertionError(
          f"At step {step} the {actual_name} trajectory has "
          f"{len(got_values)} variables, the {expected_name} one "
          f"{len(want_values)}.")
    for index, (got, want) in enumerate(zip(got_values, want_values)):
      got, want = np.asarray(got), np.asarray(want)
      finer_reference = (want.dtype == np.float64
                         and np.issubdtype(got.dtype, np.floating))
      if got.shape != want.shape or (got.dtype != want.dtype
                                     and not finer_reference):
        raise AssertionError(
            f"At step {step}, variable {index} of the {actual_name} "
            f"trajectory has shape {got.shape} and dtype {got.dtype}, the "
            f"{expected_name} one shape {want.shape} and dtype {want.dtype}.")


def compare_trajectories(actual: Sequence[Sequence[np.ndarray]],
                         expected: Sequence[Sequence[np.ndarray]], *,
                         rtol: float, atol: float, actual_name: str = "transform",
                         expected_name: str = "native",
                         initial: Sequence[np.ndarray] | None = None) -> None:
  """Raises AssertionError at the first step and variable that differ, or
  when the trajectories cannot be compared (empty, or of other lengths,
  variable counts, shapes or dtypes; the expected trajectory may be a
  float64 reference), or when the comparison could not fail: the expected
  trajectory moves less than 10x the tolerance from `initial` (the values
  before the first step; by default, after it), so a transform that does
  nothing would pass."""
  _check_comparable(actual, expected, actual_name, expected_name)
  _check_moves(expected, initial, rtol, atol, expected_name)
  for step, (got_values, want_values) in enumerate(zip(actual, expected), 1):
    for index, (got, want) in enumerate(zip(got_values, want_values)):
      got, want = np.asarray(got), np.asarray(want)
      difference = np.abs(_widened(got) - _widened(want))
      allowed = atol + rtol * np.abs(_widened(want))
      if not np.all(difference <= allowed):  # NaN fails too.
        excess = np.nan_to_num(difference - allowed, nan=np.inf)
        worst = np.unravel_index(np.argmax(excess), excess.shape)
        relative = difference / np.maximum(np.abs(want), np.finfo(np.float32).tiny)
        # Not nanmax: a trajectory may be all NaN.
        raise AssertionError(
            f"{actual_name} and {expected_name} part at step {step}, variable "
            f"{index} (shape {want.shape}): max abs diff "
            f"{np.max(difference):.3g}, max rel diff "
            f"{np.max(relative):.3g} (rtol={rtol:g}, atol={atol:g}); at "
            f"index {tuple(int(i) for i in worst)}: {actual_name} "
            f"{got[worst]!r}, {expected_name} {want[worst]!r}.")


def _widened(values: Any) -> np.ndarray:
  """Values in float64, or complex128 if complex (differences and
  tolerances then go by the modulus, as `np.testing.assert_allclose`'s)."""
  values = np.asarray(values)
  return values.astype(np.complex128 if np.iscomplexobj(values)
                       else np.float64)


# A comparison must be able to fail: the reference moves at least this many
# tolerances somewhere.
POWER = 10.0


def movement(expected: Sequence[Sequence[np.ndarray]],
             initial: Sequence[np.ndarray] | None, *, rtol: float,
             atol: float) -> float:
  """How far `expected` gets from `initial` (by default, from its first
  step), in tolerances `atol + rtol * |value|`: the most any element
  moves. A comparison at that tolerance can fail only if this is large."""
  if initial is None:
    if len(expected) < 2:
      return math.inf
    initial, expected = expected[0], expected[1:]
  largest = 0.0
  for values in expected:
    for start, value in zip(initial, values):
      value = _widened(value)
      moved = np.abs(value - _widened(start))
      if moved.size:
        largest = max(largest, float(np.nanmax(
            moved / (atol + rtol * np.abs(value)))))
  return largest


def _check_moves(expected, initial, rtol, atol, expected_name) -> None:
  """Refuses a reference that stays within POWER tolerances of where it
  started (a do-nothing transform would pass)."""
  largest = movement(expected, initial, rtol=rtol, atol=atol)
  if not largest >= POWER:
    raise AssertionError(
        f"The {expected_name} trajectory moves at most {largest:.3g} "
        f"tolerances (rtol={rtol:g}, atol={atol:g}) from where it starts: "
        f"a transform that does nothing would pass. Compare more steps, "
        f"larger gradients or a larger learning rate (at least {POWER:g} "
        "tolerances).")


def assert_parity(transform: optax.GradientTransformation,
                  keras_optimizer: Any, *, steps: int = 100, seed: int = 0,
                  grad_scale: float = 1.0, rtol: float = 1e-5,
                  atol: float = 1e-6,
                  shapes: Sequence[tuple[int, ...]] = DEFAULT_SHAPES) -> None:
  """Asserts `transform` follows `keras_optimizer` step by step.

  Args:
    transform: An optax transformation (e.g. `jaxopt_port.adam()`).
    keras_optimizer: A fresh, unbuilt optimizer, Keras 3 or `tf_keras` legacy.
    steps: Number of steps compared.
    seed: Seeds the initial variables and the gradients.
    grad_scale: Standard deviation of the gradients; use a tiny one (1e-4) to
      make epsilon placement visible.
    rtol, atol: Each value must satisfy `|x - native| <= atol + rtol *
      |native|` at every step.
    shapes: The variables' shapes (by default a scalar, a vector, a matrix).

  Raises:
    AssertionError: naming the first step and variable that differ, with the
      largest absolute and relative differences there.
  """
  initial, gradients = seeded_problem(steps, seed, grad_scale, shapes)
  expected = native_trajectory(keras_optimizer, initial, gradients)
  actual = transform_trajectory(transform, initial, gradients)
  compare_trajectories(actual, expected, rtol=rtol, atol=atol,
                       expected_name=type(keras_optimizer).__name__,
                       initial=initial)
