"""The catalogue's sentences filled in with what the engine returns, for every face alike.

Renderers lay these texts out (Block Kit sections, embed fields, terminal lines); the words
themselves are chosen here, once.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from bot import messages as M
from bot.bank.loader import check_text
from bot.chat.buttons import (
    PRACTICE,
    PRACTICE_NEXT,
    PRACTICE_STOP,
    ConfidenceChoice,
    Decide,
    Report,
    fits,
)
from bot.chat.content import Feedback, Offer, Panel, ReviewAsk
from bot.engine import analytics
from bot.engine.analytics import QuestionReport
from bot.engine.learning import Confidence, PracticeKind, Rated, TopicMastery
from bot.engine.model import (
    AnswerOutcome,
    AnswerStatus,
    ChannelSettings,
    Choice,
    DifficultyMode,
    Flag,
    Flagged,
    FlagReason,
    Leaderboard,
    Period,
    PlayerSummary,
    Proposal,
    ProposalStatus,
    Proposed,
    Published,
    Question,
    QuestionCard,
    Reveal,
    ReviewScope,
    UserStats,
)
from bot.engine.practice import PracticeResult, PracticeSession, PracticeTurn
from bot.engine.review import ReviewOutcome, ReviewQueue
from bot.engine.tracks import MyTrack, Track, TrackProgress
from bot.scheduler import ScheduleView, describe_schedule
from bot.scheduler._track_day import unit_name
from bot.text import (
    Code,
    Icon,
    Label,
    Mention,
    Moment,
    Pre,
    Strong,
    Text,
    Verbatim,
    When,
    join,
    lines,
    say,
)

PERIODS = {Period.WEEK: M.PERIOD_WEEK, Period.MONTH: M.PERIOD_MONTH, Period.ALL: M.PERIOD_ALL}


def label(choice: Choice, *, strong: bool = False) -> Label:
    """Return a choice as a lettered label span."""
    return Label(choice.key, choice.text, strong=strong)


def bar(fraction: float, width: int) -> str:
    """Return a text bar of ``width`` cells filled in proportion to ``fraction``."""
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "█" * filled + "░" * (width - filled)


# ---------------------------------------------------------------- the card


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact about a card: a field name and value, and the same as a short phrase."""

    name: str
    value: Text
    inline: Text


def card_title(card: QuestionCard) -> Text:
    """Return the card's title: its note (posted late...) or the plain title."""
    return say(card.note) if card.note else say(M.CARD_TITLE)


def card_facts(card: QuestionCard) -> list[Fact]:
    """Return the facts under an open question: difficulty, closing time, answer count.

    The tags are not among them: a tag can name the answer (``infiniband`` on the question whose
    answer is InfiniBand), so they are shown at the reveal (``revealed_tags``), never before.
    """
    q = card.question
    facts = []
    points = q.difficulty.points
    difficulty = say(
        M.DIFFICULTY_VALUE_ONE if points == 1 else M.DIFFICULTY_VALUE_MANY,
        difficulty=q.difficulty.value,
        n=points,
    )
    facts.append(Fact(M.FACT_DIFFICULTY, difficulty, difficulty))
    closes = card.round.closes_at
    if closes is not None:
        when = Moment(closes, When.SOON)
        facts.append(Fact(M.FACT_CLOSES, Text((when,)), say(M.CLOSES_INLINE, when=when)))
    answered = say(M.ANSWERED, n=card.answered)
    facts.append(Fact(M.FACT_ANSWERED, answered, answered))
    return facts


def tag_list(question: Question) -> Text | None:
    """Return the question's tags as a list of code spans, or None when it has none."""
    if not question.tags:
        return None
    return join([Text((Code(t),)) for t in question.tags], ", ")


def revealed_tags(question: Question) -> Text | None:
    """Return the question's tags as shown once its answer is known, or None when it has none."""
    tags = tag_list(question)
    return None if tags is None else say(M.TAGS_REVEALED, tags=tags)


