"""TF Addons' `assign_average_vars` for the bridged MovingAverage and SWA."""

from __future__ import annotations

import warnings
from typing import Any, Sequence

from tf_bridge._checks import variable_name

class AveragedOptimizer:
  """TFA's `assign_average_vars` for bridged MovingAverage and SWA."""

  def assign_average_vars(self, var_list: Sequence[Any]) -> Any:
    """Sets each variable of `var_list` to its average from the state (as
    TFA's `AveragedOptimizerWrapper.assign_average_vars`, e.g. before
    evaluating or saving the averaged model); a variable without one is
    skipped with TFA's warning. Returns the assignments as one op (what a
    TF1 session runs)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    averages = self._fused.averages(self._built_variables() or [],
                                    self._state_variables)
    assignments = []
    for variable in var_list:
      average = averages.get(id(variable))
      if average is None:
        warnings.warn(
            f"Unable to assign average slot to {variable_name(variable)} : "
            f"{type(self).__name__} keeps no average of it (it was not "
            "built for it).", stacklevel=2)
        continue
      assignments.append(variable.assign(average))
    return tf.group(assignments)
