"""Every chat flow written once: commands, answers, reveals, for Slack, Discord and what comes next.

Adapters translate payloads into the events here and implement the port (send these actions; is
this person an admin); the core reads commands with one grammar, runs each flow, and answers
within each platform's deadline. Nothing in this package imports a platform library.
"""

from bot.chat._charts import Charts
from bot.chat._publish import Publisher
from bot.chat.content import (
    Action,
    Chart,
    Content,
    EstimateView,
    Explanation,
    Feedback,
    FindCard,
    MessageUser,
    Offer,
    Panel,
    PostCard,
    PostText,
    ReplyInThread,
    ReviewAsk,
    UpdateCard,
)
from bot.chat.core import Chat
from bot.chat.events import Click, Command, Press, Reaction, ReviewClick
from bot.chat.port import Exchange, Gone, NotAMember, Port, neutral_errors

__all__ = [
    "Action",
    "Chart",
    "Charts",
    "Chat",
    "Click",
    "Command",
    "Content",
    "EstimateView",
    "Exchange",
    "Explanation",
    "Feedback",
    "FindCard",
    "Gone",
    "MessageUser",
    "NotAMember",
    "Offer",
    "Panel",
    "Port",
    "PostCard",
    "PostText",
    "Press",
    "Publisher",
    "Reaction",
    "ReplyInThread",
    "ReviewAsk",
    "ReviewClick",
    "UpdateCard",
    "neutral_errors",
]
