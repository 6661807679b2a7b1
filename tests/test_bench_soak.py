"""The soak's check of the event feed (bench/soak.py): an event counts as missed only when a subscription that was
never told why should surely have heard it."""

from bench.soak import Soak, Window, missed


def soak_with(*windows: Window) -> Soak:
    run = Soak(seconds=60)
    run.told = [("t1", "AgentTaskStarted", 10.0, 10.5), ("t1", "AgentTaskFinished", 20.0, 20.5),
                ("t2", "AgentTaskStarted", 30.0, 30.5)]
    run.windows = list(windows)
    return run


def test_an_event_a_subscription_told_nothing_did_not_hear_is_missed():
    heard_all = Window(live_from=5.0, heard={("t1", "AgentTaskStarted"), ("t1", "AgentTaskFinished"),
                                              ("t2", "AgentTaskStarted")})
    missed_one = Window(live_from=5.0, heard={("t1", "AgentTaskStarted"), ("t2", "AgentTaskStarted")})

    assert missed(soak_with(heard_all, missed_one), until=60) == (6, 5, 1)


def test_a_subscription_told_it_fell_behind_misses_nothing_untold():
    fell_behind = Window(live_from=5.0, ended_at=25.0, told="FELL_BEHIND", heard={("t1", "AgentTaskStarted")})

    assert missed(soak_with(fell_behind), until=60) == (2, 1, 0)


def test_events_sent_before_a_subscription_heard_anything_or_answered_after_the_end_are_not_expected():
    late = Window(live_from=15.0, heard={("t2", "AgentTaskStarted")})

    assert missed(soak_with(late), until=25) == (1, 0, 1)
    assert missed(soak_with(late), until=60) == (2, 1, 1)
