"""A TF-era run's checkpoint files, read into a port's state and written back.

    params, state = tf_bridge.checkpoints.read(path, jaxopt_port.tf1.adam(1e-3))
    ...  # continue with `transform.update`, on the run's trajectory
    tf_bridge.checkpoints.write(new_path, params, state, transform, like=path)

`transform` is the port of the optimizer that wrote the file, with its
hyperparameters (`jaxopt_port.tf1.adam(...)` for `AdamOptimizer`,
`jaxopt_port.legacy.adam(...)` for tf_keras's legacy Adam). Three dialects
(see `_keys` and `_keras3`): TF1 `Saver` files (`w`, `w/Adam`, `w/Adam_1`,
`beta1_power`, `global_step`), TF2 object-based ones (`tf.train.Checkpoint`,
`CheckpointManager`, tf_keras `save_weights`/`ModelCheckpoint`: slots under
`.OPTIMIZER_SLOT`) and Keras 3 files (`.weights.h5`, `.keras`: optimizer
variables by position, read and written with the model, `model=`; so are
a Keras 3 or tf_keras 2.11+ optimizer in a TF2 checkpoint, and tf_keras's
own `.keras` and `.weights.h5` files, with a Keras 3 or tf_keras model). `params` holds every floating-point
variable of the file outside the optimizer, by the file's key: TF1 the
variable's name (`dense/kernel`), TF2 its object path
(`model/layer_with_weights-0/kernel`; a tf_keras model's in a file of a
tf_keras 2.11+ optimizer too), Keras 3 its `path`, tf_keras's own files its
name (`dense/kernel`).
A variable the optimizer has no slots for yet (it never had a gradient) gets
the transform's fresh ones, as the native optimizer would make them.

A TF1 file carries the step count only as `global_step`: without it `read`
starts the count at 0, `write(..., global_step=False)` and `convert` write
none, and where the step reads the count (AdagradDA's with l1 or l2, a
Keras 3 bias correction after `restore`) the file is refused with that
reason.
One optimizer's state at a time: of a TF2 file holding several (a GAN's),
`optimizer=` names the one (`"generator_optimizer"`); a TF1 file of two
optimizers is read with one of them only if their slots differ in name.
A TF Addons wrapper (Lookahead, MovingAverage, SWA) and the optimizer it
wraps are one state: its port's (`jaxopt_port.addons.lookahead(
jaxopt_port.legacy.adam(...))`), the wrapper's slots in its fields, the
inner optimizer's in its `inner_state`.

`restore(path, model, optimizer)` puts a tf_keras (legacy or 2.11+) or TF1
checkpoint into a Keras 3 model and optimizer, which Keras 3 itself refuses
to do: any Keras 3 class of the catalog whose state means the file's (the
writer's own algorithm on Keras 3, `tf_bridge.tf1.Adam` for TF1's Adam, or
Keras 3's class of it), with the file's learning rate, as tf_keras's own
resume takes it.

Every function works inside TF1 programs (eager execution disabled) too;
`restore` there is refused, since Keras 3 runs eagerly only.

The JAX side keeps a run as an orbax directory (`write_orbax`, which `read`
reads too), and `write_tf1` makes a TF1 Saver file of a TF1 optimizer's
state from nothing (`python -m tf_bridge.checkpoints convert` does both).
"""

from tf_bridge.checkpoints._files import read, write, write_orbax, write_tf1
from tf_bridge.checkpoints._restore import restore

__all__ = ["read", "restore", "write", "write_orbax", "write_tf1"]