def how_to_answer() -> Text:
    """Return the line that says how to answer a card."""
    return say(M.CARD_HOW_TO_ANSWER, emoji=Icon.ANSWER_EMOJI)


def notification(question: Question) -> Text:
    """Return the one line a notification shows for a card."""
    return say(M.CARD_NOTIFICATION, question=Verbatim(question.text))


# ---------------------------------------------------------------- answers


def feedback(outcome: AnswerOutcome) -> Feedback:
    """Return the private reply to someone who answered (with "I was sure / I guessed" on a
    first answer, whose review of the person's card a confidence can re-rate)."""
    return _feedback(
        outcome.status,
        outcome.choice,
        outcome.previous,
        outcome.correct,
        outcome.points,
        outcome.short,
        outcome.streak,
        outcome.why_not,
        outcome.question_id,
    )


# Everyone who answers a round alike gets the same reply: each is put together once.
@functools.lru_cache(maxsize=256)
def _feedback(
    status: AnswerStatus,
    choice: Choice,
    previous: Choice | None,
    correct: bool,
    points: int,
    short: str,
    streak: int,
    why_not: str | None,
    question_id: str = "",
) -> Feedback:
    mine = label(choice, strong=True)
    if status is AnswerStatus.CLOSED:
        return Feedback(say(M.FEEDBACK_CLOSED))
    if status is AnswerStatus.ALREADY:
        return Feedback(say(M.FEEDBACK_ALREADY, choice=mine))
    parts: list[Text] = []
    if status is AnswerStatus.CHANGED and previous is not None:
        parts.append(say(M.FEEDBACK_CHANGED, before=Strong(previous.key), after=Strong(choice.key)))
    if correct:
        template = M.FEEDBACK_RIGHT_ONE if points == 1 else M.FEEDBACK_RIGHT_MANY
        parts.append(say(template, icon=Icon.RIGHT, right=Strong(M.RIGHT), choice=mine, n=points))
    else:
        parts.append(
            say(M.FEEDBACK_WRONG, icon=Icon.WRONG, wrong=Strong(M.NOT_THIS_TIME), choice=mine)
        )
        if why_not:
            parts.append(say(M.WHY_NOT_CHOSEN, key=Strong(choice.key), reason=Verbatim(why_not)))
    parts.append(Text((Verbatim(short),)))
    if streak > 1:
        parts.append(say(M.STREAK, icon=Icon.STREAK, n=streak))
    offers = confidence_offers(question_id) if status is AnswerStatus.ACCEPTED else ()
    return Feedback(join(parts), offers=offers + report_offers(question_id))


def report_offers(question_id: str) -> tuple[Offer, ...]:
    """Return "Report a problem" with a question (none without a question id)."""
    report = Report(question_id)
    return (Offer(report, M.REPORT_BUTTON),) if question_id and fits(report) else ()


def confidence_offers(question_id: str) -> tuple[Offer, ...]:
    """Return "I was sure" and "I guessed" for one's latest answer to a question (none
    without a question id)."""
    if not question_id:
        return ()
    return (
        Offer(ConfidenceChoice(question_id, Confidence.SURE.value), M.CONFIDENCE_SURE),
        Offer(ConfidenceChoice(question_id, Confidence.GUESSED.value), M.CONFIDENCE_GUESSED),
    )


RATED = {
    (Confidence.SURE, True): M.CONFIDENCE_SURE_RIGHT,
    (Confidence.GUESSED, True): M.CONFIDENCE_GUESSED_RIGHT,
    (Confidence.SURE, False): M.CONFIDENCE_SURE_WRONG,
    (Confidence.GUESSED, False): M.CONFIDENCE_GUESSED_WRONG,
}


def rated(result: Rated) -> Text:
    """Return the reply to "I was sure" or "I guessed": what it changed (a confidently wrong
    answer said so plainly)."""
    template = RATED[(result.confidence, result.correct)]
    return say(template, when=Moment(result.due_at, When.RELATIVE))


