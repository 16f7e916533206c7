"""Every sentence quizbot says, in one place: a translation is a copy of this file.

Templates name their blanks ``{like_this}``; ``bot.text.say`` fills them with plain values or
with spans (code, a mention, a moment...), and each face's renderer decides how a span looks.
Nothing here carries markup. Where a sentence changes with a number, there is a ``_ONE`` and a
``_MANY`` form.
"""

from __future__ import annotations

# ---------------------------------------------------------------- commands and options
# Short lines: Discord shows them as command and option descriptions (100 characters at most).

COMMAND_QUIZ = "Quiz questions, scores, settings"
COMMAND_BANDWIDTH = "How long moving data takes over each interconnect"
VERB_NEXT = "Post the next question in this channel"
VERB_CLOSE = "Close the open question here now and show the answer"
VERB_LEADERBOARD = "The top 10 and your own rank"
VERB_STATS = "Answered, right, points and streaks"
VERB_SETTINGS = "Show this channel's options (admins change them)"
VERB_SCHEDULE = "Show the daily question here, or set it (admins)"
VERB_UNSCHEDULE = "Stop the daily question here (admins)"
VERB_REVIEW = "Re-ask a question that is due for review, privately"
VERB_FLAG = "Report a problem with the latest question here: wrong, unclear, outdated or typo"
OPTION_FLAG_REASON = "What is wrong: wrong (the answer), unclear, outdated or typo"
OPTION_FLAG_NOTE = "Say more (optional, 300 characters at most)"
VERB_ADD = "Write a question in a form for this workspace (a proposal unless you are an admin)"
VERB_REPORT = "The flagged and the hardest questions, privately (admins)"
VERB_PROPOSALS = "The questions proposed here, to approve or reject, privately (admins)"
VERB_HIDE = "Keep a question out of this workspace's rounds, by its id (admins)"
VERB_UNHIDE = "Let a hidden question back into this workspace's rounds (admins)"
OPTION_QUESTION_ID = "The question's id, as /quiz report and the dashboard show it"
VERB_DASHBOARD = "A private link to the web dashboard (admins: the workspace; me: your page)"
VERB_ME = "Your points, streak and due reviews, privately"
VERB_TRACK = "This channel's learning track and your progress, privately"
VERB_TRACK_START = "Run a learning track here, a unit each scheduled day (admins)"
VERB_TRACK_STOP = "Stop this channel's learning track (admins)"
VERB_TRACK_LIST = "The learning tracks you can run"
OPTION_TRACK = "The track's name (see /quiz track list)"
VERB_PRACTICE = "A private practice session: due questions first, then new ones at your level"
VERB_HELP = "How to use the quiz"
OPTION_TAG = "Only questions with this tag, or computed for one computed from /bandwidth"
OPTION_PERIOD = "Which answers count (default: this week)"
OPTION_USER = "Whose stats (default: yours)"
OPTION_CHANGES = "May people change their answer until the round closes?"
OPTION_MINUTES = "How long a round from /quiz next stays open, in minutes"
OPTION_DIFFICULTY = "How the next question is picked: adaptive, level, mixed, easy or hard"
OPTION_COMPUTED = "The share (0-100%) of rounds without a tag that ask a computed question"
OPTION_REVIEW = "For the whole workspace: whose new questions wait for an admin (others, everyone)"
OPTION_PROPOSAL_ACTION = "approve or reject a proposal (leave out to list those waiting)"
OPTION_PROPOSAL_ID = "The proposal's number, as the list shows it"
OPTION_PROPOSAL_REASON = "Why it is rejected, told to its author (optional, 500 characters at most)"
OPTION_RETENTION = "For the whole workspace: the recall chance (70-97%) at which reviews fall due"
OPTION_TOPIC = "Only one topic of the bank, such as collectives (default: all)"
OPTION_COUNT = "How many questions (default 5, at most 50)"
OPTION_DASHBOARD_ME = "me: a link to your own page (admins without it: the whole workspace)"
BANDWIDTH_SIZE_OR_PLAN = "Give a size (such as 140GB) or a plan (such as {example})."
OPTION_PLAN = "A training step: MODEL gpus=N [tp=T] [pp=P] [zero=Z] [over=..] [search]"
OPTION_TIME = "HH:MM on a 24-hour clock (no options: show the schedule)"
OPTION_ZONE = "Time zone, Area/City"
OPTION_DAYS = "Every day or weekdays"
OPTION_DIGEST = "Weekly digest on this day"
OPTION_CLOSE = "Close each question after 45m, 2h, 1h30m (default: at the next post)"
OPTION_SIZE = "Bytes (140GB, 1.5TiB), bits (400Gb) or parameters (70B params bf16, 13B adam)"

