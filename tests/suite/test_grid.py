"""The parameter grid: the same on every machine, covering the seed's case and the usual advice."""

import time

import pytest

from benchmarks import grid, multiply, timing


def test_axes_cover_the_seed_the_advice_and_large_sizes():
    assert grid.DEVICES == ["cpu", "gpu"]
    assert {2, 1000, 4096} <= set(grid.SIZES)
    assert grid.SIZES == sorted(grid.SIZES)
    assert grid.DTYPES == ["int32", "float32"]
    assert grid.MODES == ["eager", "function", "xla", "graph_loop"]


def test_multiply_grid_is_device_by_size_by_dtype_by_mode():
    assert multiply.Multiply.param_names == ["device", "size", "dtype", "mode"]
    assert multiply.Multiply.params == [
        grid.DEVICES,
        grid.SIZES,
        grid.DTYPES,
        grid.MODES,
    ]


@pytest.mark.parametrize("size", grid.SIZES)
def test_blocks_are_long_for_small_tensors_and_single_for_large(size):
    ops = grid.ops_per_block(size)
    assert 1 <= ops <= grid.MAX_OPS_PER_BLOCK
    if size <= 128:
        assert ops == grid.MAX_OPS_PER_BLOCK
    if size >= 2048:
        assert ops == 1


def test_per_op_timer_divides_elapsed_time_by_the_block_length():
    clock = timing.per_op_timer(50)
    start = clock()
    end = clock()
    assert end >= start
    # The clock reads perf_counter / 50: the same instant reads 50x smaller.
    assert timing.per_op_timer(50)() < time.perf_counter() / 49


def test_bytes_moved_counts_one_read_and_one_write():
    assert grid.bytes_moved(4096, "float32") == 2 * 4 * 4096 * 4096
    assert grid.bytes_moved(2, "int32") == 32


def test_calibration_lengthens_short_blocks_only():
    assert grid.calibrated_ops(100, grid.MIN_BLOCK_SECONDS) == 100
    assert grid.calibrated_ops(100, grid.MIN_BLOCK_SECONDS / 4) == 400
    assert grid.calibrated_ops(1, 0.0) == grid.MAX_CALIBRATED_OPS
    assert grid.calibrated_ops(2, 1.0) == 2


def test_calibration_reaches_the_block_length_where_a_calls_fixed_cost_dwarfs_its_ops():
    # A call costing 0.5 ms plus 2 us per op (a compiled loop's launch, then fast ops):
    # timed once at 100 ops, one estimate would give a ~3.4 ms block.
    def make_block(ops):
        def block():
            time.sleep(0.0005 + 2e-6 * ops)

        block.ops = ops
        return block

    block = timing.calibrated_block(make_block, 100, warm_up_parts=8)
    assert 0.0005 + 2e-6 * block.ops >= 0.8 * grid.MIN_BLOCK_SECONDS
    assert block.ops <= grid.MAX_CALIBRATED_OPS


def test_a_calibrated_block_comes_with_a_warm_up_the_asked_part_of_it():
    def make_block(ops):
        def block():
            time.sleep(1e-4 * ops)

        block.ops = ops
        return block

    for parts in (8, 1):
        block = timing.calibrated_block(make_block, 10, warm_up_parts=parts)
        assert block.ops >= 80
        assert block.warm_up.ops == block.ops // parts


def test_sizes_from_512_up_warm_up_with_a_whole_block_smaller_ones_with_an_eighth():
    parts = {size: grid.warm_up_parts(size) for size in grid.SIZES}
    assert parts == {size: 1 if size >= 512 else 8 for size in grid.SIZES}


def test_the_input_is_copied_where_copies_are_cheap_and_never_beyond_the_budget():
    copies = {size: grid.input_copies(size, "float32") for size in grid.SIZES}
    assert copies[2] == copies[512] == grid.INPUT_COPIES > 1
    assert copies[4096] == 1  # 64 MiB: a second copy would not fit the budget
    for size, count in copies.items():
        assert count == 1 or count * size * size * 4 <= grid.INPUT_COPIES_BYTES