# ---------------------------------------------------------------- the reveal


def results(reveal: Reveal) -> Text:
    """Return how many answered, and how many of them right."""
    if reveal.answered == 0:
        return say(M.NOBODY_ANSWERED)
    template = M.RESULTS_ONE if reveal.answered == 1 else M.RESULTS_MANY
    return say(template, n=reveal.answered, right=reveal.correct, percent=reveal.percent_correct)


def fastest(reveal: Reveal) -> Text | None:
    """Return who answered right fastest, or None when nobody did."""
    if not reveal.fastest:
        return None
    who = join(
        [say(M.FASTEST_ONE, user=Mention(a.user), seconds=a.seconds) for a in reveal.fastest],
        ", ",
    )
    return say(M.FASTEST, who=who)


def fastest_names(reveal: Reveal) -> Text:
    """Return the fastest right answerers alone (a field's value)."""
    return join(
        [say(M.FASTEST_ONE, user=Mention(a.user), seconds=a.seconds) for a in reveal.fastest],
        ", ",
    )


def tally(count: int, fraction: float) -> Text:
    """Return one choice's share of the answers."""
    return say(M.TALLY, count=count, percent=fraction * 100)


def closed_notification(reveal: Reveal) -> Text:
    """Return the one line a notification shows for the closed card."""
    return say(
        M.ROUND_CLOSED_NOTIFICATION,
        answer=label(reveal.question.answer_choice),
        results=results(reveal),
    )


def answer_is(question: Question) -> Text:
    """Return the headline of the explanation."""
    return say(M.ANSWER_IS, choice=label(question.answer_choice))


def why_not(choice: Choice) -> Text:
    """Return the heading of why one wrong choice is wrong."""
    return say(M.WHY_NOT, choice=label(choice))


def thread_name(reveal: Reveal) -> Text:
    """Return the name of the thread opened for the explanation."""
    return say(M.THREAD_NAME, question=Verbatim(reveal.question.text))


# ---------------------------------------------------------------- scores and settings


def leaderboard(board: Leaderboard) -> Panel:
    """Return the top of the leaderboard and the caller's own line."""
    rows = [
        say(
            M.LEADERBOARD_LINE,
            rank=e.rank,
            user=Mention(e.user),
            points=e.points,
            correct=e.correct,
            answered=e.answered,
        )
        for e in board.entries
    ]
    body = join(rows) if rows else say(M.LEADERBOARD_EMPTY)
    note: Text | None = None
    if board.caller is None:
        note = say(M.LEADERBOARD_NOT_YOU)
    elif all(e.user != board.caller.user for e in board.entries):
        c = board.caller
        note = say(
            M.LEADERBOARD_YOU, rank=c.rank, points=c.points, correct=c.correct, answered=c.answered
        )
    return Panel(say(M.LEADERBOARD_TITLE, period=PERIODS[board.period]), body, note)


def stats(s: UserStats) -> Text:
    """Return one user's totals and streaks."""
    return say(
        M.STATS,
        user=Mention(s.user),
        answered=s.answered,
        correct=s.correct,
        accuracy=s.accuracy,
        points=s.points,
        current=s.current_streak,
        best=s.best_streak,
    )


DIFFICULTIES = {
    DifficultyMode.MIXED: M.DIFFICULTY_MIXED,
    DifficultyMode.EASY: M.DIFFICULTY_EASY,
    DifficultyMode.HARD: M.DIFFICULTY_HARD,
    DifficultyMode.ADAPTIVE: M.DIFFICULTY_ADAPTIVE,
    DifficultyMode.LEVEL: M.DIFFICULTY_LEVEL,
}


