"""docs/keras-hooks.md states the installed Keras hooks' real signatures."""

import inspect
import pathlib
import re

import keras
import pytest
import tf_keras

DOC = (pathlib.Path(__file__).resolve().parents[1] / "docs"
       / "keras-hooks.md").read_text()
SECTIONS = DOC.split("## OptimizerV2")
ROWS = ([(keras.optimizers.Optimizer, row)
         for row in re.findall(r"^\| `\w+` \| `(\w+\(.*?\))` \|", SECTIONS[0],
                               flags=re.M)]
        + [(tf_keras.optimizers.legacy.Optimizer, row)
           for row in re.findall(r"^\| `\w+` \| `(\w+\(.*?\))` \|",
                                 SECTIONS[1], flags=re.M)])


def test_the_tables_list_the_hooks_the_issue_names():
  named = {row.split("(")[0] for _, row in ROWS}
  assert {"build", "update_step", "apply_gradients", "get_config",
          "_backend_update_step", "_create_slots", "_resource_apply_dense",
          "_resource_apply_sparse", "_set_hyper", "_get_hyper",
          "_prepare_local", "_distributed_apply"} <= named
  assert len(ROWS) == 22


@pytest.mark.parametrize("cls,row", ROWS, ids=[row.split("(")[0] + (
    "-legacy" if cls is tf_keras.optimizers.legacy.Optimizer else "")
                                               for cls, row in ROWS])
def test_signature_matches_installed(cls, row):
  name, arguments = row.split("(", 1)
  assert f"({arguments}" == str(inspect.signature(getattr(cls, name)))
