"""Long-form streaming evaluation: simulstream logs and audio definitions read into talks
(:mod:`.files`), scored by any metric through the engines (:mod:`evalpipe.scoring.talks`), and a long-form driver
that writes such logs (:mod:`.run`)."""
