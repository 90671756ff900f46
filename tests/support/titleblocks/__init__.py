"""A generated multilingual set of drawing sheets with their ground truth (``sheets``): title
blocks as ruled tables of labelled cells in several layouts (``layouts``) and languages
(``languages``), drawn with real text (``draw``)."""