# ---------------------------------------------------------------- usage and help

USAGE_HEADING = "Quiz commands"
USAGE_LINE = "{typed}: {help}"
USAGE_DEFAULT = "{bare} or {typed}: {help}"
USAGE_OPTIONS_LINE = "{typed} {fields}: {help}"
HELP_ANSWERING = (
    "Answer with the buttons, or react to the question with {emoji}; "
    "an answer by reaction is confirmed privately."
)

# ---------------------------------------------------------------- what cannot be read

UNKNOWN_VERB = "I don't know {typed}."
CANNOT_READ = "I can't read {word} after {verb}."
GIVEN_TWICE = "{word}: the {option} is given already."
SCHEDULE_TWICE = "{word}: the schedule has its {option} already."
ONE_TAG = "{word}: a tag is one word of letters, digits and dashes, like networking."
NEEDS_VALUE = "{word} needs a value, like {example}."
MISSING_OPTION = "Give {option} too."
UNKNOWN_OPTION = "There is no option {option}."
OUT_OF_RANGE = "{option} must be between {low:g} and {high:g}."
WRONG_VALUE = "{value} does not fit the option {option}."
BAD_PERIOD = "The leaderboard period is {week}, {month} or {all}."
BAD_MENTION = "Mention the person with @, like {example}."
BAD_ON_OFF = "{word} is not {on} or {off}."
NOT_A_NUMBER = "{word} is not a whole number."
NOT_A_BUTTON = "That button is not from a quiz question."
QUESTION_NOT_HERE = "That question does not exist here."
NOT_A_REVIEW_BUTTON = "That button is not from a review question."
SERVER_ONLY = "Use this in a server channel."
INCOMPLETE_REQUEST = "That request came without its workspace, channel or user."
BAD_OPTION_VALUE = "{value} does not fit that option; see {help}."
CANNOT_USE_HERE = "You cannot use that command here."

# ---------------------------------------------------------------- rounds the engine refuses

NO_SUCH_TAG = "No question has the tag {tag}."
EMPTY_BANK = "The question bank is empty."
ALREADY_OPEN = "A question is already open in this channel; answer it or close it first."
ROUND_GONE = "That question no longer exists."
NOT_IN_BANK = "That question is no longer in the bank."
NOT_A_CHOICE = "{given} is not a choice; pick one of {keys}."
NOTHING_OPEN = "There is no open question in this channel."
JUST_CLOSED = "That question has just been closed."
CLOSE_DAILY_ADMINS_ONLY = (
    "This is the daily question: only {admins} can close it early. It closes by itself when its "
    "time is up, so everyone keeps the chance to answer."
)
ROUND_LENGTH = "Round length must be between 1 minute and 7 days."
COMPUTED_PERCENT = "The share of computed questions must be a percent from 0 to 100."
NO_TEMPLATES = "This bot has no computed-question templates, so it cannot compute a question."
NOT_IN_REVIEW = "That question is not in your review list."
RETENTION_RANGE = (
    "{given} is not a desired retention: give a share from {low} to {high}, such as 0.9."
)

# ---------------------------------------------------------------- schedules that cannot be read

BAD_TIME = "{text} is not a time of day. Give it as HH:MM on a 24-hour clock, like {examples}."
BAD_ZONE = "{text} is not a time zone I know. Use an IANA name (Area/City), such as {examples}."
BAD_ZONE_CLOSE = (
    "{text} is not a time zone I know. Did you mean {names}? "
    "Use an IANA name (Area/City), such as {examples}."
)
BAD_DAYS = "{text} is not a choice of days; use {daily} or {weekdays}."
BAD_WEEKDAY = "{text} is not a day of the week; use mon, tue, wed, thu, fri, sat or sun."
BAD_DURATION = (
    "{text} is not a duration between 1 minute and 7 days; write it like 45m, 2h or 1h30m."
)
BAD_TAG = "{text} is not a tag; tags are lowercase letters, digits and dashes."

# ---------------------------------------------------------------- who may change things

