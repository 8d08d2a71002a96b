"""The fused step where the variables live on several devices: one call per
device's variables.

Under `ParameterServerStrategy` with several parameter servers (and
partitioned variables, whose shards the optimizer sees as variables) each
variable and its slots live on one server, and an XLA call cannot touch
resources on two devices. So the step runs once per device, over that
device's variables and their slots, placed there by the strategy's
`extended.update`, as native updates run where their variables live. That
is the same update only if the transform's update of a variable reads no
other variable (checked on the step's jaxpr: `_check_separable`); the
leaves of no variable (Nadam's `u_product`, TF1 Adam's `beta1_power`) go
into every call as values and are assigned once, after them.
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
import jax.extend

from tf_bridge import _compiled
from tf_bridge._layout import StateLayout, precision, spec_of


def by_device(variables: Sequence[Any]) -> list[list[int]]:
  """The variables' indices grouped by the device they live on, in order of
  first appearance (one group where a strategy mirrors them: a mirrored
  variable's device is its primary's)."""
  groups: dict[str, list[int]] = {}
  for index, variable in enumerate(variables):
    groups.setdefault(variable.device, []).append(index)
  return list(groups.values())


def apply(fused: Any, distribution: Any, groups: Sequence[Sequence[int]],
          variables: Sequence[Any], grads: Sequence[Any],
          state_variables: Sequence[Any], learning_rate: Any,
          iterations: Any, decay: tuple[float, ...] | None) -> Any:
  """`FusedTransform.apply` for variables on several devices: the step of
  each device's `group` of variables runs there (`state_variables` in the
  layout's stored-leaf order). A state variable elsewhere (a leaf of no
  variable; a strategy may place a variable's non-slot state, Adafactor's
  factored moments, on another server) goes in as its value, read before
  any call, and is assigned after the calls."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  present = tuple(g is not None for g in grads)
  _check_separable(fused, present, decay, variables)
  stored = [leaf for leaf in fused.layout.leaves if leaf.stored]
  placed = []  # Per group: its layout, its leaves' positions, which local.
  for group in groups:
    sub_layout, positions = _group_layout(fused, group, stored)
    device = variables[group[0]].device
    placed.append((sub_layout, positions, tuple(
        state_variables[j].device == device for j in positions)))
  local_somewhere = {j for _, positions, local in placed
                     for j, is_local in zip(positions, local) if is_local}
  # Every value read before any call assigns.
  values = {j: tf.convert_to_tensor(state_variables[j])
            for _, positions, local in placed
            for j, is_local in zip(positions, local) if not is_local}
  rate = fused.rate_inputs(learning_rate, iterations)
  iterations = tf.cast(tf.convert_to_tensor(iterations), tf.int32)
  calls, assignments = [], []
  for number, (group, (sub_layout, positions, local)) in enumerate(
      zip(groups, placed)):
    def update(variables, grads, local_variables, remote_values, rate,
               group=group, sub_layout=sub_layout, local=local):
      grads, row_indices, sparse = fused.step_gradients(grads, variables)
      apply_group = _compiled_group(
          fused, group, sub_layout, local, tuple(present[i] for i in group),
          sparse, None if decay is None else tuple(decay[i] for i in group),
          [variables], fused.entry_lengths(row_indices))
      # The strategy colocates with the group's first variable; outside a
      # strategy nothing else puts the call on the variables' device.
      with tf.device(variables[0].device):
        return apply_group([v.handle for v in variables], grads,
                           [s.handle for s in local_variables],
                           list(remote_values), rate, row_indices,
                           iterations)

    def update_on_device(_, *arguments, update=update):
      return fused.densifying_unknown_entries(lambda: update(*arguments))

    remote = [j for j, is_local in zip(positions, local) if not is_local]
    done, *new_values = tf.nest.flatten(distribution.extended.update(
        variables[group[0]],
        tf.autograph.experimental.do_not_convert(update_on_device),
        args=([variables[i] for i in group], [grads[i] for i in group],
              [state_variables[j] for j, is_local in zip(positions, local)
               if is_local], [values[j] for j in remote], rate),
        group=False))
    calls.append(done)
    # Assigned by its variable's group; a leaf of no variable, by the first
    # group unless a group has it on its device (and assigned it).
    assignments += [(j, value) for j, value in zip(remote, new_values)
                    if stored[j].slot_of in group or (
                        stored[j].slot_of is None and number == 0
                        and j not in local_somewhere)]
  with tf.control_dependencies(calls):
    assigned = [state_variables[j].assign(value) for j, value in assignments]
  return tf.group(*calls, *assigned)


