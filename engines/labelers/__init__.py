"""Machine labelers behind one :class:`~engines.labelers.base.Labeler` protocol and one
registry (:mod:`engines.labelers.registry`, a name such as ``student@latest`` to a labeler).

* ``keyword.py`` (with ``perf_keywords.toml``): the keyword rules, ``keyword@N``;
* ``heuristics/``: regex labeling functions and the label model, ``heuristics@N``;
* ``tfidf.py``: TF-IDF + logistic regression / linear SVM baselines, ``tfidf-lr@N``;
* ``student/``: the distilled transformer student, ``student@N``;
* ``teacher/``: the LLM teacher client and teaching runs, ``teacher:MODEL``;
* ``storing.py``: runs any batch labeler over stored commits and keeps its predictions.
"""