ADMINS_SLACK = "workspace admins"
ADMINS_DISCORD = "people with the Manage Server permission"
ADD_ME_SLACK = "add me with /invite @quizbot"
ADMINS_TEAMS = "the team's owners"
ADD_ME_TEAMS = "add me to this team (Apps, then Add to a team), then mention me here once"
# Teams: a chart over the message size limit, a card's image, a private reply sent to a chat.
CHART_TOO_LARGE = "The chart is too large for a Teams message and was left out."
CARD_IMAGE_ALT = "The question's figure"
SENT_IN_CHAT = "I sent my answer to you in our one-to-one chat."
POSTED_FOR_EVERYONE = "Posted in the channel."
ADD_ME_DISCORD = "give me the Send Messages and Embed Links permissions in this channel"
ADMINS_TERMINAL = "whoever runs quizbot here"
ADD_ME_TERMINAL = "run quizbot slack, discord or teams to post cards in a channel"
REPORT_ADMINS_ONLY = "Only {admins} can see the question report."
REPORT_TITLE = "Question report"
REPORT_FLAGGED = "Flagged, to read again:"
REPORT_FLAG_LINE = "{question}: {reason}"
REPORT_HARDEST = "Hardest:"
REPORT_HARDEST_LINE = "{question} ({label}): {share} right of {answers} answers"
REPORT_REPORTED = "Reported by players:"
REPORT_REPORTED_LINE = "{question}: {reason} ({who}){paused}{note}"
REPORT_PAUSED = ", out of the rotation until a new revision"
FLAG_REASON_WRONG = "the answer is wrong"
FLAG_REASON_UNCLEAR = "unclear"
FLAG_REASON_OUTDATED = "outdated"
FLAG_REASON_TYPO = "a typo"
FLAG_THANKS = (
    "Thanks: reported {question} as {reason}; {count} open report(s) on it. The admins see them "
    "in /quiz report."
)
FLAG_PAUSED = "Thanks: reported {question} as {reason}. It leaves the rotation until it is fixed."
FLAG_NO_ROUND = "No question has been asked in this channel yet: report one once it is asked."
FLAG_ALREADY = "You have reported {question} already; an admin will see it in /quiz report."
FLAG_RESOLVED = (
    "The question {question} you reported has been fixed (revision {revision}) and is back in "
    "the rotation. Thanks for the report."
)
FLAG_NOT_KEPT = "Reports are not kept by this bot."
PROPOSAL_UNKNOWN = "There is no proposal {id}."
PROPOSAL_WAS_APPROVED = "approved"
PROPOSAL_WAS_REJECTED = "rejected"
PROPOSAL_ALREADY_DECIDED = (
    "Proposal {id} ({question}) was {decision} already, by {by}; nothing changed."
)
PROPOSAL_REASON_LONG = "A reason is {limit} characters at most; this one has {length}."
HIDE_NOT_KEPT = "Questions are not hidden by this bot: it has no workspace banks."
HIDE_ADMINS_ONLY = "Only {admins} hide questions or show them again."
HIDE_UNKNOWN = "This workspace has no question {question}: nothing was changed."
HIDDEN = "{question} is hidden in this workspace: no round asks it until {command}."
HIDDEN_ALREADY = "{question} was hidden already: nothing was changed."
UNHIDDEN = "{question} is back in this workspace's rounds."
UNHIDDEN_ALREADY = "{question} is not hidden: nothing was changed."
BAD_QUESTION_ID = (
    "{word} is not a question id: ids are lowercase letters, digits and hyphens, such as {example}."
)
PROPOSALS_NOT_KEPT = "Questions are not kept by this bot: it has no workspace banks."
REPORT_BUTTON = "Report a problem"
REPORT_FORM_TITLE = "Report a problem"
REPORT_FORM_REASON = "What is wrong"
REPORT_FORM_NOTE = "Say more (optional)"
REPORT_FORM_NOTE_HINT = "What should it say? 300 characters at most"
REPORT_FORM_SEND = "Send"
FLAG_REASON_LABEL_WRONG = "The answer is wrong"
FLAG_REASON_LABEL_UNCLEAR = "Unclear"
FLAG_REASON_LABEL_OUTDATED = "Outdated"
FLAG_REASON_LABEL_TYPO = "A typo"
FLAG_UNKNOWN_QUESTION = "The question {question} is no longer in this workspace's bank."
PROPOSALS_USAGE = (
    "Say /quiz proposals to list the questions waiting, /quiz proposals approve ID, or "
    "/quiz proposals reject ID [reason]."
)
REPORT_PROPOSALS = "{count} proposed question(s) wait for review: {command}."
PROPOSALS_ADMINS_ONLY = "Only {admins} review proposed questions."
PROPOSALS_NONE = "No proposed question waits for review here."
PROPOSALS_WAITING = "{count} proposed question(s) wait for review, the oldest first."
PROPOSALS_MORE = "{more} more wait: decide these first, or list them all with {command}."
PROPOSAL_HEAD = "Proposal {id}: {question}, by {author}"
PROPOSAL_NEW = "{author} proposed a question for this workspace ({question}, proposal {id}). {how}"
PROPOSAL_NEW_BUTTONS = "Approve it, edit it or reject it with the buttons, or with {command}."
DM_NO_BUTTONS = "Buttons do not work in a direct message: use {command} in the server."
PROPOSAL_ANSWER = "Answer: {choice}"
PROPOSAL_APPROVE = "Approve"
PROPOSAL_EDIT = "Edit"
PROPOSAL_REJECT = "Reject"
PROPOSAL_APPROVED = (
    "Approved: {question} is live as revision {revision} from the next round; its author will "
    "be told."
)
PROPOSAL_EDIT_ID = (
    "An edit of a proposal keeps its id, {question}; to add another question, use /quiz add."
)
REJECT_FORM_TITLE = "Reject a proposal"
REJECT_FORM_REASON = "Why (told to its author)"
REJECT_FORM_REASON_HINT = "Optional, 500 characters at most"
REJECT_FORM_SEND = "Reject"
PROPOSAL_REJECTED = "Rejected proposal {id} ({question}); its author will be told."
PROPOSAL_TOLD_APPROVED = (
    "Your question {question} was approved and is in this workspace's rotation (revision "
    "{revision}). Thanks for writing it."
)
PROPOSAL_TOLD_EDITED = (
    "Your question {question} was approved with an admin's edits and is in this workspace's "
    "rotation (revision {revision}). Thanks for writing it."
)
PROPOSAL_TOLD_REJECTED = "Your proposed question {question} was not accepted."
PROPOSAL_TOLD_REASON = "The reason given: {reason}"
FLAG_NOTE_TOO_LONG = "Keep the note to {most} characters."
FLAG_USAGE = "Say why: wrong, unclear, outdated or typo, then what is wrong (optional)."
ADD_FORM_TITLE = "Write a question"
ADD_FORM_PAGE_TITLE = "Write a question ({page}/{pages})"
ADD_FORM_SAVE = "Save"
FORM_CANCEL = "Cancel"
ADD_FORM_NEXT = "Next"
ADD_PUBLISHED = (
    "Saved {question} for this workspace (revision {revision}): the next round can ask it."
)
ADD_PROPOSED = (
    "Sent {question} for review (proposal {id}): an admin approves it before any round asks it."
)
ADD_PAGE_KEPT = "Page {page} of {pages} is kept. {go} for the next fields."
ADD_CONTINUE = "Continue"
FORM_REFUSED = "Not sent, nothing was saved:"
FORM_REFUSED_LINE = "{field}: {error}"
FORM_FIX = "Fix it"
ADD_DRAFT_GONE = "That form was not kept (it expired, or the bot restarted): run {command} again."
FORM_IN_TERMINAL = "The terminal has no forms: write the question with {command}."
REPORT_NOTHING = "No question has 20 answers yet, so nothing is flagged or ranked so far."
REPORT_NOTE = "{asked} of {total} questions asked here. Every figure: {command}, or the dashboard."
DASHBOARD_OFF = (
    "The dashboard is off. To turn it on, set {secret} (32 characters or more) and {url} "
    "where the bot runs, then restart it."
)
DASHBOARD_ADMINS_ONLY = (
    "Only {admins} can open the workspace's dashboard; {me} opens your own page."
)
DASHBOARD_LINK = "Your dashboard link, valid 15 minutes and once: {link}"
DASHBOARD_LINK_TITLE = "Open the quizbot dashboard"
ME_TITLE = "Your quiz"
START_REVIEW = "Start a review"
ME_BODY = (
    "{points} points, {correct} of {answered} right. Streak: {current} in a row (best {best})."
)
ME_REVIEWS_DUE = "{due} due: practise them with {command}."
ME_MASTERY = "Mastery: {topics}."
ME_MASTERY_REST = "Mastery: {topics}; {rest} more topics not begun."
ME_MASTERY_TOPIC = "{topic} {percent}%"
ME_MASTERY_NONE = "Mastery: no topic begun yet; {command} starts one."
PRACTICE_BUTTON = "Practice"
ME_REVIEWS_NONE = "No review is due."
ME_REVIEWS_NEXT = "No review is due; the next falls due {when}."
ME_WEEK = "This week: #{rank} with {points} pts."
ME_WEEK_NONE = "You have not answered this week yet."
BAD_TOPIC = "{word} is not a topic name; a topic is a word such as {example}."
ONE_TOPIC = "One topic at a time: {word} is a second one."
BAD_DIFFICULTY = "{word} is not a difficulty mode; use one of {modes}."
BAD_DASHBOARD_SCOPE = "{word}: say {me} for your own page, or nothing for the workspace's."
NO_LABEL = "No question is labelled {label}; change this channel's difficulty setting."
NO_LABEL_WITH_TAG = (
    "No question with the tag {tag} is labelled {label}; change the tag or this channel's "
    "difficulty setting."
)
ADMINS_LISTED = "the quiz admins"
SETTINGS_ADMINS_ONLY = "Only {admins} can change this channel's quiz settings."
SCHEDULE_ADMINS_ONLY = "Only {admins} can change the daily question of a channel."