def _group_layout(fused: Any, group: Sequence[int], stored: Sequence[Any]
                  ) -> tuple[StateLayout, list[int]]:
  """The layout of the transform's state over `group`'s variables, and the
  positions in `stored` (the full layout's stored leaves) of its stored
  leaves, in its leaf order: a leaf of the group's variable `r` is the full
  layout's leaf of the same name of variable `group[r]`. Cached on `fused`
  (an eager step would trace the transform's `init` again each time)."""
  key = ("layout", tuple(group))
  if key not in fused._steps:  # pylint: disable=protected-access
    layout = fused.layout
    keys = [layout.keys[i] for i in group]
    sub_layout = StateLayout.of(fused.transform(0.001), keys,
                                [layout.param_specs[k] for k in keys])
    position = {(leaf.name, leaf.slot_of): j
                for j, leaf in enumerate(stored)}
    fused._steps[key] = sub_layout, [  # pylint: disable=protected-access
        position[leaf.name, None if leaf.slot_of is None
                 else group[leaf.slot_of]]
        for leaf in sub_layout.leaves if leaf.stored]
  return fused._steps[key]  # pylint: disable=protected-access


def _compiled_group(fused, group, sub_layout, local, present, sparse, decay,
                    inputs, lengths=None):
  """The step of one device's variables as a `tf.function(jit_compile=
  True)`, cached on `fused`: `apply(handles, grads, local_handles,
  remote_values, learning_rate, row_indices, iterations)` reads the
  variables and their state on this device (`local`: per stored leaf),
  runs the step with the other leaves' values, assigns the variables and
  their local state, and returns `[done, *the other leaves' new values]`.
  `lengths`: the sparse gradients' static lengths (`entry_lengths`)."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  key = ("tf-device", tuple(group), local, present, sparse, lengths, decay,
         fused.runtime_names)
  if key in fused._steps:  # pylint: disable=protected-access
    return fused._steps[key]  # pylint: disable=protected-access
  source = fused._snapshot() if any(sparse) else fused  # pylint: disable=protected-access
  converted = _compiled.converted(
      source._jax_step(present, sparse, decay, sub_layout),  # pylint: disable=protected-access
      sub_layout, sparse, static_lengths=lengths is not None)
  stored = [leaf for leaf in sub_layout.leaves if leaf.stored]
  dtypes = [v.dtype for v in inputs[0]] + [
      leaf.value.dtype for leaf, is_local in zip(stored, local) if is_local]

  @tf.function(jit_compile=True, autograph=False, reduce_retracing=True)
  def apply_group(handles, grads, local_handles, remote_values,
                  learning_rate, row_indices, iterations):
    values = [tf.raw_ops.ReadVariableOp(resource=handle, dtype=dtype)
              for handle, dtype in zip([*handles, *local_handles], dtypes)]
    local_values, remote = iter(values[len(handles):]), iter(remote_values)
    leaves = [next(local_values) if is_local else next(remote)
              for is_local in local]
    with precision(sub_layout.float64):
      new_params, new_leaves = converted(values[:len(handles)], grads,
                                         leaves, learning_rate, row_indices,
                                         iterations)
    new_local = [value for value, is_local in zip(new_leaves, local)
                 if is_local]
    for handle, value in zip([*handles, *local_handles],
                             [*new_params, *new_local]):
      tf.raw_ops.AssignVariableOp(resource=handle, value=value)
    return [tf.constant(True)] + [
        value for value, is_local in zip(new_leaves, local) if not is_local]

  fused._steps[key] = apply_group  # pylint: disable=protected-access
  return apply_group


def _check_separable(fused: Any, present: tuple[bool, ...],
                     decay: tuple[float, ...] | None,
                     variables: Sequence[Any]) -> None:
  """Raises ValueError if the transform's update of a variable (its value
  or a slot) reads another variable's, or a leaf of no variable reads any
  variable's: then per-device calls would not compute the update (a global
  norm, `skip_nonfinite`'s check of every gradient)."""
  key = ("separable", present, decay)
  if key in fused._steps:  # pylint: disable=protected-access
    return
  layout = fused.layout
  count = len(layout.keys)
  stored = [leaf for leaf in layout.leaves if leaf.stored]
  step = fused._jax_step(present, (False,) * count, decay)  # pylint: disable=protected-access
  params = list(layout.param_specs.values())
  rate = jax.ShapeDtypeStruct(
      (1 + len(fused.runtime_names),) if fused.runtime_names else (),
      "float32")
  with precision(layout.float64):
    closed = jax.make_jaxpr(step)(
        params, params, [spec_of(leaf.value) for leaf in stored], rate, [],
        jax.ShapeDtypeStruct((), "int32"))
  name = getattr(fused._factory, "__name__", "The optimizer")  # pylint: disable=protected-access
  owners = [*range(count), *range(count),
            *(leaf.slot_of for leaf in stored)]
  owners += [None] * (len(closed.jaxpr.invars) - len(owners))
  reads = _reads(closed.jaxpr, [frozenset() if owner is None
                                else frozenset({owner}) for owner in owners])
  for output, owner in zip(closed.jaxpr.outvars,
                           [*range(count), *(leaf.slot_of for leaf in stored)]):
    others = reads(output) - ({owner} if owner is not None else set())
    if others:
      devices = sorted({v.device for v in variables})
      raise ValueError(
          f"{name}: its update of "
          f"{layout.keys[owner] if owner is not None else 'its own state'} "
          f"reads {layout.keys[min(others)]}, and the variables live on "
          f"{len(devices)} devices ({', '.join(devices)}): the step runs "
          "once per device's variables (an XLA call cannot touch resources "
          "on two devices), which cannot compute such an update. Place the "
          "variables on one device (one parameter server).")
  fused._steps[key] = True  # pylint: disable=protected-access


