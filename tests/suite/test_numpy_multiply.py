"""numpy's multiply: each case's result, the read that ends a block, cheap setup."""

import numpy as np
import pytest

from benchmarks import grid, numpy_multiply


@pytest.mark.parametrize("dtype", grid.DTYPES)
def test_the_multiply_allocates_a_new_result_of_the_same_dtype(dtype):
    x = numpy_multiply.input_array("cpu", 2, dtype)
    y = numpy_multiply.make_multiply_run("eager", x)(3)()
    assert y.tolist() == [[2, 2], [2, 2]] and y.dtype == np.dtype(dtype)
    assert y is not x and x.tolist() == [[1, 1], [1, 1]]


def test_the_read_returns_the_first_element():
    assert numpy_multiply.wait_for(np.arange(4).reshape(2, 2) + 7) == 7


def test_a_cpu_case_is_measured_with_a_per_op_clock():
    bench = numpy_multiply.NumpyMultiply()
    bench.setup("cpu", 32, "int32", "eager")
    blocks = numpy_multiply.block_runner("cpu", 32, "int32", "eager")
    assert blocks.placed == "cpu" and bench.block in blocks.blocks
    assert bench.block.ops >= grid.ops_per_block(32)
    info = numpy_multiply.block_runner.cache_info()
    numpy_multiply.NumpyMultiply().setup("cpu", 32, "int32", "eager")
    assert numpy_multiply.block_runner.cache_info().hits == info.hits + 1
    bench.time_multiply("cpu", 32, "int32", "eager")


def test_an_unknown_mode_is_an_error_not_a_silent_eager():
    with pytest.raises(ValueError, match="numpy's modes"):
        numpy_multiply.make_multiply_run("jit", np.ones((2, 2)))