# ---------------------------------------------------------------- rounds

CARD_TITLE = "Quiz question"
CARD_TITLE_CLOSED = "Quiz question · closed"
CARD_NOTIFICATION = "Quiz: {question}"
FACT_TAGS = "Tags"
TAGS_REVEALED = "Tags: {tags}"
FACT_DIFFICULTY = "Difficulty"
FACT_CLOSES = "Closes"
FACT_ANSWERED = "Answered"
DIFFICULTY_VALUE_ONE = "{difficulty}, {n} point"
DIFFICULTY_VALUE_MANY = "{difficulty}, {n} points"
CLOSES_INLINE = "closes {when}"
ANSWERED = "{n} answered"
CARD_HOW_TO_ANSWER = (
    "Click a button, or react with {emoji} (answers by reaction are confirmed privately)."
)
# Teams has no letter reactions: its cards are answered with the buttons only.
CARD_HOW_TO_ANSWER_BUTTONS = "Click a button to answer: only you are told whether you were right."
CLOSED = "Closed: the answer is on the question and explained in its thread."
CANNOT_POST = "I can't post in this channel yet: {how}, then try again."
REACTIONS_CANNOT_COUNT = "emoji answers can't reach me in this channel: use the buttons"
ROUND_CLOSED_NOTIFICATION = "Closed: the answer was {answer}. {results}"

