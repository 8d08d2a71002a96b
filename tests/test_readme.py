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
  assert "-r tests/originals.txt" in tests  # The ground truth TFA is.
  # CI runs this command: it ends with the slowest tests, so a drift in
  # the suite's time shows in every run.
  assert "--durations=20" in tests


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_block_runs(index, tmp_path):
  script = tmp_path / f"block_{index}.py"
  script.write_text(PYTHON_BLOCKS[index])
  result = subprocess.run([sys.executable, str(script)], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path, check=False)
  assert result.returncode == 0, result.stderr[-3000:]


def test_optimizer_table_is_the_catalog():
  """Regenerate with: python -c "from tf_bridge import catalog;
  print(catalog.markdown_table())"."""
  assert catalog.markdown_table() in TEXT