def settings(
    s: ChannelSettings, retention: float, review: ReviewScope = ReviewScope.OTHERS
) -> Text:
    """Return a channel's options, and the workspace's retention and review, as sentences."""
    changes = M.CHANGES_ALLOWED if s.allow_change else M.CHANGES_NOT_ALLOWED
    channel = say(
        M.SETTINGS,
        minutes=s.round_minutes or 0,
        changes=changes,
        difficulty=DIFFICULTIES[s.difficulty],
    )
    computed = (
        say(M.SETTINGS_COMPUTED, percent=s.computed_percent)
        if s.computed_percent
        else say(M.SETTINGS_COMPUTED_NONE, command=Code("/quiz next computed"))
    )
    return lines(
        channel,
        computed,
        say(M.SETTINGS_RETENTION, percent=round(retention * 100)),
        review_setting(review),
    )


def review_setting(review: ReviewScope) -> Text:
    """Return whose questions written in chat wait for an admin's review."""
    if review is ReviewScope.EVERYONE:
        return say(M.SETTINGS_REVIEW_EVERYONE, command=Code("/quiz settings review others"))
    return say(M.SETTINGS_REVIEW_OTHERS, command=Code("/quiz settings review everyone"))


# ---------------------------------------------------------------- proposals


def proposal_offers(proposal_id: int) -> tuple[Offer, ...]:
    """Return an admin's Approve, Edit and Reject buttons for a proposal."""
    return (
        Offer(Decide(proposal_id, "approve"), M.PROPOSAL_APPROVE, primary=True),
        Offer(Decide(proposal_id, "edit"), M.PROPOSAL_EDIT),
        Offer(Decide(proposal_id, "reject"), M.PROPOSAL_REJECT),
    )


def proposed_question(proposal: Proposal) -> Text:
    """Return a proposed question as its card shows it: the stem, the choices, the answer,
    and the short explanation (its YAML text if it no longer loads)."""
    questions, problems = check_text(proposal.body, f"proposal {proposal.id}")
    if problems or len(questions) != 1:
        return Text((Pre(proposal.body),))
    q = questions[0]
    return lines(
        Text((Strong(q.text),)),
        join([Text((label(c),)) for c in q.choices]),
        say(M.PROPOSAL_ANSWER, choice=label(q.answer_choice, strong=True)),
        Text((Verbatim(q.short),)),
    )


def proposal(item: Proposal, *, lead: Text | None = None, buttons: bool = True) -> Feedback:
    """Return a proposal for an admin: who wrote what, and Approve, Edit and Reject."""
    head = say(
        M.PROPOSAL_HEAD, id=item.id, question=Code(item.question_id), author=Mention(item.author)
    )
    offers = proposal_offers(item.id) if buttons else ()
    return Feedback(lines(lead, head, proposed_question(item)), offers=offers)


def new_proposal(item: Proposal) -> Feedback:
    """Return what an admin is told, privately, of a proposal just made."""
    lead = say(
        M.PROPOSAL_NEW,
        author=Mention(item.author),
        question=Code(item.question_id),
        id=item.id,
        how=say(M.PROPOSAL_NEW_BUTTONS, command=Code("/quiz proposals")),
    )
    return proposal(item, lead=lead)


def proposals_waiting(count: int, shown: int) -> Text:
    """Return the heading of ``/quiz proposals``: how many wait, and how many are not shown."""
    if count == 0:
        return say(M.PROPOSALS_NONE)
    head = say(M.PROPOSALS_WAITING, count=count)
    if count <= shown:
        return head
    more = say(
        M.PROPOSALS_MORE,
        more=count - shown,
        command=Code("quizbot questions proposals --workspace W"),
    )
    return lines(head, more)


def approved(published: Published) -> Text:
    """Return the admin's confirmation of an approval."""
    return say(
        M.PROPOSAL_APPROVED, question=Code(published.question_id), revision=published.revision
    )


def rejected(item: Proposal) -> Text:
    """Return the admin's confirmation of a rejection."""
    return say(M.PROPOSAL_REJECTED, id=item.id, question=Code(item.question_id))