# ---------------------------------------------------------------- answers

FEEDBACK_CLOSED = "This question is closed; the answer and the results are in its thread."
FEEDBACK_ALREADY = "You already answered {choice}; your first answer is the one that counts."
FEEDBACK_CHANGED = "You changed your answer from {before} to {after}."
FEEDBACK_RIGHT_ONE = "{icon} {right} You chose {choice} (+{n} point)."
FEEDBACK_RIGHT_MANY = "{icon} {right} You chose {choice} (+{n} points)."
FEEDBACK_WRONG = "{icon} {wrong} You chose {choice}."
WHY_NOT_CHOSEN = "Why not {key}: {reason}"
RIGHT = "Right!"
NOT_THIS_TIME = "Not this time."
STREAK = "{icon} {n} daily questions right in a row."
REACTION_ABOUT = "Your answer to {link}:"

# ---------------------------------------------------------------- the reveal

NOBODY_ANSWERED = "Nobody answered this one."
RESULTS_ONE = "{n} person answered; {right} right ({percent:.0f}%)."
RESULTS_MANY = "{n} people answered; {right} right ({percent:.0f}%)."
FASTEST = "Fastest right: {who}"
FASTEST_ONE = "{user} ({seconds:.1f} s)"
FASTEST_FIELD = "Fastest right"
RESULTS_FIELD = "Results"
ANSWER_FIELD = "Answer"
IN_THE_THREAD = "The full explanation is in the thread."
TALLY = "{count} ({percent:.0f}%)"
THREAD_NAME = "Answer: {question}"
ANSWER_IS = "The answer is {choice}"
WHY_NOT_OTHERS = "Why not the others"
WHY_NOT = "Why not {choice}"
REFERENCES = "References"