def test_samples_take_the_copies_in_turn_each_with_its_own_warm_up():
    ran = []

    def make_block(ops, copy):
        def block():
            ran.append((copy, ops))
            time.sleep(1e-4 * ops)

        block.ops = ops
        return block

    blocks = timing.in_turn(make_block, 10, copies=3, warm_up_parts=8)
    length, warm_up = blocks.ops, blocks.blocks[0].warm_up.ops
    assert [b.ops for b in blocks.blocks] == [length] * 3
    assert [b.warm_up.ops for b in blocks.blocks] == [warm_up] * 3
    # Copies 1 and 2 ran once untimed when made (copy 0 while calibrated).
    assert ran[-2:] == [(1, length), (2, length)]
    del ran[:]
    for _ in range(4):
        blocks.current.warm_up()
        blocks.current()
        blocks.advance()
    assert ran == [(c, n) for c in (0, 1, 2, 0) for n in (warm_up, length)]


def test_blocks_in_turn_must_share_a_length():
    def block_of(ops):
        def block():
            pass

        block.ops = ops
        return block

    with pytest.raises(ValueError, match="same length"):
        timing.InTurn([block_of(10), block_of(20)])
    with pytest.raises(ValueError):
        timing.InTurn([])


def test_track_timing_takes_the_copies_in_turn_too():
    ran = []

    def block_for(copy):
        def block():
            ran.append(copy)
            time.sleep(0.002)

        block.ops = 2
        return block

    class Quiet:
        def wait(self):
            return 0.0

    seconds = timing.per_op_seconds(timing.InTurn([block_for(0), block_for(1)]), min_time=0,
                                    min_blocks=4, gate=Quiet())
    assert ran == [0, 1, 0, 1] and 0.001 <= seconds < 0.01


# --- the quiet gate -----------------------------------------------------------------


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def gate(reads, tmp_path, clock):
    values = iter(reads)
    return timing.QuietGate(read=lambda: next(values, 0), sleep=clock.sleep, clock=clock,
                            gave_up_file=str(tmp_path / "busy"))


def test_a_quiet_machine_is_not_waited_for(tmp_path):
    clock = FakeClock()
    g = gate([0, 0, 0], tmp_path, clock)
    g.wait()
    assert g.waited == 0 and clock.now == 0


def test_passing_load_is_waited_out(tmp_path):
    # Another process runnable for 5 looks (3 reads each), then gone.
    clock = FakeClock()
    g = gate([1] * 15 + [0] * 3, tmp_path, clock)
    g.wait()
    # The first look sees the load; the five polls after it: four busy, one quiet.
    assert g.gave_up == 0 and g.waited == pytest.approx(5 * timing.QUIET_POLL_SECONDS)
    assert not (tmp_path / "busy").exists()


def test_load_that_does_not_pass_is_given_up_on_and_the_run_stops_waiting(tmp_path):
    clock = FakeClock()
    g = gate([1] * 10_000, tmp_path, clock)
    g.wait()
    assert g.gave_up == 1 and g.waited >= timing.QUIET_MAX_WAIT_SECONDS
    assert (tmp_path / "busy").exists()
    # Every process of the run now skips waiting for a while.
    later = gate([1] * 10_000, tmp_path, clock)
    later.wait()
    assert later.waited == 0


def test_a_read_that_sees_nothing_does_not_wait():
    assert not timing.busy([None, None, None])
    assert timing.busy([1, 1, 0]) and not timing.busy([1, 0, 0])


def test_this_machine_reports_its_run_queue():
    # Linux: a number; elsewhere None, and nothing waits.
    seen = timing.other_runnable()
    assert seen is None or seen >= 0


def test_a_sample_after_a_wait_starts_warm(tmp_path):
    # The gate waited: the block runs once, untimed, before asv's sample.
    ran = []
    timing.before_sample(lambda: ran.append(1), gate([1] * 6 + [0] * 3, tmp_path, FakeClock()))
    assert ran == [1]
    # A quiet machine: nothing waited, nothing extra run.
    timing.before_sample(lambda: ran.append(2), gate([0, 0, 0], tmp_path, FakeClock()))
    assert ran == [1]
