"""`tf_bridge.testing.compare_trajectories`, behind every parity test and
`assert_parity`, refuses what it cannot compare instead of zipping or
broadcasting it into a pass, and names what differs."""

import re

import numpy as np
import pytest

from tf_bridge import testing

STEP = [np.zeros((), np.float32), np.arange(5, dtype=np.float32)]
# A reference that moves (by 0.1 a step): a comparison with it can fail.
REFERENCE = [[value + np.float32(0.1 * step) for value in STEP]
             for step in range(3)]


def compare(actual, expected=REFERENCE):
  testing.compare_trajectories(actual, expected, rtol=1e-5, atol=1e-6,
                               actual_name="port", expected_name="Adam")


def test_equal_trajectories_pass():
  compare([list(step) for step in REFERENCE])


@pytest.mark.parametrize("actual,expected,message", [
    ([], REFERENCE, "The port trajectory has 0 steps, the Adam one 3."),
    (REFERENCE[:2], REFERENCE, "The port trajectory has 2 steps, the Adam "
     "one 3."),
    ([], [], "The Adam trajectory has no steps: there is nothing to "
     "compare."),
    ([[]] * 3, [[]] * 3, "Step 1 of the Adam trajectory has no variables: "
     "there is nothing to compare."),
    ([STEP[:1]] * 3, REFERENCE, "At step 1 the port trajectory has 1 "
     "variables, the Adam one 2."),
    # A scalar would broadcast against the (5,) reference.
    ([REFERENCE[0], [STEP[0], np.float32(2.0)], STEP], REFERENCE,
     "At step 2, variable 1 of the port trajectory has shape () and dtype "
     "float32, the Adam one shape (5,) and dtype float32."),
    ([STEP, STEP, [STEP[0], STEP[1].astype(np.float64)]], REFERENCE,
     "At step 3, variable 1 of the port trajectory has shape (5,) and dtype "
     "float64, the Adam one shape (5,) and dtype float32."),
    ([STEP, STEP, [STEP[0], STEP[1].astype(np.float16)]], REFERENCE,
     "At step 3, variable 1 of the port trajectory has shape (5,) and dtype "
     "float16, the Adam one shape (5,) and dtype float32."),
])
def test_refuses_what_cannot_be_compared(actual, expected, message):
  with pytest.raises(AssertionError, match=f"^{re.escape(message)}$"):
    compare(actual, expected)


def test_a_float64_reference_checks_a_float32_trajectory():
  reference = [[value.astype(np.float64) for value in step]
               for step in REFERENCE]
  compare([list(step) for step in REFERENCE], reference)
  with pytest.raises(AssertionError, match="step 1, variable 1"):
    compare([[step[0], step[1] + np.float32(1e-3)] for step in REFERENCE],
            reference)


def test_names_the_first_step_and_variable_that_differ():
  moved = [REFERENCE[0], [REFERENCE[1][0], REFERENCE[1][1] + np.float32(
      1e-3)], REFERENCE[2]]
  with pytest.raises(AssertionError, match=re.escape(
      "port and Adam part at step 2, variable 1 (shape (5,)): max abs diff "
      "0.001")):
    compare(moved)


def test_refuses_a_comparison_that_cannot_fail():
  """A reference within 10 tolerances of where it starts would let a
  transform that does nothing pass: refused, with the way out."""
  still = [[value + np.float32(5e-6) for value in STEP]] * 3
  message = ("The Adam trajectory moves at most 5 tolerances (rtol=1e-05, "
             "atol=1e-06) from where it starts: a transform that does "
             "nothing would pass. Compare more steps, larger gradients or "
             "a larger learning rate (at least 10 tolerances).")
  with pytest.raises(AssertionError, match=f"^{re.escape(message)}$"):
    testing.compare_trajectories(still, still, rtol=1e-5, atol=1e-6,
                                 expected_name="Adam", initial=STEP)
  # Without `initial`, movement counts from the first step.
  with pytest.raises(AssertionError, match="moves at most 0 tolerances"):
    compare(still, still)
  # A do-nothing transform fails against a reference that moves.
  with pytest.raises(AssertionError, match="part at step 2"):
    testing.compare_trajectories([STEP] * 3, REFERENCE, rtol=1e-5,
                                 atol=1e-6, initial=[v - np.float32(0.1)
                                                     for v in STEP])
  assert testing.movement(REFERENCE, STEP, rtol=1e-5, atol=1e-6) > 1e3


def test_complex_trajectories_compare_by_modulus():
  """Complex variables (tf_keras's SGD, Adagrad, Adadelta, RMSprop): a
  trajectory that parts only in the imaginary part parts, as does one
  that only moves there."""
  reference = [[np.full(3, 1 + 0.1j * step, np.complex64)]
               for step in range(3)]
  testing.compare_trajectories([list(s) for s in reference], reference,
                               rtol=1e-5, atol=1e-6)
  imaginary_off = [[s[0] + np.complex64(1e-3j)] for s in reference]
  with pytest.raises(AssertionError, match="part at step 1, variable 0"):
    testing.compare_trajectories(imaginary_off, reference, rtol=1e-5,
                                 atol=1e-6)
  assert testing.movement(reference, None, rtol=1e-5, atol=1e-6) > 1e3