# ---------------------------------------------------------------- scores and settings

LEADERBOARD_TITLE = "Leaderboard, {period}"
PERIOD_WEEK = "this week"
PERIOD_MONTH = "this month"
PERIOD_ALL = "all time"
LEADERBOARD_LINE = "{rank}. {user}: {points} pts, {correct}/{answered} right"
LEADERBOARD_EMPTY = "Nobody has scored in this period yet."
LEADERBOARD_YOU = "You: #{rank} with {points} pts, {correct}/{answered} right"
LEADERBOARD_NOT_YOU = "You have not answered in this period yet."
STATS = (
    "{user}: {answered} answered, {correct} right ({accuracy:.0f}%), {points} points; "
    "daily streak {current} (best {best})."
)
SETTINGS = (
    "In this channel a question stays open {minutes} minutes and answer changes are {changes}; "
    "the next question is picked {difficulty}."
)
DIFFICULTY_MIXED = "at random from every difficulty (mixed)"
DIFFICULTY_EASY = "among the easy ones only"
DIFFICULTY_HARD = "among the hard ones only"
DIFFICULTY_ADAPTIVE = (
    "adaptively: the unasked question whose success rate in this workspace is nearest 70%"
)
SETTINGS_COMPUTED = (
    "{percent}% of the rounds posted without a tag ask a question computed from /bandwidth."
)
SETTINGS_COMPUTED_NONE = "Computed questions come only when asked for: {command}."
DIFFICULTY_LEVEL = (
    "for the players' level: the unasked question whose chance of a right answer, at the mean "
    "level of the people who answered here lately, is nearest 70%"
)
CHANGES_ALLOWED = "allowed"
CHANGES_NOT_ALLOWED = "not allowed (the first answer counts)"
SAVED = "Saved. {settings}"
SETTINGS_REVIEW_OTHERS = (
    "Questions written in chat by anyone but an admin wait for an admin's review "
    "({command}: admins' too)."
)
SETTINGS_REVIEW_EVERYONE = (
    "Every question written in chat, the admins' too, waits for an admin's review "
    "({command}: admins' go live at once)."
)
BAD_REVIEW = "{word} is not whose questions to review: {choices}."
SETTINGS_RETENTION = (
    "In this workspace a question comes back for review when your chance of recalling it has"
    " fallen to {percent}%."
)

# ---------------------------------------------------------------- daily questions

SCHEDULED = "Scheduled. {schedule}"
SCHEDULE_HEAD = "Daily question in this channel at {time} {zone}, {days}."
SCHEDULE_HEAD_TAGGED = "Daily question in this channel at {time} {zone}, {days}, tagged {tag}."
DAYS_DAILY = "every day"
DAYS_WEEKDAYS = "on weekdays (Monday to Friday)"
SCHEDULE_CLOSES_AFTER = "Each question closes after {duration}."
SCHEDULE_OPEN_UNTIL_NEXT = "Each question stays open until the next one is posted."
SCHEDULE_DIGEST = "Weekly digest (leaderboard and hardest question) on {day}s."
SCHEDULE_NEXT = "Next post: {local}."
SCHEDULE_NEXT_BOTH = "Next post: {local} ({utc})."
SCHEDULE_MOMENT = "{day} at {time} {zone}"
HOURS = "{n} h"
MINUTES = "{n} min"
SCHEDULE_STOPPED = "The daily question in this channel is stopped."
SCHEDULE_NONE = "There is no daily question in this channel. Set one with {how}."
SCHEDULE_NEEDS_TIME = "Give the time of the daily question, like {example}."

LATE_NOTE = "Posted late: this daily question was due at {time} {zone} while the bot was offline."
DIGEST_HEAD_ONE = "Weekly digest, {first} to {last}: {n} question in this channel."
DIGEST_HEAD_MANY = "Weekly digest, {first} to {last}: {n} questions in this channel."
DIGEST_LEADERBOARD = "Leaderboard"
DIGEST_LINE_ONE = "{rank}. {user}: {points} point ({correct} of {answered} right)"
DIGEST_LINE_MANY = "{rank}. {user}: {points} points ({correct} of {answered} right)"
DIGEST_HARDEST = (
    "Hardest question of the week ({percent:.0f}% right, {correct} of {answered}): {question}"
)
DIGEST_ANSWER = "Answer: {key}) {text}"

