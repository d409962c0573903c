"""Projects (SPEC section 1): files -> typed, validated objects.

- ``load``: ``load_project``, ``check_project``, ``close_project``, ``question_set_hash``
- ``validate``: ``validate_project`` (every problem in one pass)
- ``select``: ``select_questions`` (``--select``/``--space``)
- ``gitfs``: files at a git ref (``resolve_ref``, ``has_project_at``, ``extract_project``)
- ``source``: ``SourceInfo`` of the working tree, ``environment_for``
- ``envvars``: ``${ENV_VAR}`` interpolation (``resolve``, ``redact``)
- ``models``: the typed objects; ``schema``/``rules``/``problems``: the checks; ``yamlload``:
  YAML with lines and duplicate keys; ``dialect``: the project's SQL dialect; ``scaffold``:
  ``sqlbench init``

Submodules are imported explicitly (``from sqlbench.project.load import load_project``) so that
importing ``sqlbench.project.models`` stays light.
"""
