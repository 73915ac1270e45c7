"""A single string handed to ``from_texts`` / ``from_documents`` / ``from_nodes`` is refused with one
line naming the argument, in both adapters; a list of one string indexes one document."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

from langchain_core.documents import Document as LCDocument
from langchain_langrag import LangragRetriever as LCRetriever
from llama_index.core import Document as LIDocument
from llama_index.core.schema import TextNode
from llama_index.evaluation.langrag import LangragRetriever as LIRetriever

from langrag_eval.errors import ConfigError

BUILDERS = {
    "langchain from_texts": (lambda v: LCRetriever.from_texts(v), "from_texts(texts)"),
    "langchain from_documents": (lambda v: LCRetriever.from_documents(v), "from_documents(documents)"),
    "llamaindex from_documents": (lambda v: LIRetriever.from_documents(v), "from_documents(documents)"),
    "llamaindex from_nodes": (lambda v: LIRetriever.from_nodes(v), "from_nodes(nodes)"),
}
ONE_ITEM = [LCDocument(page_content="Pumps carry a two-year warranty."),
            LIDocument(text="Pumps carry a two-year warranty."), TextNode(text="Pumps carry a two-year warranty."),
            {"text": "Pumps carry a two-year warranty."}, b"Pumps", 42]


@pytest.mark.parametrize("builder", list(BUILDERS))
@settings(max_examples=20, deadline=None)
@given(text=st.text(min_size=1, max_size=60))
def test_a_single_string_is_refused_naming_the_argument(builder, text) -> None:
    build, argument = BUILDERS[builder]
    with pytest.raises(ConfigError) as err:
        build(text)
    message = str(err.value)
    assert message.startswith(f"{argument} is one str, not a list of them") and "\n" not in message


@pytest.mark.parametrize("builder", list(BUILDERS))
@pytest.mark.parametrize("item", ONE_ITEM, ids=lambda i: type(i).__name__)
def test_one_document_alone_is_refused(builder, item) -> None:
    build, argument = BUILDERS[builder]
    with pytest.raises(ConfigError, match=rf"^{re.escape(argument)} is one {type(item).__name__}"):
        build(item)


def test_a_list_of_one_text_indexes_one_document() -> None:
    docs = LCRetriever.from_texts(["Pumps carry a two-year warranty."]).invoke("warranty")
    assert [d.page_content for d in docs] == ["Pumps carry a two-year warranty."]
    nodes = LIRetriever.from_documents([LIDocument(text="Pumps carry a two-year warranty.")]).retrieve("warranty")
    assert [n.node.get_content() for n in nodes] == ["Pumps carry a two-year warranty."]



