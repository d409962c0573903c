"""Runs (docs/commands.md, docs/verdicts.md and docs/runs.md): the run loop, the durable run store,
and what a run records.

- ``runner.run_benchmark(project, agent_name, options, progress=...)`` runs or resumes a run;
- ``store.RunStore`` keeps runs and their graded results (``locate.open_project_store`` opens
  a project's store from its folder);
- ``models`` / ``results`` hold what is stored and how it adds up per question and per run;
- ``identity`` says when two runs are interchangeable; ``rates`` holds pass@k, pass^k and the
  bootstrap interval for ``--repeat`` runs.

Nothing is imported here, so importing one module (``sqlbench.runs.records``) stays light.
"""
