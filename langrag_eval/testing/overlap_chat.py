"""The word-overlap replies to the agent and conversation prompts (:func:`~.overlap.overlap_reply`
dispatches here): the trajectory judge, the conversation judges, the simulated user and the pairwise
judge of two conversations. A goal such as "Learn the warranty and the seals' delivery" is read as its
parts ("the warranty", "the seals' delivery"); a part is answered when an assistant reply holds its
words. Plumbing, not judgement, like the rest of the script.

>>> conversation = "1. user: How long is the warranty?\\n1. assistant: The warranty lasts two years."
>>> simulated_user("reply with GOAL MET and nothing else", "Learn the warranty and the seals' delivery",
...                conversation)
"What about the seals' delivery?"
>>> goal_grade("Learn the warranty and the seals' delivery", conversation)
"Score: [[3]], Reason: [[The assistant answered 1 of the goal's 2 parts.]]"
"""

from __future__ import annotations

import re

from .thelma import blocks

__all__ = ["goal_grade", "pairwise_conversations", "simulated_user", "trajectory_grade"]


def _overlap(a: str, b: str) -> float:
    from .overlap import overlap  # the one definition; imported late, overlap imports this module
    return overlap(a, b)


def goal_parts(goal: str) -> list[str]:
    goal = re.sub(r"^\s*(learn|find out|know|get|ask about)\s+", "", goal.strip(), flags=re.I)
    return [p.strip(" .") for p in re.split(r",|;|\band\b", goal) if re.search(r"\w", p)]


def said(conversation: str, who: str) -> list[str]:
    """What ``who`` (user or assistant) said, from a rendered conversation."""
    return re.findall(rf"^\d+\. {who}: (.*)$", conversation, flags=re.M)


def _answered(goal: str, conversation: str) -> tuple[int, int]:
    parts, replies = goal_parts(goal), said(conversation, "assistant")
    return sum(any(_overlap(p, r) >= 0.5 for r in replies) for p in parts), len(parts)


def simulated_user(prompt: str, goal: str, conversation: str) -> str:  # prompts/conversation/simulated_user.txt
    """The next part of the goal not yet answered (asked again if it was), or the marker."""
    marker = m.group(1) if (m := re.search(r"reply with (.+?) and nothing else", prompt)) else "GOAL MET"
    replies, asked = said(conversation, "assistant"), said(conversation, "user")
    open_parts = [p for p in goal_parts(goal) if not any(_overlap(p, r) >= 0.5 for r in replies)]
    if not open_parts:
        return marker
    unasked = [p for p in open_parts if not any(_overlap(p, a) >= 0.5 for a in asked)]
    return f"What about {(unasked or open_parts)[0]}?"


def goal_grade(goal: str, conversation: str) -> str:  # prompts/conversation/goal_met.txt
    done, parts = _answered(goal, conversation)
    score = 5 if done == parts else 1 if done == 0 else 3
    return f"Score: [[{score}]], Reason: [[The assistant answered {done} of the goal's {parts} parts.]]"


def pairwise_conversations(prompt: str) -> str:  # prompts/tournament/pairwise_conversation.txt
    goal, docs = blocks(prompt, "goal")[-1], " ".join(blocks(prompt, "document"))

    def score(conversation: str) -> float:
        done, parts = _answered(goal, conversation)
        replies = " ".join(said(conversation, "assistant"))
        return done / max(parts, 1) + _overlap(replies, docs)
    a, b = score(blocks(prompt, "conversation_a")[-1]), score(blocks(prompt, "conversation_b")[-1])
    verdict = "C" if abs(a - b) < 0.05 else "A" if a > b else "B"
    return f"Conversation A scores {a:.2f} on the goal and the documents, conversation B {b:.2f}.\n[[{verdict}]]"


def trajectory_grade(prompt: str) -> str:  # prompts/trajectory/judge.txt, judge_with_reference.txt
    steps = blocks(prompt, "trajectory")[-1]
    tools = set(re.findall(r"calls (\w+)\(", steps))
    results = " ".join(re.findall(r"^\d+\. tool result for [^:]*: (.*)$", steps, flags=re.M))
    answers = [a for a in re.findall(r"^\d+\. assistant(?: \([^)]*\))?: (.*)$", steps, flags=re.M)
               if not a.startswith("calls ")]
    answer = answers[-1] if answers else ""
    if not tools:
        score, why = 2, "no tool was called"
    elif results and _overlap(answer, results) >= 0.5:
        score, why = 5, "the answer rests on what the tools returned"
    else:
        score, why = 3, "the answer does not rest on what the tools returned"
    reference = blocks(prompt, "reference")
    if reference and not set(re.findall(r"calls (\w+)\(", reference[-1])) <= tools:
        score, why = min(score, 2), "a tool the reference calls was not called"
    return f"Score: [[{score}]], Reason: [[Scripted: {why}.]]"
