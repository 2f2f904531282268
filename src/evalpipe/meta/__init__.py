"""Meta-evaluation: how well metric scores agree with human judgments, in the MT Metrics Eval
(MTME) directory layout -- data (:mod:`evalset`), correlations (:mod:`correlation`) and
significance (:mod:`significance`)."""