def decided(item: Proposal) -> Text:
    """Return what a proposal's author is told once it is decided."""
    question = Code(item.question_id)
    if item.status is ProposalStatus.APPROVED:
        template = M.PROPOSAL_TOLD_EDITED if item.edited else M.PROPOSAL_TOLD_APPROVED
        return say(template, question=question, revision=item.revision or 0)
    reason = say(M.PROPOSAL_TOLD_REASON, reason=Verbatim(item.reason)) if item.reason else None
    return lines(say(M.PROPOSAL_TOLD_REJECTED, question=question), reason)


FLAG_REASONS = {
    FlagReason.WRONG: M.FLAG_REASON_WRONG,
    FlagReason.UNCLEAR: M.FLAG_REASON_UNCLEAR,
    FlagReason.OUTDATED: M.FLAG_REASON_OUTDATED,
    FlagReason.TYPO: M.FLAG_REASON_TYPO,
}


def submitted(result: Published | Proposed) -> Text:
    """Return what became of a question written in the form: saved live, or sent for review."""
    if isinstance(result, Proposed):
        return say(M.ADD_PROPOSED, question=Code(result.question_id), id=result.proposal_id)
    return say(M.ADD_PUBLISHED, question=Code(result.question_id), revision=result.revision)


def flagged(result: Flagged, reason: FlagReason) -> Text:
    """Return the thanks for a report, and what became of the question."""
    said = FLAG_REASONS[reason]
    if result.paused:
        return say(M.FLAG_PAUSED, question=Code(result.question_id), reason=said)
    return say(M.FLAG_THANKS, question=Code(result.question_id), reason=said, count=result.open)


def reported(flags: Sequence[Flag], paused: Collection[str]) -> list[Text]:
    """Return one line per reported question: its reasons, who reported, and any notes."""
    by_question: dict[str, list[Flag]] = {}
    for f in flags:
        by_question.setdefault(f.question_id, []).append(f)
    lines = []
    for qid, mine in by_question.items():
        reasons = ", ".join(dict.fromkeys(FLAG_REASONS[f.reason] for f in mine))
        notes = "; ".join(f.note for f in mine if f.note)
        lines.append(
            say(
                M.REPORT_REPORTED_LINE,
                question=Code(qid),
                reason=reasons,
                who=join([Text((Mention(f.user),)) for f in mine], ", "),
                paused=M.REPORT_PAUSED if qid in paused else "",
                note=Text((": ", Verbatim(notes))) if notes else "",
            )
        )
    return lines


def report(
    items: Sequence[QuestionReport],
    flags: Sequence[Flag] = (),
    paused: Collection[str] = (),
    waiting: int = 0,
) -> Panel:
    """Return the reported, the flagged and the hardest questions of a workspace, for admins,
    and how many proposed questions wait for review."""
    flagged = [
        say(M.REPORT_FLAG_LINE, question=Code(r.question_id), reason=f.reason)
        for r in items
        for f in r.flags
    ]
    hardest = [
        say(
            M.REPORT_HARDEST_LINE,
            question=Code(r.question_id),
            label=r.label.value,
            share=f"{r.share_correct or 0.0:.0%}",
            answers=r.answers,
        )
        for r in analytics.hardest(items)
    ]
    parts: list[Text] = []
    if waiting:
        parts.append(say(M.REPORT_PROPOSALS, count=waiting, command=Code("/quiz proposals")))
    if flags:
        parts += [say(M.REPORT_REPORTED), join(reported(flags, paused))]
    if flagged:
        parts += [say(M.REPORT_FLAGGED), join(flagged)]
    if hardest:
        parts += [say(M.REPORT_HARDEST), join(hardest)]
    body = join(parts) if parts else say(M.REPORT_NOTHING)
    asked = sum(1 for r in items if r.rounds)
    note = say(
        M.REPORT_NOTE,
        asked=asked,
        total=len(items),
        command=Code("quizbot report questions"),
    )
    return Panel(say(M.REPORT_TITLE), body, note)


