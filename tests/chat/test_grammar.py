"""One command grammar: every form of the command table, typed as text or given as options."""

from __future__ import annotations

import pytest

from bot.chat.flows import FLOWS
from bot.chat.grammar import (
    BANDWIDTH,
    GRAMMARS,
    QUIZ,
    BadInput,
    Form,
    Kind,
    help_text,
    read_options,
    read_text,
    usage,
)
from bot.engine.model import Period


def read(text: str) -> tuple[str, dict[str, object]]:
    call = read_text(QUIZ, text)
    return call.verb.name, dict(call.args)


@pytest.mark.parametrize(
    ("text", "verb", "args"),
    [
        ("", "next", {}),
        ("   ", "next", {}),
        ("next", "next", {}),
        ("next networking", "next", {"tag": "networking"}),
        ("NEXT Networking", "next", {"tag": "networking"}),
        ("close", "close", {}),
        ("leaderboard", "leaderboard", {}),
        ("leaderboard month", "leaderboard", {"period": Period.MONTH}),
        ("leaderboard ALL", "leaderboard", {"period": Period.ALL}),
        ("top week", "leaderboard", {"period": Period.WEEK}),
        ("stats", "stats", {}),
        # A mention as every platform's ingress writes it (bot.chat.events.mentioned).
        ("stats <@U123ABC>", "stats", {"user": "U123ABC"}),
        ("stats <@29:1a2b-c3>", "stats", {"user": "29:1a2b-c3"}),
        ("stats <@1001>", "stats", {"user": "1001"}),
        ("help", "help", {}),
        ("?", "help", {}),
        ("settings", "settings", {}),
        ("settings changes on", "settings", {"changes": True}),
        ("settings changes off minutes 15", "settings", {"changes": False, "minutes": 15}),
        ("settings minutes 1", "settings", {"minutes": 1}),
        ("schedule", "schedule", {}),
        ("schedule off", "unschedule", {}),
        ("SCHEDULE OFF", "unschedule", {}),
        ("schedule 9:05", "schedule", {"time": "09:05"}),
        # A zone is read as a zone wherever it stands, GMT and UTC included.
        ("schedule 09:00 GMT", "schedule", {"time": "09:00", "tz": "GMT"}),
        ("schedule 23:59 utc daily", "schedule", {"time": "23:59", "tz": "UTC", "days": "daily"}),
        (
            "schedule 09:30 Europe/Paris weekdays networking",
            "schedule",
            {"time": "09:30", "tz": "Europe/Paris", "days": "weekdays", "tag": "networking"},
        ),
        (
            "schedule 10:00 net Europe/Paris",
            "schedule",
            {"time": "10:00", "tz": "Europe/Paris", "tag": "net"},
        ),
        (
            "schedule 08:00 america/new_york",
            "schedule",
            {"time": "08:00", "tz": "America/New_York"},
        ),
        (
            "schedule 09:30 europe/berlin weekdays storage digest=fri close=2h",
            "schedule",
            {
                "time": "09:30",
                "tz": "Europe/Berlin",
                "days": "weekdays",
                "tag": "storage",
                "digest": "fri",
                "close": "120m",
            },
        ),
        ("schedule 07:00 close=1h30m", "schedule", {"time": "07:00", "close": "90m"}),
        ("schedule 07:00 close:45m", "schedule", {"time": "07:00", "close": "45m"}),
        ("schedule 07:00 digest=sunday", "schedule", {"time": "07:00", "digest": "sun"}),
        ("review", "review", {}),
    ],
)
def test_text_form(text: str, verb: str, args: dict[str, object]) -> None:
    assert read(text) == (verb, args)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("frobnicate", "I don't know `/quiz frobnicate`."),
        ("next two tags", "`tags`: a tag is one word"),
        ("next no_underscores", "`no_underscores` is not a tag"),
        ("next `rm -rf`", "is not a tag"),
        ("close now", "I can't read `now` after `close`."),
        ("review please", "I can't read `please` after `review`."),
        ("leaderboard year", "`week`, `month` or `all`"),
        ("stats ada", "Mention the person with @"),
        ("stats <#C123|general>", "Mention the person with @"),
        ("settings changes maybe", "`maybe` is not `on` or `off`."),
        ("settings minutes 0", "`minutes` must be between 1 and 10080."),
        ("settings minutes 10081", "`minutes` must be between 1 and 10080."),
        ("settings minutes forty", "`forty` is not a whole number."),
        ("settings minutes", "`minutes` needs a value"),
        ("settings on", "I can't read `on` after `settings`."),
        ("schedule 25:00", "`25:00` is not a time of day"),
        ("schedule 9am", "`9am` is not a time of day"),
        ("schedule 12:60", "like 09:30, 13:00, 17:45"),
        ("schedule 09:00 Mars/Olympus", "is not a time zone"),
        ("schedule 09:30 Europe/Pariss", "Did you mean Europe/Paris"),
        ("schedule 09:30 Nowhere/Town", "Europe/Berlin, America/New_York, Asia/Kolkata"),
        # Two zones are refused, not the last one kept.
        ("schedule 09:00 Europe/Berlin Asia/Tokyo", "the schedule has its zone already"),
        ("schedule 09:00 UTC GMT", "the schedule has its zone already"),
        ("schedule 09:00 daily a b", "`b`: the schedule has its tag already"),
        ("schedule 09:00 Net!", "is not a tag"),
        ("schedule 09:30 digest=someday", "not a day of the week"),
        ("schedule 09:30 close=forever", "is not a duration"),
        ("schedule 09:00 close=0m", "between 1 minute and 7 days"),
        ("schedule 09:00 close=", "`close=` needs a value"),
    ],
)
def test_bad_text_is_refused_with_what_was_wrong(text: str, says: str) -> None:
    with pytest.raises(BadInput) as caught:
        read_text(QUIZ, text)
    assert says in caught.value.message
    assert caught.value.grammar is QUIZ


