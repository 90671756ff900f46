"""sheetflow's services, each runnable as ``python -m services.<name>``."""

import sys

# PyMuPDF 2.x imports its optional companions as it is imported: the ONNX layout analyser,
# which loads its model, and pymupdf4llm; together about 1.5 s of CPU in every process that
# reads PDFs. No service uses either, so service processes start without them: a None entry
# in sys.modules makes their import raise ImportError, which PyMuPDF takes as "not installed".
for _optional in ("pymupdf.layout", "pymupdf4llm"):
    sys.modules.setdefault(_optional, None)  # type: ignore[arg-type]