def _reads(jaxpr: Any, inputs: Sequence[frozenset]):
  """A function giving, for a variable of `jaxpr`, the variables its value
  is computed from (`inputs`: those of each input): through nested `jit`s,
  `custom_jvp` calls and `cond` branches equation by equation (a `cond` on
  a hyperparameter may take every variable's arrays at once), through any
  other equation from all its inputs."""
  known = dict(zip(jaxpr.invars, inputs))

  def of(atom):
    if isinstance(atom, jax.extend.core.Literal):
      return frozenset()
    return known.get(atom, frozenset())

  def through(inner, operands, also=frozenset()):
    read = _reads(inner, [of(var) for var in operands])
    return [read(var) | also for var in inner.outvars]

  for equation in jaxpr.eqns:
    name = equation.primitive.name
    if name in ("pjit", "jit"):
      outputs = through(equation.params["jaxpr"].jaxpr, equation.invars)
    elif name == "custom_jvp_call":
      # One over every variable's arrays, each output its own input's (a
      # converted TensorFlow graph's IdentityN, whose gradient is custom).
      outputs = through(equation.params["call_jaxpr"].jaxpr, equation.invars)
    elif name == "cond":
      index, *operands = equation.invars
      per_branch = [through(branch.jaxpr, operands, of(index))
                    for branch in equation.params["branches"]]
      outputs = [frozenset().union(*reads) for reads in zip(*per_branch)]
    else:
      read = frozenset().union(*map(of, equation.invars))
      outputs = [read] * len(equation.outvars)
    known.update(zip(equation.outvars, outputs))
  return of
