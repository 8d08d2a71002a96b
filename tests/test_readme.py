"""The README's code runs (and the guides' it points to for more), its first
screen leads each kind of user on, and its optimizer table is the catalog."""

import pathlib
import re
import subprocess
import sys

import pytest

from tf_bridge import catalog

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEXT = (ROOT / "README.md").read_text()
# The README's examples and those of the guides its sections continue in.
PAGES = ["README.md", "docs/jax.md", "docs/keras.md"]
PYTHON_BLOCKS = [(page, block) for page in PAGES
                 for block in re.findall(r"```python\n(.*?)```",
                                         (ROOT / page).read_text(), flags=re.S)]


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
  assert "```python" not in TEXT[:TEXT.index("<!-- test-command -->")]


def test_the_first_screen_leads_to_the_three_paths():
  """Before the commands: a JAX user, a Keras user and one bringing a
  TensorFlow optimizer each get a link to their section."""
  first_screen = TEXT[:TEXT.index("<!-- main-command -->")]
  assert len(first_screen.splitlines()) <= 40
  for anchor, heading in [("#in-jax-the-ports", "## In JAX: the ports"),
                          ("#in-keras-the-bridged-classes",
                           "## In Keras: the bridged classes"),
                          ("#your-own-tensorflow-optimizer",
                           "## Your own TensorFlow optimizer")]:
    assert f"]({anchor})" in first_screen and f"\n{heading}\n" in TEXT
  assert "](docs/writing-an-optimizer.md)" in first_screen


def test_the_readme_stays_short():
  """Longer text belongs in docs/, linked from the README's sections."""
  assert len(TEXT.splitlines()) <= 350


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)),
                         ids=[f"{page}-{i}" for i, (page, _)
                              in enumerate(PYTHON_BLOCKS)])
def test_python_block_runs(index, tmp_path):
  script = tmp_path / f"block_{index}.py"
  script.write_text(PYTHON_BLOCKS[index][1])
  result = subprocess.run([sys.executable, str(script)], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path, check=False)
  assert result.returncode == 0, result.stderr[-3000:]


def test_optimizer_table_is_the_catalog():
  """Regenerate with: python -c "from tf_bridge import catalog;
  print(catalog.markdown_table())"."""
  assert catalog.markdown_table() in TEXT
