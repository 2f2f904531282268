"""Formulas of many rows at once, with numpy (no C: each is one vectorised expression of a published
definition, checked against the anchor that defines it).

* :mod:`.latency` -- AP, AL, DAL, LAAL and ATD of simultaneous translation (SimulEval's definitions);
* :mod:`.stream_latency` -- stream-level AP, AL and DAL of a resegmented stream (Iranzo-Sánchez et al.);
* :mod:`.scores` -- BLEU and chrF of every row of a matrix of summed stats (resampling tests);
* :mod:`.word_counts` -- ``len(text.split())`` of many texts.
"""
