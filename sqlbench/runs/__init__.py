"""Runs (docs/commands.md, docs/verdicts.md and docs/runs.md): planning, the run loop, and the
durable run store.

- ``runner.run_benchmark(project, agent_name, options, progress=...)`` runs or resumes a run,
  through the one run loop (``batch``; a run of one agent is a batch of one);
- ``store.RunStore`` keeps runs and their graded results (``locate.open_project_store`` opens
  a project's store from its folder);
- ``scores`` adds results up per question and per run; ``identity`` says when two runs are
  interchangeable.

Nothing is imported here, so importing one module (``sqlbench.runs.locate``) stays light.
"""
