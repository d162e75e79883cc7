"""A griffe extension for the API reference (mkdocs.yml loads it): the
docstrings' Sphinx roles (:class:`~mrcodecs.SparseVector`, :mod:`mrjobs.job`,
...) shown as code, as Sphinx shows them (``~`` keeps the last name only),
instead of as the literal role."""
import re

import griffe

ROLE = re.compile(r":(?:py:)?(?:mod|class|func|meth|attr|data|exc|obj|const):`(~?)([^`]+)`")


def _code(m):
    target = m.group(2)
    return "`%s`" % (target.rsplit(".", 1)[-1] if m.group(1) else target)


class SphinxRoles(griffe.Extension):
    def on_object(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_code, obj.docstring.value)