def test_the_text_usage_lists_every_verb_as_typed() -> None:
    shown = usage(QUIZ, Form.TEXT).markdown()
    for typed in (
        "`/quiz` or `/quiz next [tag|computed]`",
        "`/quiz close`",
        "`/quiz leaderboard [week|month|all]`",
        "`/quiz stats [@user]`",
        "`/quiz settings [changes on|off] [minutes N] [difficulty adaptive|level|mixed|easy|hard]"
        " [computed PERCENT] [retention PERCENT] [review others|everyone]`",
        "`/quiz schedule HH:MM [Area/City] [daily|weekdays] [tag] [digest=DAY] [close=2h]`",
        "`/quiz schedule off`",
        "`/quiz review`",
        "`/quiz report`",
        "`/quiz proposals [approve ID | reject ID [reason]]`",
        "`/quiz dashboard [me]`",
        "`/quiz me`",
        "`/quiz track`",
        "`/quiz track list`",
        "`/quiz track start NAME [HH:MM] [Area/City] [daily|weekdays]`",
        "`/quiz track stop`",
        "`/quiz help`",
    ):
        assert typed in shown
    assert "`/bandwidth SIZE [op]" in help_text(GRAMMARS, Form.TEXT).markdown()


def test_the_options_usage_names_every_option() -> None:
    shown = help_text(GRAMMARS, Form.OPTIONS).markdown()
    assert "*/quiz schedule* `[time] [tz] [days] [tag] [digest] [close]`" in shown
    assert "*/quiz track-start* `name [time] [tz] [days]`" in shown
    assert (
        "*/bandwidth* `[size] [op] [nodes] [gpus] [nics] [step] [over] [intra] [algo] [proto] "
        "[launch] [sharp] [plan]`" in shown
    )


@pytest.mark.parametrize(
    ("verb", "given", "args"),
    [
        ("next", {"tag": "Networking"}, {"tag": "networking"}),
        ("next", {"tag": None}, {}),
        ("leaderboard", {"period": "all"}, {"period": Period.ALL}),
        ("stats", {"user": "1001"}, {"user": "1001"}),
        ("settings", {"changes": True, "minutes": 3}, {"changes": True, "minutes": 3}),
        (
            "schedule",
            {"time": "7:15", "tz": "europe/berlin", "days": "Weekdays", "digest": "mon"},
            {"time": "07:15", "tz": "Europe/Berlin", "days": "weekdays", "digest": "mon"},
        ),
    ],
)
def test_options_form(verb: str, given: dict[str, object], args: dict[str, object]) -> None:
    assert dict(read_options(QUIZ, verb, given).args) == args


