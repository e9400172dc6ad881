"""The parameter grid: the same on every machine, covering the seed's case and the usual advice."""

import pytest

pytest.importorskip("tensorflow")

from benchmarks import common, grid, multiply  # noqa: E402


def test_axes_cover_the_seed_the_advice_and_large_sizes():
    assert common.DEVICES == ["cpu", "gpu"]
    assert {2, 1000, 4096} <= set(common.SIZES)
    assert common.SIZES == sorted(common.SIZES)
    assert common.DTYPES == ["int32", "float32"]
    assert common.MODES == ["eager", "function", "xla", "graph_loop"]


def test_multiply_grid_is_device_by_size_by_dtype_by_mode():
    assert multiply.Multiply.param_names == ["device", "size", "dtype", "mode"]
    assert multiply.Multiply.params == [
        common.DEVICES,
        common.SIZES,
        common.DTYPES,
        common.MODES,
    ]


@pytest.mark.parametrize("size", common.SIZES)
def test_blocks_are_long_for_small_tensors_and_single_for_large(size):
    ops = common.ops_per_block(size)
    assert 1 <= ops <= grid.MAX_OPS_PER_BLOCK
    if size <= 128:
        assert ops == grid.MAX_OPS_PER_BLOCK
    if size >= 2048:
        assert ops == 1


def test_per_op_timer_divides_elapsed_time_by_the_block_length():
    clock = common.per_op_timer(50)
    start = clock()
    end = clock()
    assert end >= start
    # The clock reads perf_counter / 50: the same instant reads 50x smaller.
    import time

    assert common.per_op_timer(50)() < time.perf_counter() / 49


def test_bytes_moved_counts_one_read_and_one_write():
    assert common.bytes_moved(4096, "float32") == 2 * 4 * 4096 * 4096
    assert common.bytes_moved(2, "int32") == 32


def test_calibration_lengthens_short_blocks_only():
    assert common.calibrated_ops(100, grid.MIN_BLOCK_SECONDS) == 100
    assert common.calibrated_ops(100, grid.MIN_BLOCK_SECONDS / 4) == 400
    assert common.calibrated_ops(1, 0.0) == grid.MAX_CALIBRATED_OPS
    assert common.calibrated_ops(2, 1.0) == 2
