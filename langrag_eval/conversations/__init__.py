"""Conversations: the multi-turn sample (:mod:`.conversation`), the conversation-level judges
(:mod:`.judged`), a simulated user that drives a chat app (:mod:`.simulate`) and tournaments between
chat variants on whole conversations (:mod:`.tournament`)."""

from typing import TYPE_CHECKING

from .. import lazy_getattr

if TYPE_CHECKING:
    from .apps import ChatApp, chat_engine_chat, checkpointer_chat
    from .conversation import Conversation, ConversationTurn
    from .judged import ConversationGrade, ConversationJudge
    from .personas import agenerate_personas, generate_personas
    from .simulate import Persona, SimulatedUser, read_personas, simulate
    from .tournament import aconversation_tournament, conversation_tournament

_LAZY = {
    "ChatApp": ".apps",
    "chat_engine_chat": ".apps",
    "checkpointer_chat": ".apps",
    "Conversation": ".conversation",
    "ConversationTurn": ".conversation",
    "ConversationGrade": ".judged",
    "ConversationJudge": ".judged",
    "Persona": ".simulate",
    "agenerate_personas": ".personas",
    "generate_personas": ".personas",
    "SimulatedUser": ".simulate",
    "read_personas": ".simulate",
    "simulate": ".simulate",
    "aconversation_tournament": ".tournament",
    "conversation_tournament": ".tournament",
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = sorted(_LAZY)
