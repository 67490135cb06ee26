"""The debug case library (issue #15 part 1): failure signatures, verified cases, deterministic fixers, near-match
recall through mem0, seeding from the defect taxonomy and the mutation catalogue. See docs/learning.md."""

from tier2.learning.fixers import FIXERS, FixContext, Fixer, FixPlan, claiming_fixer, fixer_named
from tier2.learning.history import History, read_files, unified_diff
from tier2.learning.library import Applied, Assist, CaseLibrary, LibraryRun, Seen, engine_of
from tier2.learning.memory import CaseMemory, available
from tier2.learning.middleware import CHECK_TOOLS, CaseLibraryMiddleware, Recheck, ToolChecks
from tier2.learning.signature import Failure, Signature, failures_of_build, failures_of_report, shape, sign

__all__ = ["Applied", "Assist", "CHECK_TOOLS", "CaseLibrary", "CaseLibraryMiddleware", "CaseMemory", "FIXERS",
           "Failure", "FixContext", "FixPlan", "Fixer", "History", "LibraryRun", "Recheck", "Seen", "Signature",
           "ToolChecks", "available", "claiming_fixer", "engine_of", "failures_of_build", "failures_of_report",
           "fixer_named", "read_files", "shape", "sign", "unified_diff"]
