"""The capture rule on generated apps (langrag_eval.adapters.contexts.select_contexts): a document counts
when its text reached the prompt of the call that wrote the answer, directly or through an earlier
reply that reached it; documents retrieved and dropped do not count; the app's own text is kept
apart; nothing is listed twice."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langrag_eval.adapters.contexts import ModelCall, normalise, select_contexts
from langrag_eval.types import Document

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8)
SENTENCE = st.lists(WORD, min_size=4, max_size=8).map(lambda ws: " ".join(ws).capitalize() + ".")


@st.composite
def apps(draw):
    """A loop of retrievals over distinct documents, a subset of which the answering prompt holds
    (formatted with other whitespace and case), and grader calls before the answer."""
    texts = draw(st.lists(SENTENCE, min_size=1, max_size=8, unique_by=normalise))
    docs = [Document(id=f"d{i}", text=t) for i, t in enumerate(texts)]
    retrievals = draw(st.lists(st.lists(st.sampled_from(docs), min_size=1, max_size=4), min_size=1, max_size=3))
    pooled = list({d.id: d for r in retrievals for d in r}.values())
    used = draw(st.lists(st.sampled_from(pooled), unique_by=lambda d: d.id, max_size=len(pooled)))
    prompt = "CONTEXT\n" + "\n\n".join(d.text.upper().replace(" ", "  \n") for d in used) + "\nQ?"
    graders = [ModelCall(f"Is this relevant? {d.text}", "no") for d in pooled]
    return retrievals, [*graders, ModelCall(prompt, "The answer."), ModelCall("Grounded?", "yes")], used


@settings(max_examples=200, deadline=None)
@given(apps())
def test_the_contexts_are_the_retrieved_documents_the_answering_prompt_held(app) -> None:
    retrievals, calls, used = app
    chosen = select_contexts(retrievals, calls, "The answer.")
    assert sorted(d.id for d in chosen.contexts) == sorted(d.id for d in used)
    assert len({d.id for d in chosen.contexts}) == len(chosen.contexts)
    assert chosen.generated == []
    assert (chosen.note is None) == bool(used)  # an answer from none of them says so


@settings(max_examples=100, deadline=None)
@given(st.lists(SENTENCE, min_size=2, max_size=6, unique_by=normalise), st.data())
def test_documents_reach_through_the_replies_written_from_them(texts, data) -> None:
    docs = [Document(id=f"d{i}", text=t) for i, t in enumerate(texts)]
    cut = data.draw(st.integers(1, len(docs) - 1))
    first, second = docs[:cut], docs[cut:]
    sub = [ModelCall("Answer from: " + " ".join(d.text for d in part), f"Sub answer number {i} is long enough.")
           for i, part in enumerate((first, second))]
    final = ModelCall("Sub question: one\nResponse: " + sub[0].output, "Final.")
    chosen = select_contexts([first, second], [*sub, final], "Final.")
    assert [d.id for d in chosen.contexts] == [d.id for d in first]  # the second sub-answer never reached it
    assert chosen.generated == [sub[0].output]
    stated = [*docs, Document(id="n", text="Sub question: one\nResponse: " + sub[0].output)]
    listed = select_contexts([first, second], [*sub, final], "Final.", stated=stated)
    assert [d.id for d in listed.contexts] == [d.id for d in first]  # the written node is not a source


def test_without_model_calls_every_retrieval_counts_and_the_sample_says_so() -> None:
    a, b = Document(id="a", text="Alpha text."), Document(id="b", text="Beta text.")
    one = select_contexts([[a, b]], [], None)
    assert [d.id for d in one.contexts] == ["a", "b"] and one.note is None
    two = select_contexts([[a], [a, b]], [], None)
    assert [d.id for d in two.contexts] == ["a", "b"] and "2 retrievals" in two.note
    stated = select_contexts([[a, b]], [], None, stated=[])  # a post-processor dropped them all
    assert stated.contexts == [] and stated.note is None


# ---- order, rewritten documents, short replies linked by structure

@st.composite
def cut_apps(draw):
    """Documents of distinct words; the answering prompt holds some whole, some cut to a prefix,
    a window or a suffix (mid-word at the cut), wrapped in a template, in an order of its own."""
    template_words = {"answer", "from", "source", "content", "doc", "question"}  # a cut's edge could run into them
    vocabulary = draw(st.lists(WORD.filter(lambda w: w not in template_words), min_size=40, max_size=60, unique=True))
    n = draw(st.integers(2, 5))
    size = len(vocabulary) // n
    docs = [Document(id=f"d{i}", text=" ".join(vocabulary[i * size:(i + 1) * size]).capitalize() + ".")
            for i in range(n)]
    used = draw(st.permutations(docs))[:draw(st.integers(1, n))]
    held = {}
    for d in used:
        words = d.text.split(" ")
        a, b = draw(st.sampled_from([(0, len(d.text)), (0, len(" ".join(words[:6])) + 2),
                                     (len(words[0]) - 1, len(" ".join(words[:7]))),
                                     (len(" ".join(words[:2])) + 1, len(d.text))]))
        held[d.id] = d.text[a:b].strip()
    template = draw(st.sampled_from(["{}", "Source: x.md\nContent: {}", "<doc>{}...</doc>"]))
    # (a separator between pieces: two cut edges side by side could share a letter, "aav a" + "a aaa")
    prompt = "Answer from:\n" + "\n---\n".join(template.format(held[d.id]) for d in used) + "\n---\nQuestion?"
    return docs, used, held, prompt


@settings(max_examples=200, deadline=None)
@given(cut_apps())
def test_cut_documents_keep_their_id_with_the_text_the_prompt_held_in_its_order(app) -> None:
    docs, used, held, prompt = app
    chosen = select_contexts([docs], [ModelCall(prompt, "The answer.")], "The answer.")
    assert [(d.id, d.text) for d in chosen.contexts] == [(d.id, held[d.id]) for d in used]
    rewritten = sum(held[d.id] != d.text for d in used)
    assert (chosen.note is not None) == bool(rewritten)
    if rewritten:
        assert chosen.note.startswith(f"{rewritten} of the {len(used)} documents reached the prompt rewritten")


def test_text_two_documents_share_is_no_evidence_for_either() -> None:
    footer = "Copyright the pump company all rights reserved worldwide."
    a = Document(id="a", text="The pump carries a warranty of two years from delivery. " + footer)
    b = Document(id="b", text="Spare pump seals ship within five working days of the order. " + footer)
    prompt = "Context: " + a.text[:70] + " ... " + footer + "\nQ?"
    chosen = select_contexts([[a, b]], [ModelCall(prompt, "Two years.")], "Two years.")
    assert [(d.id, d.text) for d in chosen.contexts] == [("a", a.text[:70].strip())]


def test_a_short_reply_reaches_by_its_sub_question_not_by_chance() -> None:
    a = Document(id="a", text="The pump carries a warranty of two years from delivery.")
    b = Document(id="b", text="Spare pump seals ship within five working days.")
    sub = ModelCall(f"Context: {a.text}\nQuery: How long?", "Two years.", question="How long?")
    grader = ModelCall(f"Is this relevant? {b.text}", "no")  # "no" is in "not": chance, no structure
    final = ModelCall("Sub question: How long?\nResponse: Two years.\nIt is not known.\nQ?", "Final.")
    chosen = select_contexts([[a], [b]], [sub, grader, final], "Final.")
    assert [d.id for d in chosen.contexts] == ["a"] and chosen.generated == ["Two years."]
    unlinked = select_contexts([[a], [b]], [ModelCall(sub.prompt, sub.output), grader, final], "Final.")
    assert unlinked.contexts == [] and unlinked.note  # without the structure a short reply is not taken
    refine = [ModelCall(f"Context: {a.text}", "Two years.", group="s"),
              ModelCall(f"Existing answer: Two years.\nContext: {b.text}", "Final.", group="s")]
    assert [d.id for d in select_contexts([[a, b]], refine, "Final.").contexts] == ["a", "b"]
