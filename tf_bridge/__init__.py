"""TensorFlow/Keras side: parity with the native Keras optimizers.

`tf_bridge.testing.assert_parity` checks a JAX transform against a native
Keras optimizer step by step; `python -m tf_bridge.parity` reports it.
"""
