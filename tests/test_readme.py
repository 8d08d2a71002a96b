"""The README's code runs, and its optimizer table is the catalog."""

import pathlib
import re
import subprocess
import sys

import pytest

from tf_bridge import catalog

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)


def test_readme_opens_with_the_two_commands():
  shell_blocks = re.findall(r"```bash\n(.*?)```", TEXT, flags=re.S)
  main, tests = shell_blocks[:2]
  assert TEXT.index("<!-- main-command -->") < TEXT.index("<!-- test-command -->")
  assert "python -m tf_bridge.parity" in main and "--plot" in main
  assert "pytest" in tests and ".[all]" in tests


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_block_runs(index, tmp_path):
  script = tmp_path / f"block_{index}.py"
  script.write_text(PYTHON_BLOCKS[index])
  result = subprocess.run([sys.executable, str(script)], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path, check=False)
  assert result.returncode == 0, result.stderr[-3000:]


def test_optimizer_table_is_the_catalog():
  rows = re.findall(r"^\| (\w+) \| `jaxopt_port\.(\w+)` \| `?(\w+|-)`? \| "
                    r"`?(\w+|-)`? \|", TEXT, flags=re.M)
  table = {name: (function, keras3, legacy)
           for name, function, keras3, legacy in rows}
  expected = {}
  for declaration in catalog.CATALOG:
    name = declaration.port.__name__
    keras3, legacy = expected.get(name, (name, "-", "-"))[1:]
    if declaration.generation == catalog.KERAS:
      keras3 = declaration.class_name
    else:
      legacy = declaration.class_name
    expected[name] = (name, keras3, legacy)
  assert table == expected
