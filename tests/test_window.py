from leet.model.time_window import tail_window


def test_window_starts_narrow_and_doubles():
    assert tail_window(100.0, 100.0, 600) == (100.0, 160.0)
    assert tail_window(100.0, 150.0, 600) == (100.0, 160.0)
    assert tail_window(100.0, 170.0, 600) == (100.0, 220.0)
    assert tail_window(100.0, 300.0, 600) == (100.0, 340.0)
    assert tail_window(100.0, 500.0, 600) == (100.0, 700.0)  # 480 s would leave less than a quarter: the full span
    assert tail_window(100.0, 650.0, 600) == (100.0, 700.0)


def test_full_window_jumps_a_quarter_at_a_time():
    start, end = tail_window(0.0, 601.0, 600)
    assert (start, end) == (150.0, 750.0)
    # Between jumps the window stands still, so charts only grow at the right.
    assert tail_window(0.0, 700.0, 600) == (150.0, 750.0)
    assert tail_window(0.0, 751.0, 600) == (300.0, 900.0)
