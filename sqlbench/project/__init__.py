"""Projects (docs/project-files.md): files -> typed, validated objects.

- ``load``: ``load_project``, ``check_project``, ``close_project``, ``question_set_hash``,
  ``read_settings`` (the one sqlbench.yml reader); the agents' checks are passed in, so
  use ``sqlbench.validation`` (``load_project``, ``validate_project``) for every check
- ``validate``: ``count_problems``, ``plural``
- ``root``: ``find_project_root``, ``require_project`` (the one "not a project" sentence)
- ``select``: ``select_questions`` (``--select``/``--space``)
- ``gitfs``: files at a git ref (``resolve_ref``, ``has_project_at``, ``extract_project``)
- ``source``: ``SourceInfo`` of the working tree, ``environment_for``
- ``envvars``: ``${ENV_VAR}`` interpolation (``resolve``, ``redact``)
- ``models``: the typed objects; ``schema``/``rules``/``problems``: the checks; ``yamlload``:
  YAML with lines and duplicate keys; ``dialect``: the project's SQL dialect; ``scaffold``:
  ``sqlbench init``

Submodules are imported explicitly (``from sqlbench.project.files import Question``) so that
importing ``sqlbench.project.files`` stays light.
"""