@pytest.mark.parametrize(
    ("verb", "given", "says"),
    [
        ("settings", {"minutes": 0}, "`minutes` must be between 1 and 10080."),
        ("settings", {"changes": "sometimes"}, "`sometimes` is not `on` or `off`."),
        ("schedule", {"time": "25:00"}, "`25:00` is not a time of day"),
        ("schedule", {"time": "09:30", "days": "fortnightly"}, "`daily` or `weekdays`"),
        ("next", {"colour": "red"}, "There is no option `colour`."),
    ],
)
def test_bad_options_are_refused(verb: str, given: dict[str, object], says: str) -> None:
    with pytest.raises(BadInput) as caught:
        read_options(QUIZ, verb, given)
    assert says in caught.value.message


def test_every_verb_has_a_flow_and_fits_a_form_with_typed_fields() -> None:
    for grammar in GRAMMARS:
        assert len(grammar.help) <= 100
        for verb in grammar.verbs:
            assert (grammar.name, verb.name) in FLOWS
            assert len(verb.help) <= 100
            for option in verb.options:
                assert len(option.help) <= 100, option.name
                assert option.kind is not Kind.CHOICE or option.choices


def test_bandwidth_reads_its_text_whole_and_its_options_separately() -> None:
    call = read_text(BANDWIDTH, "70B params bf16 allreduce nodes=4")
    assert dict(call.args) == {"request": "70B params bf16 allreduce nodes=4"}
    options = read_options(BANDWIDTH, "", {"size": "140GB", "nodes": 16, "op": "allreduce"})
    assert dict(options.args) == {"size": "140GB", "nodes": 16, "op": "allreduce"}
    with pytest.raises(BadInput, match="between 1 and 100000"):
        read_options(BANDWIDTH, "", {"size": "1GB", "nodes": 0})


@pytest.mark.parametrize(
    ("text", "given"),
    [
        ("flag wrong", ("wrong", None)),
        ("flag Unclear  the   stem asks two things", ("unclear", "the stem asks two things")),
        ("flag typo <!channel> B", ("typo", "<!channel> B")),
    ],
)
def test_flag_reads_a_reason_and_what_is_wrong(text: str, given: tuple[str, str | None]) -> None:
    call = read_text(QUIZ, text)
    assert call.verb.name == "flag" and call.args["flag"] == given


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("flag", "Say why: wrong, unclear, outdated or typo"),
        ("flag broken", "Say why: wrong, unclear, outdated or typo"),
        ("flag wrong " + "x" * 301, "Keep the note to 300 characters"),
    ],
)
def test_a_flag_without_a_reason_is_refused(text: str, says: str) -> None:
    with pytest.raises(BadInput) as caught:
        read_text(QUIZ, text)
    assert says in caught.value.message


def test_the_flag_form_reads_its_options() -> None:
    call = read_options(QUIZ, "flag", {"reason": "outdated", "note": "NDR is old news"})
    assert (call.args.text("reason"), call.args.text("note")) == ("outdated", "NDR is old news")


@pytest.mark.parametrize(
    ("text", "given"),
    [
        ("proposals", (None, None, None)),
        ("proposals approve 12", ("approve", 12, None)),
        ("proposals Reject 3   too  vague", ("reject", 3, "too vague")),
        ("proposals reject 3", ("reject", 3, None)),
    ],
)
def test_proposals_reads_an_action_an_id_and_a_reason(
    text: str, given: tuple[str | None, int | None, str | None]
) -> None:
    call = read_text(QUIZ, text)
    assert call.verb.name == "proposals" and call.args["proposals"] == given


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("proposals delete 3", "Say /quiz proposals to list"),
        ("proposals approve", "Say /quiz proposals to list"),
        ("proposals approve 3 because", "Say /quiz proposals to list"),
        ("proposals approve x", "is not a whole number"),
        ("proposals reject 0", "between 1 and"),
        ("proposals reject 3 " + "x" * 501, "500 characters at most"),
    ],
)
def test_a_proposals_line_that_does_not_read_is_refused(text: str, says: str) -> None:
    with pytest.raises(BadInput) as refused:
        read_text(QUIZ, text)
    assert says in refused.value.message


def test_the_review_setting_reads_whose_questions_wait() -> None:
    assert read("settings review everyone") == ("settings", {"review": "everyone"})
    assert read("settings review Others") == ("settings", {"review": "others"})
    with pytest.raises(BadInput, match="is not whose questions to review"):
        read_text(QUIZ, "settings review admins")
    call = read_options(QUIZ, "proposals", {"action": "reject", "id": 4, "reason": "dup"})
    assert dict(call.args) == {"action": "reject", "id": 4, "reason": "dup"}