# ---------------------------------------------------------------- review

REVIEW_TITLE = "Review: a question due again"
REVIEW_FOOTER = "Only you see this; review answers do not change scores."
REVIEW_FOOTER_MORE = (
    "Only you see this; review answers do not change scores · {n} more due after this one."
)
REVIEW_NOTHING_DUE = "Nothing to review right now; your next review is due {when}."
REVIEW_NONE = (
    "Nothing to review yet. Every question you answer comes back here, spaced out by how"
    " well you know it."
)
REVIEW_RIGHT = "{icon} {right} You chose {choice}."
REVIEW_WRONG = "{icon} {wrong} You chose {choice}; the answer is {answer}."
REVIEW_COMES_BACK = "It comes back {when}."
REVIEW_ANSWERED_FOR_NOW = "You have answered this one for now; it comes back {when}."

# ---------------------------------------------------------------- practice

PRACTICE_TITLE_DUE = "Practice {number}: a question due again"
PRACTICE_TITLE_NEW = "Practice {number}: a new question"
PRACTICE_FOOTER = "Only you see this; practice answers do not change scores · {left}"
PRACTICE_LEFT = "{left} left in this session."
PRACTICE_LAST = "The last one of this session."
PRACTICE_COMES_BACK_NOW = "It comes back in this session until you get it right."
PRACTICE_NEXT = "Next"
PRACTICE_STOP = "Stop"
PRACTICE_AGAIN = "Practice again"
PRACTICE_DONE = "Practice done: {right} of {answered} right."
PRACTICE_STOPPED = "Practice stopped: {right} of {answered} right."
PRACTICE_STOPPED_NONE = "Practice stopped."
PRACTICE_NOTHING = (
    "Nothing to practise: you have answered every question here and none is due. Try another"
    " topic, or come back when a review falls due."
)
PRACTICE_NOTHING_MORE = "That is every question there is to practise for now."
PRACTICE_NONE = "You have no practice session; start one with {command}."
PRACTICE_NOT_CURRENT = (
    "That practice question is answered already, or from an earlier session; press Next for"
    " another, or start again with /quiz practice."
)
PRACTICE_NO_TOPIC = "No topic is called {topic}. The topics: {topics}."
PRACTICE_COUNT_RANGE = "Practise from 1 to {high} questions at a time."

# ---------------------------------------------------------------- confidence

CONFIDENCE_SURE = "I was sure"
CONFIDENCE_GUESSED = "I guessed"
CONFIDENCE_SURE_RIGHT = "Noted: you were sure, so it comes back later, {when}."
CONFIDENCE_GUESSED_RIGHT = "Noted: a guess that came off, so it comes back sooner, {when}."
CONFIDENCE_SURE_WRONG = (
    "You were sure, and it was wrong: that is exactly the answer to remember. It comes back {when}."
)
CONFIDENCE_GUESSED_WRONG = "Noted: you guessed. It comes back {when}."
CONFIDENCE_NOTHING = "There is no answer of yours to that question to rate."
CONFIDENCE_ALREADY = "You have said how sure you were of that answer already."
CONFIDENCE_LATE = "That answer is more than {minutes} minutes old; the next one can be rated."

# ---------------------------------------------------------------- /bandwidth

ESTIMATE_TABLE_ATTACHED = "{headline} (table attached)"

# ---------------------------------------------------------------- the terminal (quizbot play)

PLAY_PROMPT = "Your answer ({first}-{last}, q to quit): "
PLAY_NOT_A_CHOICE = "{given} is not a choice: type one of {keys}, or q to quit."
PLAY_FULL = "Full explanation"
PLAY_WHY_NOT = "Why not the others"
PLAY_REFERENCES = "References"
PLAY_MORE = "Enter: next · m: the full explanation · s: I was sure · g: I guessed · q: quit "
PLAY_MORE_LAST = "Enter: done · m: the full explanation · s: I was sure · g: I guessed "
PLAY_NEXT = "Enter: next · s: I was sure · g: I guessed · q: quit "
PLAY_NEXT_LAST = "Enter: done · s: I was sure · g: I guessed "
PLAY_UNKNOWN_TAG = "No question has the tag {tag}; did you mean {suggestion}?"
PLAY_UNKNOWN_TAG_LIST = "No question has the tag {tag}. The tags: {tags}."