#: How many topics the page names by mastery (the best known first).
MASTERY_SHOWN = 5


def mastery(topics: Sequence[TopicMastery]) -> Text:
    """Return one person's mastery of the topics they have begun, best first, and how many
    they have not begun."""
    begun = sorted((t for t in topics if t.seen), key=lambda t: (-t.mastery, t.topic))
    if not begun:
        return say(M.ME_MASTERY_NONE, command=Code("/quiz practice"))
    shown = join(
        [
            say(M.ME_MASTERY_TOPIC, topic=Code(t.topic), percent=round(t.mastery * 100))
            for t in begun[:MASTERY_SHOWN]
        ],
        ", ",
    )
    rest = len(topics) - len(begun)
    if rest:
        return say(M.ME_MASTERY_REST, topics=shown, rest=rest)
    return say(M.ME_MASTERY, topics=shown)


def me(
    s: PlayerSummary,
    *,
    dashboard: bool = False,
    tracks: Sequence[MyTrack] = (),
    topics: Sequence[TopicMastery] = (),
) -> Panel:
    """Return a player's own page: totals, streak, cards due, mastery by topic, tracks and this
    week's rank, with a Practice button."""
    body = say(
        M.ME_BODY,
        points=s.points,
        correct=s.correct,
        answered=s.answered,
        current=s.current_streak,
        best=s.best_streak,
    )
    if s.reviews_due:
        reviews = say(M.ME_REVIEWS_DUE, due=s.reviews_due, command=Code("/quiz practice"))
    elif s.next_review_due is not None:
        reviews = say(M.ME_REVIEWS_NEXT, when=Moment(s.next_review_due, When.RELATIVE))
    else:
        reviews = say(M.ME_REVIEWS_NONE)
    c = s.week.caller
    week = say(M.ME_WEEK, rank=c.rank, points=c.points) if c else say(M.ME_WEEK_NONE)
    start = s.reviews_due > 0
    taken = my_tracks(tracks)
    parts = [body, reviews, mastery(topics)]
    if taken is not None:
        parts.append(taken)
    return Panel(say(M.ME_TITLE), join(parts), week, start, dashboard, practice=True)


def schedule(view: ScheduleView | None) -> Text:
    """Return a channel's schedule and its next post, or how to set one."""
    if view is None:
        return say(M.SCHEDULE_NONE, how=Code("/quiz schedule HH:MM"))
    return describe_schedule(view)


# ---------------------------------------------------------------- review


def review_ask(question: Question, queue: ReviewQueue) -> ReviewAsk:
    """Return a question due for review, to ask again privately."""
    waiting = queue.due - 1
    footer = say(M.REVIEW_FOOTER_MORE, n=waiting) if waiting > 0 else say(M.REVIEW_FOOTER)
    return ReviewAsk(question, say(M.REVIEW_TITLE), footer)


def nothing_due(queue: ReviewQueue) -> Text:
    """Return the reply to ``/quiz review`` when no question is due."""
    if queue.next_due is not None:
        return say(M.REVIEW_NOTHING_DUE, when=Moment(queue.next_due, When.RELATIVE))
    return say(M.REVIEW_NONE)


