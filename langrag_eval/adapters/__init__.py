"""The framework-free half of the LangChain and LlamaIndex adapters under ``integrations/``: how
apps' inputs are read (:mod:`.adapting`), call trees and captured samples (:mod:`.capturing`,
:mod:`.recorder`), what reached the answer's prompt (:mod:`.contexts`) and any evaluator's result as
each framework reports it (:mod:`.outcomes`). Only the adapters import this package."""