# ---------------------------------------------------------------- failures

BANDWIDTH_TOO_OFTEN = (
    "That is a lot of charts at once; try again in {seconds} seconds. Each person may ask for "
    "{burst} charts at once and one every {every} seconds after that."
)
BANDWIDTH_WORKSPACE_TOO_OFTEN = (
    "This workspace has asked for many charts just now; try again in {seconds} seconds."
)
BANDWIDTH_BUSY = "Charts are busy right now ({waiting} waiting to be drawn); try again in a minute."

APOLOGY = (
    "Sorry, something went wrong on our side. If it keeps happening, quote error id {id} "
    "to whoever runs quizbot."
)

# ---------------------------------------------------------------- web pages

INSTALL_TOO_OFTEN = "Too many install requests from this address; try again in {seconds} seconds."


# ---------------------------------------------------------------- learning tracks

BAD_TRACK_NAME = "{word} is not a track name; the names are listed by {example}."
TRACKS_NOT_KEPT = "Learning tracks need a store that keeps them; this one does not."
TRACK_NONE_SHIPPED = "No learning track is installed (the question folders have no tracks/)."
TRACK_UNKNOWN = "There is no track {name}. The tracks: {names}."
TRACK_UNKNOWN_NEAR = "There is no track {name}. Did you mean {near}?"
TRACK_ALREADY_RUNNING = "The track {title} is already running here; stop it first with {stop}."
TRACK_ADMINS_ONLY = "Only admins can start or stop a learning track here ({admins})."
TRACK_NEEDS_SCHEDULE = (
    "A track opens one unit each scheduled day, and this channel has no daily question yet: "
    "give a time, for example {example}."
)
TRACK_STARTED = (
    "Started {title} here: {units} units, one each scheduled day. The first opens {when}."
)
TRACK_STOPPED = "Stopped {title} after {opened} of {units} units."
TRACK_GONE = (
    "The track {name} running here is no longer installed, so its days post ordinary questions; "
    "an admin can end it with {stop}."
)
TRACK_NOT_RUNNING = "No learning track is running here. Start one with {start}."
TRACK_LIST_TITLE = "Learning tracks"
TRACK_LIST_LINE = "{name}: {title}, {units} units"
TRACK_LIST_NOTE = "An admin starts one in a channel with {start}."
TRACK_TITLE = "Track: {title}"
TRACK_NOT_STARTED = "Its first unit opens with the channel's next daily question."
TRACK_CHANNEL_ON = "This channel is on unit {unit} of {units}: {name}."
TRACK_CHANNEL_ENDED = "It ended after {opened} of {units} units."
TRACK_UNIT_LINE = "{mark} Unit {unit}: {name} ({people} people done)"
TRACK_UNIT_LINE_ONE = "{mark} Unit {unit}: {name} (1 person done)"
TRACK_YOU = "You have done {done} of the {opened} units opened so far."
TRACK_YOU_NEXT = "Next for you: {question} (answer it when it comes up, or in {command})."
TRACK_YOU_ALL_DONE = "You are up to date with every unit opened so far."
TRACK_RULE = (
    "A unit is done when each of its questions was last answered right at or after it was due."
)
TRACK_DAY = "{title}, unit {unit} of {units}: {name}"
TRACK_DAY_QUESTIONS_ONE = "This unit has one question: the one below."
TRACK_DAY_QUESTIONS_MANY = (
    "This unit has {n} questions: the one below, and the others in {command} for each of you."
)
TRACK_END_TITLE = "{title} is complete: {units} units."
TRACK_END_FINISHERS = "Finished every unit: {who}."
TRACK_END_NOBODY = "Nobody has finished every unit yet; the cards stay in your reviews."
TRACK_END_UNITS = "Units done, one count per unit: {counts}."
TRACK_END_PEOPLE_ONE = "1 person completed at least one unit."
TRACK_END_PEOPLE_MANY = "{n} people completed at least one unit."
TRACK_YOU_WAITING = "Your next card of this track falls due {when}; it counts from then."
TRACK_ASK_TITLE = "Track: {title}, unit {unit}"
TRACK_ASK_FOOTER = (
    "Only you see this; it counts towards the unit, not towards scores. {command} asks the next."
)
ME_TRACK = "Track {title}: {done} of {opened} units done so far ({units} in all)."