def review_feedback(outcome: ReviewOutcome) -> Feedback:
    """Return the private reply to a review answer."""
    mine = label(outcome.choice, strong=True)
    if outcome.correct:
        head = say(M.REVIEW_RIGHT, icon=Icon.RIGHT, right=Strong(M.RIGHT), choice=mine)
    else:
        head = say(
            M.REVIEW_WRONG,
            icon=Icon.WRONG,
            wrong=Strong(M.NOT_THIS_TIME),
            choice=mine,
            answer=label(outcome.answer, strong=True),
        )
    why: Text | None = None
    if outcome.why_not:
        why = say(
            M.WHY_NOT_CHOSEN, key=Strong(outcome.choice.key), reason=Verbatim(outcome.why_not)
        )
    after: Text | None = None
    if outcome.due_at is not None:
        when = Moment(outcome.due_at, When.RELATIVE)
        after = say(
            M.REVIEW_COMES_BACK if outcome.counted else M.REVIEW_ANSWERED_FOR_NOW, when=when
        )
    offers = confidence_offers(outcome.question_id) if outcome.counted else ()
    return Feedback(lines(head, why, Verbatim(outcome.short), after), replaces=True, offers=offers)


# ---------------------------------------------------------------- practice

NEXT_OR_STOP = (
    Offer(PRACTICE_NEXT, M.PRACTICE_NEXT, primary=True),
    Offer(PRACTICE_STOP, M.PRACTICE_STOP),
)
AGAIN = (Offer(PRACTICE, M.PRACTICE_AGAIN),)


def practice_title(turn: PracticeTurn) -> Text:
    """Return the title of a practice question: its number, and whether it is due or new."""
    assert turn.item is not None
    due = turn.item.kind is PracticeKind.DUE
    return say(M.PRACTICE_TITLE_DUE if due else M.PRACTICE_TITLE_NEW, number=turn.number)


def practice_left(session: PracticeSession) -> Text:
    """Return how many questions a session has left after the one it shows."""
    left = session.left - 1
    return say(M.PRACTICE_LEFT, left=left) if left > 0 else say(M.PRACTICE_LAST)


def practice_footer(session: PracticeSession) -> Text:
    """Return the line under a practice question: private, and how many are left after it."""
    return say(M.PRACTICE_FOOTER, left=practice_left(session))


def practice_ask(turn: PracticeTurn) -> ReviewAsk:
    """Return a practice question, to ask privately with its own buttons."""
    assert turn.item is not None
    return ReviewAsk(
        turn.item.question, practice_title(turn), practice_footer(turn.session), practice=True
    )


def practice_score(session: PracticeSession, *, stopped: bool = False) -> Text:
    """Return how a session went: done (or stopped), and how many right."""
    if stopped and session.answered == 0:
        return say(M.PRACTICE_STOPPED_NONE)
    template = M.PRACTICE_STOPPED if stopped else M.PRACTICE_DONE
    return say(template, right=session.right, answered=session.answered)


def practice_end(turn: PracticeTurn) -> Feedback:
    """Return what a session says when it has nothing more to ask."""
    if turn.session.answered == 0:
        return Feedback(say(M.PRACTICE_NOTHING))
    if turn.session.done:
        return Feedback(practice_score(turn.session), offers=AGAIN)
    return Feedback(lines(say(M.PRACTICE_NOTHING_MORE), practice_score(turn.session)), offers=AGAIN)


def practice_stopped(session: PracticeSession | None) -> Feedback:
    """Return the reply to Stop."""
    if session is None:
        return Feedback(say(M.PRACTICE_STOPPED_NONE), replaces=True, offers=AGAIN)
    return Feedback(practice_score(session, stopped=True), replaces=True, offers=AGAIN)


def practice_feedback(result: PracticeResult, *, score: bool = True) -> Feedback:
    """Return the private reply to a practice answer: right or not, why not the choice, the
    short explanation, and Next and Stop (or, with ``score``, the session's score once it is
    done)."""
    outcome, session = result.outcome, result.session
    # An owed card comes back in this session, not on its card's date.
    reply = review_feedback(replace(outcome, due_at=None) if result.owed_again else outcome)
    parts = [reply.text]
    if result.owed_again:
        parts.append(say(M.PRACTICE_COMES_BACK_NOW))
    tags = revealed_tags(result.question)
    if tags is not None:
        parts.append(tags)
    sure = confidence_offers(outcome.question_id)
    if session.done:
        if score:
            parts.append(practice_score(session))
        return Feedback(join(parts), replaces=True, offers=(*sure, *AGAIN))
    return Feedback(join(parts), replaces=True, offers=(*sure, *NEXT_OR_STOP))


