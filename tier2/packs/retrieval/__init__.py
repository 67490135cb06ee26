"""Engine-doc retrieval over a pack's docs facet: the engine's API reference generated from the installed package's
own type declarations plus the pack's guides, indexed locally (BM25, deterministic, offline) and cached on disk.

Nothing here knows an engine: which type file, the receiver and alias names of expressions, the class priors and
the guides are the pack's data (``<pack>/<docs>/retrieval.yaml``, `tier2.packs.retrieval.facet`).
"""

from tier2.packs.retrieval.facet import DocsFacet, load_facet
from tier2.packs.retrieval.index import DocsIndex, Hit, load_docs_index
from tier2.packs.retrieval.resolve import ApiMention, api_mentions
from tier2.packs.retrieval.sections import Section, parse_dts, split_markdown
from tier2.packs.retrieval.source import DocsSource, format_hit, format_hits

__all__ = ["ApiMention", "DocsFacet", "DocsIndex", "DocsSource", "Hit", "Section", "api_mentions", "format_hit",
           "format_hits", "load_docs_index", "load_facet", "parse_dts", "split_markdown"]