# ---------------------------------------------------------------- learning tracks

TRACK_START_USAGE = "/quiz track start NAME [HH:MM] [Area/City] [daily|weekdays]"


def track_list(tracks: Mapping[str, Track], *, lead: Text | None = None) -> Panel:
    """Return the learning tracks there are to run, with how to start one (``lead`` first)."""
    rows = [
        say(M.TRACK_LIST_LINE, name=Code(t.name), title=Verbatim(t.title), units=len(t.units))
        for t in tracks.values()
    ]
    listed = join(rows) if rows else say(M.TRACK_NONE_SHIPPED)
    body = listed if lead is None else join([lead, listed])
    return Panel(
        say(M.TRACK_LIST_TITLE), body, say(M.TRACK_LIST_NOTE, start=Code(TRACK_START_USAGE))
    )


def track(progress: TrackProgress) -> Panel:
    """Return a channel's track: where the channel is, who did which unit, and the asker."""
    t, run = progress.track, progress.run
    units = len(t.units)
    if run.finished:
        status = say(M.TRACK_CHANNEL_ENDED, opened=run.opened, units=units)
    elif progress.current is None:
        status = say(M.TRACK_NOT_STARTED)
    else:
        unit = t.units[progress.current]
        status = say(
            M.TRACK_CHANNEL_ON,
            unit=progress.current + 1,
            units=units,
            name=Verbatim(unit_name(unit, progress.current)),
        )
    rows = []
    for index, unit in enumerate(t.units[: run.opened]):
        people = len(progress.done.get(index, ()))
        rows.append(
            say(
                M.TRACK_UNIT_LINE_ONE if people == 1 else M.TRACK_UNIT_LINE,
                mark=Icon.RIGHT if index in progress.mine else "·",
                unit=index + 1,
                name=Verbatim(unit_name(unit, index)),
                people=people,
            )
        )
    you: list[Text] = []
    if run.opened:
        you.append(say(M.TRACK_YOU, done=len(progress.mine), opened=run.opened))
        if progress.next_question is not None:
            you.append(
                say(
                    M.TRACK_YOU_NEXT,
                    question=Code(progress.next_question),
                    command=Code("/quiz track"),
                )
            )
        elif progress.waiting_until is not None:
            when = Moment(progress.waiting_until, When.RELATIVE)
            you.append(say(M.TRACK_YOU_WAITING, when=when))
        elif not run.finished:
            you.append(say(M.TRACK_YOU_ALL_DONE))
    body = join([status, *rows, *you])
    return Panel(say(M.TRACK_TITLE, title=Verbatim(t.title)), body, say(M.TRACK_RULE))


def track_ask(question: Question, progress: TrackProgress) -> ReviewAsk:
    """Return the asker's next question of the track, to answer privately."""
    unit = next((i for i, u in enumerate(progress.track.units) if question.id in u.questions), 0)
    title = say(M.TRACK_ASK_TITLE, title=Verbatim(progress.track.title), unit=unit + 1)
    footer = say(M.TRACK_ASK_FOOTER, command=Code("/quiz track"))
    return ReviewAsk(question, title, footer, track=True)


def my_tracks(mine: Sequence[MyTrack]) -> Text | None:
    """Return a person's place in the tracks they take part in (None: none)."""
    if not mine:
        return None
    return join(
        [
            say(
                M.ME_TRACK,
                title=Verbatim(m.track.title),
                done=m.done,
                opened=m.opened,
                units=len(m.track.units),
            )
            for m in mine
        ]
    )


def apology(error_id: str) -> Text:
    """Return the message for an unexpected failure, with the id to quote."""
    return say(M.APOLOGY, id=Code(error_id))
